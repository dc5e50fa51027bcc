"""The exploration distribution of a bandit learner, and draws restricted to allowed actions.

:func:`action_distribution` prefers the learner's own ``action_probabilities(X)`` (the library-wide
contract: rows sum to 1, or to m for set learners) and otherwise computes it for the learners whose
``act`` is ε-greedy around the greedy label (Banditron, RCNBF, RCINE, BPA, SOBA):
P(r) = (1 − γ)·1[r = ŷ] + γ/K, and for MC-DBF (sets of m labels drawn by successive sampling
without replacement ∝ P(r) = (1 − γ)/m·1[r ∈ Ŷ] + γ/K) the inclusion probability of each label.
"""

from __future__ import annotations

import numpy as np

__all__ = ["action_distribution", "distribution_from_greedy", "set_size", "inclusion_probabilities", "restricted_draw"]


def set_size(learner) -> int:
    """m, the number of labels one action holds (1 for single-action learners)."""
    return int(getattr(learner, "m", 1)) if getattr(learner, "feedback_kind", "") == "set" else 1


def inclusion_probabilities(K: int, m: int, gamma: float) -> tuple[float, float]:
    """(P(r ∈ Ỹ) for r ∈ Ŷ, P(r ∈ Ỹ) for r ∉ Ŷ) under MC-DBF's successive sampling.

    Every label of Ŷ has weight a = γ/K + (1 − γ)/m, every other b = γ/K; after p labels of Ŷ and
    q others were drawn, the next draw is from Ŷ with probability (m − p)·a / ((m − p)·a + (K − m − q)·b).
    By symmetry P(r ∈ Ỹ) = E[p_m]/m on Ŷ and E[q_m]/(K − m) off it (the two sum to m over all labels).

    >>> [round(v, 6) for v in inclusion_probabilities(5, 1, 0.2)]
    [0.84, 0.04]
    """
    a, b = gamma / K + (1.0 - gamma) / m, gamma / K
    dist = {0: 1.0}  # p -> probability after s draws (q = s - p)
    for s in range(m):
        nxt: dict[int, float] = {}
        for p, w in dist.items():
            q = s - p
            ra, rb = (m - p) * a, (K - m - q) * b
            tot = ra + rb
            if ra > 0:
                nxt[p + 1] = nxt.get(p + 1, 0.0) + w * ra / tot
            if rb > 0:
                nxt[p] = nxt.get(p, 0.0) + w * rb / tot
        dist = nxt
    ep = sum(p * w for p, w in dist.items())
    return ep / m, (m - ep) / (K - m)


def distribution_from_greedy(learner, greedy: np.ndarray) -> np.ndarray:
    """The ε-greedy distribution (n, K) around given greedy actions (n,) or top-m sets (n, m)."""
    K, gamma, m = int(learner.n_classes), float(learner.gamma), set_size(learner)
    greedy = np.asarray(greedy)
    if m == 1:
        out = np.full((greedy.shape[0], K), gamma / K)
        out[np.arange(greedy.shape[0]), greedy] += 1.0 - gamma
        return out
    p_in, p_out = inclusion_probabilities(K, m, gamma)
    out = np.full((greedy.shape[0], K), p_out)
    np.put_along_axis(out, greedy, p_in, axis=1)
    return out


def action_distribution(learner, X) -> np.ndarray:
    """(n, K) probabilities with which ``learner.act`` draws each action for each row of X
    (set learners: inclusion probability of each label, rows sum to m)."""
    if hasattr(learner, "action_probabilities"):
        return np.asarray(learner.action_probabilities(X), dtype=np.float64)
    return distribution_from_greedy(learner, learner.predict(X) if set_size(learner) == 1 else learner.predict_set(X))


def restricted_draw(p: np.ndarray, allowed: np.ndarray, u: float) -> tuple[int, float, np.ndarray]:
    """Draw one action from ``p`` restricted to ``allowed`` (renormalised) by the inverse CDF of ``u``
    over the labels in increasing order: returns (action, its probability, the restricted distribution)."""
    q = np.zeros_like(p)
    q[allowed] = p[allowed]
    q /= q.sum()
    c = np.cumsum(q)
    a = int(np.searchsorted(c, u, side="right"))
    nz = np.flatnonzero(q)
    if a >= q.shape[0] or q[a] == 0.0:  # rounding at the top of the CDF
        a = int(nz[nz <= min(a, q.shape[0] - 1)][-1]) if (nz <= a).any() else int(nz[0])
    return a, float(q[a]), q
