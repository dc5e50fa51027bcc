"""Metrics of the papers: online error rate, set-miss rate, confusion rate, damage ratio, MSE."""

from __future__ import annotations

import numpy as np

__all__ = ["error_rate", "set_miss_rate", "confusion_rate", "damage_ratio", "mean_squared_error"]


def error_rate(y_true, y_pred) -> float:
    """Fraction of predictions that differ from the true labels.

    >>> error_rate([0, 1, 2, 2], [0, 2, 2, 1])
    0.5
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(f"y_true and y_pred must be 1-D of equal length; got {y_true.shape} and {y_pred.shape}.")
    return float(np.mean(y_true != y_pred)) if y_true.size else 0.0


def set_miss_rate(y_true, sets) -> float:
    """Fraction of rows whose true label is not in the proposed set (Batra & Manwani).

    >>> set_miss_rate([0, 1, 2], [[0, 1], [2, 3], [2, 0]])
    0.3333333333333333
    """
    y_true, sets = np.asarray(y_true), np.asarray(sets)
    if sets.ndim != 2 or sets.shape[0] != y_true.shape[0]:
        raise ValueError(f"sets must be (n, m) with n = len(y_true); got {sets.shape}.")
    return float(np.mean(~(sets == y_true[:, None]).any(axis=1))) if y_true.size else 0.0


def confusion_rate(y_true, y_pred, n_classes: int) -> float:
    """Louche & Ralaivola's confusion rate: the Frobenius norm of the off-diagonal part of
    the test confusion matrix (rows: true class, entries P(pred = p | true = q)),
    normalised to [0, 1] by its largest possible value √K (every class always wrong).

    >>> confusion_rate([0, 1, 2], [0, 1, 2], 3)
    0.0
    >>> confusion_rate([0, 1, 2], [1, 2, 0], 3)
    1.0
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    M = np.zeros((n_classes, n_classes))
    np.add.at(M, (y_true, y_pred), 1.0)
    counts = M.sum(axis=1, keepdims=True)
    M = np.divide(M, counts, out=np.zeros_like(M), where=counts > 0)
    np.fill_diagonal(M, 0.0)
    return float(np.linalg.norm(M) / np.sqrt(n_classes))


def damage_ratio(e1: float, e2: float, e3: float) -> float:
    """Dekel & Shamir's excess-error ratio (e3 − e1)/(e2 − e1).

    e1: error of the plain SVM on clean labels, e2: the plain SVM on the
    corrupted labels, e3: the robust learner on the corrupted labels. Below 1,
    the robust learner undid part of the damage.

    >>> damage_ratio(0.125, 0.375, 0.1875)
    0.25
    """
    denom = e2 - e1
    if denom == 0:
        return float("nan")
    return float((e3 - e1) / denom)


def mean_squared_error(y_true, y_pred) -> float:
    """Mean of (y − ŷ)².

    >>> mean_squared_error([1.0, 2.0], [1.0, 4.0])
    2.0
    """
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    return float(np.mean((y_true - y_pred) ** 2)) if y_true.size else 0.0
