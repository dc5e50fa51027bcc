"""Finding the mislabelled rows of a data set whose labels passed through a confusion matrix.

The formulas (the Bayes posterior of a flip and the expected number of flips) are in
`noisyfeedback.noise.label_issues`; here the clean probabilities come out of fold from a classifier,
by default `CorrectedLogisticRegression`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.model_selection import StratifiedKFold

from ..._validation import AnySeed, Integer, check_param
from ...base import make_rng
from ...noise.confusion import estimate_confusion
from ...noise.label_issues import (
    FILTERS,
    em_step,
    fit_temperature,
    flag_issues,
    flip_posterior,
    noisy_log_loss,
    simplex_projection,
    temperature_scale,
)

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



#: the inverse regularisation strengths the default pipeline chooses among (logistic regression on
#: standardised features), by ``SELECT_FOLDS``-fold cross-validated log-loss of the noisy labels
CS_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
SELECT_FOLDS = 3
#: how ``confusion="estimate"`` estimates C and the clean probabilities with the default estimator
METHODS = ("auto", "corrected", "confident_joint")


def _standardise(X):
    """Features centred and scaled to unit variance (sparse: scaled only), constant columns left as they are."""
    import scipy.sparse as sp
    from sklearn.preprocessing import StandardScaler

    return StandardScaler(with_mean=not sp.issparse(X)).fit_transform(X)


def _default_pipeline(X, yi, K: int, n_folds: int, seed, C_given: np.ndarray | None, method: str) -> dict:
    """The default estimator's pipeline: standardised features, the regularisation chosen on ``CS_GRID``,
    out-of-fold probabilities; with C unknown, the confident joint's Ĉ (and p = Π_simplex(Ĉ⁻¹η)) or the
    corrected model's (one EM step from it, on its out-of-fold probabilities temperature-scaled to the noisy
    labels), the one of least out-of-fold noisy log-loss when ``"auto"``."""
    from .corrected_logistic import CorrectedLogisticRegression

    Xs = _standardise(X)
    eye = np.eye(K)
    sel_seed = int(make_rng(seed).integers(2**31 - 1))
    small = np.bincount(yi, minlength=K).min() < SELECT_FOLDS

    def select(C: np.ndarray) -> float:
        """The C_reg of least cross-validated log-loss of the noisy labels, forward-corrected by C."""
        if small:  # a class too small to cross-validate: scikit-learn's default
            return 1.0
        sel = CorrectedLogisticRegression(confusion=C, Cs=CS_GRID, n_folds=SELECT_FOLDS, seed=sel_seed)
        return float(sel.fit(Xs, yi).C_)

    C_reg = select(eye if C_given is None else C_given)
    model = CorrectedLogisticRegression(C=C_reg)
    if C_given is not None:
        P = _oof(model.set_params(confusion=C_given), Xs, yi, K, n_folds, seed, clean=True, C=C_given)
        return {"C": C_given, "P": P, "method": "given", "C_reg": C_reg}
    eta = _oof(clone(model).set_params(confusion=eye), Xs, yi, K, n_folds, seed, clean=True, C=eye)
    C_cj = estimate_confusion(eta, yi)
    out = {"C_reg": C_reg, "losses": {}}
    cands = {}
    if method in ("auto", "confident_joint"):
        P_cj = simplex_projection(np.linalg.solve(C_cj, eta.T).T) if np.linalg.cond(C_cj) < 1e8 else eta
        cands["confident_joint"] = (C_cj, P_cj)
    if method in ("auto", "corrected"):
        try:
            corr = CorrectedLogisticRegression(C=select(C_cj))  # the corrected model fits less noise: less penalty
            out["C_reg_corrected"] = corr.C
            P0 = _oof(clone(corr).set_params(confusion=C_cj), Xs, yi, K, n_folds, seed, clean=True, C=C_cj)
            # the EM step counts flips with posteriors built on P0: first its temperature, fitted to the noisy
            # labels out of fold (regularised probabilities are too flat, and flat ones count too few flips)
            out["temperature"] = fit_temperature(C_cj, P0, yi)
            C_em = em_step(C_cj, temperature_scale(P0, out["temperature"]), yi)
            P_em = _oof(clone(corr).set_params(confusion=C_em), Xs, yi, K, n_folds, seed, clean=True, C=C_em)
            cands["corrected"] = (C_em, P_em)
        except ValueError:  # a singular Ĉ the corrected model refuses
            if method == "corrected":
                raise
    for name, (C, P) in cands.items():
        out["losses"][name] = noisy_log_loss(C, P, yi)
    best = min(out["losses"], key=lambda k: (out["losses"][k], k != "corrected"))
    out["C"], out["P"] = cands[best]
    out["method"], out["candidates"] = best, cands
    return out


def find_label_issues(X: Any, y: Any, confusion: Any = "estimate", *, estimator: Any = None,
                      filter_by: str = "expected_flips", threshold: float = 0.5, n_folds: int = 5,
                      return_scores: bool = False, proba: Any = None, seed: Any = 0, method: str = "auto"):
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

    The default model (no ``estimator``) is a pipeline that needs no tuning by the caller: the features are
    standardised (sparse ones scaled only), the logistic regression's inverse regularisation is chosen on
    ``CS_GRID`` = (0.01 … 10) by 3-fold cross-validated log-loss of the noisy labels, and the probabilities are out
    of fold. With ``confusion="estimate"`` two estimates of (C, p) are made: the confident joint (Northcutt et al.
    2021) of the plain model's out-of-fold noisy probabilities η, with p = Π_simplex(Ĉ⁻¹η)
    (``method="confident_joint"``), and the model forward-corrected by it, refined by one EM step (``"corrected"``)
    whose posteriors use its out-of-fold probabilities at the temperature that best predicts the noisy labels
    (`noisyfeedback.noise.label_issues.fit_temperature`); ``"auto"`` (default) keeps the one whose out-of-fold
    probabilities of the NOISY labels, Ĉ p(x), have the smaller log-loss (a held-out proper score that needs no
    clean label). The grid and the choice rule were fixed without tuning on the benchmark's data sets; they are
    checked on generated data (scikit-learn ``make_classification`` and Gaussian blobs with raw, standardised,
    unit-norm and badly scaled features, symmetric and pair noise: ``benchmarks/label_issues.py --tune``). Their F1
    against cleanlab on digits and UCI Letter is in the Recommended page. The result is deterministic for a given
    ``seed`` (default 0).

    Parameters
    ----------
    X : (n, d) array or CSR matrix
    y : (n,) observed (noisy) labels
    confusion : (K, K) array or "estimate", default="estimate"
        C, rows/columns in the order of ``np.unique(y)``; "estimate": by ``method`` with the default
        model, the ``confusion_`` of ``CorrectedLogisticRegression(confusion="estimate")`` with that
        estimator, or with another ``estimator`` the calibrated confident joint of its out-of-fold
        probabilities (`estimate_label_confusion` returns it).
    estimator : scikit-learn classifier with ``predict_proba``, optional
        The model of p(x), cross-fitted on ``n_folds`` stratified folds, on X as given (put any scaling
        in a scikit-learn Pipeline). Default: the pipeline above. Any ``CorrectedLogisticRegression`` gets
        ``confusion=C``; any other classifier is fitted on the noisy labels, so it estimates the noisy
        posterior η(x) = C p(x), and p = Π_simplex(C⁻¹ η).
    filter_by : {"expected_flips", "per_label", "posterior", "f1"}
    threshold : float in (0, 1), default=0.5
        The score above which ``filter_by="posterior"`` flags a row.
    n_folds : int >= 2, default=5
    return_scores : bool, default=False
        Also return the score s of every row (shape (n,)).
    proba : (n, K) array, optional
        Out-of-sample CLEAN class probabilities to use instead of cross-fitting ``estimator``.
    seed : int or None, default=0
        Seed of the folds (and of the estimate of C); None: fresh randomness on every call.
    method : {"auto", "corrected", "confident_joint"}, default="auto"
        How ``confusion="estimate"`` estimates C with the default model (see above).

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
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"The 'method' parameter of {owner} must be one of {METHODS}. Got {method!r} instead.")
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

    C = None
    if isinstance(confusion, str):
        if confusion != "estimate":
            raise ValueError(f"The 'confusion' parameter of {owner} must be a K x K matrix or 'estimate'. "
                             f"Got {confusion!r} instead.")
    else:
        C = check_confusion_matrix(confusion, owner=owner)
        if C.shape[0] != K:
            raise ValueError(f"The 'confusion' parameter of {owner} is {C.shape[0]} x {C.shape[0]}, but y holds "
                             f"{K} classes ({classes.tolist()!r}).")
    P = None
    if proba is not None:
        P = np.asarray(proba, dtype=np.float64)
        if P.shape != (yi.size, K) or not np.isfinite(P).all() or (P < 0).any():
            raise ValueError(f"proba must hold finite probabilities >= 0 with shape ({yi.size}, {K}); got {P.shape}.")
        P = P / np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    if estimator is None and (C is None or P is None):
        fit = _default_pipeline(X, yi, K, int(n_folds), seed, C, method)
        C = fit["C"]
        P = fit["P"] if P is None else P
    elif C is None:
        C = _estimate(base, ours, X, yi, K, int(n_folds), seed)
    if P is None:
        model = clone(base).set_params(confusion=C) if ours else base
        P = _oof(model, X, yi, K, int(n_folds), seed, clean=ours, C=C)
    scores = flip_posterior(P, yi, C)
    idx = flag_issues(scores, yi, C, filter_by, float(threshold))
    return (idx, scores) if return_scores else idx



def estimate_label_confusion(X: Any, y: Any, estimator: Any = None, n_folds: int = 5, seed: Any = 0,
                             method: str = "auto") -> np.ndarray:
    """The C that ``find_label_issues(X, y, "estimate", estimator=..., n_folds=..., seed=..., method=...)``
    uses, rows/columns in the order of ``np.unique(y)``: with no ``estimator``, the default pipeline's
    (standardised features, regularisation chosen on ``CS_GRID``; the confident joint's Ĉ or the corrected
    model's, by ``method``; see `find_label_issues`); with a ``CorrectedLogisticRegression``, its
    ``confusion_`` with ``confusion="estimate"``; else the calibrated confident joint of the classifier's out-of-fold
    noisy-label probabilities η (averaged over ``CONFIDENT_JOINT_REPEATS`` fold splits; no EM
    step: with p = Π_simplex(Ĉ⁻¹ η) it drifted, 6 of 8 tuning cases worse — 15-NN on digits, seeds 100–101)."""
    from sklearn.utils.validation import check_X_y

    from .corrected_logistic import CorrectedLogisticRegression

    X, y = check_X_y(X, y, accept_sparse="csr", dtype=np.float64)
    _, yi = np.unique(y, return_inverse=True)
    yi = yi.astype(np.int64)
    if estimator is None:
        if not isinstance(method, str) or method not in METHODS:
            raise ValueError(f"The 'method' parameter of estimate_label_confusion must be one of {METHODS}. Got "
                             f"{method!r} instead.")
        return _default_pipeline(X, yi, int(yi.max()) + 1, int(n_folds), seed, None, method)["C"]
    ours = isinstance(estimator, CorrectedLogisticRegression)
    base = CorrectedLogisticRegression(seed=seed) if estimator is None else estimator
    return _estimate(base, ours, X, yi, int(yi.max()) + 1, int(n_folds), seed)



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
