"""Finding the mislabelled rows of a data set whose labels passed through a confusion matrix.

The formulas (the Bayes posterior of a flip and the expected number of flips) are in
:mod:`noisyfeedback.noise.label_issues`; here the clean probabilities come out of fold from a classifier,
by default :class:`~noisyfeedback.CorrectedLogisticRegression`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import StratifiedKFold

from ..._validation import AnySeed, Integer, check_param
from ...base import make_rng
from ...noise.confusion import estimate_confusion
from ...noise.label_issues import FILTERS, flag_issues, flip_posterior, simplex_projection

__all__ = ["find_label_issues", "estimate_label_confusion"]


def _is_classifier(est) -> bool:
    try:
        return bool(is_classifier(est))
    except (AttributeError, TypeError):
        return False



def _oof(model, X, yi, K: int, n_folds: int, seed, clean: bool, C: np.ndarray) -> np.ndarray:
    """Out-of-fold class probabilities of ``model`` (columns 0..K−1), converted to clean ones if needed."""
    counts = np.bincount(yi, minlength=K)
    folds = int(min(n_folds, counts[counts > 0].min()))
    proba = np.zeros((yi.size, K))
    if folds < 2:  # a class with one row: in-sample probabilities
        splits = [(np.arange(yi.size), np.arange(yi.size))]
    else:
        rs = int(make_rng(seed).integers(2**31 - 1))
        splits = StratifiedKFold(n_splits=folds, shuffle=True, random_state=rs).split(np.zeros(yi.size), yi)
    for tr, te in splits:
        m = clone(model).fit(X[tr], yi[tr])
        cols = np.asarray(m.classes_, dtype=np.int64)
        proba[np.ix_(te, cols)] = m.predict_proba(X[te])
    if not clean:  # a noise-unaware model estimates the NOISY posterior η = C p: p = Π_simplex(C⁻¹ η)
        proba = simplex_projection(np.linalg.solve(C, proba.T).T)
    return proba



def find_label_issues(X: Any, y: Any, confusion: Any = "estimate", *, estimator: Any = None,
                      filter_by: str = "expected_flips", threshold: float = 0.5, n_folds: int = 5,
                      return_scores: bool = False, proba: Any = None, seed: Any = None):
    """Indices of the rows whose label is likely wrong, most likely first.

    Each row is scored by the posterior probability that its observed label is not its true one,

        s(x, ỹ) = P(y ≠ ỹ | x, ỹ) = 1 − C[ỹ, ỹ] p_ỹ(x) / Σ_j C[ỹ, j] p_j(x),

    (Bayes' rule with C[r, q] = P(ỹ = r | y = q) and the out-of-fold clean class probabilities p(x)).
    The rows flagged are, by ``filter_by``:

    - ``"expected_flips"`` (default): the m highest scores, m = round(n Σ_q π_q (1 − C[q, q])) the
      number of flips C implies, π = C⁻¹ν the clean class shares (ν the observed label shares, projected
      onto the simplex);
    - ``"per_label"``: among the rows labelled r, the m_r = round(n Σ_{q≠r} C[r, q] π_q) highest scores
      (as cleanlab's per-class pruning counts, but from C);
    - ``"posterior"``: every row with s > ``threshold`` (0.5: the Bayes classifier of "flipped");
    - ``"f1"``: the top k maximising the plug-in expected F1, 2 Σ_{top k} s / (k + Σ_i s).

    Parameters
    ----------
    X : (n, d) array or CSR matrix
    y : (n,) observed (noisy) labels
    confusion : (K, K) array or "estimate", default="estimate"
        C, rows/columns in the order of ``np.unique(y)``; "estimate": the ``confusion_`` of
        ``CorrectedLogisticRegression(confusion="estimate")`` (default estimator) or, with another
        ``estimator``, the calibrated confident joint of its out-of-fold probabilities
        (:func:`estimate_label_confusion`).
    estimator : scikit-learn classifier with ``predict_proba``, optional
        The model of p(x), cross-fitted on ``n_folds`` stratified folds. Default:
        ``CorrectedLogisticRegression(confusion=C)``, whose probabilities are the clean ones. Any
        ``CorrectedLogisticRegression`` gets ``confusion=C``; any other classifier is fitted on the noisy
        labels, so it estimates the noisy posterior η(x) = C p(x), and p = Π_simplex(C⁻¹ η).
    filter_by : {"expected_flips", "per_label", "posterior", "f1"}
    threshold : float in (0, 1), default=0.5
        The score above which ``filter_by="posterior"`` flags a row.
    n_folds : int >= 2, default=5
    return_scores : bool, default=False
        Also return the score s of every row (shape (n,)).
    proba : (n, K) array, optional
        Out-of-sample CLEAN class probabilities to use instead of cross-fitting ``estimator``.
    seed : int or None
        Seed of the folds (and of the estimate of C).

    Returns
    -------
    indices : (m,) int array, scores descending; ``(indices, scores)`` when ``return_scores``.

    Examples
    --------
    >>> import numpy as np, noisyfeedback as nf
    >>> from sklearn.datasets import load_digits
    >>> X, y = load_digits(return_X_y=True); X = X / 16.0
    >>> rng = np.random.default_rng(0); flip = rng.random(y.size) < 0.2
    >>> y_noisy = np.where(flip, (y + rng.integers(1, 10, y.size)) % 10, y)
    >>> C = np.full((10, 10), 0.2 / 9); np.fill_diagonal(C, 0.8)
    >>> idx = nf.find_label_issues(X, y_noisy, confusion=C, seed=0)
    >>> bool(np.mean(flip[idx]) > 0.8)   # precision of the flagged rows
    True
    """
    from ...feedback import check_confusion_matrix
    from .corrected_logistic import CorrectedLogisticRegression

    owner = "find_label_issues"
    if filter_by not in FILTERS:
        raise ValueError(f"The 'filter_by' parameter of {owner} must be one of {FILTERS}. Got {filter_by!r} instead.")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) or not 0 < threshold < 1:
        raise ValueError(f"The 'threshold' parameter of {owner} must be in (0, 1). Got {threshold!r} instead.")
    check_param("n_folds", n_folds, Integer(2), owner)
    check_param("seed", seed, AnySeed(), owner)
    if not isinstance(return_scores, (bool, np.bool_)):
        raise TypeError(f"The 'return_scores' parameter of {owner} must be a bool. Got {return_scores!r} instead.")
    from sklearn.utils.validation import check_X_y

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    classes, yi = np.unique(y, return_inverse=True)
    yi = yi.astype(np.int64)
    K = classes.size
    if K < 2:
        raise ValueError(f"{owner} needs at least 2 classes; y holds {K}.")
    if estimator is not None and not (hasattr(estimator, "predict_proba") and hasattr(estimator, "fit")
                                      and _is_classifier(estimator)):
        raise TypeError(f"The 'estimator' parameter of {owner} must be a scikit-learn classifier with "
                        f"predict_proba. Got {type(estimator).__name__} instead.")
    ours = estimator is None or isinstance(estimator, CorrectedLogisticRegression)
    base = CorrectedLogisticRegression(seed=seed) if estimator is None else estimator

    if isinstance(confusion, str):
        if confusion != "estimate":
            raise ValueError(f"The 'confusion' parameter of {owner} must be a K x K matrix or 'estimate'. "
                             f"Got {confusion!r} instead.")
        C = _estimate(base, ours, X, yi, K, int(n_folds), seed)
    else:
        C = check_confusion_matrix(confusion, owner=owner)
        if C.shape[0] != K:
            raise ValueError(f"The 'confusion' parameter of {owner} is {C.shape[0]} x {C.shape[0]}, but y holds "
                             f"{K} classes ({classes.tolist()!r}).")
    if proba is not None:
        P = np.asarray(proba, dtype=np.float64)
        if P.shape != (yi.size, K) or not np.isfinite(P).all() or (P < 0).any():
            raise ValueError(f"proba must hold finite probabilities >= 0 with shape ({yi.size}, {K}); got {P.shape}.")
        P = P / np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    else:
        model = clone(base).set_params(confusion=C) if ours else base
        P = _oof(model, X, yi, K, int(n_folds), seed, clean=ours, C=C)
    scores = flip_posterior(P, yi, C)
    idx = flag_issues(scores, yi, C, filter_by, float(threshold))
    return (idx, scores) if return_scores else idx



def estimate_label_confusion(X: Any, y: Any, estimator: Any = None, n_folds: int = 5, seed: Any = None) -> np.ndarray:
    """The C that ``find_label_issues(X, y, "estimate", estimator=..., n_folds=..., seed=...)`` uses,
    rows/columns in the order of ``np.unique(y)``: the ``confusion_`` of
    ``CorrectedLogisticRegression(confusion="estimate")`` (``estimator`` None or a CorrectedLogisticRegression),
    else the calibrated confident joint of the classifier's out-of-fold noisy-label probabilities η (averaged
    over ``CONFIDENT_JOINT_REPEATS`` fold splits; no EM
    step: with p = Π_simplex(Ĉ⁻¹ η) it drifted, 6 of 8 tuning cases worse — 15-NN on digits, seeds 100–101)."""
    from sklearn.utils.validation import check_X_y

    from .corrected_logistic import CorrectedLogisticRegression

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    _, yi = np.unique(y, return_inverse=True)
    ours = estimator is None or isinstance(estimator, CorrectedLogisticRegression)
    base = CorrectedLogisticRegression(seed=seed) if estimator is None else estimator
    return _estimate(base, ours, X, yi.astype(np.int64), int(yi.max()) + 1, int(n_folds), seed)



#: the out-of-fold probabilities a confident joint is counted on are averaged over this many fold splits
#: (repeated cross-fitting): one split's probabilities carry the noise of that split, which the confident
#: joint's hard counts pass on to Ĉ. Chosen on digits with 15-NN (seeds 0-4, benchmarks/label_issues.py):
#: max |Ĉ − C_realised| one split -> three: pair 0.2 0.049 -> 0.040, pair 0.4 0.200 -> 0.187, symmetric 0.2
#: 0.030 -> 0.032, symmetric 0.4 0.044 -> 0.042 (cleanlab: 0.039, 0.187, 0.038, 0.050)
CONFIDENT_JOINT_REPEATS = 3


def _estimate(base, ours: bool, X, yi, K: int, n_folds: int, seed) -> np.ndarray:
    if ours:
        return clone(base).set_params(confusion="estimate", seed=seed).fit(X, yi).confusion_

    seeds = make_rng(seed).integers(2**31 - 1, size=CONFIDENT_JOINT_REPEATS)
    eta = np.mean([_oof(base, X, yi, K, n_folds, int(s), clean=True, C=np.eye(K)) for s in seeds], axis=0)
    return estimate_confusion(eta, yi)
