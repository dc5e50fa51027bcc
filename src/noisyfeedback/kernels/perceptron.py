"""Multiclass Perceptron (Crammer & Singer, ultraconservative): on a mistake W[ℓ] += x, W[ŷ] -= x."""

import numpy as np
from numba import njit

from ._codes import CODE_CONFUSION
from .channels import confusion_label
from .linear import add_sub_rows, argmax_first, fetch_row, row_scores


@njit(cache=True)
def perceptron_learn_row(W, idx, val, nnz, label, s):
    """One Perceptron step on a row with (possibly noisy) label; returns the greedy ŷ before it."""
    row_scores(W, idx, val, nnz, s)
    yhat = argmax_first(s)
    if yhat != label:
        add_sub_rows(W, label, 1.0, yhat, idx, val, nnz)  # 1.0·v is v exactly
    return yhat


@njit(cache=True)
def perceptron_learn(W, Xd, indptr, indices, data, sparse, labels):
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(labels.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        perceptron_learn_row(W, idx, val, nnz, labels[i], s)


@njit(cache=True)
def perceptron_simulate(W, Xd, indptr, indices, data, sparse, y, order, code, u_feedback, Ccum, mistakes):
    """Simulation loop: rounds t over rows order[t]; label from FullLabel (CODE_FULL) or ConfusionNoise
    (CODE_CONFUSION)."""
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for t in range(order.shape[0]):
        i = order[t]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        label = y[i]
        if code == CODE_CONFUSION:
            label = confusion_label(y[i], u_feedback[t], Ccum)
        yhat = perceptron_learn_row(W, idx, val, nnz, label, s)
        mistakes[t] = 1 if yhat != y[i] else 0
