"""Confusion-matrix estimation, orientation C[r, q] = P(noisy = r | true = q).

The paper's Example 1 (Louche & Ralaivola 2015: the confusion of a rough classifier on a clean set, and
its labels for the rest) uses a learner, UMA, as its rough classifier, so it lives with the learners:
`noisyfeedback.learners.label_noise.rough` (``estimate_confusion_from_clean``, ``pseudo_label``).

- `estimate_confusion` — the confident joint (or anchor points) from out-of-sample probabilities
  of the noisy classes (the estimator of `CorrectedLogisticRegression` and
  `find_label_issues`).
- `estimate_confusion_from_noisy` — from out-of-sample predicted
  probabilities on the noisy labels alone: the confident joint of Northcutt,
  Jiang & Chuang (2021, "Confident learning"), calibrated, column-normalised
  (cleanlab's ``noise_matrix``, same orientation). Implemented here with
  scikit-learn's ``cross_val_predict``; cleanlab itself is not a dependency.
- `random_confusion` — the paper's family of synthetic noise matrices (Section 4.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from .._validation import AnySeed, Integer, Interval, check_labels, check_param
from ..base import make_rng

__all__ = [
    "estimate_confusion",
    "estimate_confusion_from_noisy",
    "confusion_counts",
    "columns_to_stochastic",
    "label_classes",
    "stratified_folds",
    "random_confusion",
]


def label_classes(y: Any, n_classes: int | None, owner: str) -> int:
    """K of integer labels 0..K-1: ``n_classes``, or the largest label + 1 (checked)."""
    arr = np.asarray(y)
    if n_classes is None:
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.size == 0:
            check_labels(arr, 2)  # raises the library's message for non-integer labels
        return int(arr.max()) + 1
    check_param("n_classes", n_classes, Integer(2), owner)
    return int(n_classes)


def stratified_folds(cv: int, seed: int, owner: str) -> StratifiedKFold:
    """Stratified, shuffled folds for cross-validation (``cv`` and ``seed`` checked)."""
    check_param("cv", cv, Integer(2), owner)
    check_param("seed", seed, AnySeed(), owner)
    rs = seed if not isinstance(seed, np.random.SeedSequence) else int(seed.generate_state(1)[0])
    return StratifiedKFold(n_splits=cv, shuffle=True, random_state=rs)


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


def columns_to_stochastic(M: np.ndarray, owner: str) -> np.ndarray:
    """Counts with columns normalised to sum to 1 (a class with no example refused by name)."""
    sums = M.sum(axis=0)
    empty = np.flatnonzero(sums <= 0)
    if empty.size:
        raise ValueError(
            f"{owner}: true class {int(empty[0])} has no examples, so column {int(empty[0])} of C "
            "cannot be estimated; give every class at least one example (or pass n_classes)."
        )
    return M / sums[None, :]


def estimate_confusion(proba: np.ndarray, yi: np.ndarray, method: str = "confident_joint",
                       quantile: float = 0.97) -> np.ndarray:
    """Estimate C[r, q] = P(ỹ = r | y = q) from out-of-sample noisy-class probabilities.

    ``"confident_joint"`` (Northcutt et al. 2021, cleanlab): thresholds t_q = mean of
    p̂_q over the rows labelled q; a row counts for (ỹ, q*) with q* the likeliest class
    among those whose p̂ reaches its threshold; rows calibrated to the noisy class counts,
    columns normalised. ``"anchor"`` (Patrini et al. 2017): for each q the row at the
    ``quantile`` of p̂_q (an "anchor point" of class q) gives column C[:, q] = p̂(x_q)
    (the noisy posterior at a point of true class q). Columns sum to 1."""
    n, K = proba.shape
    if method == "anchor":
        C = np.empty((K, K))
        for q in range(K):
            col = proba[:, q]
            thr = np.quantile(col, quantile, method="higher")
            i = int(np.flatnonzero(col >= thr)[np.argmin(col[col >= thr])])
            C[:, q] = proba[i]
        C = np.clip(C, 0, None)
        return C / C.sum(axis=0, keepdims=True)
    counts = np.bincount(yi, minlength=K).astype(float)
    thr = np.array([proba[yi == k, k].mean() if counts[k] else 1.0 for k in range(K)])
    above = proba >= thr[None, :] - 1e-12
    masked = np.where(above, proba, -np.inf)
    star = np.argmax(masked, axis=1)
    ok = above.any(axis=1)
    J = np.zeros((K, K))
    np.add.at(J, (yi[ok], star[ok]), 1.0)
    # calibrate: each noisy row r sums to the count of label r
    rs = J.sum(axis=1, keepdims=True)
    J = np.where(rs > 0, J / np.where(rs > 0, rs, 1.0) * counts[:, None], 0.0)
    for r in range(K):  # a noisy class never confidently counted: assume it is clean
        if rs[r, 0] == 0:
            J[r, r] = counts[r]
    cs = J.sum(axis=0, keepdims=True)
    C = np.where(cs > 0, J / np.where(cs > 0, cs, 1.0), np.eye(K))
    return C


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
    K = label_classes(y_noisy, n_classes, owner)
    y = check_labels(y_noisy, K, name="y_noisy")
    if classifier is None:
        from sklearn.linear_model import LogisticRegression

        classifier = LogisticRegression(max_iter=2000)
    clf = clone(classifier)
    probs = cross_val_predict(clf, X, y, cv=stratified_folds(cv, seed, owner), method="predict_proba")
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape != (y.shape[0], K):
        raise ValueError(
            f"{owner}: the classifier's predict_proba gave shape {probs.shape}, expected ({y.shape[0]}, {K}); "
            "every class 0..K-1 must occur in every training fold."
        )
    return confident_joint_noise_matrix(y, probs)


def confident_joint_noise_matrix(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Steps 2–5 of `estimate_confusion_from_noisy` on given out-of-sample probabilities."""
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
    return columns_to_stochastic(Q, "estimate_confusion_from_noisy")


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
    C = columns_to_stochastic(A, owner)
    if return_reference:
        return C, R
    return C
