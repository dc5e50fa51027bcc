"""Helpers shared by the dataset modules: row normalization and label encoding."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["normalize_rows", "encode_labels"]

#: splits understood by every dataset function
SPLITS = ("train", "test", "all")

#: the environment variable listing data directories (os.pathsep-separated)
ENV_VAR = "NOISYFEEDBACK_DATA"


def check_split(split: Any, allowed: tuple[str, ...] = SPLITS, owner: str = "load") -> str:
    """Return ``split`` if it is one of ``allowed``; raise ValueError otherwise."""
    if not isinstance(split, str) or split not in allowed:
        raise ValueError(
            f"The 'split' parameter of {owner} must be one of {{{', '.join(repr(s) for s in allowed)}}}. "
            f"Got {split!r} instead."
        )
    return split


def normalize_rows(X):
    """Scale every row of ``X`` to unit Euclidean (L2) norm; rows of zeros stay zero.

    Works on dense arrays and on scipy.sparse matrices (the result is CSR).
    Returns a new float64 array or CSR matrix; the input is not modified.

    >>> import numpy as np
    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]])
    >>> import scipy.sparse as sp
    >>> normalize_rows(sp.csr_matrix([[0.0, 2.0], [0.0, 0.0]])).toarray()
    array([[0., 1.],
           [0., 0.]])
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        sq = np.square(X.data)
        counts = np.diff(X.indptr)
        norms = np.zeros(X.shape[0], dtype=np.float64)
        nonempty = counts > 0
        if X.data.size:
            norms[nonempty] = np.add.reduceat(sq, X.indptr[:-1][nonempty])
        norms = np.sqrt(norms)
        norms[norms == 0.0] = 1.0
        X.data /= np.repeat(norms, counts)
        return X
    X = np.array(X, dtype=np.float64, order="C", copy=True)
    if X.ndim != 2:
        raise ValueError(f"normalize_rows expects a 2-D array; got shape {X.shape}.")
    _normalize_inplace(X)
    return X


def _normalize_inplace(X: np.ndarray) -> None:
    """Divide each row of a dense float64 array by its L2 norm, in place (zero rows untouched)."""
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    X /= norms


def encode_labels(
    y_raw: np.ndarray,
    source: str,
    classes: Any = None,
    always_remap: bool = False,
    regression: bool = False,
) -> np.ndarray:
    """Turn raw labels into int64 labels 0..K-1 (or float64 targets if ``regression``).

    - ``classes`` given: label ``classes[i]`` becomes ``i``; any other value is an error.
    - otherwise, non-negative integer(-valued) labels are kept as they are unless
      ``always_remap``; all other labels (negative, e.g. -1/+1, or strings) are mapped
      to 0..K-1 in the sorted order of the distinct original values.

    ``source`` (a file name) is used in error messages.
    """
    y_raw = np.asarray(y_raw)
    if y_raw.ndim != 1:
        y_raw = y_raw.reshape(-1) if y_raw.ndim == 2 and 1 in y_raw.shape else y_raw
        if y_raw.ndim != 1:
            raise ValueError(f"{source}: labels must be 1-D; got shape {y_raw.shape}.")
    if regression:
        try:
            y = np.asarray(y_raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source}: regression targets must be numbers ({exc}).") from None
        bad = ~np.isfinite(y)
        if bad.any():
            raise ValueError(f"{source}: target in row {int(np.flatnonzero(bad)[0])} is NaN or infinite.")
        return np.ascontiguousarray(y)
    numeric = y_raw.dtype != object and (
        np.issubdtype(y_raw.dtype, np.number) or y_raw.dtype == bool
    )
    if numeric:
        if np.issubdtype(y_raw.dtype, np.floating):
            bad = ~np.isfinite(y_raw)
            if bad.any():
                raise ValueError(f"{source}: label in row {int(np.flatnonzero(bad)[0])} is NaN or infinite.")
            frac = y_raw != np.round(y_raw)
            if frac.any():
                row = int(np.flatnonzero(frac)[0])
                raise ValueError(
                    f"{source}: label {float(y_raw[row])!r} in row {row} is not an integer; class labels must be "
                    "integers or strings (for real-valued targets pass regression=True)."
                )
        if classes is None and not always_remap and y_raw.dtype != bool:
            if y_raw.size == 0 or y_raw.min() >= 0:
                return np.ascontiguousarray(y_raw, dtype=np.int64)
    else:
        y_raw = y_raw.astype(str)
    if classes is not None:
        cls = np.asarray(classes)
        if not numeric:
            cls = cls.astype(str)
        if cls.ndim != 1 or np.unique(cls).size != cls.size:
            raise ValueError(f"classes must be a 1-D sequence of distinct values; got {classes!r}.")
        order = np.argsort(cls, kind="stable")
        sorted_cls = cls[order]
        pos = np.searchsorted(sorted_cls, y_raw)
        pos_clipped = np.minimum(pos, sorted_cls.size - 1)
        bad = sorted_cls[pos_clipped] != y_raw
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{source}: label {y_raw[row]!r} in row {row} is not one of the classes {cls.tolist()!r}."
            )
        return np.ascontiguousarray(order[pos_clipped], dtype=np.int64)
    _, y = np.unique(y_raw, return_inverse=True)
    return np.ascontiguousarray(y.reshape(-1), dtype=np.int64)


def display(path: Any) -> str:
    """A path as text for messages."""
    return os.fspath(path)


def data_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The data directories searched, highest priority first.

    ``data_dir`` (if given), then each entry of ``$NOISYFEEDBACK_DATA``, then
    ``~/.cache/noisyfeedback``. Directories need not exist. Returns a list of Paths
    (``~`` expanded, duplicates removed).
    """
    out: list[Path] = []
    if data_dir is not None:
        out.append(Path(os.fspath(data_dir)).expanduser())
    env = os.environ.get(ENV_VAR, "")
    out += [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    out.append(Path.home() / ".cache" / "noisyfeedback")
    return _dedupe(out)


def _dedupe(paths: list[Path]) -> list[Path]:
    seen, out = set(), []
    for p in paths:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
