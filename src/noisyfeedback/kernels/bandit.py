"""Bandit learners sharing ε-greedy exploration: Banditron, RCNBF, BPA and SOBA.

P(r) = (1-γ)·1[r=ŷ] + γ/K; draw ỹ ~ P; observe f̃; then, by ``rule``:

- RULE_BANDITRON (Banditron, RCNBF): W[ỹ] += h(f̃)/P(ỹ)·x, then W[ŷ] -= x, every round (one pass).
  Banditron is h(0)=0, h(1)=1; RCNBF h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1).
- RULE_BPA (bandit passive-aggressive, simple PAB): with a = f̃,
  ℓ = max(0, 1 + (1−2a)·w_ỹ·x) and w_ỹ += (2a−1)·ℓ/‖x‖²·x (no update when x = 0).
- RULE_SOBA_FULL / RULE_SOBA_DIAG (second-order banditron, Beygelzimer et al. 2017):
  see `soba_update_row`. Extra state: ``theta`` (K, d), ``A`` (the inverse
  A⁻¹, (Kd, Kd), for the full variant; the diagonal of A, (K, d), for the
  diagonal one) and ``cum`` (1,) = Σ n_s m_s.

Learners without extra state pass empty arrays for theta, A and cum.

Flip rates and feedback estimates (``h0``, ``h1``, ``rho0``, ``rho1``) are scalars, or float64 arrays
of one value (every action alike) or one per action (``channels.rate_at``): h(f̃) and the channel's
flips then follow the played action ỹ.
"""

import numpy as np
from numba import njit

from ._codes import CSR_CODED, CSR_FLOAT64, DENSE
from .channels import flip, rate_at
from .linear import (
    PREFETCH_AHEAD,
    add_row,
    add_sub_rows,
    add_sub_rows_coded,
    argmax_first,
    epsilon_greedy_draw,
    fetch_row,
    prefetch_csr_row,
    row_scores,
    row_scores_coded,
)

RULE_BANDITRON = 0
RULE_BPA = 1
RULE_SOBA_FULL = 2
RULE_SOBA_DIAG = 3


@njit(cache=True)
def bandit_act(W, Xd, indptr, indices, data, sparse, gamma, u, actions, probs):
    d = W.shape[1]
    K = W.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    for i in range(actions.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        a, pa = epsilon_greedy_draw(argmax_first(s), gamma, K, u[i])
        actions[i] = a
        probs[i] = pa


@njit(cache=True)
def soba_update_row(full, W, theta, A, cum, idx, val, nnz, s, label, prob):
    """SOBA step after f̃ = 1 (the tried label ``label`` is taken as y), docs/algorithms.md §4.7.

    ȳ = argmax_{k≠y} s_k; g = (e_ȳ − e_y)⊗x / P(ỹ); z = √P(ỹ)·g;
    m = (⟨W,z⟩² + 2⟨W,g⟩) / (1 + zᵀA⁻¹z); if Σ n_s m_s + m ≥ 0: A += zzᵀ, θ −= g.
    W = A⁻¹θ is kept current: by Sherman–Morrison with v = A⁻¹z,
    W ← W − v·(⟨W,z⟩ + 1/√P)/(1 + zᵀv) (full); W_i = θ_i / A_ii on z's support (diagonal).
    """
    K = W.shape[0]
    d = W.shape[1]
    ybar = 0 if label != 0 else 1
    for k in range(K):
        if k != label and s[k] > s[ybar]:
            ybar = k
    rp = np.sqrt(prob)
    wz = (s[ybar] - s[label]) / rp
    wg = (s[ybar] - s[label]) / prob
    if full:
        v = np.zeros(K * d)
        ob = ybar * d
        ol = label * d
        for p in range(nnz):  # v = A⁻¹z, using the symmetry of A⁻¹ to read rows
            j = idx[p]
            c = val[p] / rp
            for q in range(K * d):
                v[q] += (A[ob + j, q] - A[ol + j, q]) * c
        zv = 0.0
        for p in range(nnz):
            j = idx[p]
            zv += (v[ob + j] - v[ol + j]) * val[p] / rp
    else:
        zv = 0.0
        for p in range(nnz):
            j = idx[p]
            z2 = val[p] * val[p] / prob
            zv += z2 / A[ybar, j] + z2 / A[label, j]
    denom = 1.0 + zv
    m = (wz * wz + 2.0 * wg) / denom
    if cum[0] + m < 0.0:
        return
    cum[0] += m
    for p in range(nnz):
        j = idx[p]
        theta[ybar, j] -= val[p] / prob
        theta[label, j] += val[p] / prob
    if full:
        c = (wz + 1.0 / rp) / denom
        for q in range(K * d):
            W[q // d, q % d] -= v[q] * c
        for q in range(K * d):
            vq = v[q] / denom
            for r in range(K * d):
                A[q, r] -= vq * v[r]
    else:
        for p in range(nnz):
            j = idx[p]
            z2 = val[p] * val[p] / prob
            A[ybar, j] += z2
            A[label, j] += z2
            W[ybar, j] = theta[ybar, j] / A[ybar, j]
            W[label, j] = theta[label, j] / A[label, j]


@njit(cache=True)
def bandit_update_row(rule, W, idx, val, nnz, s, yhat, action, prob, ft, h0, h1, theta, A, cum):
    """One update given the scores s = W x computed before it."""
    if rule == RULE_SOBA_FULL or rule == RULE_SOBA_DIAG:
        if ft == 1:
            soba_update_row(rule == RULE_SOBA_FULL, W, theta, A, cum, idx, val, nnz, s, action, prob)
    elif rule == RULE_BANDITRON:
        h = rate_at(h1, action) if ft == 1 else rate_at(h0, action)
        add_sub_rows(W, action, h / prob, yhat, idx, val, nnz)
    else:  # RULE_BPA
        sq = 0.0
        for p in range(nnz):
            sq += val[p] * val[p]
        if sq > 0.0:
            sign = 2.0 * ft - 1.0
            loss = 1.0 - sign * s[action]
            if loss > 0.0:
                add_row(W, action, sign * loss / sq, idx, val, nnz)


@njit(cache=True)
def bandit_learn(rule, W, Xd, indptr, indices, data, sparse, actions, feedback, probs, h0, h1, theta, A, cum):
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(actions.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        yhat = argmax_first(s)
        bandit_update_row(rule, W, idx, val, nnz, s, yhat, actions[i], probs[i], feedback[i], h0, h1, theta, A, cum)


@njit(cache=True)
def bandit_round(rule, W, idx, val, nnz, s, label, gamma, h0, h1, rho0, rho1, u_learner, u_feedback,
                 theta, A, cum):
    """One simulated round on a row given by its non-zeros: scores, ε-greedy action, noisy
    feedback, update. Returns (ŷ, ỹ, f̃)."""
    row_scores(W, idx, val, nnz, s)
    yhat, a, pa, ft = bandit_choose(s, label, gamma, rho0, rho1, u_learner, u_feedback)
    bandit_update_row(rule, W, idx, val, nnz, s, yhat, a, pa, ft, h0, h1, theta, A, cum)
    return yhat, a, ft


@njit(cache=True)
def bandit_choose(s, label, gamma, rho0, rho1, u_learner, u_feedback):
    """Given the scores: greedy ŷ, ε-greedy action ỹ with P(ỹ), and the noisy feedback f̃."""
    yhat = argmax_first(s)
    a, pa = epsilon_greedy_draw(yhat, gamma, s.shape[0], u_learner)
    ft = flip(1 if a == label else 0, u_feedback, rate_at(rho0, a), rate_at(rho1, a))
    return yhat, a, pa, ft


@njit(cache=True)
def banditron_round_coded(W, idx, codes, values, nnz, s, label, gamma, h0, h1, rho0, rho1, u_learner, u_feedback):
    """`bandit_round` of RULE_BANDITRON on a row of coded values, read in place."""
    row_scores_coded(W, idx, codes, values, nnz, s)
    yhat, a, pa, ft = bandit_choose(s, label, gamma, rho0, rho1, u_learner, u_feedback)
    add_sub_rows_coded(W, a, (rate_at(h1, a) if ft == 1 else rate_at(h0, a)) / pa, yhat, idx, codes, values, nnz)
    return yhat, a, ft


@njit(cache=True)
def bandit_simulate(rule, W, Xd, indptr, indices, data, sparse, y, order, gamma, h0, h1,
                    rho0, rho1, u_learner, u_feedback, mistakes, theta, A, cum, out_actions, out_feedback):
    """Simulation loop under NoisyBandit(rho0, rho1) feedback (rates and h: scalars or per action).

    When ``out_actions`` is non-empty, the actions ỹ and feedback f̃ of every round are written to
    ``out_actions`` / ``out_feedback`` (learners that keep their interactions, e.g. RCINE).
    ``sparse`` (codes in ``kernels._codes``): CSR_FLOAT64: a row is read
    in place, its index and value slices (X holds no explicit zeros); otherwise a row's non-zeros are
    copied into float64 buffers (CSR_OTHER: other value types; CSR_CODED: coded values, but read in place by
    RULE_BANDITRON).
    Any CSR row of a later round is prefetched. Either way the arithmetic is the same, in the same order.
    """
    record = out_actions.shape[0] > 0
    d = W.shape[1]
    K = W.shape[0]
    inplace = sparse == CSR_FLOAT64
    coded = sparse == CSR_CODED and rule == RULE_BANDITRON  # coded rows read in place too
    n_buf = 0 if inplace or coded else d
    idx = np.empty(n_buf, np.int64)
    val = np.empty(n_buf, np.float64)
    s = np.empty(K, np.float64)
    T = order.shape[0]
    for t in range(T):
        i = order[t]
        if sparse != DENSE and t + PREFETCH_AHEAD < T:
            prefetch_csr_row(indptr, indices, data, order[t + PREFETCH_AHEAD])
        if inplace or coded:
            lo = indptr[i]
            hi = indptr[i + 1]
            if coded:
                yhat, a, ft = banditron_round_coded(W, indices[lo:hi], data[lo:hi], Xd[0], hi - lo, s, y[i], gamma,
                                                    h0, h1, rho0, rho1, u_learner[t], u_feedback[t])
            else:
                yhat, a, ft = bandit_round(rule, W, indices[lo:hi], data[lo:hi], hi - lo, s, y[i], gamma, h0, h1,
                                           rho0, rho1, u_learner[t], u_feedback[t], theta, A, cum)
        else:
            nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
            yhat, a, ft = bandit_round(rule, W, idx, val, nnz, s, y[i], gamma, h0, h1,
                                       rho0, rho1, u_learner[t], u_feedback[t], theta, A, cum)
        mistakes[t] = 1 if yhat != y[i] else 0
        if record:
            out_actions[t] = a
            out_feedback[t] = ft
