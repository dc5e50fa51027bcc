"""Seeded synthetic data generators."""

from __future__ import annotations

import numpy as np

from .._validation import AnySeed, Integer, check_memory, check_param
from ..base import make_rng
from ._common import _normalize_inplace

__all__ = ["synsep", "synnonsep"]

_N_RARE = 120
_N_FEATURES = 400
_N_CLASSES = 9


def _keyword_sets(rng: np.random.Generator, n_classes: int) -> list[np.ndarray]:
    sets = []
    for _ in range(n_classes):
        n_k = int(rng.integers(20, 41))  # n_k ~ U{20, ..., 40}
        sets.append(np.sort(rng.choice(_N_RARE, size=n_k, replace=False)))
    return sets


def synsep(n_samples: int = 100_000, seed: int | None = 0, normalize: bool = False):
    """SynSep (Kakade, Shalev-Shwartz & Tewari 2008): linearly separable, d = 400, K = 9.

    Features 0–119 are "rare words", 120–399 "common words". Class k owns
    n_k ~ U{20..40} rare keywords. An example of class y (uniform) is the 0/1
    indicator of y's keywords with 5 of them switched off, plus 20 random common
    words switched on. ``normalize=True`` scales rows to unit L2 norm.

    Returns ``(X, y)``: X float64 (n_samples, 400), y int64 in 0..8.

    >>> X, y = synsep(n_samples=5, seed=0)
    >>> X.shape, y.dtype.name, int(X[:, 120:].sum(axis=1).max())
    ((5, 400), 'int64', 20)
    """
    return _generate(n_samples, seed, normalize, noise_fraction=0.0, name="synsep")


def synnonsep(n_samples: int = 100_000, seed: int | None = 0, normalize: bool = False):
    """SynNonSep: SynSep with exactly 5 % of the examples relabelled to a random other class.

    For the same ``n_samples`` and ``seed``, X (and the clean labels) are exactly
    those of `synsep`; then ``round(0.05 * n_samples)`` distinct rows, drawn
    uniformly, get a label drawn uniformly from the 8 other classes.

    Returns ``(X, y)``: X float64 (n_samples, 400), y int64 in 0..8.

    >>> X, y = synnonsep(n_samples=1000, seed=1)
    >>> X0, y0 = synsep(n_samples=1000, seed=1)
    >>> bool((X == X0).all()), int((y != y0).sum())
    (True, 50)
    """
    return _generate(n_samples, seed, normalize, noise_fraction=0.05, name="synnonsep")


def _generate(n_samples, seed, normalize, noise_fraction, name):
    check_param("n_samples", n_samples, Integer(1), name)
    check_memory(8.0 * n_samples * (_N_FEATURES + 1), f"{name} with n_samples={n_samples}")
    check_param("seed", seed, AnySeed(), name)
    rng = make_rng(seed)
    keywords = _keyword_sets(rng, _N_CLASSES)
    y = rng.integers(0, _N_CLASSES, size=n_samples).astype(np.int64)
    X = np.zeros((n_samples, _N_FEATURES), dtype=np.float64)
    n_common = _N_FEATURES - _N_RARE
    for i in range(n_samples):
        kw = keywords[y[i]]
        on = rng.choice(kw.shape[0], size=kw.shape[0] - 5, replace=False)
        X[i, kw[on]] = 1.0
        X[i, _N_RARE + rng.choice(n_common, size=20, replace=False)] = 1.0
    if noise_fraction > 0:
        n_flip = int(round(noise_fraction * n_samples))
        rows = rng.choice(n_samples, size=n_flip, replace=False)
        shift = rng.integers(1, _N_CLASSES, size=n_flip)
        y[rows] = (y[rows] + shift) % _N_CLASSES
    if normalize:
        _normalize_inplace(X)
    return X, y
