"""Banditron (Kakade, Shalev-Shwartz & Tewari 2008) and its noise-corrected form RCNBF.

P(r) = (1-γ)·1[r=ŷ] + γ/K; draw ỹ ~ P; see f̃; update
W[ỹ] += h(f̃)/P(ỹ) · x and W[ŷ] -= x, every round.
Banditron is h(1) = 1, h(0) = 0; RCNBF uses h(f̃) = (f̃ - ρ0)/(1 - ρ0 - ρ1).
"""

import numpy as np
from numba import njit

from .channels import flip
from .linear import add_row, argmax_first, epsilon_greedy_draw, fetch_row, row_scores, sub_row


@njit(cache=True)
def banditron_act(W, Xd, indptr, indices, data, sparse, gamma, u, actions, probs):
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
def banditron_update_row(W, idx, val, nnz, yhat, action, prob, h):
    """W[ỹ] += h/P(ỹ)·x, then W[ŷ] -= x."""
    add_row(W, action, h / prob, idx, val, nnz)
    sub_row(W, yhat, idx, val, nnz)


@njit(cache=True)
def banditron_learn(W, Xd, indptr, indices, data, sparse, actions, feedback, probs, h0, h1):
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(actions.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)
        yhat = argmax_first(s)
        h = h1 if feedback[i] == 1 else h0
        banditron_update_row(W, idx, val, nnz, yhat, actions[i], probs[i], h)


@njit(cache=True)
def banditron_simulate(W, Xd, indptr, indices, data, sparse, y, order, gamma, h0, h1,
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
        f = 1 if a == y[i] else 0
        ft = flip(f, u_feedback[t], rho0, rho1)
        h = h1 if ft == 1 else h0
        banditron_update_row(W, idx, val, nnz, yhat, a, pa, h)
        mistakes[t] = 1 if yhat != y[i] else 0
