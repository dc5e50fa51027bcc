"""SquareCB's adaptive γ_scale (the default): γ_scale = clip(c·√K/σ̂, low, high) from the oracle's own residuals."""

import numpy as np
import pytest
import reference as ref
from conftest import JIT_DISABLED
from tolerances import KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback.kernels.oracle import ORACLE_ADAGRAD, ORACLE_RIDGE, POLICY_IGW, adaptive_scale, oracle_simulate
from noisyfeedback.learners._linear import kernel_view
from noisyfeedback.learners.bandit.squarecb import ADAPTIVE_GAMMA

ORACLES = {"adagrad": ORACLE_ADAGRAD, "ridge": ORACLE_RIDGE}


def test_adaptive_scale_is_the_formula_and_clips():
    adapt = np.array([3.0, 50.0, 2.0, 100.0, 0.25])
    for sq, n in ((0.0, 0.0), (5.0, 100.0), (30.0, 200.0), (1e-3, 1e6), (1e6, 10.0)):
        want = ref.adaptive_scale(sq, n, 3.0, 50.0, 2.0, 100.0, 0.25)
        assert adaptive_scale(7.0, np.array([sq, n]), adapt) == pytest.approx(want, rel=1e-15)
    assert adaptive_scale(7.0, np.array([0.0, 0.0]), adapt) == pytest.approx(3.0 / 0.5)  # the prior's σ̂ = 0.5
    assert adaptive_scale(7.0, np.array([1e-3, 1e6]), adapt) == 50.0  # predicted well: the upper bound
    assert adaptive_scale(7.0, np.array([1e6, 10.0]), adapt) == 2.0  # the lower bound
    assert adaptive_scale(7.0, np.array([5.0, 100.0]), np.zeros(0)) == 7.0  # nothing to adapt: the fixed value


@pytest.mark.parametrize("oracle,m", [("adagrad", 1), ("ridge", 1), ("adagrad", 3)])
def test_simulate_kernel_with_adaptive_gamma_matches_reference(rng, oracle, m):
    """Each round's γ_t = clip(c/σ̂_t, low, high)·√(t+1), σ̂_t from the residuals of the rounds before it."""
    K, d, T = 5, 6, 150
    X = rng.normal(size=(40, d))
    y = rng.integers(0, K, size=40)
    order = rng.integers(0, 40, size=T)
    nu = 1 if m == 1 else K
    u_l, u_f = rng.random(T * nu), rng.random(T)
    c, high, low, n0, s0 = 4.0, 60.0, 1.5, 10.0, 0.25
    lam, lr = 0.5, 0.2
    W = np.zeros((K, d), order="F")
    b, G, Gb, t = np.zeros(K), np.zeros((K, d)), np.zeros(K), np.zeros(1, np.int64)
    P = np.repeat(np.eye(d + 1)[None] / lam, K, axis=0) if oracle == "ridge" else np.zeros((K, 0, 0))
    noise = np.zeros(2)
    mistakes = np.empty(T, np.int8)
    oracle_simulate(ORACLES[oracle], W, b, G, Gb, P, t, *kernel_view(X), y, order, m, POLICY_IGW, 999.0, 0.5, lr,
                    np.array([0.1]), np.array([0.2]), u_l, u_f, mistakes, np.empty(T), np.zeros(0), np.zeros(0),
                    np.zeros(0), np.zeros((0, 0)), noise, np.array([c, high, low, n0, s0]))
    Wr, br, Gr, Gbr = np.zeros((K, d)), np.zeros(K), np.zeros((K, d)), np.zeros(K)
    if oracle == "ridge":
        Gr = np.repeat(np.eye(d + 1)[None] / lam, K, axis=0)
    sq, gammas = 0.0, []
    for s, i in enumerate(order):
        g = ref.adaptive_scale(sq, s, c, high, low, n0, s0)
        gammas.append(g)
        v = Wr @ (X[i] / np.linalg.norm(X[i])) + br
        Wr, br, Gr, Gbr, yhat, S, ft = ref.oracle_step(Wr, br, Gr, Gbr, X[i], None, y[i], m, "igw",
                                                       g * np.sqrt(s + 1.0), lr, u_l[s * nu:(s + 1) * nu], u_f[s],
                                                       0.1, 0.2, oracle)
        sq += (ft - v[S].sum()) ** 2
        assert mistakes[s] == int(yhat != y[i])
    assert len(set(np.round(gammas, 9))) > 20 and min(gammas) < high  # γ_scale moved, within its bounds
    np.testing.assert_allclose(noise, [sq, T], rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    for got, want in ((W, Wr), (b, br), (P if oracle == "ridge" else G, Gr)):
        np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


@pytest.mark.parametrize("g", [3.0, 10.0, 250.0])
def test_a_pair_of_equal_bounds_is_the_fixed_gamma_bit_for_bit(g):
    """The adaptive exploration with one point (high = low = g) is the fixed γ_scale g: the same trace and weights."""
    X, y = nf.datasets.synsep(n_samples=500, seed=1)
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    pair, fixed = nf.SquareCB(9, gamma_scale=(g, g), seed=2), nf.SquareCB(9, gamma_scale=g, seed=2)
    tp = nf.simulate(pair, X, y, ch, n_rounds=3_000, seed=4)
    tf = nf.simulate(fixed, X, y, ch, n_rounds=3_000, seed=4)
    assert tp.mistakes == tf.mistakes
    np.testing.assert_array_equal(pair.W_, fixed.W_)
    assert pair.gamma_scale_in_use() == fixed.gamma_scale_in_use() == g
    adaptive = nf.SquareCB(9, gamma_scale=(10 * g, g / 10), seed=2)  # two points apart: it adapts, and differs
    nf.simulate(adaptive, X, y, ch, n_rounds=3_000, seed=4)
    assert not np.array_equal(adaptive.W_, fixed.W_)


def test_explores_less_where_the_feedback_is_predicted_well():
    """Clean feedback on separable rows: small residuals, a γ_scale at least twice that of flips (0.2, 0.4), whose
    σ̂ is about the flips' own standard deviation; and the default learns in both."""
    X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    n = 4_000 if JIT_DISABLED else 20_000
    out = {}
    for ch in ((0.0, 0.0), (0.2, 0.4)):
        learner = nf.SquareCB(9, seed=0)
        trace = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(*ch), n_rounds=n, seed=0)
        assert trace.error_rate < 0.3  # chance is 8/9
        assert learner.noise_[1] == n
        out[ch] = (learner.gamma_scale_in_use(), np.sqrt(learner.noise_[0] / n))
    (g_clean, s_clean), (g_flip, s_flip) = out[(0.0, 0.0)], out[(0.2, 0.4)]
    assert s_clean < 0.5 * s_flip and 0.35 < s_flip < 0.55
    assert g_clean > 2 * g_flip
    c, n0, s0 = ADAPTIVE_GAMMA
    want = c * 3.0 / np.sqrt((s_flip ** 2 * n + n0 * s0) / (n + n0))
    assert g_flip == pytest.approx(want, rel=1e-12)


def test_learn_adds_the_residuals_of_the_logged_rows():
    """learn: Σ (f − v_a)² over the logged rows, v_a the value before each row's step (one row a call or all at
    once: the same numbers)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 5))
    a = rng.integers(0, 4, size=60)
    f = rng.random(60) * 3.0  # graded rewards
    one, batch = nf.SquareCB(4, seed=0), nf.SquareCB(4, seed=0)
    want = 0.0
    for i in range(60):
        v = one.decision_function(X[i:i + 1])[0, a[i]]
        want += (f[i] - v) ** 2
        one.learn(X[i:i + 1], a[i:i + 1], f[i:i + 1], np.full(1, 0.25))
    batch.learn(X, a, f, np.full(60, 0.25))
    np.testing.assert_array_equal(one.noise_, batch.noise_)
    assert one.noise_[1] == 60 and one.noise_[0] == pytest.approx(want, rel=1e-9)


def test_a_model_file_without_the_residuals_loads(tmp_path):
    """Model files saved before the residuals were kept: they start from zeros (the prior's γ_scale)."""
    X, y = nf.datasets.synsep(n_samples=300, seed=1)
    learner = nf.SquareCB(9, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=600, seed=0)
    back = nf.load(learner.save(tmp_path / "m"))
    np.testing.assert_array_equal(back.noise_, learner.noise_)
    assert back.gamma_scale_in_use() == learner.gamma_scale_in_use()
    del learner.noise_
    old = nf.load(learner.save(tmp_path / "old"))
    assert not hasattr(old, "noise_") or not old.noise_.any()
    old.act(X[:3])
    np.testing.assert_array_equal(old.noise_, np.zeros(2))
