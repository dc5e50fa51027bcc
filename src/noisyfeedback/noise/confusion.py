"""Confusion-matrix estimation for UMA (Louche & Ralaivola 2015), orientation C[r, q] = P(noisy = r | true = q).

- :func:`estimate_confusion_from_clean` — the paper's Example 1: the confusion of a
  first ("rough") classifier, estimated by cross-validation on a small clean set.
- :func:`pseudo_label` — the whole Example 1 protocol: that C plus the rough
  classifier's labels for the unlabelled rest (the noisy labels UMA learns from).
- :func:`estimate_confusion_from_noisy` — from out-of-sample predicted
  probabilities on the noisy labels alone: the confident joint of Northcutt,
  Jiang & Chuang (2021, "Confident learning"), calibrated, column-normalised
  (cleanlab's ``noise_matrix``, same orientation). Implemented here with
  scikit-learn's ``cross_val_predict``; cleanlab itself is not a dependency.
- :func:`random_confusion` — the paper's family of synthetic noise matrices (Section 4.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from .._validation import AnySeed, Integer, Interval, check_labels, check_param
from ..base import make_rng

__all__ = [
    "estimate_confusion_from_clean",
    "estimate_confusion_from_noisy",
    "pseudo_label",
    "confusion_counts",
    "random_confusion",
]


def _n_classes(y: Any, n_classes: int | None, owner: str) -> int:
    arr = np.asarray(y)
    if n_classes is None:
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.size == 0:
            check_labels(arr, 2)  # raises the library's message for non-integer labels
        return int(arr.max()) + 1
    check_param("n_classes", n_classes, Integer(2), owner)
    return int(n_classes)


def _cv(cv: int, seed: int, owner: str) -> StratifiedKFold:
    check_param("cv", cv, Integer(2), owner)
    check_param("seed", seed, AnySeed(), owner)
    rs = seed if not isinstance(seed, np.random.SeedSequence) else int(seed.generate_state(1)[0])
    return StratifiedKFold(n_splits=cv, shuffle=True, random_state=rs)


def _default_rough_classifier():
    from ..learners.label_noise.uma import UMA

    return UMA(max_iter=500)  # the paper's rough classifier: UMA with C = I (a batch Perceptron)


def confusion_counts(y_true, y_pred, n_classes: int) -> np.ndarray:
    """Counts M[r, q] = #{i : y_pred_i = r, y_true_i = q} (rows: predicted / noisy, columns: true).

    >>> confusion_counts([0, 0, 1, 1], [0, 1, 1, 1], 2)
    array([[1., 0.],
           [1., 2.]])
    """
    y_true = check_labels(y_true, n_classes, name="y_true")
    y_pred = check_labels(y_pred, n_classes, n_samples=y_true.shape[0], name="y_pred")
    M = np.zeros((n_classes, n_classes))
    np.add.at(M, (y_pred, y_true), 1.0)
    return M


def _columns_to_stochastic(M: np.ndarray, owner: str) -> np.ndarray:
    sums = M.sum(axis=0)
    empty = np.flatnonzero(sums <= 0)
    if empty.size:
        raise ValueError(
            f"{owner}: true class {int(empty[0])} has no examples, so column {int(empty[0])} of C "
            "cannot be estimated; give every class at least one example (or pass n_classes)."
        )
    return M / sums[None, :]


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
    K = _n_classes(y_clean, n_classes, owner)
    y = check_labels(y_clean, K, name="y_clean")
    clf = _default_rough_classifier() if classifier is None else clone(classifier)
    pred = cross_val_predict(clf, X_clean, y, cv=_cv(cv, seed, owner))
    return _columns_to_stochastic(confusion_counts(y, np.asarray(pred, dtype=np.int64), K), owner)


def pseudo_label(
    X_clean, y_clean, X_unlabelled, classifier=None, cv: int = 5, seed=0, n_classes: int | None = None
):
    """The paper's Example 1: (noisy labels of X_unlabelled, their confusion C, the rough classifier).

    The rough classifier (default: UMA with C = I) is fitted on the whole clean
    set and labels ``X_unlabelled``; C is its confusion estimated by
    :func:`estimate_confusion_from_clean` (cross-validation on the clean set).

    Returns ``(y_noisy, C, classifier)``.
    """
    owner = "pseudo_label"
    K = _n_classes(y_clean, n_classes, owner)
    y = check_labels(y_clean, K, name="y_clean")
    C = estimate_confusion_from_clean(X_clean, y, classifier=classifier, cv=cv, seed=seed, n_classes=K)
    clf = _default_rough_classifier() if classifier is None else clone(classifier)
    clf.fit(X_clean, y)
    y_noisy = np.asarray(clf.predict(X_unlabelled), dtype=np.int64)
    return y_noisy, C, clf


def estimate_confusion_from_noisy(
    X, y_noisy, classifier=None, cv: int = 5, seed=0, n_classes: int | None = None
) -> np.ndarray:
    """C[r, q] = P(ỹ = r | y = q) from noisy labels only, by the confident joint (confident learning).

    1. Out-of-sample probabilities P̂[i, k] ≈ P(ỹ = k | x_i) by ``cross_val_predict``
       (``method="predict_proba"``; default classifier: multinomial logistic regression).
    2. Per-class thresholds t_k = mean of P̂[i, k] over the rows with ỹ_i = k.
    3. Confident joint: a row counts in cell (ỹ_i, k*) where k* is the most probable
       class among those with P̂[i, k] ≥ t_k (rows with no such class are skipped);
       every diagonal cell is at least 1.
    4. Calibration: each noisy-label row is rescaled to the observed count of that
       label; the joint Q(ỹ, y*) is the result divided by its total.
    5. C = Q with columns normalised: C[r, q] = Q[r, q] / Σ_r Q[r, q].

    This matches cleanlab's ``estimate_noise_matrices`` (``noise_matrix`` = P(given
    label | true label), columns summing to 1). The estimate is only as good as
    the probabilities: it assumes the classifier ranks the true class highly,
    and works best when the noise is moderate and classes are well separated.

    >>> import numpy as np
    >>> from noisyfeedback.datasets.uma_toy import uma_toy
    >>> from noisyfeedback.feedback import ConfusionNoise
    >>> X, y = uma_toy(3000, n_classes=3, n_features=3, margin=0.1, seed=0)
    >>> C = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.2], [0.1, 0.1, 0.7]])
    >>> y_noisy = ConfusionNoise(C).respond(y, rng=np.random.default_rng(0))
    >>> C_hat = estimate_confusion_from_noisy(X, y_noisy, seed=0)
    >>> bool(np.abs(C_hat - C).max() < 0.1)
    True
    """
    owner = "estimate_confusion_from_noisy"
    K = _n_classes(y_noisy, n_classes, owner)
    y = check_labels(y_noisy, K, name="y_noisy")
    if classifier is None:
        from sklearn.linear_model import LogisticRegression

        classifier = LogisticRegression(max_iter=2000)
    clf = clone(classifier)
    probs = cross_val_predict(clf, X, y, cv=_cv(cv, seed, owner), method="predict_proba")
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != (y.shape[0], K):
        raise ValueError(
            f"{owner}: the classifier's predict_proba gave shape {probs.shape}, expected ({y.shape[0]}, {K}); "
            "every class 0..K-1 must occur in every training fold."
        )
    return confident_joint_noise_matrix(y, probs)


def confident_joint_noise_matrix(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Steps 2–5 of :func:`estimate_confusion_from_noisy` on given out-of-sample probabilities."""
    n, K = probs.shape
    counts = np.bincount(labels, minlength=K).astype(np.float64)
    thresholds = np.array(
        [probs[labels == k, k].mean() if counts[k] > 0 else 1.0 for k in range(K)]
    )
    confident = probs >= thresholds[None, :] - 1e-6
    any_conf = confident.any(axis=1)
    guess = np.argmax(np.where(confident, probs, -np.inf), axis=1)
    joint = np.zeros((K, K))
    np.add.at(joint, (labels[any_conf], guess[any_conf]), 1.0)  # joint[ỹ, y*]
    np.fill_diagonal(joint, np.maximum(np.diag(joint), 1.0))
    # calibrate: row ỹ = r sums to the number of rows labelled r
    row = joint.sum(axis=1)
    cal = joint * (counts / np.where(row > 0, row, 1.0))[:, None]
    Q = cal / cal.sum()
    return _columns_to_stochastic(Q, "estimate_confusion_from_noisy")


def random_confusion(n_classes: int, lam: float, seed=0, return_reference: bool = False):
    """The paper's synthetic noise family (Section 4.1), in our orientation (columns sum to 1).

    A reference column-stochastic matrix R is drawn (uniform entries, columns
    normalised; redrawn until invertible) and M = R − I. Then
    C(λ) = N(I + λ·M), where N clips negative entries to 0 and normalises the
    columns. λ = 0 gives I (no noise); λ = 1 gives R; as λ grows C(λ) moves
    its mass off the diagonal (towards N(M)). The paper plots results against
    ‖C − diag(C)‖_F.

    >>> C = random_confusion(4, 0.5, seed=0)
    >>> bool(np.allclose(C.sum(axis=0), 1)), bool((C >= 0).all())
    (True, True)
    >>> bool(np.array_equal(random_confusion(4, 0.0, seed=0), np.eye(4)))
    True
    """
    owner = "random_confusion"
    check_param("n_classes", n_classes, Integer(2), owner)
    check_param("lam", lam, Interval(0, None), owner)
    check_param("seed", seed, AnySeed(), owner)
    rng = make_rng(seed)
    for _ in range(1000):
        R = rng.random((n_classes, n_classes))
        R /= R.sum(axis=0, keepdims=True)
        if np.linalg.cond(R) < 1e8:
            break
    M = R - np.eye(n_classes)
    A = np.clip(np.eye(n_classes) + lam * M, 0.0, None)
    C = _columns_to_stochastic(A, owner)
    if return_reference:
        return C, R
    return C
