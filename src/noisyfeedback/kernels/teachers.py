"""Compiled loops of the teacher-constrained SVM (Dekel & Shamir) and its SGD heuristic.

Plain arrays and scalars in, no validation (the public classes in
``learners/teachers`` validate and own the state). Rows of X are read either from a
dense C-contiguous matrix ``Xd`` or from CSR arrays (``indptr``, ``indices``,
``data``); ``sparse`` picks which. Reference twins live in ``tests/reference.py``.

Dual variables are scaled to β_i = m·α_i ∈ [0, 1] (α of the paper's eq. (2)); the
weight vector is kept as w = (1/(λm))·Σ β_i y_i x_i, i.e. w = (1/λ)·Σ α_i y_i x_i.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def row_dot(i, Xd, indptr, indices, data, sparse, w):
    """⟨x_i, w⟩."""
    s = 0.0
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * w[indices[p]]
    else:
        for j in range(Xd.shape[1]):
            s += Xd[i, j] * w[j]
    return s


@njit(cache=True, inline="always")
def row_axpy(i, Xd, indptr, indices, data, sparse, coef, w):
    """w += coef · x_i."""
    if sparse:
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += coef * data[p]
    else:
        for j in range(Xd.shape[1]):
            w[j] += coef * Xd[i, j]


@njit(cache=True)
def penalty_state(Bt, B, m, inv_n, nu, rho, eps_t, h):
    """h_t = [ν_t + ρ_t·g_t]_+ with g_t = Bt_t/n_t − B/m − ε_t; returns (Σ h, Σ_{h_t>0} ρ_t)."""
    Bm = B / m
    H = 0.0
    R = 0.0
    for s in range(Bt.shape[0]):
        v = nu[s] + rho[s] * (Bt[s] * inv_n[s] - Bm - eps_t[s])
        if v > 0.0:
            h[s] = v
            H += v
            R += rho[s]
        else:
            h[s] = 0.0
    return H, R


@njit(cache=True)
def _active_sums(c, rho, b, act, st):
    """Recompute, for h_s = [c_s − ρ_s b]_+, the active set act_s = (b < c_s/ρ_s) and
    st = [Σ_act c, Σ_act ρ, lo = min_act c/ρ, hi = max_inact c/ρ, argmin, argmax]."""
    C = 0.0
    R = 0.0
    lo = np.inf
    hi = -np.inf
    ilo = -1
    ihi = -1
    for s in range(c.shape[0]):
        tau = c[s] / rho[s]
        if b < tau:
            act[s] = True
            C += c[s]
            R += rho[s]
            if tau < lo:
                lo = tau
                ilo = s
        else:
            act[s] = False
            if tau > hi:
                hi = tau
                ihi = s
    st[0] = C
    st[1] = R
    st[2] = lo
    st[3] = hi
    st[4] = ilo
    st[5] = ihi


@njit(cache=True)
def _shift_own(t, dc, c, rho, b, act, st):
    """c_t += dc (b already moved); keep ``st`` exact in O(1) unless a threshold is crossed."""
    c[t] += dc
    if act[t]:
        st[0] += dc
    if t == st[4] or t == st[5] or not (st[3] <= b < st[2]):
        _active_sums(c, rho, b, act, st)
        return
    tau = c[t] / rho[t]
    now = b < tau
    if now != act[t]:
        if now:
            st[0] += c[t]
            st[1] += rho[t]
        else:
            st[0] -= c[t]
            st[1] -= rho[t]
        act[t] = now
    if now:
        if tau < st[2]:
            st[2] = tau
            st[4] = t
    elif tau > st[3]:
        st[3] = tau
        st[5] = t


@njit(cache=True)
def dcd_epoch(active, n_active, pg_max_old, pg_min_old, Xd, indptr, indices, data, sparse,
              y, tid, qd, inv_lm, beta, w, Bt, Bsum, inv_n, nu, rho, eps_t, h, constrained, out):
    """One pass of exact dual coordinate ascent over ``active[:n_active]``, with shrinking.

    Maximises, coordinate by coordinate over β_i ∈ [0, 1], the augmented Lagrangian
    (times m) of the teacher-constrained SVM dual

        J(β) = Σ β_i − (1/(2λm))‖Σ β_i y_i x_i‖²
               − (m/2)·Σ_t ([ν_t + ρ_t g_t(β)]_+² − ν_t²)/ρ_t,
        g_t(β) = mean_{S_t} β − mean β − ε/√|S_t|      (the paper's eq. (3)).

    Along coordinate i (teacher t) the own-teacher penalty term is piecewise quadratic
    with one breakpoint and is maximised exactly; the other teachers' terms enter
    with their exact slope and curvature Σ_{active} ρ/m (they move by O(1/m)).
    With ``constrained`` false this is liblinear's L1-loss SVM dual coordinate
    descent (Hsieh et al. 2008), with the same shrinking rule: a coordinate at a
    bound whose gradient points outwards by more than last pass's largest
    violation (``pg_max_old``/``pg_min_old``, minimisation convention) is moved
    behind ``n_active`` (``active`` is permuted in place).

    ``Bsum`` is a length-1 array holding Σ β; ``h`` receives [ν + ρ g]_+ at the end.
    ``out`` (length 2) receives the largest and smallest projected gradient seen
    (minimisation convention); returns the new number of active coordinates.
    """
    m = y.shape[0]
    T = Bt.shape[0]
    B = Bsum[0]
    inv_m = 1.0 / m
    # h_s = [c_s − ρ_s b]_+ with c_s = ν_s + ρ_s (Bt_s/n_s − ε_s) and b = B/m, kept in O(1)
    c = np.empty(T)
    act = np.zeros(T, dtype=np.bool_)
    st = np.zeros(6)
    if constrained:
        for q in range(T):
            c[q] = nu[q] + rho[q] * (Bt[q] * inv_n[q] - eps_t[q])
        _active_sums(c, rho, B * inv_m, act, st)
    n_upd = 0
    pg_max = -np.inf
    pg_min = np.inf
    s = 0
    while s < n_active:
        i = active[s]
        yi = y[i]
        z = yi * row_dot(i, Xd, indptr, indices, data, sparse, w)
        b_old = beta[i]
        t = 0
        a = 0.0
        v = 0.0
        G0 = 0.0
        if constrained:
            t = tid[i]
            a = inv_n[t] - inv_m
            b = B * inv_m
            v = c[t] - rho[t] * b
            h_own = v if v > 0.0 else 0.0
            H = st[0] - b * st[1]
            G0 = 1.0 - z + (H - h_own)
            r_oth = st[1] - (rho[t] if act[t] else 0.0)
            qt = qd[i] + r_oth * inv_m
            G = -(G0 - m * a * h_own)
        else:
            G = z - 1.0
            qt = qd[i]
        # projected gradient (minimisation convention, G = -dJ/dβ_i) and shrinking
        pg = 0.0
        if b_old <= 0.0:
            if G > pg_max_old:
                n_active -= 1
                active[s] = active[n_active]
                active[n_active] = i
                continue
            elif G < 0.0:
                pg = G
        elif b_old >= 1.0:
            if G < pg_min_old:
                n_active -= 1
                active[s] = active[n_active]
                active[n_active] = i
                continue
            elif G > 0.0:
                pg = G
        else:
            pg = G
        if pg > pg_max:
            pg_max = pg
        if pg < pg_min:
            pg_min = pg
        s += 1
        if abs(pg) <= 1e-12:
            continue
        # exact 1-D maximiser of J along β_i, then clipped to [0, 1]
        if constrained:
            # J'(β_i + d) = G0 − qt d − m a [v + ρ a d]_+
            if qt > 0.0:
                d = G0 / qt
            else:
                d = 1e300 if G0 > 0.0 else -1e300
            if v + rho[t] * a * d > 0.0:
                den = qt + m * rho[t] * a * a
                if den > 0.0:
                    d = (G0 - m * a * v) / den
                else:
                    d = 1e300 if G0 - m * a * v > 0.0 else -1e300
        else:
            if qt > 0.0:
                d = -G / qt
            else:
                d = 1e300 if G < 0.0 else -1e300
        b_new = b_old + d
        if b_new < 0.0:
            b_new = 0.0
        elif b_new > 1.0:
            b_new = 1.0
        d = b_new - b_old
        if d == 0.0:
            continue
        beta[i] = b_new
        row_axpy(i, Xd, indptr, indices, data, sparse, d * yi * inv_lm, w)
        B += d
        if constrained:
            Bt[t] += d
            n_upd += 1
            if n_upd % 4096 == 0:  # bound the rounding drift of the running sums
                for q in range(T):
                    c[q] = nu[q] + rho[q] * (Bt[q] * inv_n[q] - eps_t[q])
                _active_sums(c, rho, B * inv_m, act, st)
            else:
                _shift_own(t, rho[t] * d * inv_n[t], c, rho, B * inv_m, act, st)
    Bsum[0] = B
    if constrained:
        penalty_state(Bt, B, m, inv_n, nu, rho, eps_t, h)
    out[0] = pg_max
    out[1] = pg_min
    return n_active


@njit(cache=True)
def teacher_sgd_steps(picks, step0, Xd, indptr, indices, data, sparse, y, tid, lam,
                      inv_n, slack_t, r, Rt, Rsum, u, constrained):
    """Pegasos steps with the teacher cap of Dekel & Shamir's Section 6.

    Step t (1-based, t = step0 + k + 1) draws row i = picks[k]. The iterate is
    w_t = u/(λ(t−1)) (w_1 = 0), u = Σ_j r_j y_j x_j, so that the dual-scaled
    coefficients are α_j = r_j/t after step t (w = (1/λ)Σ α_j y_j x_j). If
    y_i⟨w_t, x_i⟩ < 1 the Pegasos step adds δ = 1 to r_i — capped, when
    ``constrained``, to the largest δ ∈ [0, 1] keeping teacher τ = t(i)'s constraint

        (1/|S_τ|) Σ_{S_τ} α − (1/m) Σ α ≤ ε/(m√|S_τ|)      (``slack_t[τ]``)

    (only the own teacher's constraint can tighten; the regularisation shrink
    α ← (1 − 1/t)α only loosens all of them). ``Rsum`` is a length-1 array with
    Σ r. Returns the number of capped steps.
    """
    m = y.shape[0]
    inv_m = 1.0 / m
    R = Rsum[0]
    n_capped = 0
    for k in range(picks.shape[0]):
        t = step0 + k + 1
        i = picks[k]
        if t > 1:
            z = y[i] * row_dot(i, Xd, indptr, indices, data, sparse, u) / (lam * (t - 1))
        else:
            z = 0.0
        if z >= 1.0:
            continue
        d = 1.0
        tau = tid[i]
        if constrained:
            a = inv_n[tau] - inv_m
            if a > 0.0:
                cap = (t * slack_t[tau] - (Rt[tau] * inv_n[tau] - R * inv_m)) / a
                if cap < d:
                    n_capped += 1
                    d = cap if cap > 0.0 else 0.0
        if d <= 0.0:
            continue
        r[i] += d
        Rt[tau] += d
        R += d
        row_axpy(i, Xd, indptr, indices, data, sparse, d * y[i], u)
    Rsum[0] = R
    return n_capped


@njit(cache=True)
def block_order(active, n, block, block_perm, mark, tmp):
    """Rewrite active[:n] as its sorted indices cut into runs of ``block`` consecutive
    entries, the runs visited in the order ``block_perm`` (a permutation of the
    ⌈n/block⌉ runs). ``mark`` (bool, length m) must be all False and is left so;
    ``tmp`` is scratch of length >= n."""
    m = mark.shape[0]
    if n * 16 > m:  # counting sort: O(m)
        for k in range(n):
            mark[active[k]] = True
        j = 0
        for i in range(m):
            if mark[i]:
                tmp[j] = i
                j += 1
                mark[i] = False
    else:
        srt = np.sort(active[:n])
        for k in range(n):
            tmp[k] = srt[k]
    pos = 0
    for r in range(block_perm.shape[0]):
        start = block_perm[r] * block
        stop = min(start + block, n)
        for k in range(start, stop):
            active[pos] = tmp[k]
            pos += 1


@njit(cache=True)
def signed_margins(Xd, indptr, indices, data, sparse, w, y, out):
    """out_i = y_i ⟨x_i, w⟩."""
    for i in range(y.shape[0]):
        out[i] = y[i] * row_dot(i, Xd, indptr, indices, data, sparse, w)


@njit(cache=True, parallel=True)
def signed_margins_parallel(Xd, indptr, indices, data, sparse, w, y, out):
    """out_i = y_i ⟨x_i, w⟩, rows in parallel (worth it only for large X: thread start-up)."""
    for i in prange(y.shape[0]):
        out[i] = y[i] * row_dot(i, Xd, indptr, indices, data, sparse, w)


@njit(cache=True)
def row_sq_norms(Xd, indptr, indices, data, sparse, out):
    """out_i = ‖x_i‖²."""
    for i in range(out.shape[0]):
        acc = 0.0
        if sparse:
            for p in range(indptr[i], indptr[i + 1]):
                acc += data[p] * data[p]
        else:
            for j in range(Xd.shape[1]):
                acc += Xd[i, j] * Xd[i, j]
        out[i] = acc


@njit(cache=True)
def certificate_terms(z, beta, tid, shift, Bt):
    """Σ_i [1 − shift_{t(i)} − z_i]_+ and Bt_t = Σ_{S_t} β (written into ``Bt``), one pass.

    ``shift`` holds k_t ν_t − Σ ν per teacher; a ``tid`` shorter than z means a
    single teacher 0 (the plain SVM: shift = [0])."""
    for t in range(Bt.shape[0]):
        Bt[t] = 0.0
    hinge = 0.0
    one = tid.shape[0] < z.shape[0]
    for i in range(z.shape[0]):
        t = 0 if one else tid[i]
        v = 1.0 - shift[t] - z[i]
        if v > 0.0:
            hinge += v
        Bt[t] += beta[i]
    return hinge
