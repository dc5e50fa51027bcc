"""Structural check of a CSR matrix before any kernel indexes with it."""

from numba import njit

#: codes returned by `csr_first_bad_row` (with the row), -1 when the structure is sound
CSR_OK, CSR_INDPTR_DECREASES, CSR_INDEX_OUT_OF_RANGE = -1, 1, 2


@njit(cache=True)
def csr_first_bad_row(indptr, indices, n_cols):
    """(row, code) of the first row whose offsets decrease or whose column indices fall outside
    [0, n_cols); (-1, CSR_OK) when every row is sound. O(n_rows + nnz).

    Trusts only that ``indptr[0] == 0`` and ``indptr[-1] == len(indices)`` (checked by the caller)."""
    n_rows = indptr.shape[0] - 1
    for i in range(n_rows):
        start = indptr[i]
        stop = indptr[i + 1]
        if stop < start or stop > indices.shape[0]:
            return i, 1
        for p in range(start, stop):
            j = indices[p]
            if j < 0 or j >= n_cols:
                return i, 2
    return -1, -1


@njit(cache=True)
def csr_is_canonical(indptr, indices):
    """True when every row's column indices strictly increase (sorted, no duplicates): at most
    n_cols entries a row, the form the kernels' row buffers are sized for. O(nnz).

    scipy accepts duplicates (and sums them where it reads the matrix); its ``has_canonical_format``
    flag is cached and can be set by hand, so it is not trusted here."""
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i] + 1, indptr[i + 1]):
            if indices[p] <= indices[p - 1]:
                return False
    return True
