"""Set-valued (diluted) feedback learners: MC-SLP and MC-DBF (Batra & Manwani 2021), docs/algorithms.md §4.8-4.9.

Notation: s = W x, Ŷ = the top-m labels of s (ties: lowest index first, so
Ŷ's first label is ``argmax_first(s)``), masks are int8 arrays of length K.

- MC-SLP (full information): W += (e_ℓ − 1[r∈Ŷ]/m) ⊗ x every round, ℓ the (possibly
  noisy) label. Each row's coefficient is formed first and zero coefficients are
  skipped, so with m = 1 it is the Perceptron step bit for bit.
- MC-DBF: P(r) = (1−γ)/m·1[r∈Ŷ] + γ/K; the set Ỹ of m distinct labels is drawn
  by successive sampling without replacement ∝ P (one uniform per draw, inverse
  CDF over the remaining labels in increasing label order); Z(Ỹ) is the exact
  probability of drawing that set (`set_probability`); f̃ the (flipped)
  feedback and h(f̃) its unbiased estimate; then
  W[r] += (h(f̃)·1[r∈Ỹ]/(Z(Ỹ)·τ1) − 1[r∈Ŷ]/m − τ2)·x for every r.
  With m = 1 the draw and the update are Banditron's own operations
  (`epsilon_greedy_draw`, then
  `add_sub_rows`), so MC-DBF(m=1) is Banditron/RCNBF bit for bit.
"""

import numpy as np
from numba import njit

from ._codes import CODE_CONFUSION
from .channels import confusion_label, flip, set_rate
from .linear import add_row, add_sub_rows, epsilon_greedy_draw, fetch_row, row_scores


@njit(cache=True)
def top_m(s, m, top, in_hat):
    """Ŷ: the m largest scores, in rank order into ``top[:m]``; ``in_hat[r]`` = 1[r ∈ Ŷ].

    Selection by m passes of a first-maximum search over the labels not yet
    chosen, so equal scores are taken lowest index first and ``top[0]`` is
    ``argmax_first(s)``.
    """
    K = s.shape[0]
    for r in range(K):
        in_hat[r] = 0
    for i in range(m):
        best = -1
        for r in range(K):
            if in_hat[r] == 0 and (best < 0 or s[r] > s[best]):
                best = r
        top[i] = best
        in_hat[best] = 1


@njit(cache=True)
def set_probability(n_hi, n_lo, m, K, hi, lo, G):
    """Z(A): probability that m successive draws without replacement ∝ P return the set A.

    P takes two values: ``hi`` on the m labels of Ŷ, ``lo`` on the other K − m.
    A holds ``n_hi`` labels of Ŷ and ``n_lo`` = m − n_hi others; Z(A) depends only
    on these counts. G(p, q) = P(the first p + q draws are p of A's Ŷ-labels and
    q of its other labels, in any order); G(0, 0) = 1 and, since the mass left
    after such draws is R(p, q) = (m − p)·hi + (K − m − q)·lo,

        G(p, q) = G(p−1, q)·(n_hi − p + 1)·hi / R(p−1, q) + G(p, q−1)·(n_lo − q + 1)·lo / R(p, q−1),

    and Z(A) = G(n_hi, n_lo) — the sum over A's m! orders in O(m²).
    ``G`` is scratch of length ≥ n_lo + 1.
    """
    for p in range(n_hi + 1):
        for q in range(n_lo + 1):
            if p == 0 and q == 0:
                g = 1.0
            else:
                g = 0.0
                if p > 0:
                    g += G[q] * (n_hi - p + 1) * hi / ((m - p + 1) * hi + (K - m - q) * lo)
                if q > 0:
                    g += G[q - 1] * (n_lo - q + 1) * lo / ((m - p) * hi + (K - m - q + 1) * lo)
            G[q] = g
    return G[n_lo]


@njit(cache=True)
def draw_set(top, in_hat, m, gamma, u, off, chosen, in_set, G):
    """Draw Ỹ with the uniforms u[off:off+m]; returns Z(Ỹ).

    Writes Ỹ in increasing label order into ``chosen[:m]`` and its mask into
    ``in_set``. Draw i picks, among the labels not drawn yet and in increasing
    order, the first whose cumulative weight exceeds u[off+i]·R (R their total
    weight). With m = 1 this is Banditron's ε-greedy draw, done by the same helper.
    """
    K = in_hat.shape[0]
    explore = gamma / K
    for r in range(K):
        in_set[r] = 0
    if m == 1:
        a, pa = epsilon_greedy_draw(top[0], gamma, K, u[off])
        chosen[0] = a
        in_set[a] = 1
        return pa
    hi = explore + (1.0 - gamma) / m
    n_hi = 0
    for i in range(m):
        R = 0.0
        last = -1
        for r in range(K):
            if in_set[r] == 0:
                R += hi if in_hat[r] == 1 else explore
                last = r
        target = u[off + i] * R
        cum = 0.0
        a = last  # rounding guard: the last remaining label
        for r in range(K):
            if in_set[r] == 0:
                cum += hi if in_hat[r] == 1 else explore
                if target < cum:
                    a = r
                    break
        in_set[a] = 1
        n_hi += in_hat[a]
    j = 0
    for r in range(K):
        if in_set[r] == 1:
            chosen[j] = r
            j += 1
    return set_probability(n_hi, m - n_hi, m, K, hi, explore, G)


@njit(cache=True)
def mcdbf_update_row(W, idx, val, nnz, top, in_hat, chosen, in_set, m, coef, tau2):
    """W[r] += (coef·1[r∈Ỹ] − 1[r∈Ŷ]/m − τ2)·x, coef = h(f̃)/(Z(Ỹ)·τ1).

    m = 1 (τ2 = 0): W[ỹ] += coef·x, then W[ŷ] -= x — Banditron's operations in Banditron's order.
    """
    if m == 1:
        add_sub_rows(W, chosen[0], coef, top[0], idx, val, nnz)
        return
    inv_m = 1.0 / m
    for r in range(W.shape[0]):
        c = coef if in_set[r] == 1 else 0.0
        if in_hat[r] == 1:
            c -= inv_m
        c -= tau2
        if c != 0.0:
            add_row(W, r, c, idx, val, nnz)


@njit(cache=True)
def mcdbf_act(W, Xd, indptr, indices, data, sparse, m, gamma, u, sets, probs):
    """Draw Ỹ for every row (uniforms u[i*m:(i+1)*m]); writes sets (n, m) and Z(Ỹ) (n,)."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    top = np.empty(m, np.int64)
    in_hat = np.zeros(K, np.int8)
    in_set = np.zeros(K, np.int8)
    G = np.empty(m + 1, np.float64)
    for i in range(sets.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, top, in_hat)
        probs[i] = draw_set(top, in_hat, m, gamma, u, i * m, sets[i], in_set, G)


@njit(cache=True, inline="always")
def set_estimate(ft, h0, h1, r0, r1, chosen, m):
    """h(f̃) of a set: the scalars h0/h1 when the learner's rates are the same for every label (``r0``
    holds at most one value); else (f̃ − ρ0(S))/(1 − ρ0(S) − ρ1(S)) with ρ(S) the mean rate of the set's
    labels (``channels.set_rate``; with m = 1 the played action's rates, RCNBF's h bit for bit)."""
    if r0.shape[0] <= 1:
        return h1 if ft == 1 else h0
    a0 = set_rate(r0, chosen, m)
    a1 = set_rate(r1, chosen, m)
    return (ft - a0) / (1.0 - a0 - a1)


@njit(cache=True)
def mcdbf_learn(W, Xd, indptr, indices, data, sparse, m, tau1, tau2, h0, h1, sets, feedback, probs, r0, r1):
    """Update from logged rows in order: set Ỹ (sorted or not), 0/1 feedback f̃, Z(Ỹ). ``r0``/``r1``:
    the learner's per-label rates (see `set_estimate`), empty for one pair (then h0, h1)."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    top = np.empty(m, np.int64)
    in_hat = np.zeros(K, np.int8)
    in_set = np.zeros(K, np.int8)
    for i in range(sets.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, top, in_hat)
        for r in range(K):
            in_set[r] = 0
        for j in range(m):
            in_set[sets[i, j]] = 1
        h = set_estimate(feedback[i], h0, h1, r0, r1, sets[i], m)
        mcdbf_update_row(W, idx, val, nnz, top, in_hat, sets[i], in_set, m, h / (probs[i] * tau1), tau2)


@njit(cache=True)
def mcdbf_simulate(W, Xd, indptr, indices, data, sparse, y, order, m, gamma, tau1, tau2, h0, h1,
                   rho0, rho1, u_learner, u_feedback, mistakes, set_miss, r0, r1):
    """Simulation loop under Diluted(m, rho0, rho1): m learner uniforms and one channel uniform a round.
    The channel's rates: scalars, or arrays (one value, or one per label: a set flips with its labels'
    mean rates); the learner's per-label rates ``r0``/``r1`` as in `mcdbf_learn`.

    ``mistakes[t]`` = 1[argmax ≠ y]; ``set_miss[t]`` = 1[y ∉ Ŷ] (the greedy top-m set's miss).
    """
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    top = np.empty(m, np.int64)
    in_hat = np.zeros(K, np.int8)
    in_set = np.zeros(K, np.int8)
    chosen = np.empty(m, np.int64)
    G = np.empty(m + 1, np.float64)
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, top, in_hat)
        Z = draw_set(top, in_hat, m, gamma, u_learner, t * m, chosen, in_set, G)
        ft = flip(1 if in_set[yi] == 1 else 0, u_feedback[t], set_rate(rho0, chosen, m), set_rate(rho1, chosen, m))
        h = set_estimate(ft, h0, h1, r0, r1, chosen, m)
        mistakes[t] = 1 if top[0] != yi else 0
        set_miss[t] = 1.0 - in_hat[yi]
        mcdbf_update_row(W, idx, val, nnz, top, in_hat, chosen, in_set, m, h / (Z * tau1), tau2)


@njit(cache=True)
def mcslp_update_row(W, idx, val, nnz, in_hat, m, label):
    """W[r] += (1[r=ℓ] − 1[r∈Ŷ]/m)·x, one add per row with a non-zero coefficient."""
    inv_m = 1.0 / m
    for r in range(W.shape[0]):
        c = 1.0 if r == label else 0.0
        if in_hat[r] == 1:
            c -= inv_m
        if c != 0.0:
            add_row(W, r, c, idx, val, nnz)


@njit(cache=True)
def mcslp_learn(W, Xd, indptr, indices, data, sparse, m, labels):
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    top = np.empty(m, np.int64)
    in_hat = np.zeros(K, np.int8)
    for i in range(labels.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, top, in_hat)
        mcslp_update_row(W, idx, val, nnz, in_hat, m, labels[i])


@njit(cache=True)
def mcslp_simulate(W, Xd, indptr, indices, data, sparse, y, order, m, code, u_feedback, Ccum, mistakes, set_miss):
    """Simulation loop; label from FullLabel (CODE_FULL) or ConfusionNoise (CODE_CONFUSION, one uniform a
    round)."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    top = np.empty(m, np.int64)
    in_hat = np.zeros(K, np.int8)
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, top, in_hat)
        label = yi
        if code == CODE_CONFUSION:
            label = confusion_label(yi, u_feedback[t], Ccum)
        mistakes[t] = 1 if top[0] != yi else 0
        set_miss[t] = 1.0 - in_hat[yi]
        mcslp_update_row(W, idx, val, nnz, in_hat, m, label)


@njit(cache=True)
def top_m_rows(W, Xd, indptr, indices, data, sparse, m, out):
    """Ŷ of every row, in rank order, into out (n, m)."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    in_hat = np.zeros(K, np.int8)
    for i in range(out.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        top_m(s, m, out[i], in_hat)
