"""Kernel twins of the feedback channels in :mod:`noisyfeedback.feedback`."""

from numba import njit


@njit(cache=True)
def flip(f, u, rho0, rho1):
    """f̃ from f with P(f̃=0 | f=1) = rho1 and P(f̃=1 | f=0) = rho0, using one uniform u."""
    if f == 1:
        return 1 if u >= rho1 else 0
    return 1 if u < rho0 else 0


@njit(cache=True)
def confusion_label(y, u, Ccum):
    """Noisy label r ~ C[:, y] by inverse CDF of the cumulative column Ccum[:, y]."""
    K = Ccum.shape[0]
    for r in range(K):
        if u < Ccum[r, y]:
            return r
    return K - 1
