"""Slow, obvious reference twins of the compiled kernels (numpy, one round at a time)."""

from __future__ import annotations

import numpy as np


def scores(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    return W @ x


def greedy(W: np.ndarray, x: np.ndarray) -> int:
    return int(np.argmax(W @ x))  # np.argmax returns the first maximum


def epsilon_greedy_probs(yhat: int, gamma: float, K: int) -> np.ndarray:
    P = np.full(K, gamma / K)
    P[yhat] += 1.0 - gamma
    return P


def inverse_cdf(P: np.ndarray, u: float) -> int:
    return int(min(np.searchsorted(np.cumsum(P), u, side="right"), P.shape[0] - 1))


def flip(f: int, u: float, rho0: float, rho1: float) -> int:
    if f == 1:
        return 0 if u < rho1 else 1
    return 1 if u < rho0 else 0


def perceptron_step(W, x, label):
    """W[ℓ] += x, W[ŷ] -= x on a mistake. Returns (new W, ŷ)."""
    W = W.copy()
    yhat = greedy(W, x)
    if yhat != label:
        W[label] += x
        W[yhat] -= x
    return W, yhat


def banditron_step(W, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0, h=(0.0, 1.0)):
    """One Banditron/RCNBF round. Returns (new W, ŷ, action, P(action), f̃)."""
    K = W.shape[0]
    yhat = greedy(W, x)
    P = epsilon_greedy_probs(yhat, gamma, K)
    a = inverse_cdf(P, u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    U = -np.outer(np.eye(K)[yhat], x)
    U += np.outer(np.eye(K)[a], x) * (h[ft] / P[a])
    return W + U, yhat, a, P[a], ft


def bpa_step(W, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0):
    """One BPA round: ℓ = max(0, 1 + (1-2a) w_ỹ·x), w_ỹ += (2a-1) ℓ/‖x‖² x with a = f̃."""
    K = W.shape[0]
    yhat = greedy(W, x)
    a = inverse_cdf(epsilon_greedy_probs(yhat, gamma, K), u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    W = W.copy()
    sq = x @ x
    if sq > 0:
        loss = max(0.0, 1 + (1 - 2 * ft) * (W[a] @ x))
        W[a] += (2 * ft - 1) * loss / sq * x
    return W, yhat, a, ft


def soba_step(A, theta, cum, x, y, gamma, u, u_feedback, rho0=0.0, rho1=0.0, diagonal=False):
    """One SOBA round with explicit A (full (Kd, Kd) matrix, or its diagonal (Kd,)) and W = A⁻¹θ.

    Returns (A, theta, cum, W before the round, ŷ).
    """
    K, d = theta.shape
    th = theta.ravel()
    W = (th / A if diagonal else np.linalg.solve(A, th)).reshape(K, d)
    s = W @ x
    yhat = int(np.argmax(s))
    P = epsilon_greedy_probs(yhat, gamma, K)
    a = inverse_cdf(P, u)
    ft = flip(int(a == y), u_feedback, rho0, rho1)
    A, theta = A.copy(), theta.copy()
    if ft == 1:
        others = s.copy()
        others[a] = -np.inf
        ybar = int(np.argmax(others))
        g = np.zeros((K, d))
        g[ybar] += x / P[a]
        g[a] -= x / P[a]
        z = np.sqrt(P[a]) * g.ravel()
        Ainv_z = z / A if diagonal else np.linalg.solve(A, z)
        m = ((W.ravel() @ z) ** 2 + 2 * (W.ravel() @ g.ravel())) / (1 + z @ Ainv_z)
        if cum + m >= 0:
            cum += m
            A = A + z * z if diagonal else A + np.outer(z, z)
            theta = theta - g
    return A, theta, cum, W, yhat


# ---------------------------------------------------------------------------
# Diluted (set) feedback: MC-SLP and MC-DBF (Batra & Manwani 2021), docs/algorithms.md §4.8-4.9.
# Twins of noisyfeedback/kernels/diluted.py, obvious rather than fast.
# ---------------------------------------------------------------------------

def top_m(s: np.ndarray, m: int) -> list[int]:
    """The m largest scores' labels in rank order; equal scores lowest label first."""
    return sorted(range(s.shape[0]), key=lambda r: (-s[r], r))[:m]


def dbf_probs(top: list[int], gamma: float, K: int) -> np.ndarray:
    """P(r) = (1-γ)/m·1[r∈Ŷ] + γ/K."""
    m = len(top)
    P = np.full(K, gamma / K)
    P[list(top)] += (1.0 - gamma) / m
    return P


def draw_set(P: np.ndarray, us) -> list[int]:
    """Successive sampling without replacement ∝ P, one uniform per draw, inverse CDF over the
    remaining labels in increasing order (m = 1: Banditron's inverse CDF). Returns the set, sorted."""
    if len(us) == 1:
        return [inverse_cdf(P, us[0])]
    drawn: list[int] = []
    for u in us:
        remaining = [r for r in range(P.shape[0]) if r not in drawn]
        cum = np.cumsum(P[remaining])
        j = min(int(np.searchsorted(cum, u * cum[-1], side="right")), len(remaining) - 1)
        drawn.append(remaining[j])
    return sorted(drawn)


def set_probability(A, P: np.ndarray) -> float:
    """Z(A) by brute force: the sum over A's m! orders of Π_t P(b_t) / (mass not yet drawn)."""
    from itertools import permutations

    total = 0.0
    for order in permutations(A):
        prob = 1.0
        for t, b in enumerate(order):
            rest = sum(P[r] for r in range(P.shape[0]) if r not in order[:t])
            prob *= P[b] / rest
        total += prob
    return total


def dbf_taus(K: int, m: int) -> tuple[float, float]:
    from math import comb

    return float(comb(K - 2, m - 1)), (m - 1) / (K - m)


def mcdbf_update(W, x, top, A, Z, h):
    """W + Ũ with Ũ[r] = (h·1[r∈A]/(Z·τ1) − 1[r∈Ŷ]/m − τ2)·x."""
    K, m = W.shape[0], len(top)
    tau1, tau2 = dbf_taus(K, m)
    c = np.full(K, -tau2)
    c[list(top)] -= 1.0 / m
    c[list(A)] += h / (Z * tau1)
    return W + np.outer(c, x)


def mcdbf_step(W, x, y, m, gamma, us, u_feedback, rho0=0.0, rho1=0.0):
    """One MC-DBF round. Returns (new W, ŷ, Ỹ, Z(Ỹ), f̃, 1[y ∉ Ŷ])."""
    K = W.shape[0]
    top = top_m(W @ x, m)
    P = dbf_probs(top, gamma, K)
    A = draw_set(P, us)
    Z = set_probability(A, P)
    ft = flip(int(y in A), u_feedback, rho0, rho1)
    beta = 1.0 - rho0 - rho1
    h = (ft - rho0) / beta
    return mcdbf_update(W, x, top, A, Z, h), top[0], A, Z, ft, int(y not in top)


def mcslp_step(W, x, label, m):
    """One MC-SLP round: W + (e_ℓ − 1[r∈Ŷ]/m) ⊗ x. Returns (new W, Ŷ)."""
    K = W.shape[0]
    top = top_m(W @ x, m)
    c = np.zeros(K)
    c[label] += 1.0
    c[top] -= 1.0 / m
    return W + np.outer(c, x), top


# ---------------------------------------------------------------------------
# Online regression: NLMS and ORS (Moroshko & Crammer), docs/algorithms.md §4.11.
# Twins of noisyfeedback/kernels/regression.py in the paper's own form
# w += (m − ŷ)·x / (r/α + ‖x‖²), obvious rather than fast.
# ---------------------------------------------------------------------------

def ors_alpha(scaling, known, labels, yhat, v1, y_clean, r, beta, sq):
    """α of one round from its labels (all of them used), the paper's formulas (5)/(6) with the guards."""
    labels = np.asarray(labels, dtype=float)
    k = labels.shape[0]
    m = float(np.mean(labels))
    if scaling == "none":
        return 1.0
    if known:
        v = v1 / k  # the variance of the mean of k labels
    elif k >= 2:
        v = float(np.var(labels, ddof=1)) / k  # two labels: (ỹ1 − ỹ2)²/4
    else:
        v = (labels[0] - yhat) ** 2 / 4  # one_sample_pred, unknown variance
    if scaling == "beta":
        return 1.0 / (1.0 + beta * v)
    y_est = {"opt": y_clean, "one_sample": m, "two_samples": m,
             "one_sample_pred": (labels[0] + yhat) / 2 if k == 1 else m}[scaling]
    e2 = (y_est - yhat) ** 2
    if v == 0:
        return 1.0  # no noise (and 0/0): NLMS
    if e2 == 0:
        return 0.0  # the limit of (5) when the error vanishes: no update
    return 1.0 / (1.0 + (r + sq) * v / (r * e2))


def ors_step(w, x, labels, v1, y_clean, scaling, known, r, beta):
    """One ORS round using all ``labels``. Returns (new w, ŷ, α)."""
    yhat = float(w @ x)
    sq = float(x @ x)
    alpha = ors_alpha(scaling, known, labels, yhat, v1, y_clean, r, beta, sq)
    if alpha == 0.0:
        return w.copy(), yhat, alpha
    m = float(np.mean(labels))
    return w + (m - yhat) * x / (r / alpha + sq), yhat, alpha


def budget_labels(strategy, first_label, yhat, u, B, t, spent, a, horizon=None):
    """Labels a round takes under a budget strategy (1 or k = ⌈B⌉)."""
    k = int(np.ceil(B))
    p = (B - 1) / (k - 1) if k > 1 else 0.0
    if strategy == "const":
        return k if u < p else 1
    if strategy == "begin":
        return k if t < int(np.floor(horizon * p)) else 1
    stay = a / (a + (first_label - yhat) ** 2)
    n = 1 if u < stay else k
    if strategy == "auto_self_tuned" and n > 1 and spent + k > B * (t + 1):
        n = 1  # never beyond B labels a round on average, at any time
    return n


def ors_run(w, X, Y, variance, y_clean, scaling, known, r, beta=1.0, budget=None, strategy=None, a=1.0,
            horizon=None, u=None):
    """Rows in order; Y (n, j) labels a row (a budget reads the first, then the first k).
    Returns (w, labels used per row, a at the end)."""
    w = np.array(w, dtype=float)
    used = []
    spent = 0
    for t in range(X.shape[0]):
        x = np.asarray(X[t], dtype=float)
        yhat = float(w @ x)
        if budget is None:
            n = Y.shape[1]
        else:
            n = budget_labels(strategy, Y[t, 0], yhat, u[t], budget, t, spent, a, horizon)
        spent += n
        w, _, _ = ors_step(w, x, Y[t, :n], variance[t], y_clean[t], scaling, known, r, beta)
        used.append(n)
        if strategy == "auto_self_tuned" and budget is not None and (t + 1) % 100 == 0:
            rate = spent / (t + 1)
            a = a * 2 if rate > 0.95 * budget else (a / 2 if rate < 0.95 * budget else a)
    return w, np.array(used), a


def ors_auto_run(W, loss, rs, X, Y, variance, y_clean, scaling, known, beta=1.0, discount=0.9995, budget=None,
                 strategy=None, a=1.0, horizon=None, u=None):
    """r = "auto": one member a row of W (its r in ``rs``), each an ``ors_step``; the round's prediction is
    the leader's (the smallest running loss, the first of equal ones), which also decides a budget round's
    labels; then every member updates from them and loss_j ← discount·loss_j + (mean label − ŷ_j)².
    Returns (W, loss, predictions, labels used per row, a)."""
    W = np.array(W, dtype=float)
    loss = np.array(loss, dtype=float)
    preds, used = [], []
    spent = 0
    for t in range(X.shape[0]):
        x = np.asarray(X[t], dtype=float)
        yhats = W @ x
        lead = int(np.flatnonzero(loss == loss.min())[0])
        if budget is None:
            n = Y.shape[1]
        else:
            n = budget_labels(strategy, Y[t, 0], yhats[lead], u[t], budget, t, spent, a, horizon)
        spent += n
        m = float(np.mean(Y[t, :n]))
        for j in range(W.shape[0]):
            W[j], _, _ = ors_step(W[j], x, Y[t, :n], variance[t], y_clean[t], scaling, known, rs[j], beta)
        loss = discount * loss + (m - yhats) ** 2
        preds.append(yhats[lead])
        used.append(n)
        if strategy == "auto_self_tuned" and budget is not None and (t + 1) % 100 == 0:
            rate = spent / (t + 1)
            a = a * 2 if rate > 0.95 * budget else (a / 2 if rate < 0.95 * budget else a)
    return W, loss, np.array(preds), np.array(used), a


# ------------------------------------------------ teachers (Dekel & Shamir 2009)
def signed_margins(X, w, y):
    """y_i ⟨x_i, w⟩."""
    return y * np.asarray(X @ w).ravel()


def row_sq_norms(X):
    """‖x_i‖²."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return (X * X).sum(axis=1)


def certificate_terms(z, beta, tid, shift, T):
    """(Σ_i [1 − shift_{t(i)} − z_i]_+, per-teacher sums of β)."""
    hinge = float(np.maximum(1.0 - shift[tid] - z, 0.0).sum())
    return hinge, np.bincount(tid, weights=beta, minlength=T)


def teacher_sgd_run(X, y, t, lam, eps, n_epochs, rng):
    """TeacherSGD (Dekel & Shamir Sec. 6): naive Pegasos with explicit dual-scaled coefficients α
    and the full constraint check; rows drawn by ``rng.integers(0, m, size=m)`` per epoch.
    Returns (w, α, number of capped steps)."""
    m = X.shape[0]
    ids, tid, sizes = np.unique(t, return_inverse=True, return_counts=True)
    alpha = np.zeros(m)
    step = 0
    n_capped = 0
    for _ in range(n_epochs):
        for i in rng.integers(0, m, size=m):
            step += 1
            w = (alpha * y) @ X / lam
            viol = y[i] * (X[i] @ w) < 1.0
            alpha *= (step - 1) / step  # w ← (1 − η λ) w with η = 1/(λ t)
            if not viol:
                continue
            size = 1.0 / step
            if eps is not None:
                s = tid[i]
                own = tid == s
                a = 1.0 / sizes[s] - 1.0 / m
                slack = eps / (m * np.sqrt(sizes[s])) - (alpha[own].mean() - alpha.mean())
                if a > 0 and slack / a < size:
                    size = max(slack / a, 0.0)
                    n_capped += 1
            alpha[i] += size
    return (alpha * y) @ X / lam, alpha, n_capped


def csr_first_bad_row(indptr, indices, n_cols):
    """Twin of kernels.validation.csr_first_bad_row: (row, code) of the first bad row, (-1, -1) if none."""
    for i in range(len(indptr) - 1):
        start, stop = int(indptr[i]), int(indptr[i + 1])
        if stop < start or stop > len(indices):
            return i, 1
        if any(not 0 <= int(j) < n_cols for j in indices[start:stop]):
            return i, 2
    return -1, -1


def csr_is_canonical(indptr, indices):
    """Twin of kernels.validation.csr_is_canonical: every row's columns strictly increase."""
    return all(all(int(indices[p]) > int(indices[p - 1]) for p in range(int(indptr[i]) + 1, int(indptr[i + 1])))
               for i in range(len(indptr) - 1))


# ---------------------------------------------------------------------------
# Regression-oracle bandits: SquareCB and EpsilonGreedy (noisyfeedback/kernels/oracle.py).
# ---------------------------------------------------------------------------

def oracle_policy(v: np.ndarray, m: int, kind: str, explore: float) -> np.ndarray:
    """Inclusion probabilities π (Σ = m): p the one-label policy (ε-greedy (1−ε)·1[r=ŷ] + ε/K, or inverse-gap
    weighting 1/(K + γ·(v_ŷ − v_r)), ŷ the rest), then π = p + (1 − p)·(m−1)/(K−1)."""
    K = v.shape[0]
    best = int(np.argmax(v))
    if kind == "epsilon":
        p = np.full(K, explore / K)
        p[best] += 1.0 - explore
    else:
        p = 1.0 / (K + explore * (v[best] - v))
        p[best] = 0.0
        p[best] = 1.0 - p.sum()
    return p + (1.0 - p) * (m - 1) / (K - 1)


def label_order(us, m: int, K: int) -> list[int]:
    """Identity for m = 1; else Fisher–Yates with us[1:K] (for i = K−1..1 swap i and ⌊u·(i+1)⌋)."""
    perm = list(range(K))
    if m > 1:
        for n, i in enumerate(range(K - 1, 0, -1)):
            j = min(int(us[1 + n] * (i + 1)), i)
            perm[i], perm[j] = perm[j], perm[i]
    return perm


def systematic_sample(pi: np.ndarray, m: int, u: float, perm) -> list[int]:
    """Labels whose interval [C_{q-1}, C_q) (laid out in ``perm`` order) holds one of u, u+1, …, u+m−1."""
    cum = np.cumsum(pi[list(perm)])
    lo = np.concatenate([[0.0], cum[:-1]])
    out = [perm[q] for q in range(len(perm)) if any(lo[q] <= u + k < cum[q] for k in range(m))]
    for r in reversed(perm):  # Σπ a hair below m (rounding): the last labels of the order not drawn
        if len(out) < m and r not in out:
            out.append(r)
    return sorted(out)


def oracle_step(W, b, G, Gb, x, sets_fn, y, m, kind, explore, lr, us, u_feedback, rho0=0.0, rho1=0.0,
                oracle="adagrad"):
    """One round: values v = Wx + b, policy, draw, flipped feedback 1[y ∈ S], square-loss step on
    Σ_{a∈S} v_a. Returns (W, b, G, Gb, ŷ, S, f̃). ``sets_fn`` unused (kept for symmetry).
    ``oracle="ridge"`` (m = 1): G is the (K, d+1, d+1) stack of inverses P_a; the step is
    Sherman–Morrison on z = (x, 1): u = P_a z, s = 1 + z·u, w_a += e·u/s, P_a −= u uᵀ/s."""
    W, b, G, Gb = W.copy(), b.copy(), G.copy(), Gb.copy()
    K = W.shape[0]
    norm = np.sqrt(x @ x)
    x = x / norm if norm > 0 else x  # the oracle sees unit-norm rows
    v = W @ x + b
    yhat = int(np.argmax(v))
    pi = oracle_policy(v, m, kind, explore)
    S = systematic_sample(pi, m, us[0], label_order(us, m, K))
    ft = flip(int(y in S), u_feedback, rho0, rho1)
    e = ft - v[S].sum()
    _oracle_update(W, b, G, Gb, x, S, e, m, lr, oracle)
    return W, b, G, Gb, yhat, S, ft


def _oracle_update(W, b, G, Gb, x, S, e, m, lr, oracle):
    """The square-loss step of every label of S with residual e on the unit-norm row x (in place)."""
    if oracle == "ridge":
        for a in S:
            z = np.append(x, 1.0)
            u = G[a] @ z
            s = 1.0 + z @ u
            W[a] += e * u[:-1] / s
            b[a] += e * u[-1] / s
            G[a] -= np.outer(u, u) / s
    elif e != 0.0:
        if oracle == "adagrad":
            for a in S:
                g = e * x
                G[a] += g * g
                nz = (x != 0) & (G[a] > 0)
                W[a, nz] += lr * g[nz] / np.sqrt(G[a, nz])
                Gb[a] += e * e
                b[a] += lr * e / np.sqrt(Gb[a])
        else:
            c = lr * e / (m * (x @ x + 1.0))
            for a in S:
                W[a] += c * x
                b[a] += c


def oracle_learn_step(W, b, G, Gb, x, S, f, m, lr, oracle="adagrad"):
    """One logged round of ``learn``: values v = W x̂ + b, residual e = f − Σ_{a∈S} v_a of the logged reward f
    (a 0/1 click or any real number, fitted as it is), the square-loss step. Returns (W, b, G, Gb)."""
    W, b, G, Gb = W.copy(), b.copy(), G.copy(), Gb.copy()
    norm = np.sqrt(x @ x)
    x = x / norm if norm > 0 else x
    v = W @ x + b
    _oracle_update(W, b, G, Gb, x, list(S), f - v[list(S)].sum(), m, lr, oracle)
    return W, b, G, Gb


def adaptive_scale(sq_sum, n, c, high, low, n0, s0):
    """SquareCB's adaptive γ_scale: c/σ̂ clipped to [low, high], σ̂² = (Σ r² + n0·s0)/(n + n0) the mean squared
    residual of the oracle (r = feedback − prediction before each step) shrunk toward s0."""
    return float(np.clip(c / np.sqrt((sq_sum + n0 * s0) / (n + n0)), low, high))


def rate_tally(c, a, ft, margin):
    """The anchor a play of label a (values c the policy read, feedback ft) is, by its definition: ("hi", ft)
    when a is the greedy label (lowest index on ties) and beats every other by >= margin, ("lo", ft) when
    a is >= margin below the greedy label, else None."""
    g = int(np.argmax(c))
    if a == g:
        others = np.delete(c, g)
        return ("hi", ft) if c[g] - others.max() >= margin else None
    return ("lo", ft) if c[g] - c[a] >= margin else None


# ---------------------------------------------------------------------------
# WeightedRLS (issue #16): the twin of noisyfeedback/kernels/rls.py, by its definition
# ---------------------------------------------------------------------------

def wrls_run(X, Y, variance, lam=1.0, mode="known", n_labels=1, shrink=10.0, vfloor=1e-6, budget=None,
             strategy="auto_self_tuned", a=1.0, horizon=None, u=None):
    """Rows in order; ``mode`` the learner's ``variance``; returns (w, labels used per row, a)."""
    d = X.shape[1]
    w = np.zeros(d)
    P = np.eye(d) / lam
    used, spent, vsum, vcount = [], 0, 0.0, 0
    for t in range(X.shape[0]):
        x = X[t]
        yhat = float(w @ x)
        n = Y.shape[1] if budget is None else budget_labels(strategy, Y[t, 0], yhat, u[t], budget, t, spent, a,
                                                            horizon)
        spent += n
        labels = Y[t, :n]
        m = float(np.mean(labels))
        if mode == "known":
            v = variance[t] / n
        elif mode == "none":
            v = 1.0
        else:
            s = float(np.var(labels, ddof=1)) if n >= 2 else (labels[0] - yhat) ** 2 / 4
            if vcount:
                vbar = vsum / vcount
                sh = vbar if np.isinf(shrink) else (shrink * vbar + s) / (shrink + 1)
            else:
                sh = s
            vsum, vcount = vsum + s, vcount + 1
            v = max(sh, vfloor) / n
        Px = P @ x
        den = v + x @ Px
        w = w + Px * (m - yhat) / den
        P = P - np.outer(Px, Px) / den
        used.append(n)
        if strategy == "auto_self_tuned" and budget is not None and (t + 1) % 100 == 0:
            rate = spent / (t + 1)
            a = a * 2 if rate > 0.95 * budget else (a / 2 if rate < 0.95 * budget else a)
    return w, np.array(used), a


def restricted_draw_reference(p, allowed, u):
    """The decision service's former restricted draw (one event): p restricted to the sorted ``allowed``
    labels and renormalised, the action by the inverse CDF of ``u`` over the labels in increasing order.
    Returns (action, its probability, the restricted distribution)."""
    q = np.zeros_like(p)
    q[allowed] = p[allowed]
    q /= q.sum()
    c = np.cumsum(q)
    a = int(np.searchsorted(c, u, side="right"))
    nz = np.flatnonzero(q)
    if a >= q.shape[0] or q[a] == 0.0:  # rounding at the top of the CDF
        a = int(nz[nz <= min(a, q.shape[0] - 1)][-1]) if (nz <= a).any() else int(nz[0])
    return a, float(q[a]), q


# ---------------------------------------------------------------------------
# The degree-2 feature map of the regression-oracle bandits (noisyfeedback/kernels/features.py).
# ---------------------------------------------------------------------------

def quadratic_map(x: np.ndarray) -> np.ndarray:
    """φ(x) = (x̂, c_jk·x̂_j·x̂_k for j <= k in upper-triangle row order), x̂ = x/‖x‖ (0 for x = 0), c_jj = 1,
    c_jk = √2."""
    x = np.asarray(x, dtype=float)
    norm = np.linalg.norm(x)
    xh = x / norm if norm > 0 else np.zeros_like(x)
    pairs = [xh[j] * xh[k] * (1.0 if j == k else np.sqrt(2.0)) for j in range(len(x)) for k in range(j, len(x))]
    return np.concatenate([xh, np.array(pairs)])
