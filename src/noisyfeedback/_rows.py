"""The form of X the compiled simulate loops read: a dense X that is mostly zeros becomes CSR.

A round touches one row. The kernels handle a row as its non-zeros either way,
with the same arithmetic in the same order, so the result is bit for bit the same
(tests/test_simulate.py). What differs is memory traffic: a dense MNIST row is
6.3 kB (784 float64), its non-zeros as CSR about 1.8 kB (int32 column indices), and reading the dense
row and compacting it was about half of a round (profile in benchmarks/README.md).

``simulate`` therefore turns a validated dense X whose share of non-zeros is at
most :data:`MAX_DENSITY` into CSR once per call (one compiled pass; about 0.15 s for
MNIST's 60 000 × 784), and counts that time in the trace's wall time. Sweeps
convert once per process and data set with ``cache=True`` (tasks.py), so no
task copies X.
"""

from __future__ import annotations

import weakref

import numpy as np
import scipy.sparse as sp

from .kernels.linear import count_row_nonzeros, dense_to_csr

__all__ = ["MAX_DENSITY", "simulation_rows"]

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


def simulation_rows(X, n_rounds: int | None = None, *, cache: bool = False):
    """X as the simulate kernels should read it: CSR for a mostly-zero dense X, else X itself.

    A conversion pays for itself only over several passes, so it is made only when
    ``n_rounds >= ROUNDS_PER_ROW * n_rows`` (``n_rounds`` None: always).

    ``X`` must already be validated (``check_X``: C-contiguous float64 or CSR with
    int64 indices). With ``cache=True`` the conversion is kept while X lives and
    reused for the same array object; only use it for arrays that are not modified
    afterwards (the experiment runner's cached data sets).
    """
    if sp.issparse(X) or X.size == 0:
        return X
    if n_rounds is not None and n_rounds < ROUNDS_PER_ROW * X.shape[0] and not cache:
        return X
    if cache:
        hit = _CACHE.get(id(X))
        if hit is not None and hit[0]() is X:
            return X if hit[1] is None else hit[1]
    counts = np.empty(X.shape[0], dtype=np.int64)
    out = None if count_row_nonzeros(X, counts) > MAX_DENSITY * X.size else _to_csr(X, counts)
    if cache:
        key = id(X)
        _CACHE[key] = (weakref.ref(X, lambda _ref, key=key: _CACHE.pop(key, None)), out)
    return X if out is None else out
