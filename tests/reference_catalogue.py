"""Slow, obvious reference twins of the catalogue kernels (kernels/catalogue.py): the feature vector φ(x, z)
built explicitly, scores as θ·φ, the oracle step on φ, the policy and the slot sampler, one round at a time."""

from __future__ import annotations

import numpy as np

from noisyfeedback.hashing import CONSTANT_HASH, FNV_PRIME


def unit(v: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.sum(v * v))
    return v / n if n > 0 else v


def phi_dense(x: np.ndarray, z: np.ndarray, lin: str = "all", unit_items: bool = False,
              unit_context: bool = True) -> np.ndarray:
    """[x̂ ⊗ ẑ (row-major), ẑ, x̂, 1] with the linear parts zeroed as ``lin`` says (ẑ = z, the default
    ``item_norm="none"``; ẑ = z/‖z‖ with ``unit_items``: ``item_norm="unit"``; x̂ = x/‖x‖, or x without
    ``unit_context``: ``context_norm="none"``)."""
    xh, zh = (unit(x) if unit_context else x), (unit(z) if unit_items else z)
    parts = [np.outer(xh, zh).ravel(), zh if lin in ("all", "item") else 0 * zh,
             xh if lin == "all" else 0 * xh, np.array([1.0 if lin == "all" else 0.0])]
    return np.concatenate(parts)


def phi_hashed(ctx, item, bits: int, Q=None, lin: str = "all", unit_items: bool = False) -> np.ndarray:
    """ctx, item: lists of (full hash, value, namespace id); the hashed φ in a dense 2^bits vector (the
    context at unit norm; the item as given, or at unit norm with ``unit_items``)."""
    D = 1 << bits
    mask = D - 1
    out = np.zeros(D)
    nx = np.sqrt(sum(v * v for _, v, _ in ctx)) or 1.0
    nz = (np.sqrt(sum(v * v for _, v, _ in item)) or 1.0) if unit_items else 1.0
    for h1, v1, n1 in ctx:
        for h2, v2, n2 in item:
            if Q is None or Q[n1, n2]:
                out[((h1 * FNV_PRIME) ^ h2) & mask] += (v1 / nx) * (v2 / nz)
    if lin in ("all", "item"):
        for h2, v2, _ in item:
            out[h2 & mask] += v2 / nz
    if lin == "all":
        for h1, v1, _ in ctx:
            out[h1 & mask] += v1 / nx
        out[CONSTANT_HASH & mask] += 1.0
    return out


def igw(v: np.ndarray, gamma: float) -> np.ndarray:
    n = v.shape[0]
    best = int(np.argmax(v))
    p = 1.0 / (n + gamma * (v[best] - v))
    p[best] = 0.0
    p[best] = 1.0 - p.sum()
    return p


def epsilon_greedy(v: np.ndarray, eps: float) -> np.ndarray:
    p = np.full(v.shape[0], eps / v.shape[0])
    p[int(np.argmax(v))] += 1.0 - eps
    return p


def slots(v: np.ndarray, k: int, us, dist) -> tuple[list[int], list[float]]:
    """Sequential sampling without replacement: slot s from dist(scores of the free candidates)."""
    free = list(range(v.shape[0]))
    chosen, probs = [], []
    for s in range(min(k, v.shape[0])):
        p = dist(v[free])
        j = int(min(np.searchsorted(np.cumsum(p), us[s], side="right"), len(free) - 1))
        chosen.append(free[j])
        probs.append(float(p[j]))
        free.pop(j)
    return chosen, probs


def adagrad_step(theta, G, phi, e, lr):
    """θ_k += lr·g/√G_k, G_k += g², g = e·φ_k on φ's non-zero coordinates."""
    theta, G = theta.copy(), G.copy()
    nz = phi != 0
    g = e * phi[nz]
    G[nz] += g * g
    theta[nz] += lr * g / np.sqrt(G[nz])
    return theta, G


def ridge_solution(Phi: np.ndarray, f: np.ndarray, lam: float, s2: np.ndarray | None = None) -> np.ndarray:
    """argmin Σ (f − θ·φ)² + lam·Σ_k s2_k·θ_k² (s2 = 1: plain ridge)."""
    D = Phi.shape[1]
    return np.linalg.solve(lam * np.diag(np.ones(D) if s2 is None else s2) + Phi.T @ Phi, Phi.T @ f)


def ridge_scales(x: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """The penalty's per-weight scale from a first round (context x as the oracle sees it, candidates Z):
    ‖x‖²·s_z for the interaction, s_z = mean ‖z‖² for the items, ‖x‖² for the context, 1 for the intercept."""
    sx, sz = float(x @ x) or 1.0, float(np.mean(np.sum(Z * Z, axis=1))) or 1.0
    d_c, d_a = x.shape[0], Z.shape[1]
    return np.concatenate([np.full(d_c * d_a, sx * sz), np.full(d_a, sz), np.full(d_c, sx), [1.0]])


def greedy_first_ratio(P: np.ndarray, Phi: np.ndarray, theta: np.ndarray) -> float:
    """Greedy first's sample for one round (rows of Phi: its candidates' φ): the mean leverage φ_rᵀPφ_r of the
    candidates other than the greedy one (first maximum of θ·φ) over the greedy one's."""
    h = np.einsum("ij,jk,ik->i", Phi, P, Phi)
    g = int(np.argmax(Phi @ theta))
    return float(np.delete(h, g).mean() / h[g])
