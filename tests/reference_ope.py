"""Slow, obvious reference twins of the candidate-list and slate off-policy estimators, written
from their papers' formulas: plain Python loops over rounds, one round a dict.

A candidate-list round: ``pi`` (target probabilities), ``q`` (reward model on the observed scale),
``a`` (logged candidate), ``p`` (its propensity), ``r`` (logged reward), ``rho0``/``rho1`` (one
rate per candidate)."""

from __future__ import annotations

import itertools
import math

import numpy as np


def h(r, rho0, rho1):
    return (r - rho0) / (1.0 - rho0 - rho1)


def candidates(estimator: str, rounds: list[dict], tau: float = math.inf, lam: float = math.inf) -> float:
    n = len(rounds)
    total, wsum, dmsum, corr = 0.0, 0.0, 0.0, 0.0
    for rd in rounds:
        a = rd["a"]
        w = rd["pi"][a] / rd["p"]
        hr = h(rd["r"], rd["rho0"][a], rd["rho1"][a])
        qhat = [h(rd["q"][j], rd["rho0"][j], rd["rho1"][j]) for j in range(len(rd["pi"]))] if "q" in rd else None
        dm = sum(rd["pi"][j] * qhat[j] for j in range(len(rd["pi"]))) if qhat else 0.0
        if estimator in ("ips", "snips"):
            total += w * hr                         # Horvitz–Thompson; SNIPS divides by Σ w
        elif estimator == "dm":
            total += dm
        elif estimator == "dr":                     # Dudík et al. 2011, eq. (2)
            total += dm + w * (hr - qhat[a])
        elif estimator == "switch-dr":              # Wang et al. 2017 (obp's SwitchDR)
            total += dm + (w * (hr - qhat[a]) if w <= tau else 0.0)
        elif estimator == "dros":                   # Su et al. 2020: ŵ = λw/(w² + λ)
            ws = w if math.isinf(lam) else lam * w / (w * w + lam)
            total += dm + ws * (hr - qhat[a])
        elif estimator == "sndr":
            dmsum += dm
            corr += w * (hr - qhat[a])
        wsum += w
    if estimator == "snips":
        return total / wsum
    if estimator == "sndr":
        return dmsum / n + corr / wsum
    return total / n


def sequential_slates(p: list[float], L: int) -> dict[tuple, float]:
    """P(slate) for filling L slots in turn, each by a draw ∝ p among the candidates not yet shown."""
    out = {}
    for s in itertools.permutations(range(len(p)), L):
        prob, used = 1.0, 0.0
        for j in s:
            prob *= p[j] / (1.0 - used) if 1.0 - used > 0 else 0.0
            used += p[j]
        out[s] = prob
    return out


def slate_marginals(dist: dict[tuple, float], m: int, L: int) -> np.ndarray:
    M = np.zeros((m, L))
    for s, prob in dist.items():
        for p, j in enumerate(s):
            M[j, p] += prob
    return M


def slot_ips(rounds: list[dict]) -> float:
    """Each round: ``target``/``logging`` slate distributions, ``s`` the logged slate, ``r`` per-slot
    rewards, ``rho0``/``rho1`` per candidate."""
    total = 0.0
    for rd in rounds:
        m, L = rd["m"], len(rd["s"])
        P, M = slate_marginals(rd["target"], m, L), slate_marginals(rd["logging"], m, L)
        for p, j in enumerate(rd["s"]):
            total += P[j, p] / M[j, p] * h(rd["r"][p], rd["rho0"][j], rd["rho1"][j])
    return total / len(rounds)


def pseudoinverse(rounds: list[dict]) -> float:
    """Swaminathan et al. 2017: V̂ = (1/n) Σ q_πᵀ Γ_μ⁺ 1_s · r, Γ_μ = E_μ[1_s 1_sᵀ] built from the
    logging policy's slate distribution."""
    total = 0.0
    for rd in rounds:
        m, L = rd["m"], len(rd["s"])

        def ind(s):
            v = np.zeros(L * m)
            for p, j in enumerate(s):
                v[p * m + j] = 1.0
            return v

        G = sum(prob * np.outer(ind(s), ind(s)) for s, prob in rd["logging"].items())
        q = sum(prob * ind(s) for s, prob in rd["target"].items())
        w = q @ np.linalg.pinv(G) @ ind(rd["s"])
        r = sum(h(rd["r"][p], rd["rho0"][j], rd["rho1"][j]) for p, j in enumerate(rd["s"]))
        total += w * r
    return total / len(rounds)
