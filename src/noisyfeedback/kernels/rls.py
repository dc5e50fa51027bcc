"""Inverse-variance weighted recursive least squares (the Kalman filter of a fixed w).

State w (d,), P (d, d) = (λI + Σ_s x_s x_sᵀ / v_s)⁻¹. One round: ŷ = w·x; the round's
label m (mean of its nlab noisy labels) has variance v; then

    Px = P x,  den = v + xᵀ P x,  w += Px·(m − ŷ)/den,  P −= Px Pxᵀ / den

so w minimises λ‖w‖² + Σ_s (m_s − w·x_s)²/v_s after every round. A round with
v = ∞ (weight 0) changes nothing.

Exact rows. A row with v ≤ EXACT_REL·‖x‖²/λ (v = 0 included: a weight beyond what double
precision resolves against the prior) is an exact constraint w·x = m, the limit v → 0 of
the weighted problem. While x has variance left (xᵀPx > DETERMINED_REL·‖x‖²/λ: not in the span
of earlier exact rows) the update above with that v is the exact constrained solution
(P x = 0 afterwards, so later rows keep the constraint). Otherwise the row is already
determined: if it agrees with the current w (|m − ŷ| ≤ CONSISTENT_REL·(|m| + Σ|w_i x_i|))
it changes nothing, else it contradicts earlier exact rows and the round stops with
STATUS_CONTRADICTS (weighted least squares with exact constraints has no solution).

Finite state. Nothing is written until the round's new values are known to be finite:
ŷ, the error, Px, the gain, every new w_i, the largest change of P and (variance
unknown) the running variance sum; otherwise the round stops with STATUS_NONFINITE and
the state is as before the row.

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
from .regression import STRATEGY_ALL, STRATEGY_AUTO_TUNED, gaussian_labels, n_labels_for_round, row_dot, tune_a

VAR_KNOWN = 0
VAR_NONE = 1
VAR_UNKNOWN = 2

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_CONTRADICTS = 2

#: v ≤ EXACT_REL·‖x‖²/λ: an exact row (v is below the rounding of the prior variance ‖x‖²/λ)
EXACT_REL = 1e-15
#: xᵀPx ≤ DETERMINED_REL·‖x‖²/λ: an exact row's x is already determined by earlier exact rows
DETERMINED_REL = 1e-10
#: an exact row that is already determined agrees with w when |m − ŷ| ≤ this·(|m| + Σ|w_i x_i|)
CONSISTENT_REL = 1e-8


@njit(cache=True)
def rls_update(w, P, Px, idx, val, nnz, yhat, lab, nlab, v1, vmode, shrink, vfloor, vstate, lam):
    """Update w, P from the first ``nlab`` labels; vstate = [Σ raw estimates, count]. Returns a STATUS_*
    (anything but STATUS_OK: nothing was changed)."""
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
    if not np.isfinite(err):
        return STATUS_NONFINITE
    s = 0.0
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
        if not np.isfinite(s) or not np.isfinite(vstate[0] + s):
            return STATUS_NONFINITE
        if vstate[1] > 0.0:
            vbar = vstate[0] / vstate[1]
            if np.isinf(shrink):
                sh = vbar
            else:
                sh = (shrink * vbar + s) / (shrink + 1.0)
        else:
            sh = s
        if sh < vfloor:
            sh = vfloor
        v = sh / nlab
    if v == np.inf:  # weight 0: nothing to learn (unknown variance: an estimate that overflowed)
        if vmode == VAR_UNKNOWN:
            vstate[0] += s
            vstate[1] += 1.0
        return STATUS_OK
    sq = 0.0
    for p in range(nnz):
        sq += val[p] * val[p]
    prior = sq / lam  # xᵀP₀x, the prior variance of w·x
    for i in range(d):
        acc = 0.0
        for p in range(nnz):
            acc += P[i, idx[p]] * val[p]
        Px[i] = acc
    xPx = 0.0
    for p in range(nnz):
        xPx += val[p] * Px[idx[p]]
    if not np.isfinite(prior) or not np.isfinite(xPx):
        return STATUS_NONFINITE
    exact = v <= EXACT_REL * prior
    if exact and not (xPx > DETERMINED_REL * prior):  # already determined by earlier exact rows
        scale = abs(m)
        for p in range(nnz):
            scale += abs(w[idx[p]] * val[p])
        if abs(err) <= CONSISTENT_REL * scale:
            if vmode == VAR_UNKNOWN:
                vstate[0] += s
                vstate[1] += 1.0
            return STATUS_OK
        return STATUS_CONTRADICTS
    den = v + xPx
    if not (den > 0.0):  # rounding made xᵀPx ≤ 0 on a direction without exact rows: nothing to learn
        if vmode == VAR_UNKNOWN:
            vstate[0] += s
            vstate[1] += 1.0
        return STATUS_OK
    g = err / den
    pm = 0.0
    pd = 0.0
    for i in range(d):
        a = abs(Px[i])
        if a > pm:
            pm = a
        if abs(P[i, i]) > pd:
            pd = abs(P[i, i])
        if not np.isfinite(w[i] + Px[i] * g):
            return STATUS_NONFINITE
    q = pm * (pm / den)
    if not np.isfinite(q) or not np.isfinite(q + pd):
        return STATUS_NONFINITE
    if vmode == VAR_UNKNOWN:
        vstate[0] += s
        vstate[1] += 1.0
    for i in range(d):
        w[i] += Px[i] * g
    for i in range(d):
        ci = Px[i] / den
        for j in range(d):
            P[i, j] -= ci * Px[j]
    return STATUS_OK


@njit(cache=True)
def rls_round(w, P, Px, idx, val, nnz, lab, ncols, v1, u, vmode, shrink, vfloor, vstate,
              strategy, budget, k, p, n_begin, t, spent, a, lam):
    """One round: predict, choose the number of labels, update. Returns (ŷ, nlab, spent, a, status);
    a round that fails (status ≠ STATUS_OK) leaves w, P, vstate, spent and a as they were."""
    yhat = row_dot(w, idx, val, nnz)
    if strategy == STRATEGY_ALL:
        nlab = ncols
    else:
        nlab = n_labels_for_round(lab[0], yhat, u, strategy, budget, k, p, n_begin, t, spent, a)
    status = rls_update(w, P, Px, idx, val, nnz, yhat, lab, nlab, v1, vmode, shrink, vfloor, vstate, lam)
    if status != STATUS_OK:
        return yhat, nlab, spent, a, status
    spent += nlab
    if strategy == STRATEGY_AUTO_TUNED:
        a = tune_a(spent, t, budget, a)
    return yhat, nlab, spent, a, status


@njit(cache=True)
def rls_learn(w, P, Xd, indptr, indices, data, sparse, Y, variance, u, vmode, shrink, vfloor, vstate,
              strategy, budget, k, p, n_begin, t, spent, a, out_nlab, lam):
    """Rows in order; Y (n, ncols) labels a row. Returns (t, spent, a, bad, status): bad the first row
    whose round failed (−1: none; the rows before it are learned, it and the rest are not)."""
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
        yhat, nlab, spent, a, status = rls_round(w, P, Px, idx, val, nnz, Y[i], ncols, variance[i], ui, vmode,
                                                 shrink, vfloor, vstate, strategy, budget, k, p, n_begin, t,
                                                 spent, a, lam)
        if status != STATUS_OK:
            return t, spent, a, i, status
        out_nlab[i] = nlab
        t += 1
    return t, spent, a, -1, STATUS_OK


@njit(cache=True)
def rls_simulate(w, P, Xd, indptr, indices, data, sparse, y, order, v, z, kmax, u, vmode, shrink, vfloor,
                 vstate, strategy, budget, k, p, n_begin, t, spent, a, sqerr, out_nlab, lam):
    """Simulation loop under GaussianNoise (as ``ors_simulate``): label j = y + √v·z[s·kmax + j];
    sqerr[s] = (ŷ − y)². Returns (t, spent, a, bad, status) as `rls_learn` (bad: the round)."""
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
        gaussian_labels(lab, yi, v[s], z, s * kmax, kmax)
        us = u[s] if has_u else 0.0
        yhat, nlab, spent, a, status = rls_round(w, P, Px, idx, val, nnz, lab, kmax, v[s], us, vmode, shrink,
                                                 vfloor, vstate, strategy, budget, k, p, n_begin, t, spent, a,
                                                 lam)
        if status != STATUS_OK:
            return t, spent, a, s, status
        diff = yhat - yi
        sqerr[s] = diff * diff
        out_nlab[s] = nlab
        t += 1
    return t, spent, a, -1, STATUS_OK
