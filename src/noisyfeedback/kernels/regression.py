"""Online linear regression from noisy targets: NLMS and ORS (Moroshko & Crammer), docs/algorithms.md §4.11.

One round: ŷ = w·x; the learner has ``nlab`` noisy labels ỹ_1..ỹ_nlab of the same
target (1 normally, 2 for ``two_samples``, 1 or k = ⌈B⌉ under a label budget) and
updates with their mean m:

    w += α·(m − ŷ)·x / (r + α·‖x‖²)          (= (m − ŷ)·x / (r/α + ‖x‖²), eq. (4))

The form above never divides by α, so α = 0 (no update) needs no special case;
for α = 1 it is NLMS. α by ``rule``:

- RULE_NONE: α = 1 (NLMS).
- RULE_BETA: α = 1/(1 + β·v), eq. (6).
- RULE_OPT / ONE_SAMPLE / ONE_SAMPLE_PRED / TWO_SAMPLES: eq. (5),
  α = 1/(1 + (r + ‖x‖²)·v / (r·e²)) with e = y − ŷ and y approximated by
  the clean target (OPT, oracle), m (ONE_SAMPLE, TWO_SAMPLES and any round with
  ≥ 2 labels) or (ỹ + ŷ)/2 (ONE_SAMPLE_PRED with one label: e = (ỹ − ŷ)/2).

v is the variance of the label used in the update, m: known variance v_t/nlab;
unknown variance, ≥ 2 labels: the sample variance over nlab,
Σ(ỹ_j − m)²/(nlab·(nlab − 1)) (= (ỹ1 − ỹ2)²/4 for two labels, the paper's
estimate); unknown variance, one label: (ỹ − ŷ)²/4 (ONE_SAMPLE_PRED).

Guard of eq. (5) (`scaling_alpha`): v = 0 gives α = 1 whatever e (no noise:
the update is NLMS; this also defines 0/0 as 1); e = 0 < v gives α = 0 (the
limit of (5) as e → 0: the noise dominates, no update).

The mean of nlab labels is computed as ỹ_1 + Σ_{j>1}(ỹ_j − ỹ_1)/nlab, so equal
labels (v = 0) give exactly ỹ_1.

Finite state: a round whose ŷ, error, ‖x‖², step or any new w_i is not finite changes
nothing and stops the loop (the kernels return its index; the learner raises naming the
row). a of auto_self_tuned stays in [A_MIN, A_MAX].

Label budgets (which rounds get k labels instead of 1), STRATEGY_*:

- ALL: every round uses all the labels given (no budget).
- CONST: k labels with probability p = (B − 1)/(k − 1) (one uniform u < p).
- BEGIN: k labels in the first ``n_begin`` = ⌊horizon·p⌋ rounds.
- AUTO: after the first label, stay with one label with probability
  a/(a + (ỹ_1 − ŷ)²) (u < that: stay), else take the k − 1 others.
- AUTO_TUNED: AUTO with a starting at ``a``; after every 100 rounds the labels
  spent so far per round are compared with 0.95·B: above, a ← 2a; below,
  a ← a/2. A round takes k labels only if that keeps the total within B·rounds
  (so the total after n rounds never exceeds B·n).
"""

import numpy as np
from numba import njit

from .linear import fetch_row

RULE_NONE = 0
RULE_BETA = 1
RULE_OPT = 2
RULE_ONE_SAMPLE = 3
RULE_ONE_SAMPLE_PRED = 4
RULE_TWO_SAMPLES = 5

STRATEGY_ALL = 0
STRATEGY_CONST = 1
STRATEGY_BEGIN = 2
STRATEGY_AUTO = 3
STRATEGY_AUTO_TUNED = 4

#: rounds between two adjustments of a (auto_self_tuned)
TUNE_EVERY = 100
#: the fraction of the budget auto_self_tuned aims at (the paper's "limited budget")
TUNE_TARGET = 0.95
#: the range of auto_self_tuned's a (doubling or halving never leaves it, so a stays finite and > 0)
A_MIN = 1e-300
A_MAX = 1e300


@njit(cache=True)
def row_dot(w, idx, val, nnz):
    """w·x over the row's non-zeros in increasing index order."""
    s = 0.0
    for p in range(nnz):
        s += w[idx[p]] * val[p]
    return s


@njit(cache=True)
def scaling_alpha(v, e2, r, sq):
    """Eq. (5): α = 1/(1 + (r + sq)·v/(r·e2)); v ≤ 0 → 1, e2 ≤ 0 < v → 0."""
    if v <= 0.0:
        return 1.0
    if e2 <= 0.0:
        return 0.0
    rho = (v / e2) * ((r + sq) / r)
    return 1.0 / (1.0 + rho)


@njit(cache=True)
def label_mean(lab, nlab):
    """The mean of the first ``nlab`` labels, ỹ_1 + Σ_{j>1}(ỹ_j − ỹ_1)/nlab (equal labels: exactly ỹ_1)."""
    l0 = lab[0]
    if nlab == 1:
        return l0
    acc = 0.0
    for j in range(1, nlab):
        acc += lab[j] - l0
    return l0 + acc / nlab


@njit(cache=True)
def ors_coef(val, nnz, yhat, lab, nlab, v1, yc, rule, known, r, beta):
    """The step of one update, w += coef·x, from the first ``nlab`` labels in ``lab`` (see
    `ors_update`). Returns (coef, ok); not ok: the error, ‖x‖² or coef is not finite."""
    sq = 0.0
    for p in range(nnz):
        sq += val[p] * val[p]
    m = label_mean(lab, nlab)
    err = m - yhat
    if rule == RULE_NONE:
        alpha = 1.0
    else:
        if known:
            v = v1 / nlab
        elif nlab >= 2:
            ss = 0.0
            for j in range(nlab):
                dj = lab[j] - m
                ss += dj * dj
            v = ss / (nlab * (nlab - 1))
        else:
            v = 0.25 * err * err
        if rule == RULE_BETA:
            alpha = 1.0 / (1.0 + beta * v)
        else:
            if rule == RULE_OPT:
                e = yc - yhat
            elif rule == RULE_ONE_SAMPLE_PRED and nlab == 1:
                e = 0.5 * err
            else:
                e = err
            alpha = scaling_alpha(v, e * e, r, sq)
    coef = alpha * err / (r + alpha * sq)
    ok = np.isfinite(err) and np.isfinite(sq) and np.isfinite(coef)
    return coef, ok


@njit(cache=True)
def step_is_finite(w, idx, val, nnz, coef):
    """Whether every w_i + coef·x_i of the row is finite."""
    for p in range(nnz):
        if not np.isfinite(w[idx[p]] + coef * val[p]):
            return False
    return True


@njit(cache=True)
def ors_update(w, idx, val, nnz, yhat, lab, nlab, v1, yc, rule, known, r, beta):
    """Update w from the first ``nlab`` labels in ``lab``; ``v1`` the known variance of one label,
    ``yc`` the clean target (RULE_OPT only). Returns False (and changes nothing) when the round
    would make w non-finite, else True."""
    coef, ok = ors_coef(val, nnz, yhat, lab, nlab, v1, yc, rule, known, r, beta)
    if not ok or not step_is_finite(w, idx, val, nnz, coef):
        return False
    for p in range(nnz):
        w[idx[p]] += coef * val[p]
    return True


@njit(cache=True)
def n_labels_for_round(lab0, yhat, u, strategy, budget, k, p, n_begin, t, spent, a):
    """How many labels round t takes (1 or k) under a budget strategy (not STRATEGY_ALL)."""
    if strategy == STRATEGY_CONST:
        return k if u < p else 1
    if strategy == STRATEGY_BEGIN:
        return k if t < n_begin else 1
    e0 = lab0 - yhat
    stay = a / (a + e0 * e0)
    nlab = 1 if u < stay else k
    if strategy == STRATEGY_AUTO_TUNED and nlab > 1 and spent + k > budget * (t + 1):
        nlab = 1
    return nlab


@njit(cache=True)
def tune_a(spent, t, budget, a):
    """auto_self_tuned: after round t (0-based), every TUNE_EVERY rounds, move a towards 0.95·B."""
    if (t + 1) % TUNE_EVERY == 0:
        rate = spent / (t + 1)
        target = TUNE_TARGET * budget
        if rate > target:
            a = min(a * 2.0, A_MAX)
        elif rate < target:
            a = max(a * 0.5, A_MIN)
    return a


@njit(cache=True)
def ors_round(w, idx, val, nnz, lab, ncols, v1, yc, u, rule, known, r, beta,
              strategy, budget, k, p, n_begin, t, spent, a):
    """One round: predict, choose the number of labels, update. Returns (ŷ, nlab, spent, a, ok); a round
    that is not ok left w, spent and a as they were."""
    yhat = row_dot(w, idx, val, nnz)
    if strategy == STRATEGY_ALL:
        nlab = ncols
    else:
        nlab = n_labels_for_round(lab[0], yhat, u, strategy, budget, k, p, n_begin, t, spent, a)
    if not ors_update(w, idx, val, nnz, yhat, lab, nlab, v1, yc, rule, known, r, beta):
        return yhat, nlab, spent, a, False
    spent += nlab
    if strategy == STRATEGY_AUTO_TUNED:
        a = tune_a(spent, t, budget, a)
    return yhat, nlab, spent, a, True


@njit(cache=True)
def regression_predict(w, Xd, indptr, indices, data, sparse, out):
    """out[i] = w·x_i."""
    d = w.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    for i in range(out.shape[0]):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        out[i] = row_dot(w, idx, val, nnz)


@njit(cache=True)
def ors_learn(w, Xd, indptr, indices, data, sparse, Y, variance, y_clean, u, rule, known, r, beta,
              strategy, budget, k, p, n_begin, t, spent, a, out_nlab):
    """Process rows in order; Y (n, ncols) holds each row's labels (a budget strategy reads the
    first, then the first k when it queries). ``u`` one uniform a row (empty without a budget).
    Returns (t, spent, a, bad) after the rows; bad ≥ 0: the row whose round was refused (not finite;
    the rows before it are learned, it and the rest are not), −1: none."""
    n = Y.shape[0]
    ncols = Y.shape[1]
    d = w.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    has_u = u.shape[0] > 0
    for i in range(n):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        ui = u[i] if has_u else 0.0
        yhat, nlab, spent, a, ok = ors_round(w, idx, val, nnz, Y[i], ncols, variance[i], y_clean[i], ui,
                                             rule, known, r, beta, strategy, budget, k, p, n_begin, t, spent, a)
        if not ok:
            return t, spent, a, i
        out_nlab[i] = nlab
        t += 1
    return t, spent, a, -1


@njit(cache=True, inline="always")
def gaussian_labels(lab, yi, vs, z, start, kmax):
    """A round's kmax noisy labels as GaussianNoise.respond draws them: lab[j] = y + √v·z[start + j]."""
    sd = np.sqrt(vs)
    for j in range(kmax):
        lab[j] = yi + sd * z[start + j]


@njit(cache=True)
def ors_simulate(w, Xd, indptr, indices, data, sparse, y, order, v, z, kmax, u, rule, known, r, beta,
                 strategy, budget, k, p, n_begin, t, spent, a, sqerr, out_nlab):
    """Simulation loop under GaussianNoise: round s uses row order[s], variance v[s] and the
    standard normals z[s·kmax : (s+1)·kmax] (label j = y + √v·z_j, as GaussianNoise.respond).
    Writes sqerr[s] = (ŷ − y)² against the clean target and out_nlab[s]. Returns (t, spent, a, bad) as
    `ors_learn` (bad: the round)."""
    d = w.shape[0]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    lab = np.empty(kmax, np.float64)
    has_u = u.shape[0] > 0
    for s in range(order.shape[0]):
        i = order[s]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        yi = y[i]
        gaussian_labels(lab, yi, v[s], z, s * kmax, kmax)
        us = u[s] if has_u else 0.0
        yhat, nlab, spent, a, ok = ors_round(w, idx, val, nnz, lab, kmax, v[s], yi, us,
                                             rule, known, r, beta, strategy, budget, k, p, n_begin, t, spent, a)
        if not ok:
            return t, spent, a, s
        diff = yhat - yi
        sqerr[s] = diff * diff
        out_nlab[s] = nlab
        t += 1
    return t, spent, a, -1


# ------------------------------------------------------------------ r = "auto"
# Several members, one per r of a grid (rows of W, rs), learn from the same rows and labels, each by the
# fixed-r update above. The prediction of a round is the leader's: the member whose running squared error
# on the labels, loss_j ← discount·loss_j + (m − ŷ_j)² (m: the mean of the round's labels, ŷ_j its prediction
# before its update), is smallest so far; ties go to the first member. The leader's ŷ also decides a budget
# round's labels, which every member then uses.


@njit(cache=True)
def auto_leader(loss):
    """Index of the smallest running loss (the first of equal ones)."""
    best = 0
    for j in range(1, loss.shape[0]):
        if loss[j] < loss[best]:
            best = j
    return best


@njit(cache=True)
def ors_auto_round(W, rs, loss, yhats, coefs, idx, val, nnz, lab, ncols, v1, yc, u, rule, known, beta,
                   strategy, budget, k, p, n_begin, t, spent, a, discount):
    """One round of every member: the leader's ŷ, the round's labels, each member's fixed-r update and the
    running losses. Returns (ŷ, nlab, spent, a, ok); a round that is not ok (some member's update, or its
    loss, would not be finite) changes nothing."""
    n_members = W.shape[0]
    for j in range(n_members):
        yhats[j] = row_dot(W[j], idx, val, nnz)
    yhat = yhats[auto_leader(loss)]
    if strategy == STRATEGY_ALL:
        nlab = ncols
    else:
        nlab = n_labels_for_round(lab[0], yhat, u, strategy, budget, k, p, n_begin, t, spent, a)
    m = label_mean(lab, nlab)
    for j in range(n_members):
        coef, ok = ors_coef(val, nnz, yhats[j], lab, nlab, v1, yc, rule, known, rs[j], beta)
        e = m - yhats[j]
        if not ok or not np.isfinite(discount * loss[j] + e * e) or not step_is_finite(W[j], idx, val, nnz, coef):
            return yhat, nlab, spent, a, False
        coefs[j] = coef
    for j in range(n_members):
        wj = W[j]
        c = coefs[j]
        for q in range(nnz):
            wj[idx[q]] += c * val[q]
        e = m - yhats[j]
        loss[j] = discount * loss[j] + e * e
    spent += nlab
    if strategy == STRATEGY_AUTO_TUNED:
        a = tune_a(spent, t, budget, a)
    return yhat, nlab, spent, a, True


@njit(cache=True)
def ors_auto_learn(W, rs, loss, Xd, indptr, indices, data, sparse, Y, variance, y_clean, u, rule, known, beta,
                   strategy, budget, k, p, n_begin, t, spent, a, discount, out_nlab):
    """`ors_learn` for r = "auto" (members W, rs, running losses ``loss``)."""
    n = Y.shape[0]
    ncols = Y.shape[1]
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    yhats = np.empty(W.shape[0], np.float64)
    coefs = np.empty(W.shape[0], np.float64)
    has_u = u.shape[0] > 0
    for i in range(n):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        ui = u[i] if has_u else 0.0
        yhat, nlab, spent, a, ok = ors_auto_round(W, rs, loss, yhats, coefs, idx, val, nnz, Y[i], ncols,
                                                  variance[i], y_clean[i], ui, rule, known, beta, strategy,
                                                  budget, k, p, n_begin, t, spent, a, discount)
        if not ok:
            return t, spent, a, i
        out_nlab[i] = nlab
        t += 1
    return t, spent, a, -1


@njit(cache=True)
def ors_auto_simulate(W, rs, loss, Xd, indptr, indices, data, sparse, y, order, v, z, kmax, u, rule, known,
                      beta, strategy, budget, k, p, n_begin, t, spent, a, discount, sqerr, out_nlab):
    """`ors_simulate` for r = "auto": sqerr[s] = (ŷ − y)² of the leader's prediction."""
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    lab = np.empty(kmax, np.float64)
    yhats = np.empty(W.shape[0], np.float64)
    coefs = np.empty(W.shape[0], np.float64)
    has_u = u.shape[0] > 0
    for s in range(order.shape[0]):
        i = order[s]
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        yi = y[i]
        gaussian_labels(lab, yi, v[s], z, s * kmax, kmax)
        us = u[s] if has_u else 0.0
        yhat, nlab, spent, a, ok = ors_auto_round(W, rs, loss, yhats, coefs, idx, val, nnz, lab, kmax, v[s], yi,
                                                  us, rule, known, beta, strategy, budget, k, p, n_begin, t,
                                                  spent, a, discount)
        if not ok:
            return t, spent, a, s
        diff = yhat - yi
        sqerr[s] = diff * diff
        out_nlab[s] = nlab
        t += 1
    return t, spent, a, -1
