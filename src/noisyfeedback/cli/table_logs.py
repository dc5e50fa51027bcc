"""``noisyfeedback evaluate`` on a table log: Parquet or CSV files (one file, a directory, a glob), such as the
decision service's ``export-log`` or the Open Bandit Dataset's, scored by an index learner's model
(``learner.save``, or a service snapshot) through `noisyfeedback.ope.evaluate_log`: one pass of running sums per
file, in this process or on a Dask cluster (``--scheduler tcp://host:8786``: one task a file, the same
estimates as one process).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: the estimators ``evaluate`` reports on a table log (as on a VW log, without the logged policy's value)
TABLE_ESTIMATORS = ("ips", "snips", "dr", "dm")
#: the column roles ``--column ROLE=NAME`` sets (`noisyfeedback.datasets.stream_log`'s table options)
ROLES = ("action", "reward", "propensity")


def _is_glob(data: Path) -> bool:
    return any(c in str(data) for c in "*?[")


def is_table_log(data: Path) -> bool:
    """Whether ``--data`` names a table log: a directory, a glob, or a file of a table format's suffix."""
    from ..datasets.streams import FORMATS

    text = str(data)
    if data.is_dir() or _is_glob(data):
        return True
    suffixes = tuple(s for f in FORMATS.values() if f.kind == "index" for s in f.suffixes)
    return text.lower().endswith(suffixes)


def table_options(columns: list[str] | None, features: str | None) -> dict[str, Any]:
    """The reader's options from ``--column ROLE=NAME`` (repeatable) and ``--features a,b,c``."""
    out: dict[str, Any] = {}
    for item in columns or []:
        role, sep, name = item.partition("=")
        role, name = role.strip(), name.strip()
        if not sep or role not in ROLES or not name:
            raise ValueError(f"--column takes ROLE=NAME with ROLE one of {', '.join(ROLES)}; got {item!r}.")
        out[role] = name
    if features is not None:
        names = [c.strip() for c in features.split(",") if c.strip()]
        if not names:
            raise ValueError(f"--features takes column names separated by commas; got {features!r}.")
        out["features"] = names
    return out


class GreedyPolicy:
    """The learner's greedy action (``predict``) as a distribution: 1 on it, 0 elsewhere."""

    def __init__(self, learner: Any):
        self.learner = learner

    def action_probabilities(self, X: Any) -> np.ndarray:
        P = np.asarray(self.learner.action_probabilities(X))
        out = np.zeros_like(P)
        out[np.arange(P.shape[0]), np.asarray(self.learner.predict(X))] = 1.0
        return out


def load_index_model(model: Path) -> Any:
    """The learner saved in ``model`` (``learner.save``, a service snapshot), which must score contexts
    (``action_probabilities``); a catalogue model of ``noisyfeedback train`` is refused naming the file."""
    from ..base import load
    from ..learners.catalogue._base import CatalogueOracle

    if not model.is_file():
        raise FileNotFoundError(f"{model}: no such model file.")
    try:
        learner = load(model)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        raise ValueError(f"{model}: not a model file of noisyfeedback ({exc})") from None
    if isinstance(learner, CatalogueOracle):
        raise ValueError(f"{model}: holds a {type(learner).__name__} (a model of 'noisyfeedback train'), which "
                         "scores VW cb/cb_adf logs; a table log needs an index learner's model (learner.save, or a "
                         "snapshot of 'noisyfeedback serve').")
    if not hasattr(learner, "action_probabilities"):
        raise ValueError(f"{model}: holds a {type(learner).__name__}, which gives no action probabilities.")
    return learner


def evaluate_table(data: Path, model: Path, greedy: bool, rho0: float, rho1: float, alpha: float,
                   scheduler: str | None, options: dict[str, Any], chunk_rows: int) -> tuple[Any, dict]:
    """(learner, estimator name -> Estimate) of the model's policy on the table log ``data``."""
    from ..ope import evaluate_log

    learner = load_index_model(model)
    policy = GreedyPolicy(learner) if greedy else learner
    source = str(data) if _is_glob(data) else data  # a glob is matched as text
    est = evaluate_log(policy, source, TABLE_ESTIMATORS, rho0=rho0, rho1=rho1, alpha=alpha,
                       chunk_rows=chunk_rows, scheduler=scheduler, **options)
    return learner, est
