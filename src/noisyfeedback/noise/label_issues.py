"""The arithmetic of finding mislabelled rows (the search itself: `noisyfeedback.find_label_issues`).

With C[r, q] = P(ỹ = r | y = q) and the clean class probabilities p_q(x) = P(y = q | x), Bayes' rule
gives the posterior of the true class of a row given its features AND its observed label:

    P(y = q | x, ỹ) = C[ỹ, q] p_q(x) / Σ_j C[ỹ, j] p_j(x),

so the probability that the observed label is wrong (the row's score) is

    s(x, ỹ) = P(y ≠ ỹ | x, ỹ) = 1 − C[ỹ, ỹ] p_ỹ(x) / Σ_j C[ỹ, j] p_j(x).

The expected number of flipped rows is m = n Σ_q π_q (1 − C[q, q]), π the clean class shares, estimated
from the observed label shares ν by π = C⁻¹ν (projected onto the simplex); for symmetric noise
(C[q, q] = 1 − ρ) m = nρ whatever π. When p is the true posterior and C the true matrix, s is the exact
posterior of a flip and E[Σ_i s_i] = m. The clean probabilities are out-of-fold (cross-validated), so a
row's own label does not shape the model that judges it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["em_step", "flip_posterior", "expected_flips", "FILTERS", "clean_prior", "simplex_projection",
           "flag_issues", "temperature_scale", "fit_temperature", "noisy_log_loss"]

#: how many rows are flagged (see find_label_issues)
FILTERS = ("expected_flips", "per_label", "posterior", "f1")


def flip_posterior(proba: np.ndarray, yi: np.ndarray, C: np.ndarray) -> np.ndarray:
    """s_i = 1 − C[ỹ_i, ỹ_i] p_{ỹ_i}(x_i) / Σ_j C[ỹ_i, j] p_j(x_i): P(y ≠ ỹ | x, ỹ) for clean probabilities
    ``proba`` (n, K), encoded observed labels ``yi`` and the confusion matrix C. A row whose observed label
    is impossible under C and p (zero denominator) scores 1."""
    rows = C[yi] * proba
    den = rows.sum(axis=1)
    keep = rows[np.arange(yi.size), yi]
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(den > 0, 1.0 - keep / np.where(den > 0, den, 1.0), 1.0)
    return np.clip(s, 0.0, 1.0)


def _simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of v onto the probability simplex (Duchi et al. 2008), along the last axis."""
    v = np.atleast_2d(v)
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, v.shape[1] + 1)
    cond = u - css / k > 0
    r = cond.shape[1] - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(v.shape[0]), r] / (r + 1)
    return np.maximum(v - theta[:, None], 0.0)


def clean_prior(yi: np.ndarray, C: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """π = C⁻¹ν (ν the observed label shares), projected onto the simplex: the clean class shares implied
    by C (E[ν] = Cπ)."""
    K = C.shape[0]
    nu = np.bincount(yi, weights=weights, minlength=K).astype(float)
    nu /= nu.sum()
    try:
        pi = np.linalg.solve(C, nu)
    except np.linalg.LinAlgError:
        pi = np.linalg.lstsq(C, nu, rcond=None)[0]
    return _simplex(pi)[0]


def expected_flips(yi: np.ndarray, C: np.ndarray) -> float:
    """m = n Σ_q π_q (1 − C[q, q]) with π = `clean_prior`: the expected number of flipped labels."""
    pi = clean_prior(yi, C)
    return float(yi.size * pi @ (1.0 - np.diag(C)))


def _expected_flips_per_label(yi: np.ndarray, C: np.ndarray) -> np.ndarray:
    """m_r = n Σ_{q ≠ r} C[r, q] π_q: the expected number of rows labelled r whose true class is not r."""
    pi = clean_prior(yi, C)
    off = C * pi[None, :]
    return yi.size * (off.sum(axis=1) - np.diag(off))


def _top(order: np.ndarray, m: int) -> np.ndarray:
    return order[: max(0, min(int(m), order.size))]


def _flag(scores: np.ndarray, yi: np.ndarray, C: np.ndarray, filter_by: str, threshold: float) -> np.ndarray:
    """The flagged rows, most likely first (score descending, then row index)."""
    n = scores.size
    order = np.lexsort((np.arange(n), -scores))
    if filter_by == "expected_flips":
        return _top(order, round(expected_flips(yi, C)))
    if filter_by == "posterior":
        return order[scores[order] > threshold]
    if filter_by == "f1":
        # expected F1 of flagging the top k, with the scores as calibrated probabilities:
        # E[TP_k] = Σ_{top k} s, E[#flips] = Σ s  ->  F1_k ≈ 2 E[TP_k] / (k + E[#flips])
        tp = np.cumsum(scores[order])
        f1 = 2.0 * tp / (np.arange(1, n + 1) + scores.sum())
        k = int(np.argmax(f1)) + 1 if n and scores.sum() > 0 else 0
        return order[:k]
    # per_label: the m_r likeliest among the rows labelled r, then merged by score
    m = np.rint(_expected_flips_per_label(yi, C)).astype(int)
    keep = np.zeros(n, dtype=bool)
    for r in range(C.shape[0]):
        rows = order[yi[order] == r]
        keep[_top(rows, m[r])] = True
    return order[keep[order]]


def em_step(C: np.ndarray, proba: np.ndarray, yi: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """One Dawid–Skene step: posteriors Q_i(q) ∝ C[ỹ_i, q] p_q(x_i), then C'[r, q] = Σ_{ỹ_i = r} w_i Q_i(q) /
    Σ_i w_i Q_i(q) (columns of a class with no mass: the identity's)."""
    K = C.shape[0]
    Q = C[yi] * proba
    mass = Q.sum(axis=1, keepdims=True)
    Q = np.where(mass > 0, Q / np.where(mass > 0, mass, 1.0), proba)
    N = np.zeros((K, K))
    np.add.at(N, yi, Q if weights is None else Q * weights[:, None])
    cs = N.sum(axis=0, keepdims=True)
    return np.where(cs > 0, N / np.where(cs > 0, cs, 1.0), np.eye(K))


def temperature_scale(proba: np.ndarray, T: float) -> np.ndarray:
    """p_T,q(x) = p_q(x)^(1/T) / Σ_j p_j(x)^(1/T): probabilities sharpened (T < 1) or flattened (T > 1) with
    their ranking kept (temperature scaling, Guo et al. 2017)."""
    L = np.log(np.clip(proba, 1e-300, None)) / T
    L -= L.max(axis=1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=1, keepdims=True)


#: the temperatures `fit_temperature` searches, as log T (T from e^-3 ≈ 0.05 to e^3 ≈ 20)
LOG_TEMPERATURE_BOUNDS = (-3.0, 3.0)


def noisy_log_loss(C: np.ndarray, proba: np.ndarray, yi: np.ndarray) -> float:
    """Mean −log (C p_i)[ỹ_i]: how well C and the held-out clean probabilities predict the noisy labels."""
    eta = np.einsum("ij,ij->i", C[yi], proba)
    return float(-np.mean(np.log(np.clip(eta, 1e-15, None))))


def fit_temperature(C: np.ndarray, proba: np.ndarray, yi: np.ndarray) -> float:
    """The T of least mean −log (C p_T(x_i))[ỹ_i] over held-out clean probabilities ``proba``: temperature
    scaling fitted to the noisy labels through the forward model (a proper score of η = C p that needs no
    clean label). Regularised out-of-fold probabilities are often too flat; a flat p makes the posteriors
    Q_i(q) ∝ C[ỹ_i, q] p_q(x_i), hence `em_step`'s count of flips, too small."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(lambda log_t: noisy_log_loss(C, temperature_scale(proba, float(np.exp(log_t))), yi),
                          bounds=LOG_TEMPERATURE_BOUNDS, method="bounded")
    return float(np.exp(res.x))


simplex_projection = _simplex
flag_issues = _flag  # the rows flagged by a filter (find_label_issues)
