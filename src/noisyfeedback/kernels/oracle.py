"""Regression-oracle contextual bandits: SquareCB and ε-greedy over a per-class linear model.

Notation: v = W x̂ + b with x̂ = x/‖x‖ (the predicted feedback of each label, b the per-class intercepts;
rows are scaled to unit norm inside, so step sizes do not depend on the features' scale), ŷ = argmax v
(lowest index on ties), Ŷ the top-m labels (ties lowest index first; Ŷ[0] = ŷ).

**Policy.** The one-label distribution p:

- POLICY_EPSILON (ε-greedy): p_r = (1−ε)·1[r = ŷ] + ε/K.
- POLICY_IGW (inverse-gap weighting, SquareCB, Foster & Rakhlin 2020) with γ_t = γ_scale·(t+1)^γ_exp:
  p_a = 1/(K + γ_t·(v_ŷ − v_a)) for a ≠ ŷ, ŷ gets the rest.

Sets (m > 1): inclusion probabilities π_r = p_r + (1 − p_r)·(m−1)/(K−1) (Σ π = m): an anchor drawn from
p and m − 1 other labels uniformly. The greedy label is nearly always in the set, and the rest of the set
stays random: a set that were the top-m labels every round would give every one of them the same update
and never tell them apart (the greedy label's error, what we score, stayed ~1.5x higher on MNIST-test).

**Sampler** (one uniform u a round): systematic sampling. The labels' intervals of lengths π_r are laid
end to end in label order on [0, m); the set is the labels whose interval holds one of the points
u, u+1, …, u+m−1. Label r is drawn with probability exactly π_r; with m = 1 it is the inverse CDF.

**Flip rates.** With known rates (ρ0(a), ρ1(a)) that differ between the actions the policy runs on the
corrected values (v_a − c0(a)) / cb(a) (``c0``, ``cb`` per action from the learner, ``OracleBandit._correction``):
the clean P(y = a | x) that v_a = ρ0(a) + (1 − ρ0(a) − ρ1(a))·P(y = a | x) estimates (m = 1), inverted per
action and mapped onto the raw scale of the mean action (so that equal rates would change nothing). The oracle still
fits the raw feedback (its residual uses v). Without rates (``c0`` empty) the policy reads v itself.

**Estimated rates** (``stats`` not empty, m = 1): every round also tallies the played action's feedback
by what the learner believed when it played (`rate_tally`): plays of the greedy label with a margin
of at least ``RATE_MARGIN`` over the runner-up (anchors of a right play: their feedback rate estimates
1 − ρ1(a)) and plays of a label at least ``RATE_MARGIN`` below the greedy one (anchors of a wrong play:
ρ0(a)), the corrected values being those the policy read (v itself while no estimate is in use, passed as
c0 = 0, cb = 1: the same bits).

**Oracle** (square loss on the observed feedback f̃, no importance weights: a 0/1 click, flipped or not,
or any real-valued reward, fitted as it is; ``feedback`` float64): the prediction for a
set S is Σ_{a∈S} v_a; with residual e = f̃ − Σ_{a∈S} v_a every a ∈ S takes a step on
½e² (gradient −e·x̂ for W[a], −e for b[a]):

- ORACLE_ADAGRAD: per coordinate, G += g², w −= lr·g/√G (only the non-zeros of x and the m rows of S).
- ORACLE_NORMALIZED: W[a] += lr·e·x̂ / (m·(‖x̂‖² + 1)), b[a] += the same coefficient (NLMS).
- ORACLE_RIDGE (m = 1): recursive least squares of label a on z = (x̂, 1) (ridge λ: P_a starts at
  I/λ), by Sherman–Morrison: u = P_a z, w_a += u·e/(1 + zᵀu), P_a −= u uᵀ/(1 + zᵀu). After every
  round (w_a, b_a) is the ridge solution (λI + Σ z zᵀ)⁻¹ Σ f̃ z over label a's rounds; O(d²) a round.
"""

import numpy as np
from numba import njit

from ._codes import CSR_CODED, CSR_FLOAT64, DENSE
from .channels import flip, set_rate_array

# The per-round helpers are inlined into `oracle_round` by numba (inline="always"): about 0.1 µs a round on
# MNIST (a call passes every array as a struct of its pointer, shape and strides). `oracle_round` itself is
# called, not inlined, from the three row forms of `oracle_simulate`: the same speed within the noise of
# a shared machine, and a quarter less compile time (three inlined copies made one function of 40 s).
from .linear import PREFETCH_AHEAD, adagrad4, argmax_first, fetch_row, prefetch_csr_row, row_scores, row_scores_coded

_NO_CODES = np.zeros(0, np.uint8)
_NO_VALUES = np.zeros(0, np.float64)

POLICY_EPSILON = 0
POLICY_IGW = 1
ORACLE_ADAGRAD = 0
ORACLE_NORMALIZED = 1
ORACLE_RIDGE = 2


@njit(cache=True)
def top_m_labels(v, m, top, in_top):
    """Ŷ: the m largest values in rank order into ``top[:m]`` (ties lowest index first); in_top masks it."""
    K = v.shape[0]
    for r in range(K):
        in_top[r] = 0
    for i in range(m):
        best = -1
        for r in range(K):
            if in_top[r] == 0 and (best < 0 or v[r] > v[best]):
                best = r
        top[i] = best
        in_top[best] = 1


@njit(cache=True, inline="always")
def policy(v, m, kind, explore, top, in_top, pi):
    """Inclusion probabilities π (Σ = m) of the ε-greedy (explore = ε) or IGW (explore = γ_t) policy;
    Ŷ (the top-m labels, rank order) into ``top``/``in_top``.

    p = the one-label distribution: ε-greedy p_r = (1−ε)·1[r = ŷ] + ε/K; IGW p_r = 1/(K + γ(v_ŷ − v_r))
    for r ≠ ŷ, ŷ the rest. Sets (m > 1): π_r = p_r + (1 − p_r)·(m−1)/(K−1) — an anchor drawn from p, the
    other m − 1 labels uniformly among the rest (marginally)."""
    K = v.shape[0]
    if m == 1:
        top[0] = argmax_first(v)
        for r in range(K):
            in_top[r] = 0
        in_top[top[0]] = 1
    else:
        top_m_labels(v, m, top, in_top)
    best = top[0]
    if kind == POLICY_EPSILON:
        base = explore / K
        for r in range(K):
            pi[r] = base + (1.0 - explore) if r == best else base
    else:
        vb = v[best]
        for r in range(K):  # every r, without a branch (vectorised); ŷ's own entry is replaced below
            pi[r] = 1.0 / (K + explore * (vb - v[r]))
        rest = 0.0
        for r in range(K):  # Σ_{r≠ŷ} in label order (adding 0.0 at ŷ is exact: the same sum)
            rest += pi[r] if r != best else 0.0
        pi[best] = 1.0 - rest
    if m > 1:
        c = (m - 1.0) / (K - 1.0)
        for r in range(K):
            pi[r] = pi[r] + (1.0 - pi[r]) * c


@njit(cache=True, inline="always")
def label_order(u, off, m, K, perm):
    """The order in which the sampler lays out the labels: 0..K−1 for m = 1; for m > 1 a uniformly random
    permutation by Fisher–Yates with the uniforms u[off+1 : off+K] (for i = K−1 … 1: swap i and ⌊u·(i+1)⌋).

    A fixed order would tie labels together (uniform π = 1/3, K = 9: only {0,3,6}, {1,4,7}, {2,5,8} could
    ever be drawn), so that the additive model could not tell such labels apart."""
    for r in range(K):
        perm[r] = r
    if m == 1:
        return
    for i in range(K - 1, 0, -1):
        j = np.int64(u[off + K - i] * (i + 1))
        if j > i:
            j = i
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(cache=True, inline="always")
def systematic_sample(pi, m, u, perm, chosen):
    """Systematic sampling: the labels whose interval (lengths π, laid end to end in the order ``perm``)
    holds one of u, u+1, …, u+m−1, into ``chosen[:m]`` in increasing label order. Label r is drawn with
    probability exactly π_r whatever the order. m = 1 with the identity order: the inverse CDF. A
    shortfall from rounding (Σπ a hair below m) is filled with the last labels of the order not drawn
    (m = 1: label K−1, as the inverse CDF's guard)."""
    K = pi.shape[0]
    cum = 0.0
    target = u
    n = 0
    for q in range(K):
        r = perm[q]
        cum += pi[r]
        if n < m and target < cum:
            chosen[n] = r
            n += 1
            target += 1.0
    q = K - 1
    while n < m:  # rounding guard
        r = perm[q]
        taken = False
        for j in range(n):
            if chosen[j] == r:
                taken = True
        if not taken:
            chosen[n] = r
            n += 1
        q -= 1
    for i in range(1, m):  # increasing label order
        c = chosen[i]
        j = i - 1
        while j >= 0 and chosen[j] > c:
            chosen[j + 1] = chosen[j]
            j -= 1
        chosen[j + 1] = c


@njit(cache=True)
def set_probability(pi, m, perm, S, chosen):
    """P(the sampler returns the set S | the order ``perm``) (S sorted, length m): the length of the u in
    [0, 1) that give S. The drawn set is constant between the breakpoints frac(cumulative π along the
    order); each piece is checked at its midpoint. m = 1: π[S[0]]. (Given the order, which is drawn
    independently of everything else, this is a valid propensity for importance weighting.)"""
    if m == 1:
        return pi[S[0]]
    K = pi.shape[0]
    bp = np.empty(K + 2)
    cum = 0.0
    for q in range(K):
        cum += pi[perm[q]]
        bp[q] = cum - np.floor(cum)
    bp[K] = 0.0
    bp[K + 1] = 1.0
    bp.sort()
    total = 0.0
    for i in range(K + 1):
        lo = bp[i]
        hi = bp[i + 1]
        if hi <= lo:
            continue
        systematic_sample(pi, m, 0.5 * (lo + hi), perm, chosen)
        same = True
        for j in range(m):
            if chosen[j] != S[j]:
                same = False
        if same:
            total += hi - lo
    return total


@njit(cache=True)
def draws_per_round(m, K):
    """Uniforms a round: 1 (m = 1); 1 + (K − 1) for the random label order (m > 1)."""
    return 1 if m == 1 else K


@njit(cache=True, inline="always")
def row_sqnorm(val, codes, values_, nnz, coded):
    """‖x‖² in four interleaved partial sums (independent chains of additions: about 4x the throughput)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    q = nnz - nnz % 4
    for p in range(0, q, 4):
        x0 = values_[np.int64(codes[p])] if coded else val[p]
        x1 = values_[np.int64(codes[p + 1])] if coded else val[p + 1]
        x2 = values_[np.int64(codes[p + 2])] if coded else val[p + 2]
        x3 = values_[np.int64(codes[p + 3])] if coded else val[p + 3]
        s0 += x0 * x0
        s1 += x1 * x1
        s2 += x2 * x2
        s3 += x3 * x3
    for p in range(q, nnz):
        x = values_[np.int64(codes[p])] if coded else val[p]
        s0 += x * x
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def row_sqnorms(Xd, indptr, indices, data, sparse, out):
    """out[i] = ‖x_i‖² of every row of CSR or coded rows (sparse != DENSE), by `row_sqnorm`: the
    numbers a round computes, bit for bit. simulate keeps them with the rows (a row is visited many times)."""
    for i in range(out.shape[0]):
        lo = indptr[i]
        hi = indptr[i + 1]
        if sparse == CSR_CODED:
            out[i] = row_sqnorm(_NO_VALUES, data[lo:hi], Xd[0], hi - lo, True)
        else:
            out[i] = row_sqnorm(data[lo:hi], _NO_CODES, data[lo:hi], hi - lo, False)


@njit(cache=True, inline="always")
def values(W, b, idx, val, codes, values_, nnz, coded, v, sq):
    """v = W x̂ + b, x̂ = x/‖x‖ (x = 0: x̂ = 0), for a row given by its non-zeros (coded: x_j = values_[codes[p]]).
    ``sq`` = ‖x‖² when known (simulate's per-row cache, `row_sqnorms`), else negative: computed here.
    Returns 1/‖x‖ (1 for x = 0). The oracle sees unit-norm rows: its step sizes do not depend on the scale
    of the features (pixels in [0, 1] or [0, 255], rows normalised or not: the same learner)."""
    if coded:
        row_scores_coded(W, idx, codes, values_, nnz, v)
    else:
        row_scores(W, idx, val, nnz, v)
    if sq < 0.0:
        sq = row_sqnorm(val, codes, values_, nnz, coded)
    inv = 1.0 / np.sqrt(sq) if sq > 0.0 else 1.0
    for k in range(v.shape[0]):
        v[k] = v[k] * inv + b[k]
    return inv


@njit(cache=True, inline="always")
def adagrad_row(W, G, a, e, lr, idx, val, codes, values_, nnz, coded, inv):
    """AdaGrad step of label a on x̂ = x·inv with residual e, over the non-zeros in order: g = e·x̂_j,
    G[a, j] += g², W[a, j] += lr·g/√G[a, j] (G[a, j] = 0, g underflowed on a fresh coordinate: /√1).

    One pass, four non-zeros at a time: their x and G[a, j] are gathered, the four coordinates updated
    by `adagrad4` (4-wide, the bits of the scalar formula) and h, s scattered into G and W.
    The columns of a row are distinct (``check_X`` sums a CSR row's duplicates), so the four are
    independent; the last nnz mod 4 take the scalar formula."""
    q = nnz - nnz % 4
    for p in range(0, q, 4):
        j0 = idx[p]
        j1 = idx[p + 1]
        j2 = idx[p + 2]
        j3 = idx[p + 3]
        x0 = values_[np.int64(codes[p])] if coded else val[p]
        x1 = values_[np.int64(codes[p + 1])] if coded else val[p + 1]
        x2 = values_[np.int64(codes[p + 2])] if coded else val[p + 2]
        x3 = values_[np.int64(codes[p + 3])] if coded else val[p + 3]
        h0, h1, h2, h3, s0, s1, s2, s3 = adagrad4(x0, x1, x2, x3, G[a, j0], G[a, j1], G[a, j2], G[a, j3], e, inv,
                                                  lr)
        G[a, j0] = h0
        G[a, j1] = h1
        G[a, j2] = h2
        G[a, j3] = h3
        W[a, j0] += s0
        W[a, j1] += s1
        W[a, j2] += s2
        W[a, j3] += s3
    for p in range(q, nnz):
        j = idx[p]
        g = e * ((values_[np.int64(codes[p])] if coded else val[p]) * inv)
        h = G[a, j] + g * g
        G[a, j] = h
        W[a, j] += lr * g / np.sqrt(h if h > 0.0 else 1.0)


@njit(cache=True)  # a call, not inlined: O(d²) anyway, and it kept out of the AdaGrad round's loop
def ridge_row(W, b, P, u, a, e, idx, val, codes, values_, nnz, coded, inv):
    """Recursive least squares of label a on z = (x̂, 1), x̂ = x·inv, with residual e = f̃ − (W[a]·x̂ + b[a]):
    u = P_a z = P_a[d] + Σ_p x̂_p·P_a[j_p] (P_a symmetric: rows for columns), s = 1 + zᵀu
    = 1 + (u_d + Σ_p x̂_p·u_{j_p}), W[a] += (e/s)·u[:d], b[a] += (e/s)·u_d, P_a[i, l] −= (u_i·u_l)/s (the
    product in that order on both sides of the diagonal: P_a stays exactly symmetric)."""
    D = P.shape[1]
    d = D - 1
    for i in range(D):
        u[i] = P[a, d, i]
    for p in range(nnz):
        j = idx[p]
        xj = (values_[np.int64(codes[p])] if coded else val[p]) * inv
        for i in range(D):
            u[i] += xj * P[a, j, i]
    zu = u[d]
    for p in range(nnz):
        zu += ((values_[np.int64(codes[p])] if coded else val[p]) * inv) * u[idx[p]]
    s = 1.0 + zu
    g = e / s
    for i in range(d):
        W[a, i] += g * u[i]
    b[a] += g * u[d]
    for i in range(D):
        ui = u[i]
        for j in range(D):
            P[a, i, j] -= (ui * u[j]) / s


@njit(cache=True, inline="always")
def oracle_update(oracle, W, b, G, Gb, P, u, chosen, m, e, lr, idx, val, codes, values_, nnz, coded, inv):
    """One square-loss step of each label of the set ``chosen[:m]`` with residual e on x̂ = x·inv (module doc):
    AdaGrad (`adagrad_row`, and the intercept), NLMS, or recursive least squares (`ridge_row`,
    m = 1: the learner refuses it for sets). The ridge step also runs on e = 0 (it updates P)."""
    if oracle == ORACLE_ADAGRAD:  # the default first
        if e != 0.0:
            for i in range(m):
                a = chosen[i]
                adagrad_row(W, G, a, e, lr, idx, val, codes, values_, nnz, coded, inv)
                Gb[a] += e * e
                b[a] += lr * e / np.sqrt(Gb[a])
        return
    if oracle == ORACLE_RIDGE:
        for i in range(m):
            ridge_row(W, b, P, u, chosen[i], e, idx, val, codes, values_, nnz, coded, inv)
        return
    if e == 0.0:
        return
    sq = row_sqnorm(val, codes, values_, nnz, coded) * (inv * inv)  # ‖x̂‖²
    c = lr * e / (m * (sq + 1.0))
    for i in range(m):
        a = chosen[i]
        for p in range(nnz):
            x = (values_[np.int64(codes[p])] if coded else val[p]) * inv
            W[a, idx[p]] += c * x
        b[a] += c


@njit(cache=True)
def correct_values(v, c0, cb, out):
    """out_a = (v_a − c0(a)) / cb(a) (c0, cb: one value, or one per action): the values the policy reads
    when the learner has flip rates (``c0`` not empty); without rates it reads v itself."""
    for k in range(v.shape[0]):
        j = 0 if c0.shape[0] == 1 else k
        out[k] = (v[k] - c0[j]) / cb[j]


#: the margin (in the values the policy reads) that makes a play an anchor of the rate estimates
RATE_MARGIN = 0.25


@njit(cache=True, inline="always")
def rate_tally(c, g, a, ft, stats):
    """Tally one play of label a (greedy label g, values c the policy read, feedback ft) into ``stats``
    rows (n_hi, s_hi, n_lo, s_lo): a = g with c_g − max_{b≠g} c_b >= RATE_MARGIN counts as a right-play
    anchor, c_g − c_a >= RATE_MARGIN as a wrong-play anchor."""
    if a == g:
        second = -np.inf
        for r in range(c.shape[0]):
            if r != g and c[r] > second:
                second = c[r]
        if c[g] - second >= RATE_MARGIN:
            stats[0, a] += 1.0
            stats[1, a] += ft
    elif c[g] - c[a] >= RATE_MARGIN:
        stats[2, a] += 1.0
        stats[3, a] += ft


@njit(cache=True, inline="always")
def explore_at(kind, explore, gamma_exponent, t):
    """ε for ε-greedy; γ_t = γ_scale·(t+1)^γ_exp for IGW (t = updates so far)."""
    if kind == POLICY_EPSILON:
        return explore
    if gamma_exponent == 0.5:  # the default: sqrt is exact and cheaper than pow
        return explore * np.sqrt(t + 1.0)
    return explore * (t + 1.0) ** gamma_exponent


@njit(cache=True)
def adaptive_scale(explore, noise, adapt):
    """γ_scale of the round. ``adapt`` empty: ``explore`` (a fixed γ_scale). Else, with ``noise`` = (Σ r², n) the
    oracle's squared prequential residuals r = f̃ − v (the feedback of the played action less its value before
    the step) and ``adapt`` = (c, high, low, n0, s0) (c = the constant times √K),

        σ̂² = (Σ r² + n0·s0) / (n + n0),    γ_scale = clip(c/σ̂, low, high).

    γ_t = γ_scale·√t then follows SquareCB's γ = √(K·T / Reg_sq) (Foster & Rakhlin 2020) with the oracle's
    square loss σ̂²·t in place of its regret: less exploration where the feedback is predicted well. The gaps and
    σ̂ scale alike with the rewards, so rewards on another scale than 0/1 (graded, costs) are explored alike once
    the prior's n0 rounds are outweighed (exactly so with the ridge oracle, whose fit is linear in the rewards)."""
    if adapt.shape[0] == 0:
        return explore
    s2 = (noise[0] + adapt[3] * adapt[4]) / (noise[1] + adapt[3])
    g = adapt[0] / np.sqrt(s2) if s2 > 0.0 else adapt[1]
    if g > adapt[1]:
        return adapt[1]
    if g < adapt[2]:
        return adapt[2]
    return g




@njit(cache=True)
def oracle_act(W, b, Xd, indptr, indices, data, sparse, m, kind, explore, gamma_exponent, t, u, sets, probs,
               pis, c0, cb):
    """Draw a set (m = 1: an action) for every row with the uniforms u[i·n : (i+1)·n], n = draws_per_round;
    writes sets (n, m), P(set | label order) (n,) and π (n, K). ``c0``/``cb``: `corrected`."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    codes = np.zeros(0, np.uint8)
    v = np.empty(K)
    top = np.empty(m, np.int64)
    in_top = np.zeros(K, np.int8)
    scratch = np.empty(m, np.int64)
    perm = np.empty(K, np.int64)
    vc = np.empty(K)
    nu = draws_per_round(m, K)
    x = explore_at(kind, explore, gamma_exponent, t)
    for i in range(sets.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        values(W, b, idx, val, codes, val, nnz, False, v, -1.0)
        if c0.shape[0] > 0:
            correct_values(v, c0, cb, vc)
        policy(vc if c0.shape[0] > 0 else v, m, kind, x, top, in_top, pis[i])
        label_order(u, i * nu, m, K, perm)
        systematic_sample(pis[i], m, u[i * nu], perm, sets[i])
        probs[i] = set_probability(pis[i], m, perm, sets[i], scratch)


@njit(cache=True)
def oracle_values_rows(W, b, Xd, indptr, indices, data, sparse, out):
    """out[i] = v of row i (the values the act/learn/simulate kernels compute, bit for bit)."""
    K, d = W.shape
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    codes = np.zeros(0, np.uint8)
    for i in range(out.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        values(W, b, idx, val, codes, val, nnz, False, out[i], -1.0)


@njit(cache=True)
def oracle_learn(oracle, W, b, G, Gb, P, t, Xd, indptr, indices, data, sparse, sets, feedback, lr, c0, cb, stats,
                 noise):
    """Update from logged rows in order (set, reward: 0/1 or real-valued); t[0] counts the updates. ``stats`` (4, K), or
    empty: the rate tallies of the rows (m = 1), greedy label and margin from the values the policy reads
    (corrected by ``c0``/``cb`` when not empty; see `rate_tally`). ``noise`` (2,): Σ r², n of the residuals
    r = reward − prediction before each step, added to (`adaptive_scale`)."""
    K, d = W.shape
    m = sets.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    codes = np.zeros(0, np.uint8)
    v = np.empty(K)
    vc = np.empty(K)
    u = np.empty(P.shape[1])
    tally = stats.shape[0] > 0
    for i in range(sets.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        inv = values(W, b, idx, val, codes, val, nnz, False, v, -1.0)
        if tally:
            if c0.shape[0] > 0:
                correct_values(v, c0, cb, vc)
            else:
                vc[:] = v
            rate_tally(vc, argmax_first(vc), sets[i, 0], feedback[i], stats)
        pred = 0.0
        for j in range(m):
            pred += v[sets[i, j]]
        e = feedback[i] - pred
        oracle_update(oracle, W, b, G, Gb, P, u, sets[i], m, e, lr, idx, val, codes, val, nnz, False, inv)
        noise[0] += e * e
        noise[1] += 1.0
        t[0] += 1


@njit(cache=True)
def oracle_round(oracle, W, b, G, Gb, P, pz, idx, val, codes, values_, nnz, coded, sq, yi, m, kind, x, lr, rates,
                 corr, u, off, u_feedback, v, pi, top, in_top, perm, chosen):
    """One simulated round on a row given by its non-zeros: values, policy, draw (uniforms from u[off]),
    feedback 1[y ∈ set] flipped with ``u_feedback`` (the channel's rates ``rates`` = (ρ0, ρ1) rows of one
    value, or one per label, a set taking its labels' mean), oracle step. ``corr``: (3, K) rows c0, cb and
    scratch for the corrected values the policy reads (`correct_values`), or (3, 0) without rates;
    (7, K) when estimating the rates, rows 3-6 the tallies (`rate_tally`).
    Returns the residual f̃ − prediction of the step.
    (At most 30 arguments: CPython passes more as a tuple, which numba does not inline.)"""
    inv = values(W, b, idx, val, codes, values_, nnz, coded, v, sq)
    if corr.shape[1] > 0:
        correct_values(v, corr[0], corr[1], corr[2])
    policy(corr[2] if corr.shape[1] > 0 else v, m, kind, x, top, in_top, pi)
    label_order(u, off, m, v.shape[0], perm)
    systematic_sample(pi, m, u[off], perm, chosen)
    hit = 0
    pred = 0.0
    for j in range(m):
        hit += chosen[j] == yi
        pred += v[chosen[j]]
    ft = flip(1 if hit > 0 else 0, u_feedback, set_rate_array(rates[0], chosen, m),
              set_rate_array(rates[1], chosen, m))
    if corr.shape[0] > 3:  # estimating the rates: rows 3-6 hold the tallies
        rate_tally(corr[2], top[0], chosen[0], ft, corr[3:])
    e = ft - pred
    oracle_update(oracle, W, b, G, Gb, P, pz, chosen, m, e, lr, idx, val, codes, values_, nnz, coded, inv)
    return e


@njit(cache=True)
def oracle_simulate(oracle, W, b, G, Gb, P, t, Xd, indptr, indices, data, sparse, y, order, m, kind, explore,
                    gamma_exponent, lr, rho0, rho1, u_learner, u_feedback, mistakes, set_miss, row_sq, c0, cb, stats,
                    noise, adapt):
    """Simulation loop under NoisyBandit (m = 1) or Diluted(m) with flips rho0, rho1 (float64 arrays: one
    value, or one per label, ``feedback.kernel_feedback``): ``draws_per_round``
    learner uniforms and one channel uniform a round. ``mistakes[t]`` = 1[ŷ ≠ y]; ``set_miss[t]`` =
    1[y ∉ Ŷ] (when sized). ``row_sq``: every row's ‖x‖² (`row_sqnorms`, in-place rows only), or
    empty: computed each round. ``stats`` (4, K) or empty: the rate tallies, updated (`rate_tally`).
    ``noise`` (2,): Σ r², n of the oracle's residuals, added to; ``adapt``: empty (γ_scale = ``explore``) or the
    adaptive γ_scale's constants (`adaptive_scale`, read every round).

    Rows as in ``kernels.bandit.bandit_simulate``: CSR float64 and coded rows are read in place,
    other forms copied into buffers; the same arithmetic in the same order either way.
    """
    K, d = W.shape
    inplace = sparse == CSR_FLOAT64 or sparse == CSR_CODED
    n_buf = 0 if inplace else d
    idx = np.empty(n_buf, np.int64)
    val = np.empty(n_buf, np.float64)
    v = np.empty(K)
    pi = np.empty(K)
    top = np.empty(m, np.int64)
    in_top = np.zeros(K, np.int8)
    chosen = np.empty(m, np.int64)
    perm = np.empty(K, np.int64)
    pz = np.empty(P.shape[1])
    rates = np.empty((2, rho0.shape[0]))
    rates[0] = rho0
    rates[1] = rho1
    tally = stats.shape[0] > 0
    corr = np.empty((7 if tally else 3, K if c0.shape[0] > 0 or tally else 0))
    for k in range(corr.shape[1]):
        if c0.shape[0] == 0:  # estimating, no estimate in use: (v − 0)/1 is v bit for bit
            corr[0, k] = 0.0
            corr[1, k] = 1.0
        else:
            j = 0 if c0.shape[0] == 1 else k
            corr[0, k] = c0[j]
            corr[1, k] = cb[j]
        if tally:
            for r in range(4):
                corr[3 + r, k] = stats[r, k]
    nu = draws_per_round(m, K)
    record_set = set_miss.shape[0] > 0
    known_sq = inplace and row_sq.shape[0] > 0
    T = order.shape[0]
    for s in range(T):
        i = order[s]
        yi = y[i]
        if sparse != DENSE and s + PREFETCH_AHEAD < T:
            prefetch_csr_row(indptr, indices, data, order[s + PREFETCH_AHEAD])
        x = explore_at(kind, adaptive_scale(explore, noise, adapt), gamma_exponent, t[0])
        if inplace:
            lo = indptr[i]
            hi = indptr[i + 1]
            sq = row_sq[i] if known_sq else -1.0
            if sparse == CSR_CODED:
                e = oracle_round(oracle, W, b, G, Gb, P, pz, indices[lo:hi], val, data[lo:hi], Xd[0], hi - lo, True, sq,
                                 yi, m, kind, x, lr, rates, corr, u_learner, s * nu, u_feedback[s], v, pi, top, in_top,
                                 perm, chosen)
            else:
                vl = data[lo:hi]
                e = oracle_round(oracle, W, b, G, Gb, P, pz, indices[lo:hi], vl, _NO_CODES, vl, hi - lo, False, sq,
                                 yi, m, kind, x, lr, rates, corr, u_learner, s * nu, u_feedback[s], v, pi, top, in_top,
                                 perm, chosen)
        else:
            nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
            e = oracle_round(oracle, W, b, G, Gb, P, pz, idx, val, _NO_CODES, val, nnz, False, -1.0, yi, m, kind, x,
                             lr, rates, corr, u_learner, s * nu, u_feedback[s], v, pi, top, in_top, perm, chosen)
        noise[0] += e * e
        noise[1] += 1.0
        t[0] += 1
        mistakes[s] = 1 if top[0] != yi else 0
        if record_set:
            set_miss[s] = 1.0 - in_top[yi]
    if tally:
        for r in range(4):
            for k in range(K):
                stats[r, k] = corr[3 + r, k]
