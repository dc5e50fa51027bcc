"""Catalogue learners: one scoring model over context × candidate features, a policy over the round's
candidates, one slot or several (compiled loops; the learners validate, these trust their arrays).

**Rows.** Context rows and item rows are CSR-like: ``indptr``, ``idx`` (int64: a column, or a full 32-bit
feature hash), ``val`` (float64, non-zeros), ``ns`` (int64 namespace ids; hashed mode only). Round i's
candidates are the item rows ``offsets[i] .. offsets[i+1]``.

**Model.** With x̂ = x/‖x‖ and ẑ = z/‖z‖ (each side scaled to unit norm, as the index oracle scales x:
step sizes do not depend on the features' scale; a zero row stays zero; the rows' factors 1/‖x‖ and 1/‖z‖
are what the caller passes: all 1 leave x̂ = x or ẑ = z), the score of candidate z in context x is

    f(x, z) = Σ_{j,a} θ[k(j, a)]·x̂_j·ẑ_a  +  Σ_a θ[k(a)]·ẑ_a  +  Σ_j θ[k(j)]·x̂_j  +  θ[k(1)],

the terms after the first switched by ``lin`` (bits LIN_CONTEXT, LIN_ITEM, LIN_BIAS). Where the
weights sit (one flat θ of length D, the ``mode``):

- MODE_DENSE (bilinear, no hashing): k(j, a) = j·d_a + a (the matrix M of xᵀ M z, row-major),
  k(a) = d_c·d_a + a, k(j) = d_c·d_a + d_a + j, k(1) = d_c·d_a + d_a + d_c; D = that + 1. The bilinear
  term is computed as q = Mᵀ x (raw x, over x's non-zeros in order), then Σ_a q_a ẑ_a times 1/‖x‖:
  with one-hot candidates these are the index oracle's operations in its order (same bits).
- MODE_HASHED (D = 2^b, mask = D − 1): k(j, a) = ((h_j·16777619) ^ h_a) & mask for the namespace pairs
  with ``Q[ns_j, ns_a] = 1`` (VW's ``-q``), k(a) = h_a & mask, k(j) = h_j & mask, k(1) = 11650396 & mask
  (`noisyfeedback.hashing`). The bilinear term is computed as Σ_a ẑ_a·w_a times 1/‖x‖, with
  w_a = Σ_j x_j·θ[k(j, a)] (raw x, over x's non-zeros in order): where every candidate of a round has the
  same feature hashes (items described by the same feature names), the w_a are computed once a round.

**Oracle** (square loss on the observed 0/1 click f̃, no importance weights). Slot s's prediction is
c_s·f (c_s the examination probability of position s relative to position 1 — the position-based click
model P(click) = c_s·r(x, z); c = 1 with one slot); with e = f̃ − c_s·f every feature φ_k of the
candidate (φ = x̂_j ẑ_a, ẑ_a, x̂_j or 1, times c_s) takes, as in ``kernels/oracle.py``:

- ORACLE_ADAGRAD: G_k += g², θ_k += lr·g/√G_k with g = e·φ_k (skipped when e = 0);
- ORACLE_NORMALIZED: θ_k += lr·e·φ_k/(‖φ‖² + 1);
- ORACLE_RIDGE (MODE_DENSE, small D): recursive least squares over the whole φ by Sherman–Morrison,
  u = Pφ, s = 1 + φᵀu, θ += (e/s)·u, P −= u uᵀ/s (P starts at the caller's prior, diagonal): after every
  round the ridge solution of all rounds so far.

**Policy** over the n candidates of a round (v their scores; ties: first candidate), as the index
learners: IGW p_r = 1/(n + γ_t(v_best − v_r)) for r ≠ best, best the rest (γ_t = γ·(t+1)^γ_exp, t the
updates so far); ε-greedy p_r = (1−ε)·1[r = best] + ε/n. Drawn by the inverse CDF with one uniform
(the last candidate on a rounding shortfall). Slots: below.

**Greedy first** (IGW with the ridge oracle, ``adapt``): γ = γ_high until the candidates the model would not
choose are much less known than the one it would, then γ_low for good, its schedule started again at the
switch (γ_t = γ_low·(t − t_switch + 1)^γ_exp; Bastani, Bayati & Khosravi 2021's Greedy-First, with IGW in
place of greedy and of OLS-bandit). Every ``CHECK_EVERY``-th round, before its update, the leverages
h_r = φ_rᵀPφ_r of the round's candidates give the ratio (mean_{r≠g} h_r) / h_g, g the greedy candidate; at
the end of every ``CHECK_WINDOW`` rounds, if the window's mean ratio exceeds ``CHECK_RATIO``, the switch is
made (``state[0]`` = the rounds learned then; −1 before). Where the candidates share features, the rounds the
model plays inform it about the others and the ratio stays near 1; where they do not (one-hot candidates),
the ones it does not play stay unknown and the ratio grows.

**Slots**: slot 1 from that distribution over all n candidates, slot s over the n − s + 1 not yet placed
(sequential sampling without replacement, as VW's CCB); the logged probability of slot s is its conditional
probability given the slots before it. A round with fewer candidates than slots fills the first n slots (the
others −1). One uniform per slot, always drawn.
"""

import numpy as np
from numba import njit

from .linear import adagrad4

POLICY_EPSILON = 0
POLICY_IGW = 1
ORACLE_ADAGRAD = 0
ORACLE_NORMALIZED = 1
ORACLE_RIDGE = 2
MODE_DENSE = 0
MODE_HASHED = 1
LIN_CONTEXT = 1
LIN_ITEM = 2
LIN_BIAS = 4
CONSTANT_HASH = 11650396
FNV_PRIME = 16777619
#: greedy first: a sampled round every CHECK_EVERY, a decision every CHECK_WINDOW rounds, the ratio's limit
CHECK_EVERY = 20
CHECK_WINDOW = 500
CHECK_RATIO = 4.0


@njit(cache=True, inline="always")
def sqnorm(val, lo, hi):
    """‖x‖² of val[lo:hi] in four interleaved partial sums ((s0 + s1) + (s2 + s3)): the index oracle's
    ``row_sqnorm``, bit for bit."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    nnz = hi - lo
    q = lo + nnz - nnz % 4
    for p in range(lo, q, 4):
        s0 += val[p] * val[p]
        s1 += val[p + 1] * val[p + 1]
        s2 += val[p + 2] * val[p + 2]
        s3 += val[p + 3] * val[p + 3]
    for p in range(q, hi):
        s0 += val[p] * val[p]
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, inline="always")
def inv_norm(val, lo, hi):
    """1/‖x‖ (1 for a zero row)."""
    sq = sqnorm(val, lo, hi)
    return 1.0 / np.sqrt(sq) if sq > 0.0 else 1.0


@njit(cache=True, inline="always")
def explore_at(kind, explore, gamma_exponent, t):
    """ε (ε-greedy) or γ_t = γ·(t+1)^γ_exp (IGW; t = updates so far)."""
    if kind == POLICY_EPSILON:
        return explore
    if gamma_exponent == 0.5:
        return explore * np.sqrt(t + 1.0)
    return explore * (t + 1.0) ** gamma_exponent


@njit(cache=True, inline="always")
def context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf):
    """Per round: q = Mᵀ x (MODE_DENSE; raw x) or the context hashes times the FNV prime (MODE_HASHED,
    into ``hf``), and the context-only terms Σ_j θ[k(j)]·x̂_j + θ[k(1)] (returned)."""
    if mode == MODE_DENSE:
        # q_a = Σ_p θ[j_p·d_a + a]·x_p, each a's sum in the order of x's non-zeros (the index oracle's
        # order); the inner loop over a is contiguous in θ (vectorised by the compiler)
        for a in range(d_a):
            q[a] = 0.0
        for p in range(clo, chi):
            xj = c_val[p]
            base = c_idx[p] * d_a
            for a in range(d_a):
                q[a] += theta[base + a] * xj
    else:
        for p in range(clo, chi):
            hf[p - clo] = c_idx[p] * FNV_PRIME
    s = 0.0
    if lin & LIN_CONTEXT:
        off = d_c * d_a + d_a
        for p in range(clo, chi):
            k = off + c_idx[p] if mode == MODE_DENSE else c_idx[p] & mask
            s += theta[k] * (c_val[p] * inv_x)
    if lin & LIN_BIAS:
        s += theta[d_c * d_a + d_a + d_c] if mode == MODE_DENSE else theta[CONSTANT_HASH & mask]
    return s


@njit(cache=True, inline="always")
def dense_score(lin, theta, d_c, d_a, q, a_idx, a_val, alo, ahi, inv_x, inv_z, s_ctx):
    """`candidate_score` in MODE_DENSE: Σ_a q_a·ẑ_a times 1/‖x‖, plus the item and context terms (a
    small function of its own: compiled apart from the hashed branch, its loop keeps its sums in registers)."""
    s_bil = 0.0
    if lin & LIN_ITEM:  # both sums in one pass (two independent chains)
        off = d_c * d_a
        s_it = 0.0
        for p in range(alo, ahi):
            zh = a_val[p] * inv_z
            s_bil += q[a_idx[p]] * zh
            s_it += theta[off + a_idx[p]] * zh
        v = s_bil * inv_x + s_it
    else:
        for p in range(alo, ahi):
            s_bil += q[a_idx[p]] * (a_val[p] * inv_z)
        v = s_bil * inv_x
    if lin & (LIN_CONTEXT | LIN_BIAS):
        v = v + s_ctx
    return v


@njit(cache=True, inline="always")
def candidate_score(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, c_val, c_ns, clo, chi, inv_x, s_ctx,
                    a_idx, a_val, a_ns, alo, ahi, inv_z):
    """f(x, z) of one candidate (item row alo..ahi) given `context_part`'s q / hf and s_ctx."""
    if mode == MODE_DENSE:
        return dense_score(lin, theta, d_c, d_a, q, a_idx, a_val, alo, ahi, inv_x, inv_z, s_ctx)
    s_bil = 0.0
    for p in range(alo, ahi):  # ẑ once per candidate
        zb[p - alo] = a_val[p] * inv_z
    for p in range(alo, ahi):
        s_bil += zb[p - alo] * item_context_sum(theta, mask, Q, qall, hf, c_val, c_ns, clo, chi, a_idx[p], a_ns[p])
    return hashed_tail(lin, theta, mask, a_idx, a_val, alo, ahi, inv_z, inv_x, s_bil, s_ctx)


@njit(cache=True, inline="always")
def item_context_sum(theta, mask, Q, qall, hf, c_val, c_ns, clo, chi, h_item, ns_item):
    """MODE_HASHED: w = Σ_j x_j·θ[k(j, a)] of one item feature a (hash h_item, namespace ns_item) over the
    context's features j (raw x; the pairs Q lets interact), in the order of x's non-zeros."""
    acc = 0.0
    if qall:  # every namespace pair interacts (the default): no lookups in Q
        for pc in range(clo, chi):
            acc += c_val[pc] * theta[(hf[pc - clo] ^ h_item) & mask]
    else:
        for pc in range(clo, chi):
            if Q[c_ns[pc], ns_item]:
                acc += c_val[pc] * theta[(hf[pc - clo] ^ h_item) & mask]
    return acc


@njit(cache=True, inline="always")
def hashed_tail(lin, theta, mask, a_idx, a_val, alo, ahi, inv_z, inv_x, s_bil, s_ctx):
    """MODE_HASHED: the score from the bilinear sum Σ_a ẑ_a·w_a: times 1/‖x‖, plus the item and context terms."""
    v = s_bil * inv_x
    if lin & LIN_ITEM:
        s_it = 0.0
        for p in range(alo, ahi):
            s_it += theta[a_idx[p] & mask] * (a_val[p] * inv_z)
        v = v + s_it
    if lin & (LIN_CONTEXT | LIN_BIAS):
        v = v + s_ctx
    return v


@njit(cache=True, inline="always")
def shared_item_features(a_indptr, a_idx, a_ns, base, n):
    """Whether the n candidates from item row ``base`` all have the first one's feature hashes and namespaces,
    in the same order (items described by the same feature names: embeddings, numeric attributes)."""
    alo = a_indptr[base]
    m = a_indptr[base + 1] - alo
    for r in range(1, n):
        blo = a_indptr[base + r]
        if a_indptr[base + r + 1] - blo != m:
            return False
        for p in range(m):
            if a_idx[blo + p] != a_idx[alo + p] or a_ns[blo + p] != a_ns[alo + p]:
                return False
    return True


@njit(cache=True, inline="always")
def round_scores(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, wb, c_val, c_ns, clo, chi, inv_x, s_ctx,
                 a_indptr, a_idx, a_val, a_ns, a_inv, base, n, v):
    """v[r] = `candidate_score` of the round's n candidates (item rows base .. base + n). In MODE_HASHED,
    where every candidate has the first one's feature hashes (`shared_item_features`), each item
    feature's context sum w_a (`item_context_sum`) is computed once for the round instead of once per
    candidate: the same sums in the same order (the same bits), n times fewer lookups of θ."""
    if mode == MODE_HASHED and n > 1 and shared_item_features(a_indptr, a_idx, a_ns, base, n):
        alo0 = a_indptr[base]
        m = a_indptr[base + 1] - alo0
        for p in range(m):
            wb[p] = item_context_sum(theta, mask, Q, qall, hf, c_val, c_ns, clo, chi, a_idx[alo0 + p], a_ns[alo0 + p])
        for r in range(n):
            alo = a_indptr[base + r]
            inv_z = a_inv[base + r]
            s_bil = 0.0
            for p in range(m):
                s_bil += (a_val[alo + p] * inv_z) * wb[p]
            v[r] = hashed_tail(lin, theta, mask, a_idx, a_val, alo, alo + m, inv_z, inv_x, s_bil, s_ctx)
        return
    for r in range(n):
        alo = a_indptr[base + r]
        ahi = a_indptr[base + r + 1]
        v[r] = candidate_score(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, c_val, c_ns, clo, chi, inv_x,
                               s_ctx, a_idx, a_val, a_ns, alo, ahi, a_inv[base + r])


@njit(cache=True, inline="always")
def _step(oracle, theta, G, k, phi, e, lr, coef):
    """One coordinate's AdaGrad (g = e·φ) or NLMS (θ += coef·φ, coef = lr·e/(‖φ‖² + 1)) step."""
    if oracle == ORACLE_ADAGRAD:
        g = e * phi
        h = G[k] + g * g
        G[k] = h
        theta[k] += lr * g / np.sqrt(h if h > 0.0 else 1.0)
    else:
        theta[k] += coef * phi


@njit(cache=True)
def features_of(mode, lin, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns, alo, ahi,
                inv_z, c, kidx, kval):
    """The candidate's feature vector φ (times c) as (index, value) pairs into kidx/kval, in the order the
    AdaGrad step visits them; returns their number."""
    n = 0
    if mode == MODE_DENSE:
        na = ahi - alo
        for pc in range(clo, chi):
            xh = c_val[pc] * inv_x
            base = c_idx[pc] * d_a
            for p in range(alo, ahi):
                kidx[n + p - alo] = base + a_idx[p]
                kval[n + p - alo] = (xh * (a_val[p] * inv_z)) * c
            n += na
    else:
        for pc in range(clo, chi):
            xh = c_val[pc] * inv_x
            hfc = c_idx[pc] * FNV_PRIME
            for p in range(alo, ahi):
                if not qall and not Q[c_ns[pc], a_ns[p]]:
                    continue
                kidx[n] = (hfc ^ a_idx[p]) & mask
                kval[n] = (xh * (a_val[p] * inv_z)) * c
                n += 1
    if lin & LIN_ITEM:
        for p in range(alo, ahi):
            kidx[n] = d_c * d_a + a_idx[p] if mode == MODE_DENSE else a_idx[p] & mask
            kval[n] = (a_val[p] * inv_z) * c
            n += 1
    if lin & LIN_CONTEXT:
        for pc in range(clo, chi):
            kidx[n] = d_c * d_a + d_a + c_idx[pc] if mode == MODE_DENSE else c_idx[pc] & mask
            kval[n] = (c_val[pc] * inv_x) * c
            n += 1
    if lin & LIN_BIAS:
        kidx[n] = d_c * d_a + d_a + d_c if mode == MODE_DENSE else CONSTANT_HASH & mask
        kval[n] = c
        n += 1
    return n


@njit(cache=True)
def leverage(P, u, kidx, kval, n):
    """φᵀPφ for φ given as (index, value) pairs kidx/kval[:n]: u = Pφ over P's rows (contiguous; P symmetric:
    rows for columns), then φᵀu. Leaves u = Pφ."""
    D = P.shape[0]
    for i in range(D):
        u[i] = 0.0
    for m in range(n):
        k = kidx[m]
        x = kval[m]
        for i in range(D):
            u[i] += x * P[k, i]
    h = 0.0
    for m in range(n):
        h += kval[m] * u[kidx[m]]
    return h


@njit(cache=True)
def ridge_step(theta, P, u, kidx, kval, n, e):
    """Recursive least squares on φ (pairs kidx/kval, distinct indices): u = Pφ and φᵀu by `leverage`,
    s = 1 + φᵀu, θ += (e/s)·u, P −= u uᵀ/s (the product in that order: P stays symmetric)."""
    D = P.shape[0]
    s = 1.0 + leverage(P, u, kidx, kval, n)
    g = e / s
    for i in range(D):
        theta[i] += g * u[i]
    for i in range(D):
        ui = u[i]
        if ui == 0.0:
            continue
        for j in range(D):
            P[i, j] -= (ui * u[j]) / s


@njit(cache=True)
def check_round(mode, lin, P, u, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns,
                a_indptr, a_inv, base, n, g, kidx, kval, state):
    """Greedy first's sample (module doc): state[1] += (mean_{r≠g} h_r) / h_g, state[2] += 1."""
    hg = 0.0
    rest = 0.0
    for r in range(n):
        row = base + r
        m = features_of(mode, lin, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns,
                        a_indptr[row], a_indptr[row + 1], a_inv[row], 1.0, kidx, kval)
        h = leverage(P, u, kidx, kval, m)
        if r == g:
            hg = h
        else:
            rest += h
    if hg > 0.0:
        state[1] += rest / (n - 1) / hg
        state[2] += 1.0


@njit(cache=True, inline="always")
def close_window(state, t):
    """At the end of a window: switch (state[0] = t) if its mean ratio exceeds CHECK_RATIO; a new window."""
    if state[2] > 0.0 and state[1] > CHECK_RATIO * state[2]:
        state[0] = t
    state[1] = 0.0
    state[2] = 0.0


@njit(cache=True, inline="always")
def adagrad_features(theta, G, kidx, kval, n, e, lr):
    """AdaGrad on the features (kidx, kval)[:n] in order: g = e·φ, G_k += g², θ_k += lr·g/√G_k. Four features
    at a time by `adagrad4` (4-wide, the scalar formula's bits) when their indices are
    distinct (hashed pairs may share a weight: then one at a time, in order); the last n mod 4 lanes of a
    group are padding that is computed and not written."""
    for m in range(0, n, 4):
        w = min(4, n - m)
        k0 = kidx[m]
        k1 = kidx[m + 1] if w > 1 else k0
        k2 = kidx[m + 2] if w > 2 else k0
        k3 = kidx[m + 3] if w > 3 else k0
        if (w > 1 and k1 == k0) or (w > 2 and (k2 == k0 or k2 == k1)) or (w > 3 and (k3 == k0 or k3 == k1
                                                                                    or k3 == k2)):
            for j in range(m, m + w):
                _step(ORACLE_ADAGRAD, theta, G, kidx[j], kval[j], e, lr, 0.0)
            continue
        h0, h1, h2, h3, s0, s1, s2, s3 = adagrad4(kval[m], kval[m + 1] if w > 1 else 0.0,
                                                  kval[m + 2] if w > 2 else 0.0, kval[m + 3] if w > 3 else 0.0,
                                                  G[k0], G[k1], G[k2], G[k3], e, 1.0, lr)
        G[k0] = h0
        theta[k0] += s0
        if w > 1:
            G[k1] = h1
            theta[k1] += s1
        if w > 2:
            G[k2] = h2
            theta[k2] += s2
        if w > 3:
            G[k3] = h3
            theta[k3] += s3


@njit(cache=True, inline="always")
def _ada_span(theta, G, k0, zc, n, xh, e, lr):
    """AdaGrad on the contiguous weights k0 … k0+n−1 with φ_i = xh·zc[i]: four at a time by
    `adagrad4` (its lanes the scalar formula's operations: g = e·(φ·1), exactly e·φ), the
    last n mod 4 one by one (LLVM does not vectorise the scalar loop: its sqrt and division stay scalar)."""
    q = n - n % 4
    for i in range(0, q, 4):
        k = k0 + i
        h0, h1, h2, h3, s0, s1, s2, s3 = adagrad4(xh * zc[i], xh * zc[i + 1], xh * zc[i + 2], xh * zc[i + 3],
                                                  G[k], G[k + 1], G[k + 2], G[k + 3], e, 1.0, lr)
        G[k] = h0
        G[k + 1] = h1
        G[k + 2] = h2
        G[k + 3] = h3
        theta[k] += s0
        theta[k + 1] += s1
        theta[k + 2] += s2
        theta[k + 3] += s3
    for i in range(q, n):
        g = e * (xh * zc[i])
        h = G[k0 + i] + g * g
        G[k0 + i] = h
        theta[k0 + i] += lr * g / np.sqrt(h if h > 0.0 else 1.0)


@njit(cache=True)
def adagrad_dense_rows(lin, theta, G, zc, d_c, d_a, c_idx, c_val, clo, chi, inv_x, a_val, alo, ahi, inv_z, c, e, lr):
    """`update`'s AdaGrad step in MODE_DENSE for an item row with every feature non-zero: the weights
    of one context feature's row of M are contiguous, so each row is one vectorisable run; the same
    φ values in the same order as `features_of` ((x̂_j·ẑ_a)·c; ẑ_a·c; x̂_j·c; c — with c = 1 the
    product by c is exact and left out). ``zc``: a buffer of at least d_a + d_c + d_c·d_a (the kernels'
    feature buffer is)."""
    for p in range(alo, ahi):
        zc[p - alo] = a_val[p] * inv_z
    full = c == 1.0 and chi - clo == d_c
    if full:  # every context feature, in column order: M's weights and w_c's are each one contiguous run
        for pc in range(clo, chi):
            if c_idx[pc] != pc - clo:
                full = False
                break
    if full:  # φ of the whole bilinear block (the same products) in one run of d_c·d_a weights
        phi = zc[d_a + d_c:d_a + d_c + d_c * d_a]
        for pc in range(clo, chi):
            xh = c_val[pc] * inv_x
            base = (pc - clo) * d_a
            for i in range(d_a):
                phi[base + i] = xh * zc[i]
        _ada_span(theta, G, 0, phi, d_c * d_a, 1.0, e, lr)
    elif c == 1.0:
        for pc in range(clo, chi):
            _ada_span(theta, G, c_idx[pc] * d_a, zc, d_a, c_val[pc] * inv_x, e, lr)
    else:
        for pc in range(clo, chi):
            xh = c_val[pc] * inv_x
            base = c_idx[pc] * d_a
            for i in range(d_a):
                g = e * ((xh * zc[i]) * c)
                h = G[base + i] + g * g
                G[base + i] = h
                theta[base + i] += lr * g / np.sqrt(h if h > 0.0 else 1.0)
    if lin & LIN_ITEM:  # contiguous weights: one run (φ = 1·ẑ_a, exactly ẑ_a·c with c = 1)
        if c == 1.0:
            _ada_span(theta, G, d_c * d_a, zc, d_a, 1.0, e, lr)
        else:
            for i in range(d_a):
                _step(ORACLE_ADAGRAD, theta, G, d_c * d_a + i, zc[i] * c, e, lr, 0.0)
    if lin & LIN_CONTEXT:
        if full:
            xb = zc[d_a:d_a + d_c]
            for pc in range(clo, chi):
                xb[pc - clo] = c_val[pc] * inv_x
            _ada_span(theta, G, d_c * d_a + d_a, xb, d_c, 1.0, e, lr)
        else:
            for pc in range(clo, chi):
                _step(ORACLE_ADAGRAD, theta, G, d_c * d_a + d_a + c_idx[pc], (c_val[pc] * inv_x) * c, e, lr, 0.0)
    if lin & LIN_BIAS:
        _step(ORACLE_ADAGRAD, theta, G, d_c * d_a + d_a + d_c, c, e, lr, 0.0)


@njit(cache=True)
def update(mode, oracle, lin, theta, G, P, u, kidx, kval, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x,
           a_idx, a_val, a_ns, alo, ahi, inv_z, c, e, lr):
    """The oracle's step for one played candidate with residual e and position factor c (module doc)."""
    if oracle == ORACLE_ADAGRAD and e == 0.0:
        return
    if oracle == ORACLE_ADAGRAD and mode == MODE_DENSE and ahi - alo == d_a:
        adagrad_dense_rows(lin, theta, G, kval, d_c, d_a, c_idx, c_val, clo, chi, inv_x, a_val, alo, ahi, inv_z, c,
                           e, lr)
        return
    n = features_of(mode, lin, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns, alo,
                    ahi, inv_z, c, kidx, kval)
    if oracle == ORACLE_RIDGE:
        ridge_step(theta, P, u, kidx, kval, n, e)
        return
    if oracle == ORACLE_ADAGRAD:
        adagrad_features(theta, G, kidx, kval, n, e, lr)
        return
    if e == 0.0:
        return
    sq = 0.0
    for m in range(n):
        sq += kval[m] * kval[m]
    coef = lr * e / (sq + 1.0)
    for m in range(n):
        _step(oracle, theta, G, kidx[m], kval[m], e, lr, coef)


@njit(cache=True, inline="always")
def policy(v, n, kind, x, placed, pi):
    """The distribution over the candidates not yet ``placed`` (pi = 0 on placed ones); returns the best
    (first maximum among the free ones)."""
    best = -1
    free = 0
    for r in range(n):
        if placed[r] == 0:
            free += 1
            if best < 0 or v[r] > v[best]:
                best = r
    if kind == POLICY_EPSILON:
        base = x / free
        for r in range(n):
            pi[r] = 0.0 if placed[r] else (base + (1.0 - x) if r == best else base)
    else:
        vb = v[best]
        for r in range(n):
            pi[r] = 0.0 if placed[r] else 1.0 / (free + x * (vb - v[r]))
        rest = 0.0
        for r in range(n):
            rest += pi[r] if r != best else 0.0
        pi[best] = 1.0 - rest
    return best


@njit(cache=True, inline="always")
def draw(pi, n, placed, u):
    """Inverse CDF over the candidates in order (placed ones have pi = 0); rounding: the last free one."""
    cum = 0.0
    for r in range(n):
        cum += pi[r]
        if placed[r] == 0 and u < cum:
            return r
    for r in range(n - 1, -1, -1):
        if placed[r] == 0:
            return r
    return 0


@njit(cache=True, inline="always")
def choose_slots(v, n, k, kind, x, u, uoff, placed, pi, chosen, probs, greedy):
    """Fill ``chosen[:k]`` (−1 past n) with slot probabilities ``probs``; ``greedy[:k]`` the top-k by score
    (first maxima). Uniforms u[uoff + s]."""
    for r in range(n):
        placed[r] = 0
    for s in range(k):
        if s >= n:
            chosen[s] = -1
            probs[s] = 1.0
            continue
        policy(v, n, kind, x, placed, pi)
        r = draw(pi, n, placed, u[uoff + s])
        chosen[s] = r
        probs[s] = pi[r]
        placed[r] = 1
    for r in range(n):
        placed[r] = 0
    for s in range(k):
        if s >= n:
            greedy[s] = -1
            continue
        best = -1
        for r in range(n):
            if placed[r] == 0 and (best < 0 or v[r] > v[best]):
                best = r
        greedy[s] = best
        placed[best] = 1


@njit(cache=True)
def inv_norms(indptr, val, out):
    """out[i] = 1/‖row i‖ (1 for a zero row) for CSR-like rows: computed once per stream and kept with it
    (the numbers a round would compute, bit for bit)."""
    for i in range(out.shape[0]):
        out[i] = inv_norm(val, indptr[i], indptr[i + 1])


@njit(cache=True)
def max_row(indptr):
    m = 0
    for i in range(indptr.shape[0] - 1):
        if indptr[i + 1] - indptr[i] > m:
            m = indptr[i + 1] - indptr[i]
    return m


@njit(cache=True)
def max_candidates(offsets):
    return max_row(offsets)


@njit(cache=True)
def exam_factor(s, given, num, den):
    """c_s: the given examination ratio, or the estimate ((num_s + 1)/(den_s + 1)) / ((num_0 + 1)/(den_0 + 1))
    clipped to [0.001, 10]; 1 for slot 0."""
    if s == 0:
        return 1.0
    if given.shape[0] > 0:
        return given[s] / given[0]
    c = ((num[s] + 1.0) / (den[s] + 1.0)) / ((num[0] + 1.0) / (den[0] + 1.0))
    return min(max(c, 0.001), 10.0)


@njit(cache=True, inline="always")
def _cat_values_body(mode, args):
    """out[offsets[i] + r] = f(x_i, candidate r) for every round (the scores act/learn/simulate compute)."""
    (lin, theta, d_c, d_a, mask, Q, c_indptr, c_idx, c_val, c_ns, c_inv, a_indptr, a_idx, a_val, a_ns,
     a_inv, offsets, out) = args
    q = np.empty(max(d_a, 1))
    hf = np.empty(max_row(c_indptr), np.int64)
    zb = np.empty(max_row(a_indptr))
    wb = np.empty(max_row(a_indptr))
    qall = Q.min() == 1
    for i in range(offsets.shape[0] - 1):
        clo = c_indptr[i]
        chi = c_indptr[i + 1]
        inv_x = c_inv[i]
        s_ctx = context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf)
        base = offsets[i]
        round_scores(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, wb, c_val, c_ns, clo, chi, inv_x, s_ctx,
                     a_indptr, a_idx, a_val, a_ns, a_inv, base, offsets[i + 1] - base, out[base:])


@njit(cache=True, inline="always")
def _cat_act_body(mode, args):
    """Draw k slots a round with uniforms u[i·k : (i+1)·k]; chosen (n, k) candidate positions, probs (n, k)
    their slot probabilities, pis (total,) slot 1's distribution, scores (total,) the candidates' scores
    (`_cat_values_body`'s), or (0,): not wanted."""
    (lin, theta, d_c, d_a, mask, Q, c_indptr, c_idx, c_val, c_ns, c_inv, a_indptr, a_idx, a_val, a_ns,
     a_inv, offsets, k, kind, explore, gamma_exponent, t, u, chosen, probs, pis, scores) = args
    keep = scores.shape[0] > 0
    n_max = max(max_candidates(offsets), 1)
    v = np.empty(n_max)
    pi = np.empty(n_max)
    placed = np.zeros(n_max, np.int8)
    greedy = np.empty(k, np.int64)
    q = np.empty(max(d_a, 1))
    hf = np.empty(max_row(c_indptr), np.int64)
    zb = np.empty(max_row(a_indptr))
    wb = np.empty(max_row(a_indptr))
    qall = Q.min() == 1
    x = explore_at(kind, explore, gamma_exponent, t)
    for i in range(offsets.shape[0] - 1):
        clo = c_indptr[i]
        chi = c_indptr[i + 1]
        inv_x = c_inv[i]
        s_ctx = context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf)
        base = offsets[i]
        n = offsets[i + 1] - base
        round_scores(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, wb, c_val, c_ns, clo, chi, inv_x, s_ctx,
                     a_indptr, a_idx, a_val, a_ns, a_inv, base, n, v)
        for r in range(n):
            placed[r] = 0
        policy(v, n, kind, x, placed, pi)
        for r in range(n):
            pis[base + r] = pi[r]
        if keep:
            for r in range(n):
                scores[base + r] = v[r]
        choose_slots(v, n, k, kind, x, u, i * k, placed, pi, chosen[i], probs[i], greedy)


@njit(cache=True)
def learn_slot(mode, oracle, lin, theta, G, P, ubuf, kidx, kval, d_c, d_a, mask, Q, qall, q, hf, zb, c_idx, c_val, c_ns,
               clo, chi, inv_x, a_idx, a_val, a_ns, a_indptr, a_inv, row, c, f, lr, v_known, known):
    """Slot update: the candidate's score (``v_known`` when ``known``, else computed now), e = f − c·score,
    the oracle step. Returns the score used."""
    alo = a_indptr[row]
    ahi = a_indptr[row + 1]
    inv_z = a_inv[row]
    if known:
        score = v_known
    else:
        s_ctx = context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf)
        score = candidate_score(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, c_val, c_ns, clo, chi, inv_x,
                                s_ctx, a_idx, a_val, a_ns, alo, ahi, inv_z)
    e = f - c * score if c != 1.0 else f - score
    update(mode, oracle, lin, theta, G, P, ubuf, kidx, kval, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi,
           inv_x, a_idx, a_val, a_ns, alo, ahi, inv_z, c, e, lr)
    return score


@njit(cache=True, inline="always")
def _cat_learn_body(mode, args):
    """Update from logged rounds in order: chosen (n, k) candidate positions (−1: slot empty), rewards
    (n, k) (float64: 0/1 clicks or real-valued rewards, fitted as they are); slot by slot, each slot's
    score computed after the previous slot's step. t[0] counts rounds."""
    (oracle, lin, theta, G, P, t, exam_given, exam_num, exam_den, d_c, d_a, mask, Q, c_indptr, c_idx, c_val,
     c_ns, c_inv, a_indptr, a_idx, a_val, a_ns, a_inv, offsets, chosen, feedback, lr, adapt, state) = args
    k = chosen.shape[1]
    v = np.empty(max(max_candidates(offsets), 1))
    wb = np.empty(max_row(a_indptr))
    nbuf = max_row(c_indptr) * max(max_row(a_indptr), 1) + max_row(a_indptr) + max_row(c_indptr) + 1
    kidx = np.empty(nbuf, np.int64)
    kval = np.empty(nbuf)
    ubuf = np.empty(P.shape[0])
    q = np.empty(max(d_a, 1))
    hf = np.empty(max_row(c_indptr), np.int64)
    zb = np.empty(max_row(a_indptr))
    qall = Q.min() == 1
    for i in range(chosen.shape[0]):
        clo = c_indptr[i]
        chi = c_indptr[i + 1]
        inv_x = c_inv[i]
        base = offsets[i]
        n = offsets[i + 1] - base
        if adapt and state[0] < 0.0 and t[0] % CHECK_EVERY == 0 and n > 1:
            s_ctx = context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf)
            round_scores(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, wb, c_val, c_ns, clo, chi, inv_x,
                         s_ctx, a_indptr, a_idx, a_val, a_ns, a_inv, base, n, v)
            g = 0
            for r in range(1, n):
                if v[r] > v[g]:
                    g = r
            check_round(mode, lin, P, ubuf, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val,
                        a_ns, a_indptr, a_inv, base, n, g, kidx, kval, state)
        for s in range(k):
            r = chosen[i, s]
            if r < 0:
                continue
            c = exam_factor(s, exam_given, exam_num, exam_den)
            score = learn_slot(mode, oracle, lin, theta, G, P, ubuf, kidx, kval, d_c, d_a, mask, Q, qall, q, hf, zb,
                               c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns, a_indptr, a_inv, base + r,
                               c, feedback[i, s], lr, 0.0, False)
            if k > 1 and exam_given.shape[0] == 0:
                exam_num[s] += feedback[i, s]
                exam_den[s] += min(max(score, 0.0), 1.0)
        t[0] += 1
        if adapt and state[0] < 0.0 and t[0] % CHECK_WINDOW == 0:
            close_window(state, t[0])


@njit(cache=True, inline="always")
def _cat_simulate_body(mode, args):
    """Simulated rounds ``rows`` (indices into the stream): scores, k slots drawn (uniforms
    u_learner[s·k + slot]), slot j's clean click 1[u_click < exam_env[j]·rewards[item]] flipped with
    u_flip (rho0, rho1), the slot-by-slot oracle steps (as `cat_learn`).

    Records mistakes[s] = 1[the greedy page's clean value < the best page's], regret[s] = the best
    page's clean expected clicks − the played page's (Σ_j exam_env[j]·rewards[item_j]), clicks[s] = the
    played page's clean expected clicks."""
    (oracle, kind, lin, theta, G, P, t, exam_given, exam_num, exam_den, d_c, d_a, mask, Q, c_indptr, c_idx,
     c_val, c_ns, c_inv, a_indptr, a_idx, a_val, a_ns, a_inv, offsets, rows, rewards, exam_env, k, explore,
     explore_low, adapt, state, gamma_exponent, lr, rho0, rho1, u_learner, u_flip, u_click, mistakes, regret,
     clicks) = args
    n_max = max(max_candidates(offsets), 1)
    v = np.empty(n_max)
    pi = np.empty(n_max)
    placed = np.zeros(n_max, np.int8)
    chosen = np.empty(k, np.int64)
    probs = np.empty(k)
    greedy = np.empty(k, np.int64)
    best_r = np.empty(n_max)
    nbuf = max_row(c_indptr) * max(max_row(a_indptr), 1) + max_row(a_indptr) + max_row(c_indptr) + 1
    kidx = np.empty(nbuf, np.int64)
    kval = np.empty(nbuf)
    ubuf = np.empty(P.shape[0])
    q = np.empty(max(d_a, 1))
    hf = np.empty(max_row(c_indptr), np.int64)
    zb = np.empty(max_row(a_indptr))
    wb = np.empty(max_row(a_indptr))
    qall = Q.min() == 1
    estimate = k > 1 and exam_given.shape[0] == 0
    for s_ in range(rows.shape[0]):
        i = rows[s_]
        if adapt and state[0] >= 0.0:  # after the switch the schedule starts again
            x = explore_at(kind, explore_low, gamma_exponent, t[0] - state[0])
        else:
            x = explore_at(kind, explore, gamma_exponent, t[0])
        clo = c_indptr[i]
        chi = c_indptr[i + 1]
        inv_x = c_inv[i]
        s_ctx = context_part(mode, lin, theta, d_c, d_a, mask, q, c_idx, c_val, clo, chi, inv_x, hf)
        base = offsets[i]
        n = offsets[i + 1] - base
        round_scores(mode, lin, theta, d_c, d_a, mask, Q, qall, q, hf, zb, wb, c_val, c_ns, clo, chi, inv_x, s_ctx,
                     a_indptr, a_idx, a_val, a_ns, a_inv, base, n, v)
        choose_slots(v, n, k, kind, x, u_learner, s_ * k, placed, pi, chosen, probs, greedy)
        if adapt and state[0] < 0.0 and t[0] % CHECK_EVERY == 0 and n > 1:
            check_round(mode, lin, P, ubuf, d_c, d_a, mask, Q, qall, c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val,
                        a_ns, a_indptr, a_inv, base, n, greedy[0], kidx, kval, state)
        # clean values: the best page (rewards sorted, largest at the most examined slot) vs greedy vs played
        for r in range(n):
            best_r[r] = rewards[base + r]
        best = 0.0
        gval = 0.0
        played = 0.0
        for j in range(k):
            if j >= n:
                break
            m = -1
            for r in range(n - j):
                if m < 0 or best_r[r] > best_r[m]:
                    m = r
            best += exam_env[j] * best_r[m]
            best_r[m] = best_r[n - j - 1]
            gval += exam_env[j] * rewards[base + greedy[j]]
            played += exam_env[j] * rewards[base + chosen[j]]
        mistakes[s_] = 1 if gval < best else 0
        regret[s_] = best - played
        clicks[s_] = played
        for j in range(k):
            r = chosen[j]
            if r < 0:
                continue
            clean = 1 if u_click[s_ * k + j] < exam_env[j] * rewards[base + r] else 0
            uf = u_flip[s_ * k + j]
            ft = (1 if uf >= rho1 else 0) if clean == 1 else (1 if uf < rho0 else 0)
            c = exam_factor(j, exam_given, exam_num, exam_den)
            score = learn_slot(mode, oracle, lin, theta, G, P, ubuf, kidx, kval, d_c, d_a, mask, Q, qall, q, hf, zb,
                               c_idx, c_val, c_ns, clo, chi, inv_x, a_idx, a_val, a_ns, a_indptr, a_inv, base + r, c,
                               ft, lr, v[r], j == 0)
            if estimate:
                exam_num[j] += ft
                exam_den[j] += min(max(score, 0.0), 1.0)
        t[0] += 1
        if adapt and state[0] < 0.0 and t[0] % CHECK_WINDOW == 0:
            close_window(state, t[0])


@njit(cache=True, nogil=True)
def _cat_values_dense(*args):
    _cat_values_body(MODE_DENSE, args)


@njit(cache=True, nogil=True)
def _cat_values_hashed(*args):
    _cat_values_body(MODE_HASHED, args)


def cat_values(mode, *args):
    """`_cat_values_body` (its arguments after ``mode``), compiled for each feature mode apart: the other
    mode's loops are left out of the machine code (the dense loops run about twice as fast without them)."""
    (_cat_values_dense if mode == MODE_DENSE else _cat_values_hashed)(*args)


@njit(cache=True, nogil=True)
def _cat_act_dense(*args):
    _cat_act_body(MODE_DENSE, args)


@njit(cache=True, nogil=True)
def _cat_act_hashed(*args):
    _cat_act_body(MODE_HASHED, args)


def cat_act(mode, *args):
    """`_cat_act_body` (its arguments after ``mode``), compiled for each feature mode apart: the other
    mode's loops are left out of the machine code (the dense loops run about twice as fast without them)."""
    (_cat_act_dense if mode == MODE_DENSE else _cat_act_hashed)(*args)


@njit(cache=True, nogil=True)
def _cat_learn_dense(*args):
    _cat_learn_body(MODE_DENSE, args)


@njit(cache=True, nogil=True)
def _cat_learn_hashed(*args):
    _cat_learn_body(MODE_HASHED, args)


def cat_learn(mode, *args):
    """`_cat_learn_body` (its arguments after ``mode``), compiled for each feature mode apart: the other
    mode's loops are left out of the machine code (the dense loops run about twice as fast without them)."""
    (_cat_learn_dense if mode == MODE_DENSE else _cat_learn_hashed)(*args)


@njit(cache=True, nogil=True)
def _cat_simulate_dense(*args):
    _cat_simulate_body(MODE_DENSE, args)


@njit(cache=True, nogil=True)
def _cat_simulate_hashed(*args):
    _cat_simulate_body(MODE_HASHED, args)


def cat_simulate(mode, *args):
    """`_cat_simulate_body` (its arguments after ``mode``), compiled for each feature mode apart: the other
    mode's loops are left out of the machine code (the dense loops run about twice as fast without them)."""
    (_cat_simulate_dense if mode == MODE_DENSE else _cat_simulate_hashed)(*args)
