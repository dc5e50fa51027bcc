"""Datasets: seeded generators, scikit-learn bundled sets, file loaders and a catalog.

Every function returns ``(X, y)``: X float64 2-D (dense C-contiguous ndarray, or
scipy.sparse CSR for LIBSVM data), y int64 class labels 0..K-1.

- `load` — any data set by name or file path (the entry point; see its docstring
  for splits, ``normalize`` and data directories), `catalog` — what is known and
  what is available, `data_dirs` / `locate` — where files are looked for.
- generators: `synsep`, `synnonsep`; regression (Moroshko & Crammer):
  `ors_synthetic`, `channel_equalization`, `speech_substitute` (float targets).
- bundled with scikit-learn: `iris`, `digits`, `wine`, `breast_cancer`.
- file loaders: `load_idx` (MNIST/Fashion-MNIST, pixels / 255), `read_idx`,
  `load_usps` (usps.h5, needs h5py), `load_letter` (UCI letter),
  `load_libsvm` (sparse CSR), `load_npz`, `load_csv`, `load_parquet`.
- `normalize_rows` — unit-L2 rows, dense or CSR.
- Vowpal Wabbit text: `read_vw_cb` / `write_vw_cb` (``--cb``, one line an example),
  `read_vw_adf` / `write_vw_adf` (``--cb_adf`` multi-line examples with action features),
  `read_vw_ccb` / `write_vw_ccb` (``--ccb_explore_adf``, several slots),
  `detect_vw_format`.

>>> import noisyfeedback as nf
>>> X, y = nf.datasets.load("digits")
>>> X.shape, X.dtype.name, X.flags.c_contiguous, y.dtype.name, int(y.max())
((1797, 64), 'float64', True, 'int64', 9)
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

from .streams import FORMATS, LogChunk, register_format, stream_log

from . import vw_stream

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from ._common import normalize_rows
    from .bundled import breast_cancer, digits, iris, wine
    from .generators import synnonsep, synsep
    from .loaders import (
        load_csv,
        load_idx,
        load_letter,
        load_libsvm,
        load_npz,
        load_parquet,
        load_usps,
        read_idx,
    )
    from .regression import channel_equalization, ors_synthetic, speech_substitute
    from .logs import BanditLog, read_log, read_vw_cb, write_log, write_vw_cb
    from .vw_adf import (ADFExample, CBLabel, CCBExample, CCBOutcome, CCBSlot, detect_vw_format, read_vw_adf,
                         read_vw_ccb, write_vw_adf, write_vw_ccb)
    from .open_bandit import (
        CandidateLog,
        ItemContext,
        OpenBanditLog,
        bts_action_distribution,
        candidate_log,
        load_item_context,
        load_open_bandit,
        read_prior_bts,
    )
    from .ranking import multiclass_candidates, ranking_stream
    from .registry import ENV_VAR, catalog, data_dirs, known_names, load, locate
    from .uma_toy import uma_toy

_LAZY = {
    'normalize_rows': '._common',
    'breast_cancer': '.bundled',
    'digits': '.bundled',
    'iris': '.bundled',
    'wine': '.bundled',
    'synnonsep': '.generators',
    'synsep': '.generators',
    'load_csv': '.loaders',
    'load_idx': '.loaders',
    'load_letter': '.loaders',
    'load_libsvm': '.loaders',
    'load_npz': '.loaders',
    'load_parquet': '.loaders',
    'load_usps': '.loaders',
    'read_idx': '.loaders',
    'channel_equalization': '.regression',
    'ors_synthetic': '.regression',
    'speech_substitute': '.regression',
    'BanditLog': '.logs',
    'read_log': '.logs',
    'read_vw_cb': '.logs',
    'write_log': '.logs',
    'write_vw_cb': '.logs',
    'ADFExample': '.vw_adf',
    'CBLabel': '.vw_adf',
    'CCBExample': '.vw_adf',
    'CCBOutcome': '.vw_adf',
    'CCBSlot': '.vw_adf',
    'detect_vw_format': '.vw_adf',
    'read_vw_adf': '.vw_adf',
    'read_vw_ccb': '.vw_adf',
    'write_vw_adf': '.vw_adf',
    'write_vw_ccb': '.vw_adf',
    'CandidateLog': '.open_bandit',
    'ItemContext': '.open_bandit',
    'OpenBanditLog': '.open_bandit',
    'bts_action_distribution': '.open_bandit',
    'candidate_log': '.open_bandit',
    'load_item_context': '.open_bandit',
    'load_open_bandit': '.open_bandit',
    'read_prior_bts': '.open_bandit',
    'multiclass_candidates': '.ranking',
    'ranking_stream': '.ranking',
    'ENV_VAR': '.registry',
    'catalog': '.registry',
    'data_dirs': '.registry',
    'known_names': '.registry',
    'load': '.registry',
    'locate': '.registry',
    'uma_toy': '.uma_toy',  # the function (see noisyfeedback._lazy)
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = [
    "load",
    "catalog",
    "data_dirs",
    "locate",
    "known_names",
    "ENV_VAR",
    "synsep",
    "synnonsep",
    "iris",
    "digits",
    "wine",
    "breast_cancer",
    "read_idx",
    "load_idx",
    "load_usps",
    "load_letter",
    "load_libsvm",
    "load_npz",
    "load_csv",
    "load_parquet",
    "normalize_rows",
    "ors_synthetic",
    "channel_equalization",
    "speech_substitute",
    "uma_toy",
    "load_open_bandit",
    "OpenBanditLog",
    "load_item_context",
    "ItemContext",
    "candidate_log",
    "CandidateLog",
    "read_prior_bts",
    "bts_action_distribution",
    "BanditLog",
    "read_vw_cb",
    "write_vw_cb",
    "read_log",
    "write_log",
    "stream_log",
    "LogChunk",
    "register_format",
    "FORMATS",
    "read_vw_adf",
    "write_vw_adf",
    "read_vw_ccb",
    "write_vw_ccb",
    "detect_vw_format",
    "ADFExample",
    "CBLabel",
    "CCBExample",
    "CCBSlot",
    "CCBOutcome",
    "multiclass_candidates", "ranking_stream",
]
