"""Solver of the (teacher-constrained) linear SVM: dual coordinate ascent + method of multipliers.

Problem (Dekel & Shamir 2009, eq. (4); SPEC §4.12), with m examples, teacher t(i),
S_t the examples of teacher t, k_t = m/|S_t|, ε_t = ε/√|S_t|:

    P(w, ν) = λ/2‖w‖² + Σ_t ε_t ν_t + (1/m) Σ_i [c_i(ν) − y_i⟨x_i, w⟩]_+ ,   ν ≥ 0,
    c_i(ν)  = 1 − k_{t(i)} ν_{t(i)} + Σ_t ν_t .

Dual (derived by writing [z]_+ = max_{0≤β≤1} βz, minimising the Lagrangian over w
and ν; Sion's theorem gives strong duality): with β_i = m α_i ∈ [0, 1],

    D(β) = (1/m) Σ β_i − λ/2‖w(β)‖²,   w(β) = (1/(λm)) Σ β_i y_i x_i,
    s.t.  g_t(β) = mean_{S_t} β − mean β − ε_t ≤ 0   for every teacher t,

i.e. the paper's eq. (2) plus its constraint (3) — ν_t is exactly the Lagrange
multiplier of constraint t. ν = 0 (all constraints inactive) is the plain SVM.

Method: the method of multipliers on the T coupling constraints, each inner
problem (an SVM dual with per-example margin targets c_i(ν) and a smooth penalty)
maximised by liblinear-style dual coordinate ascent with shrinking
(``kernels.teachers.dcd_epoch``), ν ← [ν + ρ g(β)]_+ after every pass. Shrinking
assumes fixed margin targets; ν moves them, so the active set is reset once the
accumulated move exceeds 30× the shrinking margin (otherwise a small shrunk set
and a drifting ν can stall). A pass
costs O(nnz(X)) (the T penalty terms are kept exact in O(1) amortised per
update); the T multipliers are updated in closed form. Rows are visited in random
order of runs of 16 consecutive active rows (cache-friendly, ~3x faster on CSR).
Polishing: when the free variables and the active teachers are unchanged between
two checks (and there are at most ``polish_max`` free variables), the linear KKT
system of the equality-constrained QP they define is solved directly; the result
is kept only if its certified gap is smaller.

Certificate: every ``check`` the exact primal value P(w(β), ν) (an upper bound on
the optimum for any ν ≥ 0) and the dual value of a feasible point s·β, with
s ∈ [0, 1] the largest scaling that satisfies every teacher constraint (β = 0 is
strictly feasible, so scaling towards it restores feasibility) and that maximises
D along the ray (a lower bound). The solver stops when P − D ≤ tol·|P|.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...kernels.teachers import block_order, certificate_terms, dcd_epoch, row_sq_norms as _row_sq_norms, signed_margins, signed_margins_parallel

_EMPTY_F = np.zeros((0, 0))
_EMPTY_I = np.zeros(1, np.int64)
_EMPTY_D = np.zeros(0)


def kernel_view(X) -> tuple:
    """(Xd, indptr, indices, data, sparse) for the kernels from a validated dense or CSR X."""
    if sp.issparse(X):
        return _EMPTY_F, X.indptr, X.indices, X.data, True
    return X, _EMPTY_I, _EMPTY_I, _EMPTY_D, False


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
          rng=None, check_every=5, theta=0.1, block=16, polish_max=1500, unshrink_factor=30.0) -> SolverResult:
    """Minimise P (``tid`` given) or the plain SVM objective F (``tid`` None) to a relative gap ``tol``.

    X: validated dense or CSR float64 (m, d); y: float64 ±1; tid: int64 teacher of
    each row in 0..T−1, every teacher non-empty (``sizes`` = counts, float64).
    ``max_iter`` bounds the passes over the (shrunk) active set; ``check_every``:
    the gap is evaluated after every pass over all rows and after every
    ``check_every``·m coordinate visits. ``theta`` scales the penalty ρ_t so that its
    curvature along one coordinate of teacher t is θ·mean_i ‖x_i‖²/(λm).
    ``polish_max``: largest number of free dual variables for which a polishing
    step (``_polish``) is tried once the active sets have settled.
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
    n_active = m
    pg_max_old, pg_min_old = math.inf, -math.inf
    eps_in = 0.1  # inner stopping threshold on the projected gradient (margin units)
    visits = 0
    shift_acc = 0.0
    primal = dual = math.nan
    converged = False
    n_iter = 0

    last_sig = None
    tried_sig = None
    n_checks = n_failed = next_polish = 0

    def certificate(exact):
        """(P, D); ``exact`` first recomputes w = w(β) (removing the rounding drift of
        the incremental updates) so that the pair is a rigorous certificate."""
        nonlocal w
        if exact:
            w = np.asarray(X.T @ (beta * y), dtype=np.float64).ravel() * inv_lm
        margins(*view, w, y, z)
        reg = 0.5 * lam * float(w @ w)
        if constrained:
            shift = m / sizes * nu - nu.sum()
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
        pg_max, pg_min = float(out[0]), float(out[1])
        full = n_seen == m
        inner_done = pg_max - pg_min <= eps_in
        nu_moved = improved = False
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
            # polishing: once the free set and the active teachers stay the same between
            # two checks, solve the equality-constrained QP they define; keep the result
            # only if it certifies a smaller gap
            free = (beta > 0.0) & (beta < 1.0)
            n_free = int(free.sum())
            sig = (n_free, int(np.flatnonzero(free).sum()), tuple(np.flatnonzero(nu > 0).tolist()))
            n_checks += 1
            if 0 < n_free <= polish_max and sig == last_sig and sig != tried_sig and n_checks >= next_polish:
                tried_sig = sig
                cand = _polish(X, y, beta, nu, free, lam, tid, sizes, eps_t if constrained else None)
                improved = False
                if cand is not None:
                    old = (beta.copy(), nu.copy(), w.copy())
                    beta[:], nu[:] = cand
                    p2, d2 = certificate(True)
                    if p2 - d2 < primal - dual:
                        improved = True
                        primal, dual = p2, d2
                        if primal - dual <= tol * abs(primal):
                            converged = True
                            break
                    else:
                        beta[:], nu[:], w = old
                        Bt[:] = np.bincount(tid, weights=beta, minlength=T) if constrained else beta.sum()
                        Bsum[0] = beta.sum()
                if not improved:
                    # back off exponentially: an attempt costs O(n_free²·d + n_free³)
                    n_failed += 1
                    next_polish = n_checks + min(2 ** n_failed, 64)
            last_sig = sig
        if inner_done or nu_moved or improved:
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
                        primal=primal, dual=dual, n_iter=n_iter, converged=converged)


def _shuffle(active, n, block, rng, mark, tmp):
    """Random visiting order of active[:n]: a random permutation (block <= 1), or the
    sorted indices cut into runs of ``block`` consecutive entries visited in random
    run order (rows close in memory stay together: ~3x fewer cache misses on CSR)."""
    if block <= 1 or n <= block:
        rng.shuffle(active[:n])
        return
    block_order(active, n, block, rng.permutation(-(-n // block)), mark, tmp)


def _polish(X, y, beta, nu, free, lam, tid, sizes, eps_t):
    """Solve the equality-constrained dual QP fixed by the current active sets.

    With F the free dual variables (0 < β_i < 1), the others held at their bounds,
    and A the teachers with ν_t > 0 (constraints taken as equalities), the KKT
    conditions are linear:

        for i ∈ F:  y_i⟨x_i, w(β)⟩ = 1 − k_{t(i)} ν_{t(i)} + Σ_{s∈A} ν_s
        for t ∈ A:  mean_{S_t} β − mean β = ε_t

    i.e. [[K, E], [Eᵀ, 0]] [β_F; ν_A] = [1 − r; m(ε_A − b)] with
    K = Z_F Z_Fᵀ/(λm) (Z: rows y_i x_i), E_{is} = k_s 1[t(i)=s] − 1, r and b the
    contributions of the bounded variables. Returns (β, ν) (the caller keeps them
    only if they certify a smaller gap), or None if the system cannot be solved or
    its solution leaves the box / has a negative ν (wrong active sets).
    """
    import scipy.linalg

    m = y.shape[0]
    F = np.flatnonzero(free)
    rest = beta * y
    rest[F] = 0.0
    w_rest = np.asarray(X.T @ rest, dtype=np.float64).ravel() / (lam * m)
    XF = X[F]
    ZF = (sp.diags(y[F]) @ XF).tocsr() if sp.issparse(XF) else XF * y[F, None]
    K = ZF @ ZF.T
    K = (K.toarray() if sp.issparse(K) else np.asarray(K)) / (lam * m)
    r = np.asarray(ZF @ w_rest).ravel()
    nF = F.shape[0]
    if tid is None:
        M = K
        rhs = 1.0 - r
        A = np.zeros(0, np.int64)
    else:
        A = np.flatnonzero(nu > 0)
        k = m / sizes
        E = (tid[F][:, None] == A[None, :]) * k[A][None, :] - 1.0
        Bt_rest = np.bincount(tid, weights=np.where(free, 0.0, beta), minlength=sizes.shape[0])
        b = Bt_rest[A] / sizes[A] - (beta.sum() - beta[F].sum()) / m
        M = np.zeros((nF + A.shape[0], nF + A.shape[0]))
        M[:nF, :nF] = K
        M[:nF, nF:] = E
        M[nF:, :nF] = E.T
        rhs = np.concatenate([1.0 - r, m * (eps_t[A] - b)])
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(M, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not np.all(np.isfinite(sol)):
        return None
    # a solution outside the box means the active sets were wrong: clipping it would
    # land far from the optimum (K is typically ill-conditioned), so give up
    slack = 1e-9
    if sol[:nF].min() < -slack or sol[:nF].max() > 1.0 + slack or (A.shape[0] and sol[nF:].min() < -slack):
        return None
    new_beta = beta.copy()
    new_beta[F] = np.clip(sol[:nF], 0.0, 1.0)
    new_nu = np.zeros_like(nu)
    if A.shape[0]:
        new_nu[A] = np.maximum(sol[nF:], 0.0)
    return new_beta, new_nu
