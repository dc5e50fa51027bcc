"""Dataset names, data directories, ``load`` and ``catalog``.

Data directories are searched in this order: the ``data_dir`` argument,
then every entry of the environment variable ``NOISYFEEDBACK_DATA`` (several may be
joined with ``os.pathsep``), then ``~/.cache/noisyfeedback``. In each directory D a
data set's files are looked for in ``D/<name>/`` (e.g. ``D/mnist/``) and then in
``D`` itself; the first directory holding every file a split needs wins.
Fashion-MNIST is also found where Debian's ``dataset-fashion-mnist`` package puts it
(``/usr/share/datasets/fashion-mnist``).

>>> [d["name"] for d in catalog() if d["kind"] != "file"]  # doctest: +NORMALIZE_WHITESPACE
['synsep', 'synnonsep', 'iris', 'digits', 'wine', 'breast_cancer', 'uma_toy', 'ors_synthetic',
 'channel_equalization', 'speech_substitute']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .._names import UnknownName, key, suggest
from . import bundled, generators, loaders
from ._common import ENV_VAR, _dedupe, _normalize_inplace, check_split, data_dirs, normalize_rows  # noqa: F401
from .regression import channel_equalization, ors_synthetic, speech_substitute
from .uma_toy import uma_toy as _uma_toy

__all__ = ["load", "catalog", "data_dirs", "locate", "known_names", "ENV_VAR"]


_GET_DATA_HINT = (
    "set {env}=/path/to/data, or pass data_dir=... (--data-dir DIR on the command line)"
).format(env=ENV_VAR)


@dataclass(frozen=True)
class _Spec:
    name: str
    kind: str  # "generated" | "bundled" | "file"
    n_samples: int
    n_features: int
    n_classes: int | None
    splits: dict[str, int]
    description: str
    aliases: tuple[str, ...] = ()
    func: Callable[..., Any] | None = None  # generator / bundled loader
    # file-backed sets: split ("train"/"test", or "*" for one group serving every split)
    # -> one tuple of alternative file names per needed file
    files: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    subdirs: tuple[str, ...] = ()
    system_dirs: tuple[str, ...] = ()
    reader: Callable[..., Any] | None = None
    source: str = ""
    how_to_get: str = ""
    openml: tuple[str, int] | None = None
    target: str = "classification"  # "classification" (y int labels 0..K-1) | "regression" (float targets)

    @property
    def needs_data_dir(self) -> bool:
        """Whether loading it needs files from a data directory (else it is generated or bundled)."""
        return self.kind == "file"


def _normalizing(func: Callable[..., Any]) -> Callable[..., Any]:
    """A generator without a ``normalize`` argument, given one (rows scaled to unit L2 norm)."""

    def gen(normalize: bool = False, **kwargs):
        if any(k.startswith("return_") for k in kwargs):
            raise TypeError(f"load({func.__name__!r}) returns (X, y); call nf.datasets.{func.__name__} for more.")
        X, y = func(**kwargs)
        return (normalize_rows(X) if normalize else X), y

    gen.__wrapped__ = func  # inspect.signature sees the generator's own options
    gen.__name__ = func.__name__
    return gen


def _compressed(*names: str) -> tuple[str, ...]:
    out = []
    for n in names:
        out += [n, n + ".bz2", n + ".gz", n + ".xz"]
    return tuple(out)


def _idx_files(prefix: str) -> tuple[tuple[str, ...], ...]:
    return (
        (f"{prefix}-images-idx3-ubyte.gz", f"{prefix}-images-idx3-ubyte", f"{prefix}-images.idx3-ubyte"),
        (f"{prefix}-labels-idx1-ubyte.gz", f"{prefix}-labels-idx1-ubyte", f"{prefix}-labels.idx1-ubyte"),
    )


def _read_idx_set(located: dict[str, list[Path]], split: str) -> tuple[np.ndarray, np.ndarray]:
    parts = []
    for s in ("train", "test") if split == "all" else (split,):
        X, y = loaders.load_idx(*located[s])
        bad = (y < 0) | (y > 9)
        if bad.any():  # MNIST and Fashion-MNIST: ten classes
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{located[s][1]}: labels must be 0..9; label {i} is {int(y[i])}.")
        parts.append((X, y))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _read_usps(located: dict[str, list[Path]], split: str) -> tuple[np.ndarray, np.ndarray]:
    return loaders.load_usps(located["*"][0], split=split)


def _read_letter(located: dict[str, list[Path]], split: str) -> tuple[np.ndarray, np.ndarray]:
    return loaders.load_letter(located["*"][0], split=split)


def _libsvm_reader(n_features: int, classes: tuple) -> Callable[..., Any]:
    def read(located: dict[str, list[Path]], split: str):
        paths = [located[s][0] for s in (("train", "test") if split == "all" else (split,))]
        return loaders.load_libsvm(paths, n_features=n_features, classes=classes, zero_based=False)

    return read


_MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/ (mirror of http://yann.lecun.com/exdb/mnist/)"
_FASHION_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"

_SPECS: tuple[_Spec, ...] = (
    _Spec(
        "synsep", "generated", 100_000, 400, 9, {"train": 100_000},
        "SynSep (Kakade et al. 2008): separable 0/1 'bag of words', d=400, K=9; any n_samples, seeded",
        func=generators.synsep,
    ),
    _Spec(
        "synnonsep", "generated", 100_000, 400, 9, {"train": 100_000},
        "SynNonSep: SynSep with exactly 5% of the labels moved to another class",
        func=generators.synnonsep,
    ),
    _Spec("iris", "bundled", 150, 4, 3, {"train": 150}, "Fisher's iris (scikit-learn)", func=bundled.iris),
    _Spec(
        "digits", "bundled", 1797, 64, 10, {"train": 1797},
        "UCI optdigits 8x8 handwritten digits (scikit-learn)", func=bundled.digits,
    ),
    _Spec("wine", "bundled", 178, 13, 3, {"train": 178}, "UCI wine recognition (scikit-learn)", func=bundled.wine),
    _Spec(
        "breast_cancer", "bundled", 569, 30, 2, {"train": 569},
        "Wisconsin diagnostic breast cancer (scikit-learn)", func=bundled.breast_cancer,
        aliases=("breast-cancer", "breastcancer"),
    ),
    _Spec(
        "uma_toy", "generated", 10_000, 10, 10, {"train": 10_000},
        "UMA toy (Louche & Ralaivola 2015): separable K-class points on the unit sphere with a margin; "
        "any n_samples, seeded", func=_normalizing(_uma_toy), aliases=("uma-toy",),
    ),
    _Spec(
        "ors_synthetic", "generated", 50_000, 20, None, {"train": 50_000},
        "ORS synthetic regression (Moroshko & Crammer): y = <w, x> + noise, d=20; real-valued targets",
        func=_normalizing(ors_synthetic), aliases=("ors-synthetic",), target="regression",
    ),
    _Spec(
        "channel_equalization", "generated", 50_000, 20, None, {"train": 50_000},
        "Channel equalization (Moroshko & Crammer): recover s(t) from a noisy channel's taps; real-valued targets",
        func=_normalizing(channel_equalization), aliases=("channel-equalization",), target="regression",
    ),
    _Spec(
        "speech_substitute", "generated", 20_000, 1024, None, {"train": 20_000},
        "A speech-like adaptive-filter stream (a substitute for the paper's recordings), d=1024; real-valued targets",
        func=_normalizing(speech_substitute), aliases=("speech-substitute",), target="regression",
    ),
    _Spec(
        "mnist", "file", 70_000, 784, 10, {"train": 60_000, "test": 10_000},
        "MNIST handwritten digits, 28x28 pixels scaled to [0, 1]",
        files={"train": _idx_files("train"), "test": _idx_files("t10k")},
        subdirs=("mnist",),
        reader=_read_idx_set,
        source=_MNIST_URL,
        how_to_get=f"download the four idx .gz files from {_MNIST_URL}",
        openml=("mnist_784", 1),
    ),
    _Spec(
        "fashion-mnist", "file", 70_000, 784, 10, {"train": 60_000, "test": 10_000},
        "Fashion-MNIST (Zalando), 28x28 pixels scaled to [0, 1]",
        aliases=("fashion_mnist", "fashionmnist"),
        files={"train": _idx_files("train"), "test": _idx_files("t10k")},
        subdirs=("fashion-mnist", "fashion_mnist", "fashion"),
        system_dirs=("/usr/share/datasets/fashion-mnist",),
        reader=_read_idx_set,
        source=_FASHION_URL,
        how_to_get=(
            "apt-get install dataset-fashion-mnist (puts the files in /usr/share/datasets/fashion-mnist, "
            f"which is searched too), or download the four idx .gz files from {_FASHION_URL} "
            "(see https://github.com/zalandoresearch/fashion-mnist)"
        ),
        openml=("Fashion-MNIST", 1),
    ),
    _Spec(
        "usps", "file", 9298, 256, 10, {"train": 7291, "test": 2007},
        "USPS handwritten digits, 16x16, from usps.h5 (needs h5py)",
        files={"*": (("usps.h5",),)},
        subdirs=("usps",),
        reader=_read_usps,
        source="https://www.kaggle.com/datasets/bistaumanga/usps-dataset",
        how_to_get=(
            "download usps.h5 from https://www.kaggle.com/datasets/bistaumanga/usps-dataset "
            "(HDF5 with groups train/test holding data/target)"
        ),
    ),
    _Spec(
        "letter", "file", 20_000, 16, 26, {"train": 16_000, "test": 4_000},
        "UCI Letter Recognition; train = first 16000 rows, test = last 4000",
        aliases=("letter-recognition", "letters"),
        files={"*": (_compressed("letter-recognition.data"),)},
        subdirs=("letter", "letter-recognition"),
        reader=_read_letter,
        source="https://archive.ics.uci.edu/dataset/59/letter+recognition",
        how_to_get=(
            "download letter-recognition.data from https://archive.ics.uci.edu/dataset/59/letter+recognition"
        ),
        openml=("letter", 1),
    ),
    _Spec(
        "rcv1", "file", 697_641, 47_236, 2, {"train": 20_242, "test": 677_399},
        "RCV1 binary (LIBSVM rcv1.binary, CCAT+ECAT vs GCAT+MCAT), sparse tf-idf; labels -1/+1 -> 0/1",
        aliases=("rcv1-binary", "rcv1_binary"),
        files={
            "train": (_compressed("rcv1_train.binary"),),
            "test": (_compressed("rcv1_test.binary"),),
        },
        subdirs=("rcv1",),
        reader=_libsvm_reader(47_236, (-1, 1)),
        source="https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#rcv1.binary",
        how_to_get=(
            "download rcv1_train.binary.bz2 and rcv1_test.binary.bz2 from "
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#rcv1.binary "
            "(.bz2 files are read as they are)"
        ),
    ),
    _Spec(
        "news20", "file", 19_928, 62_061, 20, {"train": 15_935, "test": 3_993},
        "20 Newsgroups (LIBSVM news20.scale), sparse; labels 1..20 -> 0..19",
        aliases=("20news",),
        files={
            "train": (_compressed("news20.scale", "news20"),),
            "test": (_compressed("news20.t.scale", "news20.t"),),
        },
        subdirs=("news20",),
        reader=_libsvm_reader(62_061, tuple(range(1, 21))),
        source="https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#news20",
        how_to_get=(
            "download news20.scale.bz2 and news20.t.scale.bz2 from "
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass.html#news20"
        ),
    ),
)

#: every name and alias by its lookup key (`noisyfeedback.build.key`: case, spaces, '-' and '_' ignored)
_BY_NAME: dict[str, _Spec] = {}
for _s in _SPECS:
    for _n in (_s.name, *_s.aliases):
        _BY_NAME[key(_n)] = _s


def known_names() -> list[str]:
    """The canonical names ``load`` understands, in catalog order.

    Examples
    --------
    >>> known_names()[:6]
    ['synsep', 'synnonsep', 'iris', 'digits', 'wine', 'breast_cancer']
    """
    return [s.name for s in _SPECS]


# ----------------------------------------------------------- directories


def _search_dirs(spec: _Spec, data_dir) -> list[Path]:
    dirs: list[Path] = []
    for base in data_dirs(data_dir):
        dirs += [base / sub for sub in spec.subdirs]
        dirs.append(base)
    dirs += [Path(d) for d in spec.system_dirs]
    return _dedupe(dirs)


def _groups(spec: _Spec, split: str) -> list[str]:
    if "*" in spec.files:
        return ["*"]
    return ["train", "test"] if split == "all" else [split]


def _find_group(spec: _Spec, group: str, dirs: list[Path]) -> list[Path] | None:
    for d in dirs:
        found = []
        for alternatives in spec.files[group]:
            hit = next((d / f for f in alternatives if (d / f).is_file()), None)
            if hit is None:
                break
            found.append(hit)
        else:
            return found
    return None


def _missing_message(spec: _Spec, split: str, missing: list[str], dirs: list[Path]) -> str:
    wanted = []
    for group in missing:
        for alternatives in spec.files[group]:
            alt = f" (or {', '.join(alternatives[1:])})" if len(alternatives) > 1 else ""
            wanted.append(f"  {alternatives[0]}{alt}")
    looked = "\n".join(f"  {d}" for d in dirs)
    base = data_dirs(None)[-1]
    lines = [
        f"Dataset {spec.name!r} (split {split!r}): file(s) not found:",
        *wanted,
        "Looked in these directories:",
        looked,
        f"To get it: {spec.how_to_get}.",
        f"Put the files in DIR/{spec.subdirs[0]}/ or DIR/ for any data directory DIR above "
        f"(e.g. {base / spec.subdirs[0]}), {_GET_DATA_HINT}.",
    ]
    if spec.openml:
        lines.append(f"Or pass download=True to fetch it from OpenML ({spec.openml[0]}) into {base / 'openml'}.")
    return "\n".join(lines)


def locate(name: str, split: str = "train", data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The files ``load(name, split, data_dir)`` would read, for a file-backed data set.

    Returns a list of Paths (in reading order). Raises FileNotFoundError (saying
    which files, where it looked and how to get them) if any is missing, and
    ValueError for names that are not file-backed.
    """
    spec = _spec(name)
    check_split(split, owner="locate")
    if spec.kind != "file":
        raise ValueError(f"{spec.name!r} is a {spec.kind} data set; it has no files.")
    located = _locate(spec, split, data_dir)
    return [p for g in _groups(spec, split) for p in located[g]]


def _locate(spec: _Spec, split: str, data_dir) -> dict[str, list[Path]]:
    dirs = _search_dirs(spec, data_dir)
    located, missing = {}, []
    for g in _groups(spec, split):
        found = _find_group(spec, g, dirs)
        if found is None:
            missing.append(g)
        else:
            located[g] = found
    if missing:
        raise FileNotFoundError(_missing_message(spec, split, missing, dirs))
    return located


# ---------------------------------------------------------------- names


def _spec(name: str) -> _Spec:
    k = key(name) if isinstance(name, str) else None
    if k in _BY_NAME:
        return _BY_NAME[k]
    raise _unknown(name)


def _unknown(name: Any) -> UnknownName:
    close = suggest(name, [n for s in _SPECS for n in (s.name, *s.aliases)])
    found = tuple(dict.fromkeys(_BY_NAME[key(c)].name for c in close))
    hint = f" Did you mean {found[0]!r}?" if found else ""
    return UnknownName("dataset", name, found, tuple(known_names()), (
        f"Unknown dataset {name!r}.{hint} Known names: {', '.join(known_names())} "
        f"(aliases: {', '.join(a for s in _SPECS for a in s.aliases)}); or a path to a file ending in "
        f"{', '.join(_SUFFIXES)}."
    ))


_SUFFIXES = (
    ".npz", ".csv", ".tsv", ".parquet", ".pq", ".svm", ".svmlight", ".libsvm", ".txt", ".h5", ".hdf5",
)
_COMPRESSION = (".gz", ".bz2", ".xz")


def _file_kind(path: Path) -> str | None:
    low = path.name.lower()
    for c in _COMPRESSION:
        if low.endswith(c) and not low.endswith((".npz", ".parquet")):
            low = low[: -len(c)]
            break
    if low.startswith("letter-recognition") and low.endswith(".data"):
        return "letter"
    for suffix, kind in (
        (".npz", "npz"), (".csv", "csv"), (".tsv", "tsv"), (".parquet", "parquet"), (".pq", "parquet"),
        (".svm", "libsvm"), (".svmlight", "libsvm"), (".libsvm", "libsvm"), (".txt", "libsvm"),
        (".h5", "usps"), (".hdf5", "usps"),
    ):
        if low.endswith(suffix):
            return kind
    return None


def _looks_like_path(name: Any) -> bool:
    if isinstance(name, os.PathLike):
        return True
    if not isinstance(name, str):
        return False
    return "/" in name or os.sep in name or _file_kind(Path(name)) is not None or Path(name).is_file()


def _resolve_path(name: str | os.PathLike, data_dir) -> Path:
    p = Path(os.fspath(name)).expanduser()
    if p.is_file():
        return p
    looked = [Path.cwd() if not p.is_absolute() else p.parent]
    if not p.is_absolute():
        for base in data_dirs(data_dir):
            if (base / p).is_file():
                return base / p
            looked.append(base)
    raise FileNotFoundError(
        f"Data file {os.fspath(name)!r} not found. Looked in these directories:\n"
        + "\n".join(f"  {d}" for d in _dedupe(looked))
        + f"\nGive an existing path, put the file in a data directory, or {_GET_DATA_HINT}."
    )


def _sniff_libsvm(path: Path) -> bool:
    """True if the first data line of ``path`` looks like 'label index:value ...'."""
    seen_pair = False
    try:
        with loaders._open_text(path) as fh:
            for _, line in zip(range(100), fh):
                tokens = line.split("#", 1)[0].split()
                if not tokens:
                    continue
                float(tokens[0])
                for tok in tokens[1:]:
                    key, sep, val = tok.partition(":")
                    if not sep:
                        return False
                    if key != "qid":
                        int(key)
                    float(val)
                    seen_pair = True
    except (ValueError, OSError, EOFError, UnicodeDecodeError):
        return False
    return seen_pair


def _load_path(name, split: str, data_dir, kwargs: dict[str, Any]):
    path = _resolve_path(name, data_dir)
    kind = _file_kind(path)
    if kind is None and _sniff_libsvm(path):
        kind = "libsvm"
    if kind is None:
        raise ValueError(
            f"{path}: unknown file type; supported: {', '.join(_SUFFIXES)} (optionally .gz/.bz2/.xz "
            "for text formats) and letter-recognition.data. Call a loader such as "
            "nf.datasets.load_libsvm directly for other names."
        )
    if kind == "npz":
        return loaders.load_npz(path, **kwargs)
    if kind == "csv":
        return loaders.load_csv(path, **kwargs)
    if kind == "tsv":
        return loaders.load_csv(path, **{"delimiter": "\t", **kwargs})
    if kind == "parquet":
        return loaders.load_parquet(path, **kwargs)
    if kind == "libsvm":
        return loaders.load_libsvm(path, **kwargs)
    if kind == "usps":
        return loaders.load_usps(path, split=split, **kwargs)
    return loaders.load_letter(path, split=split, **kwargs)


# ----------------------------------------------------------------- load


def load(
    name: str | os.PathLike,
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    normalize: bool = False,
    *,
    download: bool = False,
    **kwargs: Any,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Load a data set by name or path: ``(X, y)``.

    ``name`` is one of `known_names` (case-insensitive; aliases such as
    "fashion_mnist" work) or a path to a ``.npz``, ``.csv``/``.tsv``, ``.parquet``,
    ``.svm``/``.libsvm``/``.svmlight``/``.txt`` (LIBSVM), ``.h5`` (USPS layout) or
    ``letter-recognition.data`` file; relative paths are also looked for in the data
    directories (see `data_dirs`).

    ``split``: "train", "test" or "all" (train then test). File sets with a split
    (mnist, fashion-mnist, usps, letter, rcv1, news20) honour it; letter has no
    official split: train = first 16000 rows, test = last 4000. Generated and bundled
    sets are returned whole for "train" and "all" and raise ValueError for "test"
    (they have no held-out part; split them yourself, e.g. with
    sklearn.model_selection.train_test_split, or generate another seed). For an
    explicit file path the whole file is returned and ``split`` is ignored, except
    for .h5 (USPS layout) and letter files.

    ``normalize=True`` scales every row to unit L2 norm (zero rows stay zero), dense or CSR.
    ``download=True`` fetches mnist, fashion-mnist or letter from OpenML when their
    files are not found (scikit-learn's cache under the first data directory's
    ``openml/``; pass download=True again to reuse it). Offline it raises
    FileNotFoundError; for every other data set it is ignored. Other keyword arguments go to the generator or file
    loader (e.g. ``n_samples``, ``seed`` for synsep; ``label_column`` for CSV).

    Returns ``(X, y)``: X float64 2-D (dense C-contiguous ndarray, or CSR for LIBSVM
    data), y int64 labels 0..K-1 — except ``load("open_bandit", policy="random"|"bts",
    campaign="all"|"men"|"women", data_dir=...)``, which returns the logged rows as an
    `OpenBanditLog` (X, actions, position, reward,
    propensities). Raises ValueError for an unknown name (listing the
    known ones) and FileNotFoundError naming the missing files, the directories
    searched and how to get the data.

    >>> X, y = load("wine", normalize=True)
    >>> X.shape, y.dtype.name, round(float(np.linalg.norm(X[0])), 12)
    ((178, 13), 'int64', 1.0)
    """
    if isinstance(name, str) and key(name) in ("openbandit", "obd"):
        from .open_bandit import load_open_bandit  # logged bandit data, not (X, y): an OpenBanditLog

        return load_open_bandit(data_dir=data_dir, **kwargs)
    check_split(split)
    if isinstance(name, str) and key(name) in _BY_NAME:
        spec = _BY_NAME[key(name)]
    elif _looks_like_path(name):
        X, y = _load_path(name, split, data_dir, kwargs)
        return (normalize_rows(X) if normalize else X), y
    else:
        raise _unknown(name)

    if spec.kind == "generated":
        if split == "test":
            raise ValueError(
                f"{spec.name!r} is generated and has no test split; use split='train' (or 'all') and "
                "generate a test set with another n_samples/seed, or split it yourself."
            )
        return spec.func(normalize=normalize, **kwargs)
    if kwargs:
        raise TypeError(f"load({spec.name!r}) got unexpected keyword arguments: {sorted(kwargs)}.")
    if spec.kind == "bundled":
        if split == "test":
            raise ValueError(
                f"{spec.name!r} (bundled with scikit-learn) has no test split; use split='train' or 'all' "
                "(the whole set) and split it yourself, e.g. with sklearn.model_selection.train_test_split."
            )
        return spec.func(normalize=normalize)
    try:
        located = _locate(spec, split, data_dir)
    except FileNotFoundError:
        if not download or spec.openml is None:
            raise
        X, y = _download_openml(spec, split, data_dir)
    else:
        X, y = spec.reader(located, split)
    if normalize:
        if sp.issparse(X):
            X = normalize_rows(X)
        else:
            _normalize_inplace(X)
    return X, y


# --------------------------------------------------------------- OpenML


def _download_openml(spec: _Spec, split: str, data_dir) -> tuple[np.ndarray, np.ndarray]:
    name, version = spec.openml
    cache = data_dirs(data_dir)[0] / "openml"
    try:
        from sklearn.datasets import fetch_openml

        bunch = fetch_openml(name=name, version=version, data_home=os.fspath(cache), as_frame=False)
    except Exception as exc:  # offline: URLError/OSError/HTTPError; anything else: give the same advice
        msg = ""
        try:
            _locate(spec, split, data_dir)
        except FileNotFoundError as missing:
            msg = str(missing)
        raise FileNotFoundError(
            f"{msg}\nDownloading {name!r} from OpenML failed ({type(exc).__name__}: {exc})."
        ) from exc
    X = np.ascontiguousarray(bunch.data, dtype=np.float64)
    y_raw = np.asarray(bunch.target).astype(str)
    if spec.name == "letter":
        y = np.array([ord(c.strip().upper()) - ord("A") for c in y_raw], dtype=np.int64)
    else:
        y = y_raw.astype(np.int64)
        X /= 255.0
    n_train = spec.splits["train"]
    if X.shape[0] != spec.n_samples or X.shape[1] != spec.n_features:
        raise ValueError(
            f"OpenML {name!r} has shape {X.shape}; expected ({spec.n_samples}, {spec.n_features})."
        )
    if split == "train":
        return np.ascontiguousarray(X[:n_train]), y[:n_train].copy()
    if split == "test":
        return np.ascontiguousarray(X[n_train:]), y[n_train:].copy()
    return X, y


# -------------------------------------------------------------- catalog


def catalog(data_dir: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """One dict per known data set, in a fixed order.

    Keys: ``name``, ``kind`` ("generated" | "bundled" | "file"), ``n_samples`` (all
    splits together; the default size for generators), ``n_features``,
    ``n_classes`` (None for regression sets), ``target`` ("classification" | "regression"),
    ``needs_data_dir`` (its files must be found in a data directory: ``kind == "file"``),
    ``available`` (bool: every file of every split was found; always
    True for generated and bundled sets), ``path`` (str: the directory holding the
    train files, or None), plus ``splits`` (split -> number of samples),
    ``description``, ``aliases``, ``files`` (file names wanted), ``source`` (URL).
    File sets are only looked for, not read, so this is cheap.

    >>> row = catalog()[2]
    >>> {k: row[k] for k in ("name", "kind", "n_samples", "n_features")}
    {'name': 'iris', 'kind': 'bundled', 'n_samples': 150, 'n_features': 4}
    >>> {k: row[k] for k in ("n_classes", "available", "path")}
    {'n_classes': 3, 'available': True, 'path': None}
    """
    rows = []
    for spec in _SPECS:
        available, path = True, None
        if spec.kind == "file":
            dirs = _search_dirs(spec, data_dir)
            found = {g: _find_group(spec, g, dirs) for g in spec.files}
            available = all(v is not None for v in found.values())
            first = found.get("train", found.get("*"))
            path = os.fspath(first[0].parent) if first else None
        rows.append(
            {
                "name": spec.name,
                "kind": spec.kind,
                "n_samples": spec.n_samples,
                "n_features": spec.n_features,
                "n_classes": spec.n_classes,
                "target": spec.target,
                "needs_data_dir": spec.needs_data_dir,
                "available": available,
                "path": path,
                "splits": dict(spec.splits),
                "description": spec.description,
                "aliases": list(spec.aliases),
                "files": [alts[0] for g in spec.files.values() for alts in g],
                "source": spec.source,
            }
        )
    return rows

