"""Kernel twins of the feedback channels in `noisyfeedback.feedback`."""

import numpy as np
from numba import njit, types
from numba.extending import overload


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


def rate_at(x, a):
    """The rate (or any per-action number) of action a: ``x`` itself for a scalar; for a float64 array
    ``x[0]`` when it holds one value (every action alike) and ``x[a]`` when it holds one per action.
    Compiled code takes either form (an overload per type); scalars are what the loops took before."""
    if np.ndim(x) == 0:
        return x
    return x[0] if x.shape[0] == 1 else x[a]


@overload(rate_at, inline="always")
def _rate_at_compiled(x, a):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, a: x
    if isinstance(x, types.Array):  # (x[0] for one value, x[a] for one per action: a branch-free index, as
        # a conditional inlined here made numba's IR checks warn in every loop that called it)
        return lambda x, a: x[min(a, x.shape[0] - 1)]
    return None


def set_rate(x, chosen, m):
    """A set's rate: ``x`` for a scalar or a one-value array; for one rate per label the mean over the
    set ``chosen[:m]``, summed in the order of ``chosen`` (the channel's ``set_rates``)."""
    if np.ndim(x) == 0:
        return x
    if x.shape[0] == 1:
        return x[0]
    s = x[chosen[0]]
    for j in range(1, m):
        s += x[chosen[j]]
    return s / m


@njit(cache=True)
def set_rate_array(x, chosen, m):
    """`set_rate` of a float64 array of rates (one value, or one per label)."""
    if x.shape[0] == 1:
        return x[0]
    s = x[chosen[0]]
    for j in range(1, m):
        s += x[chosen[j]]
    return s / m


@overload(set_rate)
def _set_rate_compiled(x, chosen, m):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, chosen, m: x
    if isinstance(x, types.Array):
        def impl(x, chosen, m):
            if x.shape[0] == 1:
                return x[0]
            s = x[chosen[0]]
            for j in range(1, m):
                s += x[chosen[j]]
            return s / m
        return impl
    return None
