"""Parameter and input validation with scikit-learn style messages.

A constraint describes the values a parameter may take and how to say so:

>>> Interval(0, 1, closed="neither").describe()
'in (0, 1)'
>>> check_param("gamma", 1.5, Interval(0, 1, closed="neither"), owner="Banditron")
Traceback (most recent call last):
...
ValueError: The 'gamma' parameter of Banditron must be in (0, 1). Got 1.5 instead.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "TrustedRows",
    "trusted_rows",
    "Interval",
    "Integer",
    "Options",
    "OneOf",
    "Pair",
    "AnySeed",
    "check_param",
    "check_X",
    "check_sparse_structure",
    "check_labels",
    "check_memory",
    "check_targets",
]


@dataclass(frozen=True)
class Interval:
    """A real number in an interval; ``closed`` is 'both', 'left', 'right' or 'neither'."""

    low: float | None
    high: float | None
    closed: str = "both"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        v = float(value)
        if not np.isfinite(v):
            return False
        if self.low is not None:
            if self.closed in ("both", "left"):
                if v < self.low:
                    return False
            elif v <= self.low:
                return False
        if self.high is not None:
            if self.closed in ("both", "right"):
                if v > self.high:
                    return False
            elif v >= self.high:
                return False
        return True

    def describe(self) -> str:
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        low = "-inf" if self.low is None else _fmt(self.low)
        high = "inf" if self.high is None else _fmt(self.high)
        return f"in {left}{low}, {high}{right}"


@dataclass(frozen=True)
class Integer:
    """An integer (not bool) in [low, high]; either bound may be None."""

    low: int | None = None
    high: int | None = None

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return False
        if self.low is not None and value < self.low:
            return False
        if self.high is not None and value > self.high:
            return False
        return True

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an int in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an int >= {self.low}"
        if self.high is not None:
            return f"an int <= {self.high}"
        return "an int"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple

    def accepts(self, value: Any) -> bool:
        return any(type(value) is type(v) and bool(value == v) for v in self.values)  # type first: no array ==

    def describe(self) -> str:
        return "one of {" + ", ".join(repr(v) for v in self.values) + "}"


@dataclass(frozen=True)
class IsNone:
    """The value None (for parameters that are 'a number or None')."""

    def accepts(self, value: Any) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


@dataclass(frozen=True)
class OneOf:
    """Any of several constraints."""

    constraints: tuple

    def accepts(self, value: Any) -> bool:
        return any(c.accepts(value) for c in self.constraints)

    def describe(self) -> str:
        return " or ".join(c.describe() for c in self.constraints)


@dataclass(frozen=True)
class Pair:
    """A tuple or list of two values, each accepted by ``item``, the first >= the second: (high, low)."""

    item: Any

    def accepts(self, value: Any) -> bool:
        return (isinstance(value, (tuple, list)) and len(value) == 2 and all(self.item.accepts(v) for v in value)
                and float(value[0]) >= float(value[1]))

    def describe(self) -> str:
        return f"a pair (high, low), each {self.item.describe()}, high >= low"


@dataclass(frozen=True)
class AnySeed:
    """None, a non-negative int, or a numpy SeedSequence."""

    def accepts(self, value: Any) -> bool:
        if value is None or isinstance(value, np.random.SeedSequence):
            return True
        return Integer(0).accepts(value)

    def describe(self) -> str:
        return "None, an int >= 0 or a numpy.random.SeedSequence"


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def check_param(name: str, value: Any, constraint: Any, owner: str) -> None:
    """Raise a ValueError (TypeError for wrong kinds) naming parameter, allowed values and value."""
    if constraint.accepts(value):
        return
    msg = f"The {name!r} parameter of {owner} must be {constraint.describe()}. Got {value!r} instead."
    if isinstance(value, bool) or (
        isinstance(constraint, Interval) and not isinstance(value, numbers.Real)
    ) or (isinstance(constraint, Integer) and not isinstance(value, numbers.Integral)):
        raise TypeError(msg)
    raise ValueError(msg)


class TrustedRows(np.ndarray):
    """Rows a front door has validated already (2-D float64, C-contiguous, finite): `check_X` hands
    them on as a plain array without checking them again (the service validates a request's context
    once, at its boundary, and passes it to the learner's methods through this)."""


def trusted_rows(X: np.ndarray) -> TrustedRows:
    """``X`` (2-D float64, C-contiguous, finite: the caller has checked) marked as validated: no copy."""
    return X.view(TrustedRows)


def check_X(X: Any, name: str = "X", n_features: int | None = None, owner: str | None = None):
    """Validate a feature matrix: 2-D, numeric, finite; dense -> C-contiguous, CSR kept sparse.

    float64 and float32 inputs keep their dtype (no copy of a float32 X: the kernels read
    float32 values and compute in float64, so the results equal those of the same values
    as float64); integer and boolean inputs become float64 (no information is lost); object,
    string and complex inputs raise ``TypeError``; NaN/inf raise ``ValueError`` naming the row.
    """
    if type(X) is TrustedRows and (n_features is None or X.shape[1] == n_features):
        return X.view(np.ndarray)  # validated at the boundary; the same memory, a plain array
    where = f" of {owner}" if owner else ""
    from ._rows import CodedRows

    if isinstance(X, CodedRows):  # made by simulation_rows from a validated X
        pass
    elif sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name}{where} must be 2-D; got a sparse array with shape {X.shape}.")
        _check_sparse_structure(X, name, where)
        X = sp.csr_matrix(X) if X.format != "csr" else X
        if not (np.issubdtype(X.dtype, np.floating) or np.issubdtype(X.dtype, np.integer)):
            raise TypeError(f"{name}{where} must hold real numbers; got dtype {X.dtype}.")
        if X.dtype not in (np.float64, np.float32):
            X = X.astype(np.float64)
        from .kernels.validation import csr_is_canonical

        if not csr_is_canonical(X.indptr, X.indices):
            # unsorted or duplicate columns: sort and sum duplicates (as scipy reads them); a row with
            # duplicates could otherwise hold more than n_features entries and overrun a row buffer
            X = X.copy()
            X.has_sorted_indices = False
            X.has_canonical_format = False
            X.sum_duplicates()
        if X.nnz and not X.data.all():  # explicit zeros: the kernels read a CSR row's entries as its non-zeros
            X = X.copy()
            X.eliminate_zeros()
        bad = ~np.isfinite(X.data)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
            raise ValueError(f"{name}{where} contains NaN or infinity (first in row {row}).")
        columns = np.int32 if X.shape[1] < 2**31 else np.int64
        if X.indptr.dtype != np.int64 or X.indices.dtype != columns:
            # int64 offsets and int32 columns where they fit (as simulation_rows makes them: fewer bytes a
            # row), the types the kernels are compiled for, one signature for every CSR X and a dense X's
            # stand-ins; scipy's constructor would shrink the offsets back
            X = X.copy()
            X.indices = X.indices.astype(columns, copy=False)
            X.indptr = X.indptr.astype(np.int64)
    else:
        arr = np.asarray(X)
        if arr.dtype == object or not (
            np.issubdtype(arr.dtype, np.floating)
            or np.issubdtype(arr.dtype, np.integer)
            or arr.dtype == bool
        ):
            raise TypeError(f"{name}{where} must hold real numbers; got dtype {arr.dtype}.")
        if arr.ndim != 2:
            raise ValueError(
                f"{name}{where} must be 2-D (n_samples, n_features); got shape {arr.shape}. "
                "Reshape a single sample with x.reshape(1, -1)."
            )
        X = np.ascontiguousarray(arr, dtype=arr.dtype if arr.dtype in (np.float64, np.float32) else np.float64)
        finite = np.isfinite(X)
        if not finite.all():
            row = int(np.flatnonzero(~finite.all(axis=1))[0])
            raise ValueError(f"{name}{where} contains NaN or infinity (first in row {row}).")
    if X.shape[1] == 0:
        raise ValueError(f"{name}{where} has no features (shape {X.shape}); at least one column is needed.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name}{where} has {X.shape[1]} features, but the learner was fitted with {n_features}."
        )
    return X


def check_sparse_structure(X: Any, name: str = "X", owner: str | None = None) -> None:
    """Refuse a sparse ``X`` whose structure does not fit its shape (nothing for dense input);
    for code that hands X to another validator (scikit-learn's) before `check_X`."""
    if sp.issparse(X) and X.ndim == 2:
        _check_sparse_structure(X, name, f" of {owner}" if owner else "")


def _check_sparse_structure(X: Any, name: str, where: str) -> None:
    """Refuse a sparse matrix whose structure does not fit its shape (scipy accepts some: indices
    >= n_features or negative, decreasing ``indptr``), before any code indexes with it.

    CSR/CSC are checked by a compiled O(nnz) pass naming the first bad row (column of a CSC);
    COO by its index bounds; other formats are converted by scipy, which checks them."""
    from .kernels.validation import csr_first_bad_row

    fmt = X.format
    if fmt in ("csr", "csc"):
        indptr, indices, data = X.indptr, X.indices, X.data
        n_major, n_minor = X.shape if fmt == "csr" else X.shape[::-1]
        major = "row" if fmt == "csr" else "column"
        for a, what in ((indptr, "indptr"), (indices, "indices")):
            if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"{name}{where} is a malformed {fmt.upper()} matrix: {what} must be a 1-D "
                                 f"integer array; got {a.dtype} with shape {a.shape}.")
        if indptr.shape[0] != n_major + 1:
            raise ValueError(f"{name}{where} is a malformed {fmt.upper()} matrix: indptr has {indptr.shape[0]} "
                             f"entries for {n_major} {major}s (needs {n_major + 1}).")
        if data.ndim != 1 or data.shape[0] != indices.shape[0]:
            raise ValueError(f"{name}{where} is a malformed {fmt.upper()} matrix: data has shape {data.shape} "
                             f"but indices has {indices.shape[0]} entries.")
        if indptr[0] != 0:
            raise ValueError(f"{name}{where} is a malformed {fmt.upper()} matrix: indptr[0] is {indptr[0]}, not 0.")
        row, code = csr_first_bad_row(indptr, indices, n_minor)
        if row >= 0:
            if code == 1:
                why = (f"its offsets indptr[{row}]={indptr[row]}, indptr[{row + 1}]={indptr[row + 1]} decrease "
                       f"or pass the {indices.shape[0]} stored entries")
            else:
                bad = [int(j) for j in indices[indptr[row]:indptr[row + 1]] if not 0 <= j < n_minor]
                why = f"it has column index {bad[0]}, outside [0, {n_minor})" if fmt == "csr" else \
                    f"it has row index {bad[0]}, outside [0, {n_minor})"
            raise ValueError(f"{name}{where} is a malformed {fmt.upper()} matrix: {major} {row} is invalid ({why}).")
    elif fmt == "coo":
        for a, n, what in ((X.row, X.shape[0], "row"), (X.col, X.shape[1], "column")):
            bad = (a < 0) | (a >= n)
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise ValueError(f"{name}{where} is a malformed COO matrix: entry {k} has {what} index "
                                 f"{int(a[k])}, outside [0, {n}).")


def memory_limit() -> int:
    """Bytes of physical memory of this machine (a large number where it cannot be read)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 1 << 50


def format_bytes(n: float) -> str:
    """1.2 GB style."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"


def check_memory(n_bytes: float, what: str) -> None:
    """Refuse, before allocating, what cannot fit in this machine's memory: a ValueError saying
    how much ``what`` would need."""
    limit = memory_limit()
    if n_bytes > limit:
        raise ValueError(f"{what} would need {format_bytes(n_bytes)} of memory; this machine has "
                         f"{format_bytes(limit)}.")


def check_labels(y: Any, n_classes: int, n_samples: int | None = None, name: str = "y") -> np.ndarray:
    """Validate integer labels in 0..n_classes-1 (no silent coercion of floats or strings)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}.")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"{name} must hold integer labels 0..{n_classes - 1}; got dtype {arr.dtype}. "
            "Encode classes with sklearn.preprocessing.LabelEncoder first."
        )
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n_samples} rows.")
    if arr.size:
        bad = (arr < 0) | (arr >= n_classes)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold labels in 0..{n_classes - 1}; row {row} has label {int(arr[row])}."
            )
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_targets(y: Any, n_samples: int | None = None, name: str = "y", allow_2d: bool = False) -> np.ndarray:
    """Validate real-valued targets: 1-D (or 2-D, several labels a row, if ``allow_2d``), finite.

    Returns a C-contiguous float64 array; NaN/inf raise ``ValueError`` naming the row.
    """
    arr = np.asarray(y)
    if arr.dtype == object:  # numbers in an object array (scikit-learn's convention) are read as such
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"Unknown label type: {name} must hold real-valued targets; got objects that are "
                            "not numbers.") from None
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)) or arr.dtype == bool:
        raise TypeError(f"{name} must hold real-valued targets; got dtype {arr.dtype}.")
    if arr.ndim != 1 and not (allow_2d and arr.ndim == 2):
        shape = "1-D (one target a row) or 2-D (rows, labels a row)" if allow_2d else "1-D"
        raise ValueError(f"{name} must be {shape}; got shape {arr.shape}.")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n_samples} rows.")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        row = int(np.flatnonzero(~finite.reshape(arr.shape[0], -1).all(axis=1))[0])
        raise ValueError(f"{name} contains NaN or infinity (first in row {row}).")
    return arr
