"""Small data sets bundled with scikit-learn (no download needed).

Each function returns ``(X, y)``: X float64, C-contiguous, 2-D, with the feature
values as scikit-learn ships them (no scaling), y int64 labels 0..K-1. These
sets have no official train/test split: they are returned whole.

>>> X, y = iris()
>>> X.shape, X.dtype.name, y.dtype.name, sorted(set(y.tolist()))
((150, 4), 'float64', 'int64', [0, 1, 2])
"""

from __future__ import annotations

import numpy as np

from ._common import _normalize_inplace

__all__ = ["iris", "digits", "wine", "breast_cancer"]


def _bundle(loader, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
    data = loader()
    X = np.array(data.data, dtype=np.float64, order="C", copy=True)
    y = np.ascontiguousarray(data.target, dtype=np.int64)
    if normalize:
        _normalize_inplace(X)
    return X, y


def iris(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's iris: 150 samples, 4 features (cm), 3 classes.

    ``normalize=True`` scales every row to unit L2 norm.
    Returns ``(X, y)``: X float64 (150, 4), y int64 in 0..2.
    """
    from sklearn.datasets import load_iris

    return _bundle(load_iris, normalize)


def digits(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """UCI optdigits 8x8 handwritten digits: 1797 samples, 64 features (0..16), 10 classes.

    Returns ``(X, y)``: X float64 (1797, 64), y int64 in 0..9.

    >>> X, y = digits()
    >>> X.shape, float(X.max()), int(y.max())
    ((1797, 64), 16.0, 9)
    """
    from sklearn.datasets import load_digits

    return _bundle(load_digits, normalize)


def wine(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """UCI wine recognition: 178 samples, 13 chemical features (raw units), 3 classes.

    Returns ``(X, y)``: X float64 (178, 13), y int64 in 0..2.
    """
    from sklearn.datasets import load_wine

    return _bundle(load_wine, normalize)


def breast_cancer(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Wisconsin diagnostic breast cancer: 569 samples, 30 features (raw units), 2 classes.

    Labels as scikit-learn gives them: 0 = malignant, 1 = benign.
    Returns ``(X, y)``: X float64 (569, 30), y int64 in 0..1.
    """
    from sklearn.datasets import load_breast_cancer

    return _bundle(load_breast_cancer, normalize)
