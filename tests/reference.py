"""Slow, obvious reference twins of the compiled kernels (numpy, one round at a time)."""

from __future__ import annotations

import numpy as np


def scores(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    return W @ x


def greedy(W: np.ndarray, x: np.ndarray) -> int:
    return int(np.argmax(W @ x))  # np.argmax returns the first maximum


def epsilon_greedy_probs(yhat: int, gamma: float, K: int) -> np.ndarray:
    P = np.full(K, gamma / K)
    P[yhat] += 1.0 - gamma
    return P


def inverse_cdf(P: np.ndarray, u: float) -> int:
    return int(min(np.searchsorted(np.cumsum(P), u, side="right"), P.shape[0] - 1))


def flip(f: int, u: float, rho0: float, rho1: float) -> int:
    if f == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


def perceptron_step(W, x, label):
    """W[ℓ] += x, W[ŷ] -= x on a mistake. Returns (new W, ŷ)."""
    W = W.copy()
    yhat = greedy(W, x)
    if yhat != label:
        W[label] += x
        W[yhat] -= x
    return W, yhat


def banditron_step(W, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0, h=(0.0, 1.0)):
    """One Banditron/RCNBF round. Returns (new W, ŷ, action, P(action), f̃)."""
    K = W.shape[0]
    yhat = greedy(W, x)
    P = epsilon_greedy_probs(yhat, gamma, K)
    a = inverse_cdf(P, u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    U = -np.outer(np.eye(K)[yhat], x)
    U += np.outer(np.eye(K)[a], x) * (h[ft] / P[a])
    return W + U, yhat, a, P[a], ft


def bpa_step(W, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0):
    """One BPA round: ℓ = max(0, 1 + (1-2a) w_ỹ·x), w_ỹ += (2a-1) ℓ/‖x‖² x with a = f̃."""
    K = W.shape[0]
    yhat = greedy(W, x)
    a = inverse_cdf(epsilon_greedy_probs(yhat, gamma, K), u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    W = W.copy()
    sq = x @ x
    if sq > 0:
        loss = max(0.0, 1 + (1 - 2 * ft) * (W[a] @ x))
        W[a] += (2 * ft - 1) * loss / sq * x
    return W, yhat, a, ft


def soba_step(A, theta, cum, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0, diagonal=False):
    """One SOBA round with explicit A (full (Kd, Kd) matrix, or its diagonal (Kd,)) and W = A⁻¹θ.

    Returns (A, theta, cum, W before the round, ŷ).
    """
    K, d = theta.shape
    th = theta.ravel()
    W = (th / A if diagonal else np.linalg.solve(A, th)).reshape(K, d)
    s = W @ x
    yhat = int(np.argmax(s))
    P = epsilon_greedy_probs(yhat, gamma, K)
    a = inverse_cdf(P, u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    A, theta = A.copy(), theta.copy()
    if ft == 1:
        others = s.copy()
        others[a] = -np.inf
        ybar = int(np.argmax(others))
        g = np.zeros((K, d))
        g[ybar] += x / P[a]
        g[a] -= x / P[a]
        z = np.sqrt(P[a]) * g.ravel()
        Ainv_z = z / A if diagonal else np.linalg.solve(A, z)
        m = ((W.ravel() @ z) ** 2 + 2 * (W.ravel() @ g.ravel())) / (1 + z @ Ainv_z)
        if cum + m >= 0:
            cum += m
            A = A + z * z if diagonal else A + np.outer(z, z)
            theta = theta - g
    return A, theta, cum, W, yhat


# ---------------------------------------------------------------------------
# Diluted (set) feedback: MC-SLP and MC-DBF (Batra & Manwani 2021), SPEC §4.8-4.9.
# Twins of noisyfeedback/kernels/diluted.py, obvious rather than fast.
# ---------------------------------------------------------------------------

def top_m(s: np.ndarray, m: int) -> list[int]:
    """The m largest scores' labels in rank order; equal scores lowest label first."""
    return sorted(range(s.shape[0]), key=lambda r: (-s[r], r))[:m]


def dbf_probs(top: list[int], gamma: float, K: int) -> np.ndarray:
    """P(r) = (1-γ)/m·1[r∈Ŷ] + γ/K."""
    m = len(top)
    P = np.full(K, gamma / K)
    P[list(top)] += (1.0 - gamma) / m
    return P


def draw_set(P: np.ndarray, us) -> list[int]:
    """Successive sampling without replacement ∝ P, one uniform per draw, inverse CDF over the
    remaining labels in increasing order (m = 1: Banditron's inverse CDF). Returns the set, sorted."""
    if len(us) == 1:
        return [inverse_cdf(P, us[0])]
    drawn: list[int] = []
    for u in us:
        remaining = [r for r in range(P.shape[0]) if r not in drawn]
        cum = np.cumsum(P[remaining])
        j = min(int(np.searchsorted(cum, u * cum[-1], side="right")), len(remaining) - 1)
        drawn.append(remaining[j])
    return sorted(drawn)


def set_probability(A, P: np.ndarray) -> float:
    """Z(A) by brute force: the sum over A's m! orders of Π_t P(b_t) / (mass not yet drawn)."""
    from itertools import permutations

    total = 0.0
    for order in permutations(A):
        prob = 1.0
        for t, b in enumerate(order):
            rest = sum(P[r] for r in range(P.shape[0]) if r not in order[:t])
            prob *= P[b] / rest
        total += prob
    return total


def dbf_taus(K: int, m: int) -> tuple[float, float]:
    from math import comb

    return float(comb(K - 2, m - 1)), (m - 1) / (K - m)


def mcdbf_update(W, x, top, A, Z, h):
    """W + Ũ with Ũ[r] = (h·1[r∈A]/(Z·τ1) − 1[r∈Ŷ]/m − τ2)·x."""
    K, m = W.shape[0], len(top)
    tau1, tau2 = dbf_taus(K, m)
    c = np.full(K, -tau2)
    c[list(top)] -= 1.0 / m
    c[list(A)] += h / (Z * tau1)
    return W + np.outer(c, x)


def mcdbf_step(W, x, y, m, gamma, us, u_feedback, rho0=0.0, rho1=0.0):
    """One MC-DBF round. Returns (new W, ŷ, Ỹ, Z(Ỹ), f̃, 1[y ∉ Ŷ])."""
    K = W.shape[0]
    top = top_m(W @ x, m)
    P = dbf_probs(top, gamma, K)
    A = draw_set(P, us)
    Z = set_probability(A, P)
    ft = flip(int(y in A), u_feedback, rho0, rho1)
    beta = 1.0 - rho0 - rho1
    h = (ft - rho0) / beta
    return mcdbf_update(W, x, top, A, Z, h), top[0], A, Z, ft, int(y not in top)


def mcslp_step(W, x, label, m):
    """One MC-SLP round: W + (e_ℓ − 1[r∈Ŷ]/m) ⊗ x. Returns (new W, Ŷ)."""
    K = W.shape[0]
    top = top_m(W @ x, m)
    c = np.zeros(K)
    c[label] += 1.0
    c[top] -= 1.0 / m
    return W + np.outer(c, x), top
