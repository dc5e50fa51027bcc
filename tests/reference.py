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
