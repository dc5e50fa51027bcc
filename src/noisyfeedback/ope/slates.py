"""Off-policy estimates for slates: k of a round's candidates shown in k slots (positions), plain or
noise-corrected.

A log of n rounds, ragged as in `noisyfeedback.ope.candidates`: round i offered the candidates
``offsets[i]:offsets[i+1]``; the logging policy μ filled its L slots with the candidates
``slates[i]`` (indices within the round, distinct); the page earned the per-slot rewards
``rewards[i, l]`` (clicks). Marginals are per candidate and slot: ``marginals[j, l]`` is the
probability that the policy puts candidate j in slot l (flat over all rounds' candidates, shape
(offsets[-1], L)).

**Per-slot IPS** — unbiased when slot l's reward depends only on the context and the candidate in
slot l (a position-based click model: P(click at l) = examination(l) · attraction(item)):

    V̂ = (1/n) Σ_i Σ_l  π_l(s_il | x_i) / μ_l(s_il | x_i) · h(r_il)

**Pseudo-inverse (PI)** — Swaminathan, Krishnamurthy, Agarwal, Dudík, Langford, Jose & Zitouni
(2017), "Off-policy evaluation for slate recommendation", NeurIPS. Under the additive reward
assumption E[r | x, s] = Σ_l φ_x(l, s_l) (for any unknown φ), with 1_s ∈ {0, 1}^{L·m} the indicator
of the (slot, candidate) pairs of slate s, q_π(x) = E_π[1_s | x] the target's marginals and
Γ_μ(x) = E_μ[1_s 1_sᵀ | x] the logging policy's pairwise moments,

    V̂_PI = (1/n) Σ_i  q_π(x_i)ᵀ Γ_μ(x_i)⁺ 1_{s_i} · r_i,        r_i = Σ_l h(r_il)

(Γ⁺ the Moore–Penrose pseudo-inverse). It is unbiased whenever q_π(x) lies in the range of Γ_μ(x)
(e.g. μ puts positive probability on every slate), whatever the slots' rewards are, as long as
they add up. When μ fills the slots independently (a product distribution, candidates may repeat),
the weight has the closed form Σ_l π_l(s_l)/μ_l(s_l) − L + 1 (their closed form for product logging policies); for
sequential sampling without replacement (VW's ``--ccb_explore_adf``, Plackett–Luce)
`sequential_slate_moments` computes μ's marginals and Γ_μ by enumerating the ordered slates.

h is the flip correction of `noisyfeedback.ope`: h(r) = (r − ρ0)/(1 − ρ0 − ρ1) for 0/1 clicks
flipped at rates ρ0, ρ1 (scalars, or one rate per candidate). Intervals: ``"normal"`` (default;
mean ± z·sd/√n of the per-round terms), ``"bootstrap"`` (rounds resampled) or ``"none"``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .._validation import check_memory
from .candidates import CANDIDATE_INTERVALS, _h, _rates, check_offsets, round_interval
from .estimators import Estimate

__all__ = ["slot_ips", "pseudoinverse", "sequential_slate_moments", "SLATE_ESTIMATORS"]

SLATE_ESTIMATORS = ("slot-ips", "pi")


def _slates(offsets: np.ndarray, slates: Any, owner: str) -> np.ndarray:
    n = offsets.shape[0] - 1
    s = np.asarray(slates)
    if s.ndim != 2 or s.shape[0] != n or s.dtype == bool or not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"{owner}: slates must be an (n, L) integer array of candidate indices with n = {n}; "
                         f"got shape {s.shape}, dtype {s.dtype}.")
    s = s.astype(np.int64)
    sizes = np.diff(offsets)
    bad = ((s < 0) | (s >= sizes[:, None])).any(axis=1)
    if s.shape[1] > 1:
        srt = np.sort(s, axis=1)
        bad |= (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{owner}: round {i}'s slate {s[i].tolist()} must hold distinct candidates in "
                         f"0..{sizes[i] - 1}.")
    return s


def _marginals(M: Any, offsets: np.ndarray, L: int, name: str, owner: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    total = int(offsets[-1])
    if M.shape != (total, L):
        raise ValueError(f"{owner}: {name} must have shape (offsets[-1], L) = ({total}, {L}); got {M.shape}.")
    if not np.isfinite(M).all() or (M < 0).any() or (M > 1 + 1e-12).any():
        raise ValueError(f"{owner}: {name} must be probabilities in [0, 1].")
    sums = np.add.reduceat(M, offsets[:-1], axis=0)
    bad = (np.abs(sums - 1.0) > 1e-6).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{owner}: {name} must sum to 1 over each round's candidates in every slot; round {i} "
                         f"sums to {np.round(sums[i], 6).tolist()}.")
    return M


def _slot_rewards(rewards: Any, n: int, L: int, owner: str) -> np.ndarray:
    r = np.asarray(rewards, dtype=np.float64)
    if r.shape != (n, L) or not np.isfinite(r).all():
        raise ValueError(f"{owner}: rewards must be an (n, L) = ({n}, {L}) array of finite per-slot rewards; got "
                         f"shape {r.shape}.")
    return r


def _corrected(r: np.ndarray, flat: np.ndarray, rho0, rho1, total: int, owner: str):
    r0, r1 = _rates(rho0, total, "rho0", owner), _rates(rho1, total, "rho1", owner)
    if np.any(np.asarray(r0) + np.asarray(r1) >= 1):
        raise ValueError(f"The 'rho0' and 'rho1' parameters of {owner} must satisfy rho0 + rho1 < 1.")
    noisy = bool(np.any(np.asarray(r0) != 0) or np.any(np.asarray(r1) != 0))
    out0 = float(r0) if not isinstance(r0, np.ndarray) else math.nan
    out1 = float(r1) if not isinstance(r1, np.ndarray) else math.nan
    if not noisy:
        return r, out0, out1
    if not np.isin(r, (0.0, 1.0)).all():
        raise ValueError(f"{owner}: rewards must be 0 or 1 (noise correction needs binary rewards).")
    a0 = r0[flat] if isinstance(r0, np.ndarray) else r0
    a1 = r1[flat] if isinstance(r1, np.ndarray) else r1
    return _h(r, a0, a1), out0, out1


def _check_common(alpha, interval, owner):
    if interval not in CANDIDATE_INTERVALS:
        raise ValueError(f"The 'interval' parameter of {owner} must be one of {CANDIDATE_INTERVALS}. Got "
                         f"{interval!r} instead.")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"The 'alpha' parameter of {owner} must be in (0, 1). Got {alpha!r} instead.")


def slot_ips(offsets: Any, slates: Any, rewards: Any, target_marginals: Any, logging_marginals: Any, *,
             rho0: Any = 0.0, rho1: Any = 0.0, alpha: float = 0.05, interval: str = "normal",
             seed: int | None = None) -> Estimate:
    """Per-slot IPS estimate of the expected total reward of a page (the sum over its L slots).

    ``slates`` (n, L) candidate indices within each round, ``rewards`` (n, L) per-slot rewards,
    ``target_marginals`` / ``logging_marginals`` (offsets[-1], L): π's and μ's probability of
    putting each candidate in each slot. V̂ = (1/n) Σ_i Σ_l π_l(s_il)/μ_l(s_il) · h(r_il).

    >>> import numpy as np
    >>> offsets = np.array([0, 3]); slates = np.array([[2, 0]]); rewards = np.array([[1.0, 0.0]])
    >>> mu = np.full((3, 2), 1 / 3); pi = np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]])
    >>> slot_ips(offsets, slates, rewards, pi, mu, interval="none").value   # 1/(1/3) · 1 + 1/(1/3) · 0
    3.0
    """
    owner = "slot_ips"
    _check_common(alpha, interval, owner)
    offsets = check_offsets(offsets, owner=owner)
    n = offsets.shape[0] - 1
    s = _slates(offsets, slates, owner)
    L = s.shape[1]
    P = _marginals(target_marginals, offsets, L, "target_marginals", owner)
    M = _marginals(logging_marginals, offsets, L, "logging_marginals", owner)
    flat = offsets[:-1, None] + s  # (n, L) flat candidate index in each slot
    slot = np.broadcast_to(np.arange(L), (n, L))
    mu = M[flat, slot]
    if (mu <= 0).any():
        i = int(np.flatnonzero((mu <= 0).any(axis=1))[0])
        raise ValueError(f"{owner}: round {i}'s logged slate has logging marginal 0 in some slot.")
    r = _slot_rewards(rewards, n, L, owner)
    hr, out0, out1 = _corrected(r, flat, rho0, rho1, int(offsets[-1]), owner)
    terms = (P[flat, slot] / mu * hr).sum(axis=1)
    value = float(terms.mean())
    lower, upper = round_interval(interval, terms, None, alpha, seed, value, owner)
    return Estimate(value, lower, upper, "slot-ips", int(n), interval, float(alpha), out0, out1)


def _indicator_index(s: np.ndarray, m: int) -> np.ndarray:
    """Positions of the (slot, candidate) pairs of slates s (…, L) in the slot-major vector of length L·m."""
    return np.arange(s.shape[-1]) * m + s


def pseudoinverse(offsets: Any, slates: Any, rewards: Any, target_marginals: Any, *,
                  logging_gamma: Any = None, logging_marginals: Any = None, rho0: Any = 0.0, rho1: Any = 0.0,
                  alpha: float = 0.05, interval: str = "normal", seed: int | None = None) -> Estimate:
    """The pseudo-inverse estimate (Swaminathan et al. 2017) of the expected total reward of a page.

    ``rewards`` (n, L) per-slot rewards (their corrected sum is the page's reward) or (n,) page
    rewards (corrected as one 0/1 reward, scalar rates only). The logging policy is given either
    by ``logging_gamma`` — a list of n per-round matrices Γ_μ (L·m_i × L·m_i, slot-major: index
    l·m_i + j), as `sequential_slate_moments` returns — or, for a logging policy that fills the
    slots independently, by ``logging_marginals`` (offsets[-1], L), which gives the closed-form
    weight Σ_l π_l(s_l)/μ_l(s_l) − L + 1.

    V̂ = (1/n) Σ_i q_π(x_i)ᵀ Γ_μ(x_i)⁺ 1_{s_i} · r_i (see the module's docstring).
    """
    owner = "pseudoinverse"
    _check_common(alpha, interval, owner)
    offsets = check_offsets(offsets, owner=owner)
    n, total = offsets.shape[0] - 1, int(offsets[-1])
    s = _slates(offsets, slates, owner)
    L = s.shape[1]
    P = _marginals(target_marginals, offsets, L, "target_marginals", owner)
    flat = offsets[:-1, None] + s
    slot = np.broadcast_to(np.arange(L), (n, L))
    if (logging_gamma is None) == (logging_marginals is None):
        raise ValueError(f"{owner}: give exactly one of logging_gamma (per-round Γ_μ) and logging_marginals "
                         "(a logging policy that fills the slots independently).")
    if logging_marginals is not None:
        M = _marginals(logging_marginals, offsets, L, "logging_marginals", owner)
        mu = M[flat, slot]
        if (mu <= 0).any():
            i = int(np.flatnonzero((mu <= 0).any(axis=1))[0])
            raise ValueError(f"{owner}: round {i}'s logged slate has logging marginal 0 in some slot.")
        w = (P[flat, slot] / mu).sum(axis=1) - L + 1
    else:
        w = _pi_weights(offsets, s, P, logging_gamma, owner)
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim == 1:
        if r.shape != (n,) or not np.isfinite(r).all():
            raise ValueError(f"{owner}: rewards must be (n, L) per-slot or (n,) page rewards with n = {n}; got "
                             f"shape {r.shape}.")
        if np.ndim(rho0) or np.ndim(rho1):
            raise ValueError(f"{owner}: per-candidate flip rates need per-slot rewards (n, L).")
        page, out0, out1 = _corrected(r, np.zeros(n, dtype=np.int64), rho0, rho1, total, owner)
    else:
        hr, out0, out1 = _corrected(_slot_rewards(r, n, L, owner), flat, rho0, rho1, total, owner)
        page = hr.sum(axis=1)
    terms = w * page
    value = float(terms.mean())
    lower, upper = round_interval(interval, terms, None, alpha, seed, value, owner)
    return Estimate(value, lower, upper, "pi", int(n), interval, float(alpha), out0, out1)


def _pi_weights(offsets: np.ndarray, s: np.ndarray, P: np.ndarray, gammas: Any, owner: str) -> np.ndarray:
    n, L = s.shape
    if len(gammas) != n:
        raise ValueError(f"{owner}: logging_gamma must hold one matrix per round ({n}); got {len(gammas)}.")
    sizes = np.diff(offsets)
    w = np.empty(n)
    for m in np.unique(sizes):
        rows = np.flatnonzero(sizes == m)
        G = np.asarray([gammas[i] for i in rows], dtype=np.float64)
        if G.shape != (rows.size, L * m, L * m) or not np.isfinite(G).all():
            raise ValueError(f"{owner}: round {rows[0]}'s Γ_μ must be a finite {L * m} × {L * m} matrix "
                             f"(L·m, slot-major).")
        pos = _indicator_index(s[rows], int(m))  # (g, L)
        diag = np.take_along_axis(np.diagonal(G, axis1=1, axis2=2), pos, axis=1)  # μ_l(s_l) of the logged slate
        if (diag <= 0).any():
            k = int(np.flatnonzero((diag <= 0).any(axis=1))[0])
            raise ValueError(f"{owner}: round {int(rows[k])}'s logged slate has probability 0 under its Γ_μ (the "
                             f"diagonal entry of slot {int(np.flatnonzero(diag[k] <= 0)[0])} is "
                             f"{float(diag[k].min())!r}): a logged slate must be one the logging policy could show.")
        Gp = np.linalg.pinv(G, hermitian=True)
        # q_π slot-major: q[l·m + j] = π_l(j)
        idx = offsets[rows][:, None] + np.arange(m)  # (g, m) flat candidate indices
        q = P[idx].transpose(0, 2, 1).reshape(rows.size, L * m)
        v = np.einsum("gi,gij->gj", q, Gp)  # qᵀ Γ⁺
        w[rows] = np.take_along_axis(v, pos, axis=1).sum(axis=1)
    return w


#: the most ordered slates m!/(m − L)! that `sequential_slate_moments` enumerates for one round size
MAX_ORDERED_SLATES = 1_000_000


def sequential_slate_moments(offsets: Any, probabilities: Any, n_slots: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Marginals and Γ of a policy that fills slots 0..L−1 in turn, each by drawing a candidate not yet
    shown with probability proportional to ``probabilities`` (flat per candidate, each round's sum
    to 1): P(slate s) = Π_l p(s_l) / (1 − Σ_{j<l} p(s_j)) — VW's ``--ccb_explore_adf`` sampling and
    Plackett–Luce. Enumerates the m!/(m−L)! ordered slates of each round (fine for small m and L; more
    than ``MAX_ORDERED_SLATES`` = 1,000,000, or more memory than the machine has, is refused before
    anything is allocated).

    Returns ``(marginals, gammas)``: marginals (offsets[-1], L); gammas, one (L·m_i × L·m_i)
    slot-major matrix per round, for `pseudoinverse` (and the marginals for `slot_ips`).
    """
    owner = "sequential_slate_moments"
    offsets = check_offsets(offsets, owner=owner)
    n = offsets.shape[0] - 1
    L = int(n_slots)
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != (int(offsets[-1]),) or not np.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"{owner}: probabilities must be {int(offsets[-1])} non-negative numbers.")
    sizes = np.diff(offsets)
    if L < 1 or (sizes < L).any():
        raise ValueError(f"{owner}: n_slots must be in 1..(the smallest round's candidates = {sizes.min()}); "
                         f"got {n_slots}.")
    for m in np.unique(sizes):  # refuse before enumerating: m!/(m − L)! slates of L·m indicators each
        m = int(m)
        count = math.perm(m, L)
        if count > MAX_ORDERED_SLATES:
            raise ValueError(f"{owner}: a round of {m} candidates has {count:.3g} ordered slates of {L} slots "
                             f"(m!/(m − L)!), more than the {MAX_ORDERED_SLATES:,} this enumeration handles; "
                             "use logging_marginals (independent slots) or fewer candidates or slots.")
        g = int((sizes == m).sum())
        check_memory(8.0 * (g * count * (L * m + 4 * L) + count * L * (m + 1) + g * (L * m) ** 2),
                     f"{owner} ({g} rounds of {m} candidates, {L} slots)")
    marg = np.zeros((int(offsets[-1]), L))
    gammas: list[np.ndarray] = [np.empty(0)] * n
    for m in np.unique(sizes):
        m = int(m)
        rows = np.flatnonzero(sizes == m)
        tuples = np.array(list(itertools.permutations(range(m), L)), dtype=np.int64)  # (T, L)
        pr = p[offsets[rows][:, None] + np.arange(m)]  # (g, m)
        ps = pr[:, tuples]  # (g, T, L)
        before = np.concatenate([np.zeros(ps.shape[:2] + (1,)), np.cumsum(ps, axis=2)[:, :, :-1]], axis=2)
        rest = 1.0 - before
        cond = np.where(rest > 1e-300, ps / np.where(rest > 1e-300, rest, 1.0), 0.0)
        prob = cond.prod(axis=2)  # (g, T)
        E = np.zeros((tuples.shape[0], L * m))
        E[np.arange(tuples.shape[0])[:, None], _indicator_index(tuples, m)] = 1.0
        G = np.matmul((prob[:, :, None] * E).transpose(0, 2, 1), E)  # Σ_t P(t) 1_t 1_tᵀ
        for k, i in enumerate(rows):
            gammas[i] = G[k]
        diag = np.diagonal(G, axis1=1, axis2=2).reshape(rows.size, L, m)  # (g, L, m)
        marg[offsets[rows][:, None] + np.arange(m)] = diag.transpose(0, 2, 1)
    return marg, gammas
