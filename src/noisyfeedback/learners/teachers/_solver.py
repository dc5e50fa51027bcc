"""Solver of the (teacher-constrained) linear SVM: dual coordinate ascent with the method of
multipliers, finished by an interior-point method on a working set; certified by the duality gap.

Problem (Dekel & Shamir 2009, eq. (4); docs/algorithms.md §4.12), with m examples, teacher t(i),
S_t the examples of teacher t, n_t = |S_t|, k_t = m/n_t, ε_t = ε/√n_t:

    P(w, ν) = λ/2‖w‖² + Σ_t ε_t ν_t + (1/m) Σ_i [c_i(ν) − y_i⟨x_i, w⟩]_+ ,   ν ≥ 0,
    c_i(ν)  = 1 − k_{t(i)} ν_{t(i)} + Σ_t ν_t .

Dual (write [z]_+ = max_{0≤β≤1} βz and minimise the Lagrangian over w and ν; the
problem is a convex QP, so strong duality holds): with β_i = m α_i ∈ [0, 1],

    D(β) = (1/m) Σ β_i − λ/2‖w(β)‖²,   w(β) = (1/(λm)) Σ β_i y_i x_i,
    s.t.  g_t(β) = mean_{S_t} β − mean β ≤ ε_t   for every teacher t,

the paper's eq. (2) plus its constraint (3); ν_t is the multiplier of constraint t.
ν = 0 (every constraint inactive) is the plain SVM.

Method, in two phases that hand the iterate (β, ν) back and forth:

1. Dual coordinate ascent (liblinear's L1-loss solver, Hsieh et al. 2008: O(nnz)
   per pass, closed-form steps, shrinking; ``kernels.teachers.dcd_epoch``) on the
   augmented Lagrangian of the T coupling constraints (the method of multipliers:
   ν ← [ν + ρ g(β)]_+ after every pass). Cheap per pass and fast on large sparse
   data, but its tail is slow where the dual is ill-conditioned (dense,
   low-dimensional data, small λ: thousands of passes for 1e-6).
2. An exact finish (``_refine``): the variables that coordinate ascent left at a
   bound with a clearly non-zero margin residual are fixed there; the dual QP in
   the remaining ones (the free support vectors, the bounded ones near their
   margin and all KKT violators: a working set W) and the T constraints is solved
   by a primal–dual interior-point method (Mehrotra predictor–corrector on
   min ½xᵀKx − pᵀx, Ax ≤ b, 0 ≤ x ≤ 1, K = Z_W Z_Wᵀ/(λm); ~20 Newton steps,
   each one Cholesky factorisation of a |W|×|W| matrix) which returns β_W and ν.
   If the certificate is not yet small enough, the violators outside W are added
   and W is solved again (a decomposition method with an exact subproblem solver:
   every round solves the problem restricted to W exactly, so it terminates
   once W holds the support of the optimum). The IPM converges in a number of
   iterations nearly independent of conditioning — exactly where phase 1 is slow.
   Phase 2 is tried when the work spent in phase 1 since the last try exceeds
   its estimated cost (so neither phase can cost much more than the better
   one), with |W| ≤ ``ws_max``; otherwise (|W| large: big sparse problems, where
   coordinate ascent converges quickly anyway) phase 1 runs on.

Certificate: at every check the exact primal value P(w(β), ν) (an upper bound on
the optimum for any ν ≥ 0) and the dual value of a feasible point s·β, with
s ∈ [0, 1] the largest scaling that satisfies every teacher constraint (β = 0 is
strictly feasible, so scaling towards it restores feasibility) and that maximises
D along the ray (a lower bound). The solver stops when P − D ≤ tol·|P|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ...kernels.teachers import block_order, certificate_terms, dcd_epoch, signed_margins, signed_margins_parallel
from ...kernels.teachers import row_sq_norms as _row_sq_norms
from .._linear import kernel_view

__all__ = ["SolverResult", "solve", "primal_value", "qp_ipm", "kernel_view", "row_sq_norms"]

def row_sq_norms(X) -> np.ndarray:
    out = np.empty(X.shape[0])
    _row_sq_norms(*kernel_view(X), out)
    return out


@dataclass
class SolverResult:
    w: np.ndarray
    beta: np.ndarray
    nu: np.ndarray
    primal: float
    dual: float
    n_iter: int
    converged: bool
    n_refine: int = 0


def primal_value(X, y, w, lam, tid=None, sizes=None, eps=None, nu=None) -> float:
    """P(w, ν) (the plain SVM objective F(w) of eq. (1) when ``tid`` is None)."""
    m = y.shape[0]
    z = y * (X @ w)
    val = 0.5 * lam * float(w @ w)
    if tid is None:
        c = 1.0
    else:
        k = m / sizes
        c = 1.0 - (k * nu)[tid] + nu.sum()
        val += float(np.sum(eps / np.sqrt(sizes) * nu))
    return val + float(np.maximum(c - z, 0.0).sum()) / m


def solve(X, y, lam, *, tid=None, sizes=None, eps=None, tol=1e-6, max_iter=1000,
          rng=None, check_every=5, theta=0.1, block=16, ws_max=2500, unshrink_factor=30.0) -> SolverResult:
    """Minimise P (``tid`` given) or the plain SVM objective F (``tid`` None) to a relative gap ``tol``.

    X: validated dense or CSR float64 (m, d); y: float64 ±1; tid: int64 teacher of
    each row in 0..T−1, every teacher non-empty (``sizes`` = counts, float64).
    ``max_iter`` bounds the passes over the (shrunk) active set; ``check_every``:
    the gap is evaluated after every pass over all rows and after every
    ``check_every``·m coordinate visits. ``theta`` scales the penalty ρ_t so that its
    curvature along one coordinate of teacher t is θ·mean_i ‖x_i‖²/(λm).
    ``ws_max``: largest working set of the interior-point finish (phase 2).
    ``unshrink_factor``: see the multiplier update below.
    """
    m, d = X.shape
    view = kernel_view(X)
    constrained = tid is not None
    qd = row_sq_norms(X) / (lam * m)
    inv_lm = 1.0 / (lam * m)
    beta = np.zeros(m)
    w = np.zeros(d)
    Bsum = np.zeros(1)
    if constrained:
        T = sizes.shape[0]
        tid_k = tid
        inv_n = 1.0 / sizes
        eps_t = eps / np.sqrt(sizes)
        k_t = m / sizes
        a = inv_n - 1.0 / m
        qbar = float(qd.mean()) if qd.mean() > 0 else inv_lm
        with np.errstate(divide="ignore"):
            rho = np.where(a > 0, theta * qbar / (m * np.where(a > 0, a, 1.0) ** 2), theta * qbar)
    else:
        T = 1
        tid_k = np.zeros(1, np.int64)
        inv_n = eps_t = rho = np.zeros(1)
    Bt = np.zeros(T)
    nu = np.zeros(T)
    h = np.zeros(T)
    out = np.zeros(2)
    if rng is None:
        rng = np.random.default_rng(0)

    active = np.arange(m, dtype=np.int64)
    mark = np.zeros(m, dtype=np.bool_)
    tmp = np.empty(m, dtype=np.int64)
    z = np.empty(m)
    nnz = X.nnz if sp.issparse(X) else X.size
    margins = signed_margins_parallel if nnz >= 2_000_000 else signed_margins
    # nanoseconds of one coordinate visit (measured; the cost model only balances the two
    # phases and must not depend on timings, which would break reproducibility)
    row_cost = 100.0 + (10.0 if sp.issparse(X) else 3.0) * nnz / m + 0.4 * T
    n_active = m
    pg_max_old, pg_min_old = math.inf, -math.inf
    eps_in = 0.1  # inner stopping threshold on the projected gradient (margin units)
    visits = 0
    work = 0.0  # estimated cost of phase 1 since the last phase-2 attempt
    backoff = 1.0
    shift_acc = 0.0
    primal = dual = math.nan
    converged = False
    n_iter = 0
    n_refine = 0

    def sync_sums():
        Bsum[0] = beta.sum()
        if constrained:
            Bt[:] = np.bincount(tid, weights=beta, minlength=T)
        else:
            Bt[0] = Bsum[0]

    def certificate(exact):
        """(P, D); ``exact`` first recomputes w = w(β) (removing the rounding drift of
        the incremental updates) so that the pair is a rigorous certificate."""
        nonlocal w
        if exact:
            w = np.asarray(X.T @ (beta * y), dtype=np.float64).ravel() * inv_lm
        margins(*view, w, y, z)
        reg = 0.5 * lam * float(w @ w)
        if constrained:
            nu[:] = normalize_nu(nu, sizes)
            shift = k_t * nu - nu.sum()
            hinge = certificate_terms(z, beta, tid, shift, Bt)
            B = float(Bt.sum())
            primal = reg + float(np.sum(eps_t * nu)) + hinge / m
            g = Bt / sizes - B / m
            over = g > eps_t
            s_max = min(1.0, float(np.min(eps_t[over] / g[over]))) if over.any() else 1.0
        else:
            hinge = certificate_terms(z, beta, tid_k, np.zeros(1), Bt)
            B = float(Bt[0])
            primal = reg + hinge / m
            s_max = 1.0
        Bsum[0] = B
        # dual value at the feasible point s·β, s maximising D(sβ) = s·B/m − s²·reg on [0, s_max]
        s1 = B / m
        sc = min(s_max, s1 / (2.0 * reg)) if reg > 0.0 else s_max
        sc = max(sc, 0.0)
        return primal, sc * s1 - sc * sc * reg

    while n_iter < max_iter:
        n_iter += 1
        _shuffle(active, n_active, block, rng, mark, tmp)
        n_seen = n_active
        n_active = dcd_epoch(active, n_active, pg_max_old, pg_min_old, *view, y, tid_k, qd,
                             inv_lm, beta, w, Bt, Bsum, inv_n, nu, rho, eps_t, h, constrained, out)
        visits += n_seen
        work += n_seen * row_cost
        pg_max, pg_min = float(out[0]), float(out[1])
        full = n_seen == m
        inner_done = pg_max - pg_min <= eps_in
        nu_moved = refined = False
        if constrained:
            # multiplier update ν ← [ν + ρ g(β)]_+ after every pass. It moves the margin
            # targets c_i(ν) of teacher t by k_t Δν_t − ΣΔν; once the accumulated move
            # exceeds unshrink_factor × the margin by which coordinates were shrunk, the
            # shrinking is stale: unshrink (without this, a small shrunk set and a
            # drifting ν can stall the iteration)
            dnu = h - nu
            shift_acc += float(np.max(np.abs(k_t * dnu - dnu.sum())))
            nu[:] = h
            nu_moved = shift_acc > unshrink_factor * min(pg_max_old, -pg_min_old)
        check = (full and inner_done) or visits >= check_every * m or n_iter == max_iter
        if check:
            visits = 0
            primal, dual = certificate(False)
            if primal - dual <= tol * abs(primal):
                primal, dual = certificate(True)
                if primal - dual <= tol * abs(primal):
                    converged = True
                    break
            # phase 2 once phase 1 has spent as much work as it would cost
            size = _working_set_size(beta, z, nu, tid, k_t if constrained else None)
            if size <= ws_max and work >= backoff * _ipm_cost(size, nnz / m, sp.issparse(X)):
                n_refine += 1
                old = (beta.copy(), nu.copy())
                gap_old = primal - dual
                p2, d2 = _refine(X, y, lam, beta, nu, z, tid, sizes, eps, primal, certificate, tol, ws_max,
                                 budget=2.0 * work, sparse=sp.issparse(X), row_nnz=nnz / m)
                work = 0.0
                if p2 - d2 <= tol * abs(p2):
                    primal, dual = p2, d2
                    converged = True
                    break
                if p2 - d2 < gap_old:
                    refined = True
                    primal, dual = p2, d2
                    backoff *= 2.0  # not finished: the next attempt must wait longer
                else:
                    beta[:], nu[:] = old
                    backoff *= 4.0
                    primal, dual = certificate(True)
                if constrained:  # the ALM multipliers continue from the (better) ν
                    h[:] = nu
                sync_sums()
        if inner_done or nu_moved or refined:
            if full and inner_done:
                eps_in *= 0.1
            n_active = m
            shift_acc = 0.0
            pg_max_old, pg_min_old = math.inf, -math.inf
        else:
            pg_max_old = pg_max if pg_max > 0 else math.inf
            pg_min_old = pg_min if pg_min < 0 else -math.inf
    if not converged:
        primal, dual = certificate(True)
    return SolverResult(w=w, beta=beta, nu=nu.copy() if constrained else np.zeros(0),
                        primal=primal, dual=dual, n_iter=n_iter, converged=converged, n_refine=n_refine)


def _shuffle(active, n, block, rng, mark, tmp):
    """Random visiting order of active[:n]: a random permutation (block <= 1), or the
    sorted indices cut into runs of ``block`` consecutive entries visited in random
    run order (rows close in memory stay together: ~3x fewer cache misses on CSR)."""
    if block <= 1 or n <= block:
        rng.shuffle(active[:n])
        return
    block_order(active, n, block, rng.permutation(-(-n // block)), mark, tmp)


# ------------------------------------------------------------ phase 2
def _residuals(beta, z, nu, tid, k_t):
    """Signed KKT violation of every dual variable at margins z = y·Xw and multipliers ν.

    r_i = z_i − c_i(ν) (the margin beyond the target); optimality asks r ≥ 0 at β = 0,
    r ≤ 0 at β = 1, r = 0 in between. Returns v with v_i = −r_i (β_i = 0), r_i (β_i = 1),
    +inf (0 < β_i < 1): v > 0 is a violation, v close to 0 a variable near its margin."""
    if tid is None:
        r = z - 1.0
    else:
        r = z - (1.0 - (k_t * nu)[tid] + nu.sum())
    v = np.where(beta <= 0.0, -r, r)
    v[(beta > 0.0) & (beta < 1.0)] = np.inf
    return v


def _working_set_size(beta, z, nu, tid, k_t) -> int:
    v = _residuals(beta, z, nu, tid, k_t)
    n_must = int(np.count_nonzero(v > 0.0))
    return min(n_must + max(64, n_must // 2), beta.shape[0])


def _ipm_cost(n: int, row_nnz: float, sparse: bool) -> float:
    """Estimated nanoseconds of one phase-2 round on a working set of n: the kernel
    matrix and ~25 Newton steps (a Cholesky factorisation each) at ~20 GFlop/s."""
    kernel = n * n * row_nnz * (0.5 if sparse else 0.05)
    return kernel + 0.05 * 25.0 * (n ** 3 / 3.0 + 6.0 * n * n)


def _refine(X, y, lam, beta, nu, z, tid, sizes, eps, p_now, certificate, tol, ws_max, budget=math.inf,
            sparse=False, row_nnz=0.0, rounds=6):
    """Phase 2: solve the dual QP on a working set exactly (``qp_ipm``), enlarge, repeat.

    Updates ``beta`` and ``nu`` in place with the best certified iterate found and
    returns its (P, D). ``z`` holds y·Xw(β) on entry (it is overwritten). A round
    whose working set would cost more than what is left of ``budget`` (ns, see
    ``_ipm_cost``; the first round is always made) is not made: the many violators
    it would add mean phase 1 has not yet found the support, and phase 1 goes on
    from the improved iterate."""
    m = y.shape[0]
    constrained = tid is not None
    k_t = m / sizes if constrained else None
    best = None
    extra = None
    prev_W = np.zeros(0, np.int64)
    for _ in range(rounds):
        v = _residuals(beta, z, nu, tid, k_t)
        must = np.flatnonzero(v > 0.0)  # free variables and KKT violators
        n_extra = max(64, must.shape[0] // 2) if extra is None else extra
        rest = np.flatnonzero(v <= 0.0)
        near = rest[np.argsort(-v[rest], kind="stable")[:n_extra]]  # closest to their margin
        W = np.union1d(np.union1d(must, near), prev_W)
        if W.shape[0] > ws_max:
            break
        if W.shape[0] == prev_W.shape[0] and best is not None:
            break  # nothing new to add: the restricted optimum is all this phase can give
        cost = _ipm_cost(W.shape[0], row_nnz, sparse)
        if best is not None and cost > budget:
            break
        budget -= cost
        gap_abs = 1e-4 * tol * m * abs(best[0] if best is not None else p_now)
        beta[W], nu_new = _solve_restricted(X, y, lam, beta, W, tid, sizes, eps, gap_abs)
        if constrained:
            nu[:] = nu_new
        p, dv = certificate(True)  # also refreshes z = y·Xw(β)
        if best is None or p - dv < best[0] - best[1]:
            best = (p, dv, beta.copy(), nu.copy())
        if p - dv <= tol * abs(p):
            break
        prev_W = W
        extra = 2 * n_extra
    if best is None:
        return math.inf, -math.inf
    p, dv, b_best, nu_best = best
    beta[:] = b_best
    nu[:] = nu_best
    return certificate(True)


def _solve_restricted(X, y, lam, beta, W, tid, sizes, eps, gap_abs):
    """The dual QP in β_W with every other β held fixed: (β_W, ν) or None.

    −m·D(β) = ½ β_Wᵀ K β_W − pᵀ β_W + const with K = Z_W Z_Wᵀ/(λm) (Z: rows y_i x_i),
    p_i = 1 − y_i⟨x_i, w_fixed⟩; the teacher constraints A β_W ≤ b with
    A_{ti} = 1[t(i) = t]/n_t − 1/m and b_t = ε_t − B̄_t/n_t + B̄/m (B̄: sums of the fixed β).
    The multipliers of m·D are m·ν. Where the current β violates a constraint (the
    multiplier method's iterate is feasible only in the limit), the fixed part may
    leave no feasible β_W: that row gets an elastic variable e_t ∈ [0, 1] (row
    A_t β_W − V_t e_t ≤ b_t, V_t the current violation) at the cost C_t·V_t·e_t, with
    C_t = 2m√n_t/ε twice the largest possible multiplier (Σ_t ε_t ν_t ≤ P(0, 0) = 1 bounds
    m·ν_t by m√n_t/ε), so that e_t = 0 whenever the restricted problem is feasible; a
    remaining e_t > 0 leaves β slightly infeasible, which the certificate's scaling
    accounts for (and the next round enlarges W)."""
    m = y.shape[0]
    nW = W.shape[0]
    fixed = beta.copy()
    fixed[W] = 0.0
    w_fixed = np.asarray(X.T @ (fixed * y), dtype=np.float64).ravel() / (lam * m)
    XW = X[W]
    ZW = (sp.diags(y[W]) @ XW).tocsr() if sp.issparse(XW) else XW * y[W, None]
    K = ZW @ ZW.T
    K = (K.toarray() if sp.issparse(K) else np.asarray(K)) / (lam * m)
    p = 1.0 - np.asarray(ZW @ w_fixed).ravel()
    rd_tol = gap_abs / (10.0 * nW)
    if tid is None:
        rows = _DenseRows(np.zeros((0, nW)))
        b = np.zeros(0)
    else:
        T = sizes.shape[0]
        Bt_fixed = np.bincount(tid, weights=fixed, minlength=T)
        rows = _TeacherRows(tid[W], sizes, m)
        b = eps / np.sqrt(sizes) - Bt_fixed / sizes + fixed.sum() / m
        viol = rows.matvec(beta[W]) - b
        elastic = np.flatnonzero(viol > 0.0)
        if elastic.shape[0]:
            V = viol[elastic]
            rows = _TeacherRows(tid[W], sizes, m, elastic, V)
            ne = elastic.shape[0]
            K2 = np.zeros((nW + ne, nW + ne))
            K2[:nW, :nW] = K
            K = K2
            p = np.concatenate([p, -2.0 * m * np.sqrt(sizes[elastic]) / eps * V])
    x, mu, _ = qp_ipm(K, p, rows, b, gap_tol=gap_abs, rd_tol=rd_tol)
    # an interior point never lands on a bound: snap what is numerically there (the
    # certificate, computed afterwards from scratch, judges the result)
    x = x[:nW]
    x[x < 1e-10] = 0.0
    x[x > 1.0 - 1e-10] = 1.0
    nu = mu / m
    if tid is not None:
        nu = normalize_nu(nu, sizes)
        nu[nu * eps / np.sqrt(sizes) < 1e-12] = 0.0  # contributes < 1e-12 to P
    return x, nu


def normalize_nu(nu, sizes):
    """ν − c·n with c = min_t ν_t/n_t: the best point on the line ν + c·n.

    Moving ν along n = (|S_t|)_t leaves every margin target c_i(ν) unchanged
    (k_t n_t = m, so k_t Δν_t − ΣΔν = 0) and changes P by c·ε·Σ_t √|S_t|: the
    constraint rows are linearly dependent (Σ_t n_t g_t(β) = 0 for every β), so the
    multipliers are pinned in that direction only by this linear cost, which an
    interior-point or multiplier method approaches slowly. Lowering ν to the first
    ν_t = 0 is exact and only decreases P."""
    c = float(np.min(nu / sizes))
    return np.maximum(nu - c * sizes, 0.0) if c > 0.0 else nu


class _DenseRows:
    """The constraint matrix A of ``qp_ipm`` given densely."""

    def __init__(self, A):
        self.A = np.asarray(A, dtype=np.float64)
        self.shape = self.A.shape

    def matvec(self, x):
        return self.A @ x

    def rmatvec(self, v):
        return self.A.T @ v

    def gram(self, sig):
        """Aᵀ diag(σ) A."""
        return (self.A.T * sig) @ self.A


class _TeacherRows:
    """A_{ti} = 1[t(i) = t]/n_t − 1/m over the working set (columns i), plus elastic
    columns −V_e at rows ``elastic``; products and Aᵀdiag(σ)A in O(n²), not O(n²T)."""

    def __init__(self, tw, sizes, m, elastic=None, V=None):
        self.tw, self.inv_n, self.m = tw, 1.0 / sizes, float(m)
        self.T = sizes.shape[0]
        self.n = tw.shape[0]
        self.el = np.zeros(0, np.int64) if elastic is None else elastic
        self.V = np.zeros(0) if V is None else V
        self.shape = (self.T, self.n + self.el.shape[0])

    def matvec(self, x):
        xm = x[: self.n]
        out = np.bincount(self.tw, weights=xm, minlength=self.T) * self.inv_n - xm.sum() / self.m
        if self.el.shape[0]:
            out[self.el] -= self.V * x[self.n:]
        return out

    def rmatvec(self, v):
        main = v[self.tw] * self.inv_n[self.tw] - v.sum() / self.m
        return np.concatenate([main, -self.V * v[self.el]]) if self.el.shape[0] else main

    def gram(self, sig):
        n, ne = self.n, self.el.shape[0]
        u = (sig * self.inv_n)[self.tw] / self.m
        G = np.full((n + ne, n + ne), 0.0)
        Gm = G[:n, :n]
        Gm += float(sig.sum()) / self.m ** 2
        Gm -= u[:, None]
        Gm -= u[None, :]
        same = self.tw[:, None] == self.tw[None, :]
        Gm += same * (sig * self.inv_n ** 2)[self.tw][:, None]
        if ne:
            se = sig[self.el] * self.V
            # column i, elastic e: −σ_e V_e A_{el_e, i}
            A_e = (self.tw[:, None] == self.el[None, :]) * self.inv_n[self.el][None, :] - 1.0 / self.m
            G[:n, n:] = -A_e * se[None, :]
            G[n:, :n] = G[:n, n:].T
            G[n:, n:] = np.diag(sig[self.el] * self.V ** 2)
        return G


def qp_ipm(K, p, A, b, gap_tol=1e-10, rd_tol=1e-10, max_iter=80):
    """min ½xᵀKx − pᵀx  s.t.  A x ≤ b, 0 ≤ x ≤ 1, by a primal–dual interior-point method.

    Mehrotra's predictor–corrector (Nocedal & Wright 2006, §16.6) with slacks s = b − Ax
    and multipliers ν ≥ 0 (of Ax ≤ b), z_l, z_u ≥ 0 (of the bounds); each step solves
    (K + diag(z_l/x + z_u/(1−x)) + Aᵀ diag(ν/s) A) Δx = r by Cholesky. K must be
    positive semidefinite; A is a dense array or an object with ``matvec``,
    ``rmatvec``, ``gram(σ)`` (= Aᵀdiag(σ)A) and ``shape``. Stops when the
    complementarity gap xᵀz_l + (1−x)ᵀz_u + sᵀν (= the QP's duality gap once the
    residuals vanish) is below ``gap_tol`` and the dual residual below ``rd_tol``.
    Returns (x, ν, ok); ok is False if that did not happen in ``max_iter`` steps or
    the factorisation broke down (x, ν are then the iterate closest to those targets).
    """
    if not hasattr(A, "gram"):
        A = _DenseRows(A)
    n = p.shape[0]
    T = b.shape[0]
    x = np.full(n, 0.5)
    s = np.maximum(b - A.matvec(x), 1.0)
    nu = np.ones(T)
    g = K @ x - p + A.rmatvec(nu)
    zl = np.maximum(g, 0.0) + 1.0
    zu = np.maximum(-g, 0.0) + 1.0
    rp_tol = 1e-12 * (1.0 + float(np.abs(b).max(initial=0.0)))
    # the dual residual cannot fall below the rounding of K x − p
    rd_tol = max(rd_tol, 1e-13 * (1.0 + float(np.abs(p).max(initial=0.0))
                                  + float(np.abs(K).sum(axis=1).max(initial=0.0))))
    nc = 2 * n + T
    di = np.diag_indices(n)
    best = (math.inf, x, nu)
    for _ in range(max_iter):
        xu = 1.0 - x
        rd = K @ x - p + A.rmatvec(nu) - zl + zu
        rp = A.matvec(x) + s - b
        comp = x @ zl + xu @ zu + s @ nu
        merit = max(comp / gap_tol, np.abs(rd).max(initial=0.0) / rd_tol, np.abs(rp).max(initial=0.0) / rp_tol)
        if merit <= 1.0:
            return x, nu, True
        if merit < best[0]:
            best = (merit, x, nu)
        mu = comp / nc
        M = K + A.gram(nu / s) if T else K.copy()
        M[di] += zl / x + zu / xu
        # near the end the barrier terms span many orders of magnitude and M can lose
        # definiteness in floating point: regularise the diagonal, increasingly
        cf = None
        top = float(np.abs(np.diag(M)).max())
        for reg in (0.0, 1e-14, 1e-12, 1e-10):
            if reg:
                M[di] += reg * top
            try:
                cf = scipy.linalg.cho_factor(M, check_finite=False)
                break
            except np.linalg.LinAlgError:
                continue
        if cf is None:
            return best[1], best[2], False

        def newton(r_l, r_u, r_s):
            rhs = -rd - A.rmatvec((r_s + nu * rp) / s) + r_l / x - r_u / xu
            dx = scipy.linalg.cho_solve(cf, rhs, check_finite=False)
            ds = -rp - A.matvec(dx)
            return dx, ds, (r_l - zl * dx) / x, (r_u + zu * dx) / xu, (r_s - nu * ds) / s

        def max_step(dx, ds, dzl, dzu, dnu):
            step = 1.0
            for val, dv in ((x, dx), (xu, -dx), (s, ds), (zl, dzl), (zu, dzu), (nu, dnu)):
                neg = dv < 0.0
                if neg.any():
                    step = min(step, float(np.min(-val[neg] / dv[neg])))
            return step

        aff = newton(-x * zl, -xu * zu, -s * nu)
        dx, ds, dzl, dzu, dnu = aff
        a = max_step(*aff)
        mu_aff = ((x + a * dx) @ (zl + a * dzl) + (xu - a * dx) @ (zu + a * dzu)
                  + (s + a * ds) @ (nu + a * dnu)) / nc
        sm = (mu_aff / mu) ** 3 * mu
        dx, ds, dzl, dzu, dnu = newton(sm - x * zl - aff[0] * aff[2], sm - xu * zu + aff[0] * aff[3],
                                       sm - s * nu - aff[1] * aff[4])
        if not (np.all(np.isfinite(dx)) and np.all(np.isfinite(dnu))):
            return best[1], best[2], False
        a = min(1.0, 0.995 * max_step(dx, ds, dzl, dzu, dnu))
        x_new = x + a * dx
        s_new = s + a * ds
        if not (x_new.min(initial=1.0) > 0.0 and x_new.max(initial=0.0) < 1.0 and s_new.min(initial=1.0) > 0.0):
            return best[1], best[2], False  # rounding put an iterate on the boundary
        x, s = x_new, s_new
        zl = np.maximum(zl + a * dzl, 1e-300)
        zu = np.maximum(zu + a * dzu, 1e-300)
        nu = np.maximum(nu + a * dnu, 1e-300)
    return best[1], best[2], False
