"""Feature maps of the regression-oracle bandits (``features="quadratic"`` of SquareCB and EpsilonGreedy).

The degree-2 map of a row x with d features, x̂ = x/‖x‖ (x = 0: x̂ = 0):

    φ(x) = (x̂_1, …, x̂_d,  c_jk·x̂_j·x̂_k for 1 <= j <= k <= d),   c_jj = 1, c_jk = √2 (j < k),

d + d(d+1)/2 columns: x̂, then the pairs (j, k) of the upper triangle row by row. ⟨φ(x), φ(x')⟩ =
x̂·x̂' + (x̂·x̂')², the polynomial kernel of degree 2, so a linear model over φ is a quadratic one over x̂
(Vowpal Wabbit's ``-q`` interactions of a namespace with itself, plus its linear terms).
"""

import numpy as np
from numba import njit

SQRT2 = np.sqrt(2.0)


def quadratic_dimension(d: int) -> int:
    """The number of columns of the degree-2 map of d features: d + d(d+1)/2."""
    return d + d * (d + 1) // 2


@njit(cache=True)
def quadratic_rows(X, out):
    """out[i] = φ(X[i]) (see the module) for every row of the dense float64 X (n, d); out is (n, d + d(d+1)/2).

    ‖x‖² is summed over the features in index order; the caller keeps it finite (``finite_scale_rows``)."""
    n, d = X.shape
    for i in range(n):
        s = 0.0
        for j in range(d):
            s += X[i, j] * X[i, j]
        inv = 1.0 / np.sqrt(s) if s > 0.0 else 0.0
        for j in range(d):
            out[i, j] = X[i, j] * inv
        p = d
        for j in range(d):
            xj = out[i, j]
            out[i, p] = xj * xj
            p += 1
            for k in range(j + 1, d):
                out[i, p] = (xj * out[i, k]) * SQRT2
                p += 1
