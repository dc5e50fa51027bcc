"""The form of X the compiled simulate loops read: a dense X that is mostly zeros becomes CSR.

A round touches one row. The kernels handle a row as its non-zeros either way,
with the same arithmetic in the same order, so the result is bit for bit the same
(tests/core/test_simulate.py). What differs is memory traffic: a dense MNIST row is
6.3 kB (784 float64), its non-zeros as CSR about 1.8 kB (int32 column indices), and reading the dense
row and compacting it was about half of a round (profile in benchmarks/RESULTS.md).

``simulate`` therefore turns a validated dense X whose share of non-zeros is at
most `MAX_DENSITY` into CSR once per call (a counting and a filling pass, compiled;
about 0.1–0.15 s for MNIST's 60 000 × 784), and counts that time in the trace's wall time. Sweeps
convert once per process and data set with ``cache=True`` (tasks.py), so no
task copies X.

When the non-zeros take at most `MAX_CODED_VALUES` distinct values (pixels of
an image, counts, binary features), the rows become `CodedRows`: CSR whose
values are one-byte codes into a table of the distinct float64 values, with 2-byte
column indices when d ≤ 65 536. A MNIST row is then 450 bytes instead of 1.8 kB; the
kernels read ``values[code]``, the same float64 number, so again the same bits.
"""

from __future__ import annotations

import weakref

import numpy as np
import scipy.sparse as sp

from .kernels.linear import CODE_SLOTS, code_values, count_row_nonzeros, dense_to_coded, dense_to_csr

__all__ = ["MAX_CODED_VALUES", "MAX_DENSITY", "CodedRows", "simulation_rows"]

#: X whose non-zeros take at most this many distinct values is read as `CodedRows` (one-byte codes)
MAX_CODED_VALUES = 256

#: dense X with at most this share of non-zeros is read as CSR by simulate
MAX_DENSITY = 0.5
#: ... when the rounds visit at least this many rows per row of X: a conversion costs about as much
#: as 4 passes of rounds save on MNIST (0.15 s against ≈ 0.6 µs saved a round)
ROUNDS_PER_ROW = 4

_CACHE: dict[int, tuple[weakref.ref, sp.csr_matrix | None]] = {}  # None: X stays dense


def _to_csr(X: np.ndarray, counts: np.ndarray) -> sp.csr_matrix:
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    # int32 column indices (exact below 2**31 columns): a MNIST row is then 1.8 kB instead of 2.4 kB,
    # and a round's time follows the bytes it reads. +1: the branch-free fill writes one slot past the end
    indices = np.empty(nnz + 1, dtype=np.int32 if X.shape[1] < 2**31 else np.int64)
    data = np.empty(nnz + 1, dtype=X.dtype)  # float32 stays float32
    dense_to_csr(X, indptr, indices, data)
    # an empty matrix of the right shape, then our arrays: scipy's constructor would scan them and
    # copy and check them
    out = sp.csr_matrix(X.shape, dtype=X.dtype)
    out.data, out.indices, out.indptr = data[:nnz], indices[:nnz], indptr
    out.has_sorted_indices = True
    return out


class CodedRows:
    """The rows of X as CSR with coded values: row i's non-zeros are ``values[codes[p]]`` in columns
    ``indices[p]``, p in ``indptr[i]:indptr[i+1]`` (column order; every coded value is non-zero).

    Made by `simulation_rows` for the compiled simulate loops, which read it through
    ``kernel_view`` like a CSR matrix; it is not a scipy matrix (``toarray`` gives the dense X back).
    """

    ndim = 2

    def __init__(self, shape: tuple[int, int], indptr: np.ndarray, indices: np.ndarray, codes: np.ndarray,
                 values: np.ndarray):
        self.shape = (int(shape[0]), int(shape[1]))
        self.indptr, self.indices, self.codes, self.values = indptr, indices, codes, values
        #: per-row arrays that a learner derives from the rows once and reuses over the rounds of
        #: simulate (e.g. the oracle learners' squared norms); they live as long as the rows
        self.derived: dict[str, np.ndarray] = {}

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def dtype(self):
        return self.values.dtype

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices[: self.nnz]] = self.values[self.codes[: self.nnz]]
        return out

    def __repr__(self) -> str:
        return (f"CodedRows({self.shape[0]}×{self.shape[1]}, {self.nnz} non-zeros, "
                f"{self.values.shape[0]} distinct values)")


def _column_type(d: int):
    return np.uint16 if d <= 2**16 else (np.int32 if d < 2**31 else np.int64)


def _bits(a: np.ndarray) -> tuple[np.ndarray, np.uint64]:
    """The bit patterns of float64 / float32 values as unsigned integers (a view), and the mask of all
    bits but the sign (``bits & mask == 0``: the value is ±0)."""
    if a.dtype == np.float64:
        return a.view(np.uint64), np.uint64(2**63 - 1)
    return a.view(np.uint32), np.uint64(2**31 - 1)


def _table():
    """(slot keys, slot codes, the values' bits) for the coding kernels."""
    return (np.zeros(CODE_SLOTS, np.uint64), np.full(CODE_SLOTS, -1, np.int64),
            np.zeros(MAX_CODED_VALUES, np.uint64))


def _values(value_bits: np.ndarray, n_values: int, dtype) -> np.ndarray:
    """The coded values as float64, from their bits in the input's float type."""
    bits = value_bits[:n_values]
    if dtype == np.float64:
        return bits.view(np.float64).copy()
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _dense_rows(X: np.ndarray):
    """CodedRows, CSR or None (keep X dense) for a validated dense X.

    A counting pass decides whether X is mostly zero and sizes the arrays; one pass then codes the
    non-zeros, and stops at the first value past `MAX_CODED_VALUES`, falling back to a float CSR."""
    counts = np.empty(X.shape[0], dtype=np.int64)
    total = count_row_nonzeros(X, counts)
    if total > MAX_DENSITY * X.size:
        return None
    if MAX_CODED_VALUES > 0:
        bits, abs_mask = _bits(X)
        keys, slot_codes, value_bits = _table()
        indptr = np.empty(X.shape[0] + 1, dtype=np.int64)
        indices = np.empty(total, dtype=_column_type(X.shape[1]))
        codes = np.empty(total, dtype=np.uint8)
        _, n_values = dense_to_coded(bits, abs_mask, indptr, indices, codes, keys, slot_codes, value_bits,
                                     MAX_CODED_VALUES)
        if n_values <= MAX_CODED_VALUES:
            return CodedRows(X.shape, indptr, indices, codes, _values(value_bits, n_values, X.dtype))
    return _to_csr(X, counts)


def _sparse_rows(X):
    """CodedRows for a validated CSR X whose values are few, else X itself."""
    if MAX_CODED_VALUES <= 0 or X.dtype not in (np.float64, np.float32):
        return X
    keys, slot_codes, value_bits = _table()
    codes = np.empty(X.nnz, dtype=np.uint8)
    n_values = code_values(_bits(X.data)[0], codes, keys, slot_codes, value_bits, MAX_CODED_VALUES)
    if n_values > MAX_CODED_VALUES:
        return X
    return CodedRows(X.shape, X.indptr.astype(np.int64), X.indices.astype(_column_type(X.shape[1])), codes,
                     _values(value_bits, n_values, X.dtype))


def simulation_rows(X, n_rounds: int | None = None, *, cache: bool = False):
    """X as the simulate kernels should read it: `CodedRows` for a mostly-zero dense X or a CSR X
    whose non-zeros take at most `MAX_CODED_VALUES` values, CSR for another mostly-zero dense X,
    else X itself.

    A conversion pays for itself only over several passes, so it is made only when
    ``n_rounds >= ROUNDS_PER_ROW * n_rows`` (``n_rounds`` None: always).

    ``X`` must already be validated (``check_X``: C-contiguous float64/float32 or CSR
    without explicit zeros). With ``cache=True`` the conversion is kept while X lives and
    reused for the same array object; only use it for arrays that are not modified
    afterwards (the experiment runner's cached data sets).
    """
    if isinstance(X, CodedRows) or X.shape[0] * X.shape[1] == 0:
        return X
    if n_rounds is not None and n_rounds < ROUNDS_PER_ROW * X.shape[0] and not cache:
        return X
    if cache:
        hit = _CACHE.get(id(X))
        if hit is not None and hit[0]() is X:
            return X if hit[1] is None else hit[1]
    out = _sparse_rows(X) if sp.issparse(X) else _dense_rows(X)
    if out is X:
        out = None
    if cache:
        key = id(X)
        _CACHE[key] = (weakref.ref(X, lambda _ref, key=key: _CACHE.pop(key, None)), out)
    return X if out is None else out
