"""MC-SLP and MC-DBF (Batra & Manwani 2021, docs/algorithms.md §4.8-4.9): exact set probabilities, unbiasedness by
enumeration, reduction to Banditron / Perceptron at m = 1, kernels vs reference twins, compiled vs Python loop."""

from itertools import combinations
from math import comb

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from conftest import JIT_DISABLED
from tolerances import EXACT_ATOL, EXACT_RTOL

import noisyfeedback as nf
from noisyfeedback._validation import check_X
from noisyfeedback.kernels.diluted import (
    draw_set,
    mcdbf_act,
    mcdbf_learn,
    mcdbf_simulate,
    mcslp_learn,
    mcslp_simulate,
    set_probability,
    top_m,
)
from noisyfeedback.learners._linear import kernel_view
from noisyfeedback.simulate import round_order, simulation_streams

KM = [(K, m) for K in range(2, 8) for m in range(1, K)]  # every K <= 7, 1 <= m < K


# ----------------------------------------------------------------- helpers
def _top(s, m):
    K = s.shape[0]
    top, in_hat = np.empty(m, np.int64), np.zeros(K, np.int8)
    top_m(np.asarray(s, dtype=float), m, top, in_hat)
    return top, in_hat


def _kernel_Z(A, top, m, K, gamma):
    """Z(A) from the compiled DP."""
    in_hat = set(int(r) for r in top)
    n_hi = sum(1 for a in A if a in in_hat)
    return set_probability(n_hi, m - n_hi, m, K, gamma / K + (1.0 - gamma) / m, gamma / K, np.empty(m + 1))


NO_RATES = np.zeros(0)  # the learner's per-label rates: none (one pair, h0 and h1)
NO_FLIPS = np.zeros(1)  # flip rates of the compiled loops (float64 arrays, `feedback.kernel_feedback`): none


def _learn_one(W, x, A, f, Z, m, h=(0.0, 1.0)):
    """W after the real MC-DBF kernel's update on one logged round (set A, feedback f, Z)."""
    K = W.shape[0]
    Wn = W.copy()
    tau1, tau2 = nf.MCDBF(K, m)._taus()
    mcdbf_learn(Wn, *kernel_view(x[None]), m, tau1, tau2, h[0], h[1], np.array([A], np.int64), np.array([f]),
                np.array([Z]), NO_RATES, NO_RATES)
    return Wn


def _random_case(rng, K):
    d = int(rng.integers(1, 5))
    W = rng.normal(size=(K, d))
    x = rng.normal(size=d)
    if rng.random() < 0.2:
        W[:] = 0.0  # every score tied: Ŷ = {0, ..., m-1}
    return W, x, int(rng.integers(K)), float(rng.choice([1e-3, rng.uniform(0.01, 0.99), 0.999]))


def _U(W, x, y, m):
    """MC-SLP's update (e_y − 1[r∈Ŷ]/m) ⊗ x, straight from the formula."""
    K = W.shape[0]
    c = np.zeros(K)
    c[y] = 1.0
    c[ref.top_m(W @ x, m)] -= 1.0 / m
    return np.outer(c, x)


# ---------------------------------------------------------- top-m selection
@pytest.mark.parametrize("s", [[0.0, 0.0, 0.0, 0.0], [1.0, 3.0, 3.0, 2.0], [-1.0, -1.0, -2.0, 5.0],
                               [2.0, 1.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
def test_top_m_takes_lowest_index_on_ties(s):
    s = np.array(s)
    for m in range(1, s.shape[0]):
        top, in_hat = _top(s, m)
        assert top.tolist() == ref.top_m(s, m)
        assert top[0] == int(np.argmax(s))  # consistent with argmax_first
        assert in_hat.tolist() == [int(r in top) for r in range(s.shape[0])]


# ------------------------------------------------- exact set probabilities Z
@pytest.mark.parametrize("K,m", KM)
def test_set_probability_is_exact_and_sums_to_one(K, m):
    rng = np.random.default_rng(100 * K + m)
    for gamma in (1e-6, 0.05, float(rng.uniform(0.1, 0.9)), 1 - 1e-9):
        W, x, _, _ = _random_case(rng, K)
        top = ref.top_m(W @ x, m)
        P = ref.dbf_probs(top, gamma, K)
        assert P.sum() == pytest.approx(1.0, abs=1e-14)
        total = 0.0
        for A in combinations(range(K), m):
            Z = _kernel_Z(A, top, m, K, gamma)
            assert Z == pytest.approx(ref.set_probability(A, P), rel=EXACT_RTOL, abs=1e-300), (A, gamma)
            total += Z
        assert total == pytest.approx(1.0, rel=EXACT_RTOL, abs=EXACT_ATOL)


@pytest.mark.parametrize("K,m", [(2, 1), (4, 1), (4, 2), (5, 3), (6, 5), (7, 3), (9, 3)])
def test_draw_set_matches_reference_and_returns_its_Z(K, m):
    rng = np.random.default_rng(K * 10 + m)
    chosen, in_set, G = np.empty(m, np.int64), np.zeros(K, np.int8), np.empty(m + 1)
    for trial in range(60):
        gamma = float(rng.choice([1e-6, 0.1, 0.5, 1 - 1e-9]))
        s = rng.integers(-2, 3, size=K).astype(float)  # frequent ties
        top, in_hat = _top(s, m)
        P = ref.dbf_probs(ref.top_m(s, m), gamma, K)
        us = rng.random(m)
        if trial % 5 == 0:  # boundary uniforms
            us[:] = [0.0, np.nextafter(1.0, 0.0), 0.5][trial % 3]
        Z = draw_set(top, in_hat, m, gamma, us, 0, chosen, in_set, G)
        A = ref.draw_set(P, us)
        assert chosen.tolist() == A
        assert in_set.tolist() == [int(r in A) for r in range(K)]
        assert Z == pytest.approx(ref.set_probability(A, P), rel=EXACT_RTOL)


def test_draw_set_frequencies_follow_Z(rng):
    K, m, gamma = 5, 2, 0.3
    top, in_hat = _top(np.array([0.0, 3.0, 1.0, 2.0, -1.0]), m)
    chosen, in_set, G = np.empty(m, np.int64), np.zeros(K, np.int8), np.empty(m + 1)
    n = 40_000
    u = rng.random(n * m)
    counts: dict = {}
    for i in range(n):
        draw_set(top, in_hat, m, gamma, u, i * m, chosen, in_set, G)
        key = tuple(chosen.tolist())
        counts[key] = counts.get(key, 0) + 1
    for A in combinations(range(K), m):
        Z = _kernel_Z(A, top, m, K, gamma)
        # 5 standard errors of a binomial proportion
        assert abs(counts.get(A, 0) / n - Z) < 5 * np.sqrt(Z * (1 - Z) / n) + 1e-12, A


# --------------------------------------------------- unbiasedness by enumeration
def test_tau2_is_the_binomial_ratio():
    for K, m in KM:
        tau1, tau2 = nf.MCDBF(K, m)._taus()
        assert tau1 == comb(K - 2, m - 1)
        # N(y, r)/τ1 for r ≠ y, and for r = y minus 1 (Pascal's rule): both are τ2
        assert comb(K - 2, m - 2) / tau1 == pytest.approx(tau2, rel=1e-15) if m >= 2 else tau2 == 0.0
        assert comb(K - 1, m - 1) / tau1 - 1 == pytest.approx(tau2, rel=1e-15, abs=1e-15)
    assert nf.MCDBF(9, 1)._taus() == (1.0, 0.0)


@pytest.mark.parametrize("K,m", KM)
def test_acceptance_expected_update_is_the_mcslp_update(K, m):
    """Σ_A Z(A)·Ũ(A) = U exactly, Ũ from the real kernel, f = 1[y ∈ A]; and MC-SLP's kernel applies U."""
    rng = np.random.default_rng(1000 + 10 * K + m)
    for _ in range(3):
        W, x, y, gamma = _random_case(rng, K)
        top = _top(W @ x, m)[0]
        expected = np.zeros_like(W)
        for A in combinations(range(K), m):
            Z = _kernel_Z(A, top, m, K, gamma)
            expected += Z * (_learn_one(W, x, list(A), int(y in A), Z, m) - W)
        U = _U(W, x, y, m)
        np.testing.assert_allclose(expected, U, rtol=EXACT_RTOL, atol=1e-9)
        Ws = W.copy()
        mcslp_learn(Ws, *kernel_view(x[None]), m, np.array([y]))
        np.testing.assert_allclose(Ws - W, U, rtol=EXACT_RTOL, atol=EXACT_ATOL)


@pytest.mark.parametrize("K,m", [(2, 1), (3, 2), (4, 1), (4, 2), (5, 3), (6, 4), (7, 3), (7, 6)])
@pytest.mark.parametrize("rho0,rho1", [(0.2, 0.4), (0.4, 0.2), (0.0, 0.7), (0.3, 0.0)])
def test_acceptance_noisy_diluted_estimator_is_unbiased(K, m, rho0, rho1):
    """Enumerate the set A and the observed f̃ with its probability: the average update is U."""
    rng = np.random.default_rng(K * m)
    h = nf.MCDBF(K, m, rho0=rho0, rho1=rho1)._h()
    assert (1 - rho1) * h[1] + rho1 * h[0] == pytest.approx(1.0)
    assert rho0 * h[1] + (1 - rho0) * h[0] == pytest.approx(0.0, abs=1e-15)
    for _ in range(2):
        W, x, y, gamma = _random_case(rng, K)
        top = _top(W @ x, m)[0]
        expected = np.zeros_like(W)
        for A in combinations(range(K), m):
            Z = _kernel_Z(A, top, m, K, gamma)
            f = int(y in A)
            for ft in (0, 1):
                p_ft = (1 - rho1 if ft else rho1) if f else (rho0 if ft else 1 - rho0)
                expected += Z * p_ft * (_learn_one(W, x, list(A), ft, Z, m, h) - W)
        np.testing.assert_allclose(expected, _U(W, x, y, m), rtol=EXACT_RTOL, atol=1e-9)


# ------------------------------------------------------- reduction at m = 1
@pytest.fixture(scope="module")
def synsep_data():
    return nf.datasets.synsep(n_samples=5000, seed=3)


@pytest.mark.parametrize("rho0,rho1", [(0.0, 0.0), (0.2, 0.4)])
def test_acceptance_mcdbf_with_m1_is_banditron_bit_for_bit(synsep_data, rho0, rho1):
    X, y = synsep_data
    n = 2_000 if JIT_DISABLED else 50_000
    assert nf.MCDBF(9, 1).draws_per_round == nf.Banditron(9).draws_per_round == 1
    assert nf.feedback.Diluted(1).draws_per_round(9) == nf.feedback.NoisyBandit().draws_per_round(9) == 1
    d = nf.MCDBF(9, 1, gamma=0.07, rho0=rho0, rho1=rho1, seed=4)
    b = nf.RCNBF(9, gamma=0.07, rho0=rho0, rho1=rho1, seed=4) if rho0 else nf.Banditron(9, gamma=0.07, seed=4)
    td = nf.simulate(d, X, y, nf.feedback.Diluted(1, rho0, rho1), n_rounds=n, seed=2)
    tb = nf.simulate(b, X, y, nf.feedback.NoisyBandit(rho0, rho1), n_rounds=n, seed=2)
    assert td.mistakes == tb.mistakes
    np.testing.assert_array_equal(td.curve, tb.curve)
    np.testing.assert_array_equal(d.W_, b.W_)
    # with m = 1 the greedy set is the greedy label
    np.testing.assert_array_equal(td.metrics["set_miss_curve"], td.curve)
    # act/learn too: same sets, same propensities
    sets, z = d.act(X[:50])
    actions, p = b.act(X[:50])
    np.testing.assert_array_equal(sets[:, 0], actions)
    np.testing.assert_array_equal(z, p)


def test_mcslp_with_m1_is_the_perceptron_bit_for_bit(synsep_data):
    X, y = synsep_data
    n = 2_000 if JIT_DISABLED else 30_000
    C = np.full((9, 9), 0.05) + 0.55 * np.eye(9)
    for ch in (nf.feedback.FullLabel(), nf.feedback.ConfusionNoise(C)):
        a, b = nf.MCSLP(9, 1), nf.Perceptron(9)
        ta = nf.simulate(a, X, y, ch, n_rounds=n, seed=1)
        tb = nf.simulate(b, X, y, ch, n_rounds=n, seed=1)
        assert ta.mistakes == tb.mistakes
        np.testing.assert_array_equal(a.W_, b.W_)


# --------------------------------------------------- kernels vs reference twins
def _problem(rng, n=40, d=6, K=5):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    X[2] = 0.0  # x = 0: the update changes nothing
    y = rng.integers(0, K, size=n)
    return X, y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("m", [1, 2, 4])
@pytest.mark.parametrize("rho", [(0.0, 0.0), (0.2, 0.1)])
def test_mcdbf_simulate_matches_reference(rng, sparse, m, rho):
    K, gamma, T = 5, 0.3, 120
    rho0, rho1 = rho
    X, y = _problem(rng, K=K)
    order = np.concatenate([np.arange(X.shape[0]), rng.integers(0, X.shape[0], size=T - X.shape[0])])
    u_l, u_f = rng.random(T * m), rng.random(T)
    h = nf.MCDBF(K, m, rho0=rho0, rho1=rho1)._h()
    tau1, tau2 = nf.MCDBF(K, m)._taus()
    W = np.zeros((K, X.shape[1]), order="F")
    mistakes, miss = np.empty(T, np.int8), np.empty(T)
    Xk = check_X(sp.csr_matrix(X)) if sparse else X
    mcdbf_simulate(W, *kernel_view(Xk), y, order, m, gamma, tau1, tau2, h[0], h[1], np.array([rho0]), np.array([rho1]),
                   u_l, u_f, mistakes, miss, NO_RATES, NO_RATES)
    Wref = np.zeros_like(W)
    for t, i in enumerate(order):
        Wref, yhat, A, Z, ft, sm = ref.mcdbf_step(Wref, X[i], y[i], m, gamma, u_l[t * m:(t + 1) * m], u_f[t],
                                                  rho0, rho1)
        assert mistakes[t] == int(yhat != y[i]) and miss[t] == sm, t
    np.testing.assert_allclose(W, Wref, rtol=1e-9, atol=1e-9)
    assert np.abs(W).sum() > 0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("m", [1, 2, 4])
def test_mcslp_simulate_matches_reference(rng, sparse, m):
    K, T = 5, 100
    X, y = _problem(rng, K=K)
    X = np.round(X)  # integer data: exact sums for m in {1, 2, 4}
    order = rng.integers(0, X.shape[0], size=T)
    C = rng.random((K, K)) + 2 * np.eye(K)
    C /= C.sum(axis=0)
    Ccum = np.cumsum(C, axis=0)
    u_f = rng.random(T)
    for code in (0, 1):
        W = np.zeros((K, X.shape[1]), order="F")
        mistakes, miss = np.empty(T, np.int8), np.empty(T)
        mcslp_simulate(W, *kernel_view(check_X(sp.csr_matrix(X)) if sparse else X), y, order, m, code, u_f, Ccum,
                       mistakes, miss)
        Wref = np.zeros_like(W)
        for t, i in enumerate(order):
            label = ref.inverse_cdf(C[:, y[i]], u_f[t]) if code else y[i]
            Wn, top = ref.mcslp_step(Wref, X[i], label, m)
            assert mistakes[t] == int(top[0] != y[i]) and miss[t] == int(y[i] not in top)
            Wref = Wn
        np.testing.assert_array_equal(W, Wref)


@pytest.mark.parametrize("m", [1, 3])
def test_mcdbf_act_then_learn_equals_simulate(rng, m):
    K, n = 6, 40
    X, y = _problem(rng, n=n, K=K)
    u_l, u_f = rng.random(n * m), rng.random(n)
    tau1, tau2 = nf.MCDBF(K, m)._taus()
    W1 = np.zeros((K, X.shape[1]), order="F")
    mcdbf_simulate(W1, *kernel_view(X), y, np.arange(n), m, 0.2, tau1, tau2, 0.0, 1.0, NO_FLIPS, NO_FLIPS, u_l, u_f,
                   np.empty(n, np.int8), np.empty(n), NO_RATES, NO_RATES)
    W2 = np.zeros_like(W1)
    for i in range(n):
        sets, z = np.empty((1, m), np.int64), np.empty(1)
        mcdbf_act(W2, *kernel_view(X[i:i + 1]), m, 0.2, u_l[i * m:(i + 1) * m], sets, z)
        f = np.array([int(y[i] in sets[0])])
        mcdbf_learn(W2, *kernel_view(X[i:i + 1]), m, tau1, tau2, 0.0, 1.0, sets, f, z, NO_RATES, NO_RATES)
    np.testing.assert_array_equal(W1, W2)


# ------------------------------------------------- compiled loop vs Python loop
def python_loop(learner, X, y, channel, n_rounds, seed):
    """Public predict/predict_set/act/respond/learn, one round at a time (as tests/core/test_simulate.py)."""
    rng_order, rng_feedback, _ = simulation_streams(seed)
    order = round_order(X.shape[0], n_rounds, rng_order)
    mistakes, miss = np.empty(n_rounds, np.int64), np.empty(n_rounds)
    for t in range(n_rounds):
        i = order[t]
        x = X[i:i + 1]
        mistakes[t] = learner.predict(x)[0] != y[i]
        miss[t] = y[i] not in learner.predict_set(x)[0]
        actions, propensities = learner.act(x)
        feedback = channel.respond(y[i:i + 1], actions, rng_feedback)
        learner.learn(x, actions, feedback, propensities)
    return mistakes, miss


@pytest.mark.parametrize(
    "make,channel",
    [
        (lambda: nf.MCDBF(9, 3, gamma=0.2, seed=5), nf.feedback.Diluted(3)),
        (lambda: nf.MCDBF(9, 2, gamma=0.3, rho0=0.1, rho1=0.2, seed=5), nf.feedback.Diluted(2, 0.1, 0.2)),
        (lambda: nf.MCDBF(9, 1, gamma=0.1, seed=5), nf.feedback.Diluted(1)),
        (lambda: nf.MCSLP(9, 3), nf.feedback.FullLabel()),
        (lambda: nf.MCSLP(9, 2), nf.feedback.ConfusionNoise(np.full((9, 9), 0.05) + 0.55 * np.eye(9))),
    ],
)
def test_acceptance_compiled_loop_equals_python_loop(synsep_data, make, channel):
    X, y = synsep_data
    X, y = X[:300], y[:300]
    n = 600 if JIT_DISABLED else 1_500
    learner, ref_learner = make(), make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=n, seed=7)
    mistakes, miss = python_loop(ref_learner, X, y, channel, n, seed=7)
    assert trace.mistakes == int(mistakes.sum())
    np.testing.assert_array_equal(learner.W_, ref_learner.W_)  # bit for bit
    cps = trace.checkpoints
    np.testing.assert_array_equal(trace.metrics["set_miss_curve"], np.cumsum(miss)[cps - 1] / cps)
    assert trace.metrics["set_miss_rate"] == miss.sum() / n
    if hasattr(learner, "rng_"):
        assert learner.rng_.bit_generator.state == ref_learner.rng_.bit_generator.state


@pytest.mark.parametrize("make,channel", [(lambda: nf.MCDBF(9, 3, gamma=0.2, seed=0), nf.feedback.Diluted(3, 0.1, 0.1)),
                                          (lambda: nf.MCSLP(9, 4), nf.feedback.FullLabel())])
def test_dense_and_csr_give_identical_traces(synsep_data, make, channel):
    X, y = synsep_data
    n = 1_000 if JIT_DISABLED else 20_000
    a, b = make(), make()
    ta = nf.simulate(a, X, y, channel, n_rounds=n, seed=2)
    tb = nf.simulate(b, sp.csr_matrix(X), y, channel, n_rounds=n, seed=2)
    assert ta == tb
    np.testing.assert_array_equal(a.W_, b.W_)


# ---------------------------------------------------------------- learning
@pytest.mark.skipif(JIT_DISABLED, reason="learning quality needs many rounds")
def test_acceptance_learning_happens_on_synsep():
    """MC-SLP and MC-DBF (m = 3) at 100k rounds, far below chance 1 − 1/9.

    Measured (seeds 0, 1): MC-SLP ~1e-4; MC-DBF m=3 0.002-0.003 at γ = 0.4, 0.03 at γ = 0.1,
    0.08-0.11 at γ = 0.05 and ~0.5-0.7 at γ ≤ 0.02: small γ makes 1/Z, hence the variance of
    the estimate, explode (Z ~ m!·(γ/K)^m for sets outside Ŷ), so the best γ grows with m.
    """
    X, y = nf.datasets.synsep(n_samples=20_000, seed=3)
    chance = 1 - 1 / 9
    slp = nf.simulate(nf.MCSLP(9, 3), X, y, nf.feedback.FullLabel(), n_rounds=100_000, seed=0)
    assert slp.error_rate < 0.01 and slp.metrics["set_miss_rate"] <= slp.error_rate
    for gamma in (0.1, 0.4):
        dbf = nf.simulate(nf.MCDBF(9, 3, gamma=gamma, seed=0), X, y, nf.feedback.Diluted(3), n_rounds=100_000,
                          seed=0)
        assert dbf.error_rate < 0.1 * chance, (gamma, dbf.error_rate)
        assert 0 <= dbf.metrics["set_miss_rate"] <= dbf.error_rate
        assert dbf.metrics["set_miss_curve"].shape == dbf.curve.shape
    noisy = nf.simulate(nf.MCDBF(9, 3, gamma=0.4, rho0=0.1, rho1=0.2, seed=0), X, y, nf.feedback.Diluted(3, 0.1, 0.2),
                        n_rounds=100_000, seed=0)
    assert noisy.error_rate < 0.2 * chance


# ------------------------------------------------------------ API and errors
def test_sets_and_propensities_from_act():
    X, y = nf.datasets.synsep(n_samples=200, seed=0)
    learner = nf.MCDBF(9, 4, gamma=0.5, seed=1)
    nf.simulate(learner, X, y, nf.feedback.Diluted(4), n_rounds=500, seed=0)
    sets, z = learner.act(X)
    assert sets.shape == (200, 4) and sets.dtype == np.int64 and z.shape == (200,)
    assert (np.diff(sets, axis=1) > 0).all()  # distinct, increasing
    assert ((z > 0) & (z <= 1)).all()
    np.testing.assert_array_equal(learner.predict_set(X)[:, 0], learner.predict(X))
    assert nf.MCSLP(9, 3).predict_set(X[:2]).tolist() == [[0, 1, 2], [0, 1, 2]]


@pytest.mark.parametrize("cls,kw", [(nf.MCSLP, {}), (nf.MCDBF, {"gamma": 0.1})])
def test_m_must_be_below_n_classes(cls, kw):
    X, y = nf.datasets.synsep(n_samples=50, seed=0)
    for m in (9, 12):
        with pytest.raises(ValueError, match=r"'m' parameter of .* must be an int in \[1, n_classes-1\] = \[1, 8\]"):
            cls(9, m, **kw).predict(X)
    with pytest.raises(ValueError, match="'m' parameter"):
        cls(9, 0, **kw).predict(X)
    with pytest.raises(TypeError, match="'m' parameter"):
        cls(9, 2.0, **kw).predict(X)


def test_mcdbf_rejects_bad_inputs():
    X, y = nf.datasets.synsep(n_samples=50, seed=0)
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1"):
        nf.MCDBF(9, 2, rho0=0.5, rho1=0.5).predict(X)
    with pytest.raises(ValueError, match="m=3"):
        nf.simulate(nf.MCDBF(9, 3, seed=0), X, y, nf.feedback.Diluted(2), n_rounds=10)
    with pytest.raises(TypeError, match="'set'"):
        nf.simulate(nf.MCDBF(9, 3, seed=0), X, y, nf.feedback.NoisyBandit(0, 0), n_rounds=10)
    with pytest.raises(TypeError, match="'label'"):
        nf.simulate(nf.MCSLP(9, 3), X, y, nf.feedback.Diluted(3), n_rounds=10)
    learner = nf.MCDBF(9, 3, seed=0)
    sets, z = learner.act(X[:5])
    f = np.ones(5, np.int64)
    dup = sets.copy()
    dup[3] = [1, 1, 2]
    with pytest.raises(ValueError, match="distinct labels per row; row 3"):
        learner.learn(X[:5], dup, f, z)
    with pytest.raises(ValueError, match="shape \\(5, 3\\)"):
        learner.learn(X[:5], sets[:, :2], f, z)
    with pytest.raises(TypeError, match="integer"):
        learner.learn(X[:5], sets.astype(float), f, z)
    # m = 1 accepts a 1-D array of actions, as Banditron's logs are
    one = nf.MCDBF(9, 1, seed=0)
    a, p = one.act(X[:5])
    one.learn(X[:5], a[:, 0], f, p)
