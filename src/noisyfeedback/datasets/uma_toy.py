"""The UMA toy problem (Louche & Ralaivola 2015, Section 4.1).

Points uniform on the unit sphere of R^d, K random unit prototypes w_k (also
uniform on the sphere), class = argmax_k ⟨w_k, x⟩, and a margin γ enforced by
rejecting the points whose two best prototype scores differ by less than γ
(⟨w_y − w_k, x⟩ ≥ γ for every k ≠ y: the paper's Definition 2 with unit w_k).
"""

from __future__ import annotations

import numpy as np

from .._validation import AnySeed, Integer, Interval, check_param
from ..base import make_rng

__all__ = ["uma_toy"]

#: rows drawn per rejection round (at least n_samples / acceptance rate overall)
_BATCH = 8192
#: give up (ValueError) if this many candidate points yield no accepted point
_MAX_DRAWS_WITHOUT_ACCEPT = 1_000_000


def uma_toy(
    n_samples: int = 10_000,
    n_classes: int = 10,
    n_features: int = 10,
    margin: float = 0.05,
    seed=0,
    return_prototypes: bool = False,
):
    """Linearly separable K-class data on the unit sphere with margin γ (the UMA toy data).

    1. K prototypes w_k drawn uniformly on the unit sphere S^{d−1} (normalised Gaussians);
    2. candidates x drawn uniformly on S^{d−1}; label y = argmax_k ⟨w_k, x⟩;
    3. a candidate is kept iff ⟨w_y, x⟩ − max_{k≠y} ⟨w_k, x⟩ ≥ ``margin`` (points
       within γ of a decision boundary, in this functional sense, are removed);
    4. repeated in batches until exactly ``n_samples`` points are kept (in draw order).

    The defaults are ours: the extraction of the paper lost its numbers (K, d,
    n and γ); pass the values of the experiment being reproduced. A class may
    end up rare (or, for large γ and small d, empty) when its prototype is
    crowded by others; ``return_prototypes=True`` also returns W (K, d).

    Returns ``(X, y)``: X float64 (n_samples, n_features) with unit rows, y int64 in 0..K−1.

    >>> X, y = uma_toy(500, n_classes=4, n_features=3, margin=0.1, seed=0)
    >>> X.shape, y.dtype.name, bool(np.allclose(np.linalg.norm(X, axis=1), 1))
    ((500, 3), 'int64', True)
    >>> X, y, W = uma_toy(200, n_classes=3, n_features=2, margin=0.2, seed=1, return_prototypes=True)
    >>> s = np.sort(X @ W.T, axis=1)
    >>> bool((s[:, -1] - s[:, -2] >= 0.2).all())
    True
    """
    owner = "uma_toy"
    check_param("n_samples", n_samples, Integer(1), owner)
    check_param("n_classes", n_classes, Integer(2), owner)
    check_param("n_features", n_features, Integer(1), owner)
    check_param("margin", margin, Interval(0, 2, closed="left"), owner)
    check_param("seed", seed, AnySeed(), owner)
    rng = make_rng(seed)
    W = _unit_rows(rng.standard_normal((n_classes, n_features)))
    X = np.empty((n_samples, n_features))
    y = np.empty(n_samples, dtype=np.int64)
    filled = 0
    drawn_without_accept = 0
    while filled < n_samples:
        cand = _unit_rows(rng.standard_normal((_BATCH, n_features)))
        S = cand @ W.T
        top2 = np.partition(S, n_classes - 2, axis=1)[:, -2:] if n_classes > 2 else np.sort(S, axis=1)
        gap = np.abs(top2[:, 1] - top2[:, 0])
        keep = np.flatnonzero(gap >= margin)
        if keep.size == 0:
            drawn_without_accept += _BATCH
            if drawn_without_accept >= _MAX_DRAWS_WITHOUT_ACCEPT:
                raise ValueError(
                    f"The 'margin' parameter of uma_toy is too large: no point out of "
                    f"{drawn_without_accept} draws has margin >= {margin!r} (K={n_classes}, d={n_features})."
                )
            continue
        drawn_without_accept = 0
        take = keep[: n_samples - filled]
        X[filled:filled + take.size] = cand[take]
        y[filled:filled + take.size] = np.argmax(S[take], axis=1)
        filled += take.size
    if return_prototypes:
        return X, y, W
    return X, y


def _unit_rows(A: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return A / norms
