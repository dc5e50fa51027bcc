"""Flip rates from the mixture structure of noisy bandit feedback, with cross-fitted calibration (ours)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit, logit
from threadpoolctl import threadpool_limits

from .._validation import Integer, Interval, check_param
from ._common import check_tuples, clip_rates, seed_ints, uninformative

__all__ = ["estimate_mixture"]

_OWNER = "estimate_flip_rates(method='mixture')"


def estimate_mixture(
    X: Any,
    actions: Any,
    feedback: Any,
    n_classes: int,
    seed: int | np.random.SeedSequence | None = 0,
    *,
    n_components: int = 64,
    l2: float | tuple[float, ...] = (1e-2, 1e-3, 1e-4),
    max_iter: int = 200,
    n_folds: int = 2,
    svd_samples: int = 10_000,
    tail: float = 0.005,
    fit_samples: int | None = 20_000,
    warm: dict | None = None,
    per_action: bool = False,
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Estimate (ρ0, ρ1) by fitting the structure P(f̃=1 | x, a) = ρ0 + β·π_a(x), then recalibrating.

    Noisy bandit feedback obeys, for every context x and action a,

        P(f̃=1 | x, a) = ρ0 + β·π_a(x),   β = 1 − ρ0 − ρ1,   π_a(x) = P(y=a | x),  Σ_a π_a(x) = 1.

    The estimator has two stages.

    1. **Ranker.** π(x) = softmax(V z(x) + b) over the K arms, one linear model
       shared by all arms, is fitted jointly with (ρ0, β) by maximum likelihood
       of the logged (z, a, f̃) (L-BFGS, L2 penalty ``l2`` on V). z(x) are the
       first ``n_components`` truncated-SVD components of X (fitted on at most
       ``svd_samples`` rows), standardised. The fit uses every tuple, not a
       tail, and the constraint Σ_a π_a = 1 lets the arms share what they
       learn — the logged arm is mostly the logging policy's greedy guess, so a
       model per arm would see few contradicting examples. The ranker's own
       (ρ0, β) are biased, though: the penalty a model of this size needs makes
       π under-confident, which the fit absorbs into a larger β (on MNIST,
       ρ1 = 0.25 came out as 0.08–0.10).
    2. **Calibration, cross-fitted.** The tuples are split into ``n_folds``
       folds; the ranker fitted on the other folds scores each tuple by
       s = logit π̂_a(x). On these out-of-fold scores a four-parameter logistic

           P(f̃=1 | s, a) = ρ0 + β·σ(α_a·s + c_a)

       (shared ρ0, β; a slope and an offset per arm) is fitted by maximum
       likelihood. Its plateaus are ρ0 (tuples the ranker is sure are wrong)
       and 1 − ρ1 (sure right): NREst's "perfect examples", but located on the
       score axis and estimated from every tuple near a plateau rather than
       read off one percentile of one network's output. Cross-fitting keeps
       the ranker's over-fitting out of the plateaus; the free slope absorbs
       its under-confidence. ``l2`` may be a grid: each value's scores are
       calibrated and the one whose calibration has the highest out-of-fold
       likelihood is used (the default grid costs three ranker fits per fold,
       warm-started).

    The rates are read where the data are, not at the asymptotes: ρ̂0 and
    1 − ρ̂1 are the ``tail`` and 1 − ``tail`` quantiles of the calibrated
    P(f̃=1 | s, a) over the tuples. When the ranker separates the tuples well
    the two coincide; when it does not (few tuples, β small) the likelihood is
    flat along the asymptotes and reading them would extrapolate (we saw
    ρ̂1 = 0 for ρ1 = 0.4), while the quantiles stay within the data.

    Why it is the default: on tuples logged by Banditron and by RCNBF
    (γ = 0.05) on MNIST and on SynSep, with N_s = 50 000, its estimates were
    within 0.011 of the truth on all six settings of the paper's Table 1
    (within 0.05 with N_s = 10 000), where NREst missed by up to 0.1 on the
    same tuples — at a fraction of NREst's cost (seconds against minutes).
    It assumes that some tuples are confidently right and some confidently
    wrong under a linear model of the SVD features — the perfect-example
    assumption of NREst, made for a linear ranker. Its linear algebra runs on
    one BLAS thread (small products; oversubscribed threads were 10× slower
    on a busy machine, and the result then does not depend on the thread
    count).

    Parameters
    ----------
    X : array-like or CSR matrix, shape (n, d)
        Contexts of the logged tuples.
    actions : array-like of int, shape (n,)
        Actions taken (labels 0..n_classes−1).
    feedback : array-like of 0/1, shape (n,)
        Observed (possibly flipped) feedback f̃.
    n_classes : int >= 2
    seed : int, SeedSequence or None
        Seeds the SVD and the fold split. Fixed seed, same estimate.
    n_components : int >= 1
        Dimension of the SVD features (X itself, standardised, when d <= n_components).
    l2 : float >= 0 or sequence of them
        L2 penalty of the ranker (on the mean log-likelihood), or a grid to choose from.
    max_iter : int >= 1
        L-BFGS iterations of each ranker fit.
    n_folds : int >= 2
        Cross-fitting folds.
    svd_samples : int >= 1
        Rows used to fit the SVD.
    tail : float in [0, 0.5)
        Quantile at which the calibrated curve is read; 0 reads the asymptotes.
    fit_samples : int >= 1 or None
        The ranker of each fold is fitted on at most this many of its training tuples (a seeded
        uniform subsample; None: all of them). Every tuple is still scored and calibrated. The
        ranker's cost grows with the rows it is fitted on and its ranking stops improving long
        before 100 000 tuples; this keeps an estimate on RCINE's N_s = 100 000 to seconds.

    warm : dict or None
        State carried from one estimate to the next on similar tuples (RCINE's
        ``warm_start``), read and updated in place. Empty: a cold estimate that
        fills it with the SVD basis and the chosen ``l2``. Filled: the basis is
        reused (not refitted) and only that ``l2`` is fitted, about a third of a
        cold estimate's cost. (Starting the rankers from the last estimate's
        parameters was tried and dropped: at ρ0 = ρ1 = 0.4 on MNIST it drifted to
        estimates 0.05 low, where fresh fits stayed within 0.01.)

    per_action : bool
        (beyond the paper) Rates that depend on the action: stage 2 is fitted per arm (its own two plateaus
        on the scores of its tuples) and each arm's rates are read at its tuples' quantiles; an arm with fewer
        than ``PER_ARM_MIN`` tuples, or whose feedback is all one value, takes the shared estimate.

    Returns
    -------
    (rho0_hat, rho1_hat) : tuple of float
        In [0, 1) with rho0_hat + rho1_hat < 1; with ``per_action`` two arrays of ``n_classes`` rates.
    """
    X, actions, feedback = check_tuples(X, actions, feedback, n_classes, seed, _OWNER)
    l2_grid = _check_l2(l2)
    check_param("n_components", n_components, Integer(1), _OWNER)
    check_param("max_iter", max_iter, Integer(1), _OWNER)
    check_param("n_folds", n_folds, Integer(2), _OWNER)
    check_param("svd_samples", svd_samples, Integer(1), _OWNER)
    check_param("tail", tail, Interval(0, 0.5, closed="left"), _OWNER)
    if fit_samples is not None:
        check_param("fit_samples", fit_samples, Integer(1), _OWNER)
    if warm is not None and not isinstance(warm, dict):
        raise TypeError(f"The 'warm' parameter of {_OWNER} must be a dict or None. Got {type(warm).__name__} instead.")
    if per_action not in (False, True):
        raise ValueError(f"The 'per_action' parameter of {_OWNER} must be False or True. Got {per_action!r} instead.")
    if uninformative(feedback, 2 * n_folds, _OWNER):
        return (np.zeros(int(n_classes)), np.zeros(int(n_classes))) if per_action else (0.0, 0.0)
    with threadpool_limits(limits=1, user_api="blas"):
        return _estimate(X, actions, feedback, int(n_classes), seed, l2_grid, n_components, int(max_iter),
                         n_folds, svd_samples, float(tail), fit_samples, warm, per_action)


#: per_action=True: an arm needs this many tuples for rates of its own (else it takes the shared estimate)
PER_ARM_MIN = 100


def _estimate(X, actions, feedback, K, seed, l2_grid, n_components, max_iter, n_folds, svd_samples, tail,
              fit_samples=None, warm=None, per_action=False):
    svd_seed, fold_seed = seed_ints(seed, 2)
    hot = warm is not None and "l2" in warm
    Z, components = _features(X, n_components, svd_samples, svd_seed, warm.get("components") if hot else None)

    n = Z.shape[0]
    rng_fold = np.random.default_rng(fold_seed)
    fold = rng_fold.permutation(n) % n_folds
    fits = []  # each fold's ranker training rows: the other folds, subsampled to fit_samples
    for k in range(n_folds):
        rows = np.flatnonzero(fold != k)
        if fit_samples is not None and rows.shape[0] > fit_samples:
            rows = np.sort(rng_fold.choice(rows, fit_samples, replace=False))
        fits.append(rows)
    if hot:
        l2_grid = (float(warm["l2"]),)
    best = None
    thetas: list = [None] * n_folds
    for lam in l2_grid:  # strongest penalty first; each fit warm-starts the next
        scores = np.zeros(n)
        for k in range(n_folds):
            train, test = fits[k], fold == k
            thetas[k] = _fit_ranker(Z[train], actions[train], feedback[train], K, lam, max_iter, thetas[k])
            scores[test] = _logit_pi(Z[test], actions[test], thetas[k], K)
        fit = _fit_plateaus(scores, actions, feedback, K)
        if best is None or fit[2] < best[2]:
            best, best_scores = fit, scores
            if warm is not None:
                warm.update(components=components, l2=lam)
    q = best[3]
    if tail > 0:
        low, high = np.quantile(q, [tail, 1.0 - tail])
        shared = clip_rates(low, 1.0 - high)
    else:
        shared = clip_rates(best[0], best[1])
    if not per_action:
        return shared
    return _per_arm_rates(best_scores, actions, feedback, K, tail, shared)


def _per_arm_rates(scores, actions, feedback, K: int, tail: float, shared) -> tuple[np.ndarray, np.ndarray]:
    """Each arm's (ρ0(a), ρ1(a)): its own plateaus P(f̃=1 | s) = low_a + (high_a − low_a)·σ(α s + c) fitted on
    the out-of-fold scores of its tuples, read at their ``tail`` quantiles (or asymptotes, tail = 0); the
    shared estimate for arms with fewer than PER_ARM_MIN tuples or constant feedback."""
    r0, r1 = np.full(K, shared[0]), np.full(K, shared[1])
    for a in range(K):
        rows = actions == a
        f = feedback[rows]
        if rows.sum() < PER_ARM_MIN or f.min() == f.max():
            continue
        low, r1_a, _, q = _fit_plateaus(scores[rows], np.zeros(int(rows.sum()), np.int64), f, 1)
        if tail > 0:
            lo, hi = np.quantile(q, [tail, 1.0 - tail])
            r0[a], r1[a] = clip_rates(lo, 1.0 - hi)
        else:
            r0[a], r1[a] = clip_rates(low, r1_a)
    return r0, r1


def _check_l2(l2) -> tuple[float, ...]:
    grid = tuple(l2) if isinstance(l2, (tuple, list, np.ndarray)) else (l2,)
    if not grid:
        raise ValueError(f"The 'l2' parameter of {_OWNER} must be a float >= 0 or a non-empty sequence of them.")
    for v in grid:
        check_param("l2", v, Interval(0, None), _OWNER)
    return tuple(sorted((float(v) for v in grid), reverse=True))


# ---------------------------------------------------------------- features
def _features(X, n_components: int, svd_samples: int, seed: int, components=None):
    """Standardised low-dimensional features: truncated SVD of X (or X itself when it is narrow).

    Returns (Z, the SVD components or None); given ``components`` (same d) are used as they are."""
    n, d = X.shape
    if d <= n_components:
        Z = X.toarray() if sp.issparse(X) else np.array(X, dtype=np.float64)
        components = None
    elif components is not None and np.shape(components)[1:] == (d,):
        Z = np.asarray(X @ np.asarray(components).T, dtype=np.float64)
    else:
        from sklearn.decomposition import TruncatedSVD

        k = min(n_components, n - 1) if n > 1 else 1
        rows = np.arange(n)
        if n > svd_samples:
            rows = np.sort(np.random.default_rng(seed).choice(n, svd_samples, replace=False))
        fit_rows = X[rows]
        k = max(1, min(k, fit_rows.shape[0] - 1, d - 1))
        svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=4, random_state=seed)
        svd.fit(fit_rows)
        components = svd.components_
        Z = np.asarray(X @ components.T, dtype=np.float64)
    Z = Z - Z.mean(axis=0)
    sd = Z.std(axis=0)
    sd[sd < 1e-12] = 1.0
    return np.ascontiguousarray(Z / sd), components


# ---------------------------------------------------------------- stage 1: ranker
def _rates(u0: float, u1: float) -> tuple[float, float, float]:
    """(low, high, t): low = σ(u0) = ρ0, high = low + (1−low)·σ(u1) = 1 − ρ1, t = σ(u1)."""
    low = expit(u0)
    t = expit(u1)
    return low, low + (1.0 - low) * t, t


def _rate_grads(g_low: float, g_high: float, low: float, t: float) -> tuple[float, float]:
    """Chain rule from (d/dlow, d/dhigh) to (d/du0, d/du1)."""
    dlow = low * (1.0 - low)
    return g_low * dlow + g_high * (1.0 - t) * dlow, g_high * (1.0 - low) * t * (1.0 - t)


def _bernoulli(f: np.ndarray, q: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean negative log-likelihood of f ~ Bernoulli(q) and its derivative in q."""
    q = np.clip(q, 1e-12, 1.0 - 1e-12)
    n = f.shape[0]
    loss = -(f * np.log(q) + (1.0 - f) * np.log1p(-q)).sum() / n
    return loss, -(f / q - (1.0 - f) / (1.0 - q)) / n


def _softmax(S: np.ndarray) -> np.ndarray:
    S = S - S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S


def _ranker_loss_grad(theta, Z, a, f, onehot, K: int, l2: float):
    """Penalised mean negative log-likelihood of P(f̃=1|z,a) = low + (high−low)·softmax(Vz+b)_a, and its gradient.

    θ = (V.ravel(), b, u0, u1) with low = σ(u0), high = low + (1−low)·σ(u1)."""
    n, d = Z.shape
    nv = K * d
    V = theta[:nv].reshape(K, d)
    b = theta[nv:nv + K]
    low, high, t = _rates(theta[-2], theta[-1])
    beta = high - low
    P = _softmax(Z @ V.T + b)
    pa = P[np.arange(n), a]
    loss, gq = _bernoulli(f, low + beta * pa)
    G = (gq * beta * pa)[:, None] * (onehot - P)
    gV = G.T @ Z + l2 * V
    gu0, gu1 = _rate_grads(float(gq @ (1.0 - pa)), float(gq @ pa), low, t)
    loss += 0.5 * l2 * float((V * V).sum())
    return loss, np.concatenate([gV.ravel(), G.sum(axis=0), [gu0, gu1]])


def _fit_ranker(Z, a, f, K: int, l2: float, max_iter: int, theta0: np.ndarray | None = None) -> np.ndarray:
    """Maximum likelihood of the ranker (see `_ranker_loss_grad`); ``theta0`` warm-starts it."""
    n, d = Z.shape
    onehot = np.zeros((n, K))
    onehot[np.arange(n), a] = 1.0
    if theta0 is None:
        theta0 = np.zeros(K * d + K + 2)
        theta0[-2], theta0[-1] = logit(0.1), logit(0.8 / 0.9)
    res = minimize(_ranker_loss_grad, theta0, args=(Z, a, f.astype(np.float64), onehot, K, l2), jac=True,
                   method="L-BFGS-B", options={"maxiter": max_iter, "maxcor": 20})
    return res.x


def _logit_pi(Z, a, theta: np.ndarray, K: int) -> np.ndarray:
    """logit π̂_a(z) = log π̂_a − log(1 − π̂_a) of the ranker θ, computed stably from the log-softmax."""
    d = Z.shape[1]
    V, b = theta[:K * d].reshape(K, d), theta[K * d:K * d + K]
    S = Z @ V.T + b
    S -= S.max(axis=1, keepdims=True)
    log_p = S - np.log(np.exp(S).sum(axis=1, keepdims=True))
    la = np.minimum(log_p[np.arange(a.shape[0]), a], -1e-12)
    return la - np.log(-np.expm1(la))


# ---------------------------------------------------------------- stage 2: plateaus
def _plateau_loss_grad(theta, s, a, f, K: int):
    """Mean negative log-likelihood of P(f̃=1|s,a) = low + (high−low)·σ(α_a s + c_a), and its gradient.

    θ = (u0, u1, α_0..α_{K−1}, c_0..c_{K−1})."""
    low, high, t = _rates(theta[0], theta[1])
    alpha, c = theta[2:2 + K], theta[2 + K:]
    p = expit(alpha[a] * s + c[a])
    loss, gq = _bernoulli(f, low + (high - low) * p)
    gz = gq * (high - low) * p * (1.0 - p)
    gu0, gu1 = _rate_grads(float(gq @ (1.0 - p)), float(gq @ p), low, t)
    return loss, np.concatenate([[gu0, gu1], np.bincount(a, gz * s, K), np.bincount(a, gz, K)])


def _fit_plateaus(s: np.ndarray, a: np.ndarray, f: np.ndarray, K: int):
    """Fit P(f̃=1|s,a) = low + (high−low)·σ(α_a s + c_a) by maximum likelihood (scores standardised).

    Returns (low, 1 − high, mean negative log-likelihood, fitted P(f̃=1) of each tuple)."""
    f = f.astype(np.float64)
    scale = float(np.std(s)) or 1.0
    s = (s - float(np.mean(s))) / scale
    best = None
    for low0, high0, slope in ((0.1, 0.9, 1.0), (0.3, 0.7, 1.0), (0.02, 0.98, 3.0)):
        theta0 = np.concatenate([[logit(low0), logit((high0 - low0) / (1 - low0))], np.full(K, slope), np.zeros(K)])
        res = minimize(_plateau_loss_grad, theta0, args=(s, a, f, K), jac=True, method="L-BFGS-B",
                       options={"maxiter": 2000})
        if best is None or res.fun < best.fun:
            best = res
    low, high, _ = _rates(best.x[0], best.x[1])
    alpha, c = best.x[2:2 + K], best.x[2 + K:]
    q = low + (high - low) * expit(alpha[a] * s + c[a])
    return float(low), float(1.0 - high), float(best.fun), q
