"""The paper's Example 1 (Louche & Ralaivola 2015, Section 4.2.1): a rough classifier — by default UMA with
C = I, the batch Perceptron — fitted on a small clean set, its confusion C estimated by cross-validation
there, and its labels for the unlabelled rest (the noisy labels UMA then learns from, knowing C).

The confusion arithmetic is `noisyfeedback.noise.confusion`'s; the rough classifier is a learner,
so the protocol lives here, above the noise package."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import cross_val_predict

from ..._validation import check_labels
from ...noise.confusion import (
    columns_to_stochastic,
    confusion_counts,
    label_classes,
    stratified_folds,
)

__all__ = ["estimate_confusion_from_clean", "pseudo_label"]


def _default_rough_classifier():
    from .uma import UMA

    return UMA(max_iter=500)  # the paper's rough classifier: UMA with C = I (a batch Perceptron)


def estimate_confusion_from_clean(
    X_clean, y_clean, classifier=None, cv: int = 5, seed=0, n_classes: int | None = None
) -> np.ndarray:
    """C[r, q] = P(h(x) = r | y = q) of a rough classifier h, by cross-validation on a clean set.

    The paper's Example 1 / Section 4.2.1 step 3: ``classifier`` (default: UMA with
    C = I, i.e. the batch Perceptron, the paper's choice; any scikit-learn
    classifier or pipeline works) is fitted on ``cv`` − 1 folds of the clean
    set and predicts the held-out fold (stratified, shuffled with ``seed``);
    the out-of-fold predictions against the true labels give C, columns summing to 1.
    Labels are integers 0..K−1 (K = ``n_classes`` or max label + 1); every class
    needs at least ``cv`` clean examples for the stratified split.

    >>> import numpy as np
    >>> from noisyfeedback.datasets.uma_toy import uma_toy
    >>> X, y = uma_toy(300, n_classes=3, n_features=4, margin=0.1, seed=0)
    >>> C = estimate_confusion_from_clean(X, y, seed=0)
    >>> C.shape, bool(np.allclose(C.sum(axis=0), 1)), bool(np.all(np.diag(C) > 0.8))
    ((3, 3), True, True)
    """
    owner = "estimate_confusion_from_clean"
    K = label_classes(y_clean, n_classes, owner)
    y = check_labels(y_clean, K, name="y_clean")
    clf = _default_rough_classifier() if classifier is None else clone(classifier)
    pred = cross_val_predict(clf, X_clean, y, cv=stratified_folds(cv, seed, owner))
    return columns_to_stochastic(confusion_counts(y, np.asarray(pred, dtype=np.int64), K), owner)


def pseudo_label(
    X_clean, y_clean, X_unlabelled, classifier=None, cv: int = 5, seed=0, n_classes: int | None = None
):
    """The paper's Example 1: (noisy labels of X_unlabelled, their confusion C, the rough classifier).

    The rough classifier (default: UMA with C = I) is fitted on the whole clean
    set and labels ``X_unlabelled``; C is its confusion estimated by
    `estimate_confusion_from_clean` (cross-validation on the clean set).

    Returns ``(y_noisy, C, classifier)``.
    """
    owner = "pseudo_label"
    K = label_classes(y_clean, n_classes, owner)
    y = check_labels(y_clean, K, name="y_clean")
    C = estimate_confusion_from_clean(X_clean, y, classifier=classifier, cv=cv, seed=seed, n_classes=K)
    clf = _default_rough_classifier() if classifier is None else clone(classifier)
    clf.fit(X_clean, y)
    y_noisy = np.asarray(clf.predict(X_unlabelled), dtype=np.int64)
    return y_noisy, C, clf


