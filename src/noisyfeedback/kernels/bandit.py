"""First-order bandit learners sharing ε-greedy exploration: Banditron, RCNBF and BPA.

P(r) = (1-γ)·1[r=ŷ] + γ/K; draw ỹ ~ P; observe f̃; then, by ``rule``:

- RULE_BANDITRON (Banditron, RCNBF): W[ỹ] += h(f̃)/P(ỹ)·x, then W[ŷ] -= x, every round.
  Banditron is h(0)=0, h(1)=1; RCNBF h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1).
- RULE_BPA (bandit passive-aggressive, simple PAB): with a = f̃,
  ℓ = max(0, 1 + (1−2a)·w_ỹ·x) and w_ỹ += (2a−1)·ℓ/‖x‖²·x (no update when x = 0).
"""

import numpy as np
from numba import njit

from .channels import flip
from .linear import add_row, argmax_first, epsilon_greedy_draw, fetch_row, row_scores, sub_row

RULE_BANDITRON = 0
RULE_BPA = 1


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
def bandit_update_row(rule, W, idx, val, nnz, s, yhat, action, prob, ft, h0, h1):
    """One update given the scores s = W x computed before it."""
    if rule == RULE_BANDITRON:
        h = h1 if ft == 1 else h0
        add_row(W, action, h / prob, idx, val, nnz)
        sub_row(W, yhat, idx, val, nnz)
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
def bandit_learn(rule, W, Xd, indptr, indices, data, sparse, actions, feedback, probs, h0, h1):
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(actions.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        yhat = argmax_first(s)
        bandit_update_row(rule, W, idx, val, nnz, s, yhat, actions[i], probs[i], feedback[i], h0, h1)


@njit(cache=True)
def bandit_simulate(rule, W, Xd, indptr, indices, data, sparse, y, order, gamma, h0, h1,
                    rho0, rho1, u_learner, u_feedback, mistakes):
    """Simulation loop under NoisyBandit(rho0, rho1) feedback."""
    d = W.shape[1]
    K = W.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(K, np.float64)
    for t in range(order.shape[0]):
        i = order[t]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        yhat = argmax_first(s)
        a, pa = epsilon_greedy_draw(yhat, gamma, K, u_learner[t])
        ft = flip(1 if a == y[i] else 0, u_feedback[t], rho0, rho1)
        bandit_update_row(rule, W, idx, val, nnz, s, yhat, a, pa, ft, h0, h1)
        mistakes[t] = 1 if yhat != y[i] else 0
