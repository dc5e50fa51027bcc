"""Inverse-variance weighted recursive least squares (the Kalman filter of a fixed w).

State w (d,), P (d, d) = (λI + Σ_s x_s x_sᵀ / v_s)⁻¹. One round: ŷ = w·x; the round's
label m (mean of its nlab noisy labels) has variance v; then

    Px = P x,  den = v + xᵀ P x,  w += Px·(m − ŷ)/den,  P −= Px Pxᵀ / den

so w minimises λ‖w‖² + Σ_s (m_s − w·x_s)²/v_s after every round. A round with
den ≤ 0 or not finite (v = ∞: weight 0) changes nothing.

v by ``vmode``: VAR_KNOWN v = v_t/nlab; VAR_NONE v = 1 (ordinary RLS); VAR_UNKNOWN the
raw estimate of ONE label's variance s (nlab ≥ 2: the sample variance of the labels;
one label: (ỹ − ŷ)²/4, ORS's one_sample_pred), shrunk to the running mean v̄ of the
earlier raw estimates, ŝ = (shrink·v̄ + s)/(shrink + 1) (shrink = ∞: ŝ = v̄, the online
estimate; the first round ŝ = s), floored at ``vfloor``, and v = ŝ/nlab.
Budget strategies as ORS (kernels/regression.py).
"""

import numpy as np
from numba import njit

from .linear import fetch_row
from .regression import STRATEGY_ALL, STRATEGY_AUTO_TUNED, n_labels_for_round, row_dot, tune_a

VAR_KNOWN = 0
VAR_NONE = 1
VAR_UNKNOWN = 2


@njit(cache=True)
def rls_update(w, P, Px, idx, val, nnz, yhat, lab, nlab, v1, vmode, shrink, vfloor, vstate):
    """Update w, P from the first ``nlab`` labels; vstate = [Σ raw estimates, count]. Returns v used."""
    d = w.shape[0]
    l0 = lab[0]
    if nlab == 1:
        m = l0
    else:
        acc = 0.0
        for j in range(1, nlab):
            acc += lab[j] - l0
        m = l0 + acc / nlab
    err = m - yhat
    if vmode == VAR_KNOWN:
        v = v1 / nlab
    elif vmode == VAR_NONE:
        v = 1.0
    else:
        if nlab >= 2:
            ss = 0.0
            for j in range(nlab):
                dj = lab[j] - m
                ss += dj * dj
            s = ss / (nlab - 1)
        else:
            s = 0.25 * err * err
        if vstate[1] > 0.0:
            vbar = vstate[0] / vstate[1]
            if np.isinf(shrink):
                sh = vbar
            else:
                sh = (shrink * vbar + s) / (shrink + 1.0)
        else:
            sh = s
        vstate[0] += s
        vstate[1] += 1.0
        if sh < vfloor:
            sh = vfloor
        v = sh / nlab
    for i in range(d):
        acc = 0.0
        for p in range(nnz):
            acc += P[i, idx[p]] * val[p]
        Px[i] = acc
    xPx = 0.0
    for p in range(nnz):
        xPx += val[p] * Px[idx[p]]
    den = v + xPx
    if not (den > 0.0) or not (den < np.inf):
        return v
    g = err / den
    for i in range(d):
        w[i] += Px[i] * g
    for i in range(d):
        ci = Px[i] / den
        for j in range(d):
            P[i, j] -= ci * Px[j]
    return v


@njit(cache=True)
def rls_round(w, P, Px, idx, val, nnz, lab, ncols, v1, u, vmode, shrink, vfloor, vstate,
              strategy, budget, k, p, n_begin, t, spent, a):
    """One round: predict, choose the number of labels, update. Returns (ŷ, nlab, spent, a)."""
    yhat = row_dot(w, idx, val, nnz)
    if strategy == STRATEGY_ALL:
        nlab = ncols
    else:
        nlab = n_labels_for_round(lab[0], yhat, u, strategy, budget, k, p, n_begin, t, spent, a)
    spent += nlab
    rls_update(w, P, Px, idx, val, nnz, yhat, lab, nlab, v1, vmode, shrink, vfloor, vstate)
    if strategy == STRATEGY_AUTO_TUNED:
        a = tune_a(spent, t, budget, a)
    return yhat, nlab, spent, a


@njit(cache=True)
def rls_learn(w, P, Xd, indptr, indices, data, sparse, Y, variance, u, vmode, shrink, vfloor, vstate,
              strategy, budget, k, p, n_begin, t, spent, a, out_nlab):
    """Rows in order; Y (n, ncols) labels a row. Returns (t, spent, a)."""
    n = Y.shape[0]
    ncols = Y.shape[1]
    d = w.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    Px = np.empty(d, np.float64)
    has_u = u.shape[0] > 0
    for i in range(n):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        ui = u[i] if has_u else 0.0
        yhat, nlab, spent, a = rls_round(w, P, Px, idx, val, nnz, Y[i], ncols, variance[i], ui, vmode, shrink,
                                         vfloor, vstate, strategy, budget, k, p, n_begin, t, spent, a)
        out_nlab[i] = nlab
        t += 1
    return t, spent, a


@njit(cache=True)
def rls_simulate(w, P, Xd, indptr, indices, data, sparse, y, order, v, z, kmax, u, vmode, shrink, vfloor,
                 vstate, strategy, budget, k, p, n_begin, t, spent, a, sqerr, out_nlab):
    """Simulation loop under GaussianNoise (as ``ors_simulate``): label j = y + √v·z[s·kmax + j];
    sqerr[s] = (ŷ − y)². Returns (t, spent, a)."""
    d = w.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    Px = np.empty(d, np.float64)
    lab = np.empty(kmax, np.float64)
    has_u = u.shape[0] > 0
    for s in range(order.shape[0]):
        i = order[s]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        yi = y[i]
        sd = np.sqrt(v[s])
        for j in range(kmax):
            lab[j] = yi + sd * z[s * kmax + j]
        us = u[s] if has_u else 0.0
        yhat, nlab, spent, a = rls_round(w, P, Px, idx, val, nnz, lab, kmax, v[s], us, vmode, shrink, vfloor,
                                         vstate, strategy, budget, k, p, n_begin, t, spent, a)
        diff = yhat - yi
        sqerr[s] = diff * diff
        out_nlab[s] = nlab
        t += 1
    return t, spent, a
