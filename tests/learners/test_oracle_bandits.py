"""SquareCB and EpsilonGreedy: regression-oracle bandits (m = 1 and sets), kernels against their twins."""

import itertools

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from conftest import JIT_DISABLED
from test_simulate import python_loop
from tolerances import EXACT_ATOL, EXACT_RTOL, KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback._validation import check_X
from noisyfeedback.kernels.oracle import (
    ORACLE_ADAGRAD,
    ORACLE_NORMALIZED,
    ORACLE_RIDGE,
    POLICY_EPSILON,
    POLICY_IGW,
    label_order,
    oracle_simulate,
    policy,
    row_sqnorms,
    set_probability,
    systematic_sample,
)
from noisyfeedback.learners._linear import check_rewards, kernel_view

KINDS = {"epsilon": POLICY_EPSILON, "igw": POLICY_IGW}
ORACLES = {"adagrad": ORACLE_ADAGRAD, "normalized": ORACLE_NORMALIZED, "ridge": ORACLE_RIDGE}


def _problem(rng, n=40, d=7, K=5):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    X[3] = 0.0  # an empty row
    y = rng.integers(0, K, size=n)
    return X, y


@pytest.mark.parametrize("kind,oracle,m,sparse", [
    ("epsilon", "adagrad", 1, False), ("igw", "adagrad", 1, True), ("igw", "normalized", 1, False),
    ("epsilon", "normalized", 2, True), ("igw", "adagrad", 3, False), ("epsilon", "adagrad", 2, False),
    ("igw", "ridge", 1, False), ("epsilon", "ridge", 1, True)])
def test_simulate_kernel_matches_reference(rng, kind, oracle, m, sparse):
    K = 5
    X, y = _problem(rng, K=K)
    T = 120
    order = rng.integers(0, X.shape[0], size=T)
    nu = 1 if m == 1 else K
    u_l, u_f = rng.random(T * nu), rng.random(T)
    explore, expo, lr, rho0, rho1 = (0.3, 0.0, 0.2, 0.1, 0.2) if kind == "epsilon" else (5.0, 0.5, 0.2, 0.1, 0.2)
    W = np.zeros((K, X.shape[1]), order="F")
    b, G, Gb, t = np.zeros(K), np.zeros((K, X.shape[1])), np.zeros(K), np.zeros(1, np.int64)
    lam = 0.5
    P = np.repeat(np.eye(X.shape[1] + 1)[None] / lam, K, axis=0) if oracle == "ridge" else np.zeros((K, 0, 0))
    mistakes, miss = np.empty(T, np.int8), np.empty(T)
    Xk = check_X(sp.csr_matrix(X)) if sparse else X
    row_sq = np.zeros(0)  # computed each round
    if sparse:  # the per-row cache simulate keeps with in-place rows
        row_sq = np.empty(X.shape[0])
        row_sqnorms(*kernel_view(Xk), row_sq)
        np.testing.assert_allclose(row_sq, (X ** 2).sum(axis=1), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    oracle_simulate(ORACLES[oracle], W, b, G, Gb, P, t, *kernel_view(Xk), y, order, m, KINDS[kind], explore, expo, lr,
                    np.array([rho0]), np.array([rho1]), u_l, u_f, mistakes, miss, row_sq, np.zeros(0), np.zeros(0),
                    np.zeros((0, 0)), np.zeros(2), np.zeros(0))
    Wr, br, Gr, Gbr = np.zeros((K, X.shape[1])), np.zeros(K), np.zeros((K, X.shape[1])), np.zeros(K)
    if oracle == "ridge":  # the reference carries the inverses in G
        Gr = np.repeat(np.eye(X.shape[1] + 1)[None] / lam, K, axis=0)
    for s, i in enumerate(order):
        x_t = explore if kind == "epsilon" else explore * np.sqrt(s + 1.0)
        nx = np.linalg.norm(X[i])
        v = Wr @ (X[i] / nx if nx > 0 else X[i]) + br
        top = ref.top_m(v, m)
        Wr, br, Gr, Gbr, yhat, S, _ = ref.oracle_step(Wr, br, Gr, Gbr, X[i], None, y[i], m, kind, x_t, lr,
                                                      u_l[s * nu:(s + 1) * nu], u_f[s], rho0, rho1, oracle)
        assert mistakes[s] == int(yhat != y[i]) and miss[s] == float(y[i] not in top)
    assert t[0] == T and np.abs(Wr).sum() > 0
    for got, want in ((W, Wr), (b, br), (P if oracle == "ridge" else G, Gr), (Gb, Gbr)):
        np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("kind,oracle,corrected", [("epsilon", "adagrad", False), ("igw", "ridge", True),
                                                    ("igw", "adagrad", True)])
def test_rate_tallies_match_reference(rng, kind, oracle, corrected):
    """rho0="estimate": the kernel tallies each play as a right-play or wrong-play anchor by the values the
    policy read (corrected by per-action rates, or v itself passed as c0 = 0, cb = 1), as the reference does."""
    from noisyfeedback.kernels.oracle import RATE_MARGIN

    K = 5
    X, y = _problem(rng, K=K)
    T = 300
    order = rng.integers(0, X.shape[0], size=T)
    u_l, u_f = rng.random(T), rng.random(T)
    explore, expo = (0.3, 0.0) if kind == "epsilon" else (5.0, 0.5)
    c0, cb = (np.array([0.1, 0.0, 0.2, 0.05, 0.0]), np.array([0.8, 0.6, 0.7, 0.9, 1.0])) if corrected \
        else (np.zeros(0), np.zeros(0))
    W = np.zeros((K, X.shape[1]), order="F")
    b, G, Gb, t = np.zeros(K), np.zeros((K, X.shape[1])), np.zeros(K), np.zeros(1, np.int64)
    P = np.repeat(np.eye(X.shape[1] + 1)[None], K, axis=0) if oracle == "ridge" else np.zeros((K, 0, 0))
    stats = np.zeros((4, K))
    stats[:, 2] = [3.0, 1.0, 2.0, 0.5]  # tallies carried over from before are added to
    want = stats.copy()
    oracle_simulate(ORACLES[oracle], W, b, G, Gb, P, t, *kernel_view(X), y, order, 1, KINDS[kind], explore, expo, 0.3,
                    np.array([0.1]), np.array([0.2]), u_l, u_f, np.empty(T, np.int8), np.empty(T), np.zeros(0),
                    c0, cb, stats, np.zeros(2), np.zeros(0))
    Wr, br, Gr, Gbr = np.zeros((K, X.shape[1])), np.zeros(K), np.zeros((K, X.shape[1])), np.zeros(K)
    if oracle == "ridge":
        Gr = np.repeat(np.eye(X.shape[1] + 1)[None], K, axis=0)
    kinds = set()
    for s, i in enumerate(order):
        x_t = explore if kind == "epsilon" else explore * np.sqrt(s + 1.0)
        nx = np.linalg.norm(X[i])
        v = Wr @ (X[i] / nx if nx > 0 else X[i]) + br
        c = (v - c0) / cb if corrected else v
        if corrected:
            Wr, br, Gr, Gbr, S, ft = _corrected_step(Wr, br, Gr, Gbr, X[i], y[i], kind, x_t, u_l[s], u_f[s], c0, cb,
                                                     oracle)
        else:
            Wr, br, Gr, Gbr, _, S, ft = ref.oracle_step(Wr, br, Gr, Gbr, X[i], None, y[i], 1, kind, x_t, 0.3,
                                                        u_l[s:s + 1], u_f[s], 0.1, 0.2, oracle)
        tag = ref.rate_tally(c, int(S[0]), ft, RATE_MARGIN)
        if tag is not None:
            row = 0 if tag[0] == "hi" else 2
            want[row, S[0]] += 1.0
            want[row + 1, S[0]] += tag[1]
            kinds.add(tag[0])
    assert kinds == {"hi", "lo"}  # both kinds of anchor occur
    np.testing.assert_allclose(stats, want, rtol=0, atol=1e-12)


def _corrected_step(W, b, G, Gb, x, y, kind, explore, u, u_f, c0, cb, oracle):
    """ref.oracle_step with the policy over the corrected values (v − c0)/cb (m = 1), the oracle on v."""
    K = W.shape[0]
    norm = np.sqrt(x @ x)
    xs = x / norm if norm > 0 else x
    v = W @ xs + b
    pi = ref.oracle_policy((v - c0) / cb, 1, kind, explore)
    a = int(ref.systematic_sample(pi, 1, u, ref.label_order(np.array([u]), 1, K))[0])
    ft = ref.flip(int(y == a), u_f, 0.1, 0.2)
    e = ft - v[a]
    W, b, G, Gb = W.copy(), b.copy(), G.copy(), Gb.copy()
    if oracle == "ridge":
        z = np.append(xs, 1.0)
        uu = G[a] @ z
        s = 1.0 + z @ uu
        W[a] += e * uu[:-1] / s
        b[a] += e * uu[-1] / s
        G[a] -= np.outer(uu, uu) / s
    elif e != 0.0:
        g = e * xs
        G[a] += g * g
        nz = (xs != 0) & (G[a] > 0)
        W[a, nz] += 0.3 * g[nz] / np.sqrt(G[a, nz])
        Gb[a] += e * e
        b[a] += 0.3 * e / np.sqrt(Gb[a])
    return W, b, G, Gb, np.array([a]), ft


@pytest.mark.parametrize("m", [1, 2, 4])
@pytest.mark.parametrize("kind", ["epsilon", "igw"])
def test_policy_matches_reference_and_sums_to_m(rng, m, kind):
    K = 6
    for explore in (0.0, 0.2, 1.0) if kind == "epsilon" else (0.0, 3.0, 50.0):
        v = np.round(rng.normal(size=K), 1)  # ties happen
        pi, top, in_top = np.empty(K), np.empty(m, np.int64), np.zeros(K, np.int8)
        policy(v, m, KINDS[kind], explore, top, in_top, pi)
        np.testing.assert_allclose(pi, ref.oracle_policy(v, m, kind, explore), rtol=EXACT_RTOL, atol=EXACT_ATOL)
        assert list(top) == ref.top_m(v, m)
        assert abs(pi.sum() - m) < 1e-12 and (pi >= 0).all() and (pi <= 1 + 1e-15).all()


def test_inverse_gap_probabilities_closed_form():
    """SquareCB's m = 1 distribution: p(a) = 1/(K + γ(v_best − v_a)) for a ≠ best, best the rest."""
    X, y = nf.datasets.synsep(n_samples=3000, seed=1)
    learner = nf.SquareCB(9, gamma_scale=7.0, gamma_exponent=0.5, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=4000, seed=0)
    P = learner.action_probabilities(X[:50])
    v = learner.decision_function(X[:50])
    gamma = 7.0 * np.sqrt(learner.n_updates_[0] + 1.0)
    best = v.argmax(axis=1)
    want = 1.0 / (9 + gamma * (v.max(axis=1, keepdims=True) - v))
    want[np.arange(50), best] = 0.0
    want[np.arange(50), best] = 1.0 - want.sum(axis=1)
    np.testing.assert_allclose(P, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (P[np.arange(50), best] > 0.5).all() and P.min() < 0.01  # it learned and exploits
    actions, probs = learner.act(X[:50])  # the propensity act returns is that distribution's
    np.testing.assert_array_equal(probs, P[np.arange(50), actions])


def _exact_draws(pi, m, perm):
    """{set: P(set | order)} by integrating over u exactly (the drawn set is constant between breakpoints)."""
    cum = np.cumsum(pi[list(perm)])
    bps = np.unique(np.concatenate([[0.0, 1.0], cum - np.floor(cum)]))
    out = {}
    for lo, hi in zip(bps[:-1], bps[1:]):
        S = tuple(ref.systematic_sample(pi, m, 0.5 * (lo + hi), perm))
        out[S] = out.get(S, 0.0) + hi - lo
    return out


@pytest.mark.parametrize("K,m", [(4, 2), (5, 2), (5, 3), (6, 4)])
def test_set_sampler_inclusion_probabilities_by_exact_enumeration(rng, K, m):
    """Inclusion probabilities equal π for EVERY label order (so also over the random order); every drawn
    set has m distinct labels; the kernel's draws and P(set | order) equal the twin's."""
    v = rng.normal(size=K)
    pi = ref.oracle_policy(v, m, "igw", 4.0)
    chosen, scratch = np.empty(m, np.int64), np.empty(m, np.int64)
    for perm in itertools.permutations(range(K)):
        sets = _exact_draws(pi, m, perm)
        assert all(len(set(S)) == m for S in sets) and abs(sum(sets.values()) - 1) < 1e-12
        incl = np.zeros(K)
        for S, p in sets.items():
            incl[list(S)] += p
            np.testing.assert_allclose(set_probability(pi, m, np.array(perm), np.array(S), scratch), p,
                                       rtol=EXACT_RTOL, atol=EXACT_ATOL)
        np.testing.assert_allclose(incl, pi, rtol=EXACT_RTOL, atol=EXACT_ATOL)
        for u in rng.random(5):
            systematic_sample(pi, m, u, np.array(perm), chosen)
            assert list(chosen) == ref.systematic_sample(pi, m, u, perm)


def test_label_order_is_a_uniform_permutation(rng):
    K, n = 4, 24_000
    perm = np.empty(K, np.int64)
    us = rng.random(n * K)
    counts = {}
    for i in range(n):
        label_order(us, i * K, 2, K, perm)
        assert list(perm) == ref.label_order(us[i * K:(i + 1) * K], 2, K)
        counts[tuple(perm)] = counts.get(tuple(perm), 0) + 1
    assert len(counts) == 24 and max(counts.values()) < 1.2 * n / 24 and min(counts.values()) > 0.8 * n / 24
    label_order(us, 0, 1, K, perm)
    assert list(perm) == list(range(K))


@pytest.mark.parametrize("make,channel", [
    (lambda: nf.SquareCB(9, seed=3), nf.feedback.NoisyBandit(0.2, 0.4)),
    (lambda: nf.EpsilonGreedy(9, oracle="normalized", learning_rate=0.5, seed=3), nf.feedback.NoisyBandit(0.1, 0)),
    (lambda: nf.SquareCB(9, m=3, seed=3), nf.feedback.Diluted(3, 0.1, 0.2)),
    (lambda: nf.EpsilonGreedy(9, m=2, seed=3), nf.feedback.Diluted(2)),
])
def test_simulate_equals_python_loop_bit_for_bit(make, channel):
    X, y = nf.datasets.synsep(n_samples=300, seed=2)
    n = 1_500  # > 4 passes: simulate reads coded rows, the loop dense ones
    learner, ref_learner = make(), make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=n, seed=7)
    mistakes = python_loop(ref_learner, X, y, channel, n, seed=7)
    assert trace.mistakes == int(mistakes.sum())
    for name in ("W_", "intercept_", "sum_sq_grad_", "sum_sq_grad_intercept_", "n_updates_", "noise_"):
        np.testing.assert_array_equal(getattr(learner, name), getattr(ref_learner, name))
    assert learner.rng_.bit_generator.state == ref_learner.rng_.bit_generator.state


def test_dense_csr_and_coded_rows_give_identical_traces():
    X, y = nf.datasets.synsep(n_samples=2000, seed=2)
    n = 2500 if JIT_DISABLED else 5000  # past a pass over the rows
    ch = nf.feedback.NoisyBandit(0.2, 0.2)
    traces = [nf.simulate(nf.SquareCB(9, seed=0), Z, y, ch, n_rounds=n, seed=1) for Z in (X, sp.csr_matrix(X))]
    assert traces[0] == traces[1]
    Xf = X * 0.37 + 0.01 * (X > 0) * np.arange(X.shape[1])  # many distinct values: float CSR, not coded
    a = nf.simulate(nf.EpsilonGreedy(9, m=2, seed=0), Xf, y, nf.feedback.Diluted(2), n_rounds=2 * n, seed=1)
    b = nf.simulate(nf.EpsilonGreedy(9, m=2, seed=0), sp.csr_matrix(Xf), y, nf.feedback.Diluted(2), n_rounds=2 * n,
                    seed=1)
    assert a == b


@pytest.mark.slow  # (60,000 rounds: not in the pass without the JIT, whose loops the bit-for-bit tests cover)
@pytest.mark.parametrize("make,channel,bound", [
    (lambda: nf.SquareCB(9, seed=0), nf.feedback.NoisyBandit(0.2, 0.4), 0.10),
    (lambda: nf.EpsilonGreedy(9, seed=0), nf.feedback.NoisyBandit(0.4, 0.4), 0.25),
    (lambda: nf.SquareCB(9, m=3, seed=0), nf.feedback.Diluted(3, 0.1, 0.2), 0.15),
])
def test_learns_with_flips_on_separable_data(make, channel, bound):
    """Chance is 8/9; the last 10 000 rounds err far below it."""
    X, y = nf.datasets.synsep(n_samples=10_000, seed=4)
    trace = nf.simulate(make(), X, y, channel, n_rounds=60_000, seed=0, checkpoints=np.array([50_000, 60_000]))
    late = (trace.curve[1] * 60_000 - trace.curve[0] * 50_000) / 10_000
    assert late < bound, late


def test_set_learner_contract():
    X, y = nf.datasets.synsep(n_samples=500, seed=0)
    learner = nf.SquareCB(9, m=3, seed=0)
    nf.simulate(learner, X, y, nf.feedback.Diluted(3, 0.1, 0.1), n_rounds=3000, seed=0)
    P = learner.action_probabilities(X[:20])
    np.testing.assert_allclose(P.sum(axis=1), 3.0, atol=1e-12)
    assert ((P >= 0) & (P <= 1)).all()
    sets, probs = learner.act(X[:20])
    assert sets.shape == (20, 3) and (np.diff(sets, axis=1) > 0).all() and ((probs > 0) & (probs <= 1)).all()
    proba = learner.predict_proba(X[:20])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(learner.predict(X[:20]), learner.decision_function(X[:20]).argmax(axis=1))
    with pytest.raises(TypeError, match="Diluted"):
        nf.simulate(learner, X, y, nf.feedback.Diluted(2), n_rounds=10, seed=0)
    with pytest.raises(ValueError, match="'m' parameter of EpsilonGreedy"):
        nf.simulate(nf.EpsilonGreedy(9, m=9), X, y, nf.feedback.Diluted(9), n_rounds=10)
    with pytest.raises(TypeError, match="'bandit'"):
        nf.simulate(nf.EpsilonGreedy(9), X, y, nf.feedback.Diluted(2), n_rounds=10)


def test_predict_proba_is_calibrated_for_known_flips():
    """One context, P(y=0) = 0.7, P(y=1) = 0.3; flips (0.2, 0.3): the raw values ≈ ρ0 + (1−ρ0−ρ1)·P, the
    calibrated ones ≈ P."""
    rng = np.random.default_rng(123)  # not the learner's stream (seed 0)
    n = 20_000
    X = np.ones((n, 1))
    y = (rng.random(n) < 0.3).astype(np.int64)
    learner = nf.EpsilonGreedy(2, epsilon=1.0, learning_rate=0.05, rho0=0.2, rho1=0.3, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.2, 0.3), n_rounds=n, seed=0, shuffle=False)
    np.testing.assert_allclose(learner.decision_function(X[:1])[0], [0.2 + 0.5 * 0.7, 0.2 + 0.5 * 0.3], atol=0.03)
    np.testing.assert_allclose(learner.predict_proba(X[:1])[0], [0.7, 0.3], atol=0.06)


def test_class_dependent_flips_break_the_ranking():
    """Where the oracle argument fails: flip rates that depend on the class. One context, P(y=0) = 0.6,
    P(y=1) = 0.4. With class-independent flips (0.3, 0.3) the oracle learns to play 0. If instead playing
    label 1 is reported as a hit half of the times it is wrong (ρ0(1) = 0.5, ρ0(0) = 0), then
    E[f̃ | 1] = 0.5 + 0.5·0.4 = 0.7 > E[f̃ | 0] = 0.6: the oracle ranks the worse label first."""
    rng = np.random.default_rng(123)
    n = 20_000
    X = np.ones((n, 1))
    y = (rng.random(n) < 0.4).astype(np.int64)

    def run(rho0_of_action, rho1):
        learner = nf.EpsilonGreedy(2, epsilon=0.2, learning_rate=0.05, seed=0)
        fb_rng = np.random.default_rng(2)
        for lo in range(0, n, 500):  # logged-data path, chunks of 500 rounds
            a, p = learner.act(X[lo:lo + 500])
            f = (a == y[lo:lo + 500]).astype(np.int64)
            u = fb_rng.random(a.shape[0])
            f = np.where(f == 1, u >= rho1, u < np.asarray(rho0_of_action)[a]).astype(np.int64)
            learner.learn(X[lo:lo + 500], a, f, p)
        return learner.predict(X[:1])[0], learner.decision_function(X[:1])[0]

    label, v = run([0.3, 0.3], 0.3)
    assert label == 0 and v[0] > v[1]  # class-independent: right
    label, v = run([0.0, 0.5], 0.0)
    assert label == 1 and v[1] > v[0] + 0.05  # class-dependent: wrong


# ----------------------------------------------------------------------------- the ridge oracle (m = 1)
def _ridge_solution(Z, f, lam):
    """Batch ridge on z = (x/‖x‖, 1): (λI + Σ z zᵀ)⁻¹ Σ f z, as (weights, intercept)."""
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    Zh = np.hstack([Z / np.where(norms > 0, norms, 1.0), np.ones((Z.shape[0], 1))])
    w = np.linalg.solve(lam * np.eye(Zh.shape[1]) + Zh.T @ Zh, Zh.T @ f)
    return w[:-1], w[-1]


@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_oracle_is_the_batch_ridge_solution_after_every_round(rng, sparse):
    K, n, d, lam = 3, 60, 5, 0.7
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    X[4] = 0.0  # an empty row: z = (0, 1), only the intercept moves
    actions, feedback = rng.integers(0, K, n), rng.integers(0, 2, n)
    learner = nf.SquareCB(K, oracle="ridge", lam=lam, seed=0)
    for t in range(n):
        x = sp.csr_matrix(X[t:t + 1]) if sparse else X[t:t + 1]
        learner.learn(x, actions[t:t + 1], feedback[t:t + 1], np.full(1, 1.0 / K))
        for a in range(K):
            seen = actions[:t + 1] == a
            w, b0 = _ridge_solution(X[:t + 1][seen], feedback[:t + 1][seen].astype(float), lam)
            np.testing.assert_allclose(learner.W_[a], w, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(learner.intercept_[a], b0, rtol=1e-8, atol=1e-10)
    P = learner.ridge_inverse_
    np.testing.assert_array_equal(P, np.swapaxes(P, 1, 2))  # exactly symmetric


def test_ridge_simulate_equals_python_loop_bit_for_bit():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(80, 6)).astype(float) * (rng.random((80, 6)) < 0.4)  # coded rows in simulate
    y = rng.integers(0, 4, size=80)
    make = lambda: nf.SquareCB(4, oracle="ridge", lam=2.0, seed=3)  # noqa: E731
    channel = nf.feedback.NoisyBandit(0.2, 0.1)
    learner, ref_learner = make(), make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=400, seed=7)
    mistakes = python_loop(ref_learner, X, y, channel, 400, seed=7)
    assert trace.mistakes == int(mistakes.sum())
    for name in ("W_", "intercept_", "ridge_inverse_", "n_updates_", "noise_"):
        np.testing.assert_array_equal(getattr(learner, name), getattr(ref_learner, name))


def test_ridge_oracle_learns_where_adagrad_is_slow():
    """A small-d linear problem under flips: ridge far below chance (3/4), and below the AdaGrad oracle."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8))
    y = np.argmax(X @ rng.normal(size=(8, 4)), axis=1)
    ch = nf.feedback.NoisyBandit(0.2, 0.2)
    ridge = nf.simulate(nf.SquareCB(4, oracle="ridge", seed=0), X, y, ch, n_rounds=6000, seed=0).error_rate
    adagrad = nf.simulate(nf.SquareCB(4, oracle="adagrad", seed=0), X, y, ch, n_rounds=6000, seed=0).error_rate
    assert ridge < 0.3 and ridge < adagrad, (ridge, adagrad)


def test_ridge_oracle_parameters_and_state_checks(tmp_path):
    with pytest.raises(ValueError, match="'oracle' parameter of SquareCB"):
        nf.SquareCB(5, m=2, oracle="ridge").act(np.ones((1, 3)))
    with pytest.raises(ValueError, match="'lam' parameter of EpsilonGreedy"):
        nf.EpsilonGreedy(5, oracle="ridge", lam=0.0).act(np.ones((1, 3)))
    X, y = _problem(np.random.default_rng(1))
    learner = nf.SquareCB(5, oracle="ridge", seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=200, seed=0)
    assert learner.ridge_inverse_.shape == (5, X.shape[1] + 1, X.shape[1] + 1)
    learner.save(tmp_path / "ridge.npz")
    back = nf.load(tmp_path / "ridge.npz")
    np.testing.assert_array_equal(back.ridge_inverse_, learner.ridge_inverse_)
    np.testing.assert_array_equal(back.predict(X), learner.predict(X))
    # a file whose inverses do not match d + 1 would let the kernel read past them: refused
    from noisyfeedback._state import check_learned_state
    params = learner.get_params()
    good = {k: v for k, v in vars(learner).items() if k.endswith("_") and isinstance(v, np.ndarray)}
    good.pop("oracle_", None)
    scalars = {"oracle_": learner.oracle_}
    check_learned_state(nf.SquareCB, params, good, scalars)  # the sum is checked after W_ binds d
    for bad in (learner.ridge_inverse_[:, :-1, :-1], np.zeros((5, X.shape[1] + 2, X.shape[1] + 2))):
        with pytest.raises(ValueError, match="ridge_inverse_"):
            check_learned_state(nf.SquareCB, params, {**good, "ridge_inverse_": bad}, scalars)
    without_w = {k: v for k, v in good.items() if k != "W_"}
    with pytest.raises(ValueError, match="W_"):
        check_learned_state(nf.SquareCB, params, without_w, scalars)
    # switching the oracle after fitting: ridge restarts from I/λ, other oracles keep an empty stack
    learner.set_params(oracle="adagrad")
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=50, seed=1)
    assert learner.ridge_inverse_.shape == (5, 0, 0)


# ------------------------------------------------------------- graded (real-valued) rewards
@pytest.mark.parametrize("oracle,m", [("adagrad", 1), ("normalized", 1), ("ridge", 1), ("adagrad", 2)])
def test_learn_graded_rewards_matches_reference(rng, oracle, m):
    """learn with real-valued rewards (never 0 or 1, some negative) = the twin's step on the reward as it is."""
    K, n = 5, 40
    X, _ = _problem(rng, n=n, K=K)
    sets = np.sort(np.array([rng.choice(K, size=m, replace=False) for _ in range(n)]), axis=1)
    f = rng.uniform(-1.0, 1.0, size=n)
    learner = nf.SquareCB(K, m=m, oracle=oracle, learning_rate=0.4, seed=0)
    learner.learn(X, sets[:, 0] if m == 1 else sets, f, np.full(n, 0.5))
    d = X.shape[1]
    W, b, Gb = np.zeros((K, d)), np.zeros(K), np.zeros(K)
    G = np.repeat(np.eye(d + 1)[None], K, axis=0) / learner.lam if oracle == "ridge" else np.zeros((K, d))
    for i in range(n):
        W, b, G, Gb = ref.oracle_learn_step(W, b, G, Gb, X[i], sets[i], f[i], m, 0.4, oracle)
    np.testing.assert_allclose(learner.W_, W, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    np.testing.assert_allclose(learner.intercept_, b, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    assert np.abs(b).max() > 0.05  # the rewards moved the model


@pytest.mark.parametrize("sparse", [False, True])
def test_ridge_oracle_graded_rewards_are_the_batch_ridge_solution(rng, sparse):
    K, n, d, lam = 3, 50, 4, 0.7
    X = rng.normal(size=(n, d))
    actions, f = rng.integers(0, K, n), rng.uniform(-1.0, 1.0, n)
    learner = nf.SquareCB(K, oracle="ridge", lam=lam, seed=0)
    learner.learn(check_X(sp.csr_matrix(X)) if sparse else X, actions, f, np.full(n, 1.0 / K))
    for a in range(K):
        w, b0 = _ridge_solution(X[actions == a], f[actions == a], lam)
        np.testing.assert_allclose(learner.W_[a], w, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(learner.intercept_[a], b0, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("make", [lambda K: nf.SquareCB(K, seed=0), lambda K: nf.EpsilonGreedy(K, seed=0),
                                  lambda K: nf.SquareCB(K, oracle="adagrad", seed=0)],
                         ids=["SquareCB", "EpsilonGreedy", "SquareCB-adagrad"])
def test_graded_rewards_learn_the_good_action(make):
    """A stream where action 2 earns 0.8 and every other action 0.3 (never 0 or 1): the learner learns to
    prefer action 2 (and a learner that read every reward as 0 would not)."""
    rng = np.random.default_rng(7)
    K, n = 4, 3000
    X = rng.normal(size=(n, 6))
    learner = make(K)
    for lo in range(0, n, 100):
        a, p = learner.act(X[lo:lo + 100])
        learner.learn(X[lo:lo + 100], a, np.where(a == 2, 0.8, 0.3), p)
    test = rng.normal(size=(500, 6))
    assert (learner.predict(test) == 2).mean() >= 0.95
    v = learner.decision_function(test).mean(axis=0)
    assert abs(v[2] - 0.8) < 0.15 and np.abs(v[[0, 1, 3]] - 0.3).max() < 0.15  # the rewards as they are


def test_click_rewards_keep_their_bits_whatever_their_dtype(rng):
    """0/1 rewards as int64, bool, float64 (a table, VW text), float32 or −0.0 (−cost of a 0-cost label) take
    the click path: the same bits; fit_logged accepts them all."""
    K, n = 4, 60
    X, _ = _problem(rng, n=n, K=K)
    a, f = rng.integers(0, K, n), rng.integers(0, 2, n)
    p = np.full(n, 0.25)
    want = nf.SquareCB(K, seed=0).learn(X, a, f, p)
    for g in (f.astype(bool), f.astype(np.float64), f.astype(np.float32), np.where(f == 1, 1.0, -0.0)):
        got = nf.SquareCB(K, seed=0).learn(X, a, g, p)
        np.testing.assert_array_equal(got.W_, want.W_)
        np.testing.assert_array_equal(got.intercept_, want.intercept_)
        np.testing.assert_array_equal(nf.SquareCB(K, seed=0).fit_logged(X, a, g, p).W_, want.W_)


def test_negated_costs_have_no_negative_zero(rng):
    """Rewards −cost of costs 0/1 (−0.0 and −1.0, as VW's cost labels read into rewards): fit_logged takes
    them (no dtype complaint) and learns exactly as from 0.0/−1.0; the action of cost 0 wins."""
    K, n = 3, 900
    X = rng.normal(size=(n, 5))
    a = rng.integers(0, K, n)
    cost = (a != 1).astype(np.float64)  # action 1 costs 0, the others 1
    neg = -cost
    assert np.signbit(neg[a == 1]).all()  # the oddity: −0.0
    got = nf.SquareCB(K, seed=0).fit_logged(X, a, neg, np.full(n, 1.0 / K))
    want = nf.SquareCB(K, seed=0).fit_logged(X, a, np.where(cost == 1.0, -1.0, 0.0), np.full(n, 1.0 / K))
    np.testing.assert_array_equal(got.W_, want.W_)
    np.testing.assert_array_equal(got.intercept_, want.intercept_)
    graded = check_rewards(np.array([0.5, -0.0, -1.0]), 3, "SquareCB")
    assert graded.dtype == np.float64 and not np.signbit(graded[1])
    assert (got.predict(X[:200]) == 1).mean() >= 0.95


@pytest.mark.parametrize("params", [dict(rho0=0.1), dict(rho1=0.2), dict(rho0=[0.0, 0.1, 0.0]),
                                    dict(rho0="estimate", rho1="estimate")])
def test_graded_rewards_with_flip_rates_are_refused(params):
    X = np.random.default_rng(0).normal(size=(3, 4))
    learner = nf.SquareCB(3, seed=0, **params)
    with pytest.raises(ValueError, match=r"flip correction is for clicks \(rewards 0 or 1\), but row 1 has 0.5"):
        learner.learn(X, [0, 1, 2], [1, 0.5, 0], np.full(3, 1 / 3))
    assert not hasattr(learner, "W_") or not learner.W_.any()  # nothing learned
    with pytest.raises(ValueError, match="flip correction is for clicks"):
        learner.fit_logged(X, [0, 1, 2], np.array([1.0, 0.5, 0.0]), np.full(3, 1 / 3))
    learner.learn(X, [0, 1, 2], np.array([1.0, 0.0, 1.0]), np.full(3, 1 / 3))  # clicks: the correction applies


def test_bad_rewards_are_refused_naming_the_row():
    X = np.random.default_rng(0).normal(size=(3, 4))
    learner = nf.SquareCB(3, seed=0)
    with pytest.raises(ValueError, match="feedback must be finite; row 2 has nan"):
        learner.learn(X, [0, 1, 2], [0.5, 0.2, np.nan], np.full(3, 1 / 3))
    with pytest.raises(TypeError, match="feedback must hold numbers"):
        learner.learn(X, [0, 1, 2], ["a", "b", "c"], np.full(3, 1 / 3))
    with pytest.raises(ValueError, match=r"feedback must have shape \(3,\)"):
        learner.learn(X, [0, 1, 2], [0.5, 0.2], np.full(3, 1 / 3))
    # a learner of clicks names itself and the row, and points to the regression oracles
    with pytest.raises(ValueError, match=r"0 or 1 \(Banditron learns from clicks.*row 1 has 0.5"):
        nf.Banditron(3, seed=0).fit_logged(X, [0, 1, 2], np.array([1.0, 0.5, 0.0]), np.full(3, 1 / 3))
