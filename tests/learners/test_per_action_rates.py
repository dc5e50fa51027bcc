"""Flip rates per action: ``rho0``/``rho1`` as arrays of K rates for the learners and the channels.

Checked: the per-action correction is unbiased (exact enumeration); equal per-action rates give the
scalar-rate learner bit for bit; the compiled loop equals the public act/respond/learn loop with
per-action rates; parameter checks; the correction fixes the ranking that action-dependent flips break.
"""

from itertools import combinations

import numpy as np
import pytest
from conftest import JIT_DISABLED

import noisyfeedback as nf
from noisyfeedback.kernels.diluted import set_estimate
from noisyfeedback.simulate import round_order, simulation_streams

K = 5
R0 = np.array([0.0, 0.1, 0.3, 0.05, 0.2])
R1 = np.array([0.4, 0.0, 0.2, 0.3, 0.1])


def python_loop(learner, X, y, channel, n_rounds, seed):
    rng_order, rng_feedback, _ = simulation_streams(seed)
    order = round_order(X.shape[0], n_rounds, rng_order)
    mistakes = 0
    for i in order:
        x = X[i:i + 1]
        mistakes += int(learner.predict(x)[0] != y[i])
        actions, propensities = learner.act(x)
        feedback = channel.respond(y[i:i + 1], actions, rng_feedback)
        learner.learn(x, actions, feedback, propensities)
    return mistakes


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(K, 6))
    X = rng.normal(size=(400, 6))
    return X, np.argmax(X @ W.T, axis=1)


# ------------------------------------------------------------------ unbiasedness
def test_rcnbf_per_action_estimate_is_unbiased_by_exact_enumeration():
    h0, h1 = nf.RCNBF(K, rho0=R0, rho1=R1)._h()
    for a in range(K):  # E[h(f̃, a) | f, a] over the flip of f
        assert (1 - R1[a]) * h1[a] + R1[a] * h0[a] == pytest.approx(1.0, abs=1e-14)
        assert R0[a] * h1[a] + (1 - R0[a]) * h0[a] == pytest.approx(0.0, abs=1e-14)


def test_oracle_correction_inverts_the_expected_feedback_per_action():
    """v_a = E[f̃ | x, a] = ρ0(a) + (1 − ρ0(a) − ρ1(a))·P(y = a | x) is mapped back to P(y = a | x)."""
    learner = nf.SquareCB(K, rho0=R0, rho1=R1, seed=0)
    X = np.ones((1, 3))
    learner.learn(X, [0], [0], [1.0])
    p = np.array([0.1, 0.3, 0.05, 0.4, 0.15])
    learner.W_[:] = 0.0
    learner.intercept_[:] = R0 + (1 - R0 - R1) * p  # E[f̃ | a] by enumeration of y and the flip
    np.testing.assert_allclose(learner.corrected_values(X)[0], p, rtol=1e-14, atol=1e-15)
    assert learner.predict(X)[0] == 3
    # the raw values rank another action first: the correction is what makes the greedy choice right
    assert np.argmax(learner.decision_function(X)[0]) != 3


@pytest.mark.parametrize("m", [1, 2, 3])
def test_diluted_per_label_estimate_is_unbiased_by_exact_enumeration(m):
    """For every set S: E[h(f̃, S) | f] = f with the set's mean rates, so MC-DBF's update stays unbiased."""
    for S in combinations(range(K), m):
        S = np.array(S, np.int64)
        r0, r1 = R0[S].mean(), R1[S].mean()
        hs = [set_estimate(ft, 0.0, 1.0, R0, R1, S, m) for ft in (0, 1)]
        assert (1 - r1) * hs[1] + r1 * hs[0] == pytest.approx(1.0, abs=1e-13)
        assert r0 * hs[1] + (1 - r0) * hs[0] == pytest.approx(0.0, abs=1e-13)


def test_channel_flips_follow_the_played_action():
    ch = nf.feedback.NoisyBandit(R0, R1)
    rng = np.random.default_rng(0)
    n = 200_000
    a = rng.integers(0, K, n)
    y = np.where(rng.random(n) < 0.5, a, (a + 1) % K)
    f = ch.respond(y, a, rng)
    for k in range(K):
        hit, miss = (a == k) & (y == a), (a == k) & (y != a)
        assert f[miss].mean() == pytest.approx(R0[k], abs=0.01)
        assert 1 - f[hit].mean() == pytest.approx(R1[k], abs=0.01)
    d = nf.feedback.Diluted(2, R0, R1)
    sets = np.array([[0, 2]] * n)
    fd = d.respond(np.full(n, 4), sets, rng)  # y not in the set: flipped with the mean ρ0 of labels 0, 2
    assert fd.mean() == pytest.approx((R0[0] + R0[2]) / 2, abs=0.01)


# ------------------------------------------------------------ equal rates: bits
SCALAR = [
    (lambda r0, r1: nf.RCNBF(K, gamma=0.2, rho0=r0, rho1=r1, seed=1), lambda r0, r1: nf.feedback.NoisyBandit(r0, r1)),
    (lambda r0, r1: nf.MCDBF(K, m=1, gamma=0.2, rho0=r0, rho1=r1, seed=1),
     lambda r0, r1: nf.feedback.Diluted(1, r0, r1)),
    (lambda r0, r1: nf.MCDBF(K, m=2, gamma=0.3, rho0=r0, rho1=r1, seed=1),
     lambda r0, r1: nf.feedback.Diluted(2, r0, r1)),
    (lambda r0, r1: nf.SquareCB(K, rho0=r0, rho1=r1, seed=1), lambda r0, r1: nf.feedback.NoisyBandit(r0, r1)),
    (lambda r0, r1: nf.SquareCB(K, oracle="ridge", rho0=r0, rho1=r1, seed=1),
     lambda r0, r1: nf.feedback.NoisyBandit(r0, r1)),
    (lambda r0, r1: nf.EpsilonGreedy(K, epsilon=0.2, rho0=r0, rho1=r1, seed=1),
     lambda r0, r1: nf.feedback.NoisyBandit(r0, r1)),
]


@pytest.mark.parametrize("make, channel", SCALAR)
def test_equal_per_action_rates_give_the_scalar_learner_bit_for_bit(data, make, channel):
    X, y = data
    n = 400 if JIT_DISABLED else 3000
    a, b = make(0.15, 0.25), make(np.full(K, 0.15), [0.25] * K)
    ta = nf.simulate(a, X, y, channel(0.15, 0.25), n_rounds=n, seed=3)
    tb = nf.simulate(b, X, y, channel(np.full(K, 0.15), np.full(K, 0.25)), n_rounds=n, seed=3)
    assert ta.mistakes == tb.mistakes
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.action_probabilities(X[:50]), b.action_probabilities(X[:50]))


def test_zero_rates_keep_the_default_bits(data):
    X, y = data
    a, b = nf.SquareCB(K, seed=2), nf.SquareCB(K, rho0=np.zeros(K), rho1=np.zeros(K), seed=2)
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    ta, tb = nf.simulate(a, X, y, ch, n_rounds=2000, seed=1), nf.simulate(b, X, y, ch, n_rounds=2000, seed=1)
    assert ta.mistakes == tb.mistakes
    np.testing.assert_array_equal(a.W_, b.W_)


@pytest.mark.parametrize("rates", [(0.15, 0.25), (np.full(K, 0.15), np.full(K, 0.25))])
@pytest.mark.parametrize("make", [lambda **kw: nf.SquareCB(K, seed=2, **kw),
                                  lambda **kw: nf.SquareCB(K, oracle="ridge", seed=2, **kw),
                                  lambda **kw: nf.EpsilonGreedy(K, epsilon=0.2, seed=2, **kw)])
def test_rates_equal_across_actions_leave_the_uncorrected_policy_bit_for_bit(data, make, rates):
    """Flip rates the same for every action (a scalar pair or equal arrays) rank the raw values right: the
    policy is the uncorrected learner's, bit for bit (dividing every gap by 1 − ρ0 − ρ1 would raise
    SquareCB's effective γ); only the reported probabilities use the rates."""
    X, y = data
    n = 400 if JIT_DISABLED else 3000
    ch = nf.feedback.NoisyBandit(0.15, 0.25)
    plain, told = make(), make(rho0=rates[0], rho1=rates[1])
    ta, tb = nf.simulate(plain, X, y, ch, n_rounds=n, seed=1), nf.simulate(told, X, y, ch, n_rounds=n, seed=1)
    assert ta.mistakes == tb.mistakes
    np.testing.assert_array_equal(plain.W_, told.W_)
    np.testing.assert_array_equal(plain.action_probabilities(X[:50]), told.action_probabilities(X[:50]))
    np.testing.assert_array_equal(plain.predict(X), told.predict(X))
    a, p = plain.act(X[:50]), told.act(X[:50])
    np.testing.assert_array_equal(a[0], p[0])
    np.testing.assert_array_equal(a[1], p[1])
    assert not np.allclose(plain.predict_proba(X[:50]), told.predict_proba(X[:50]))  # calibrated by the rates


def test_differing_rates_keep_the_gaps_on_the_raw_scale_of_the_mean_action(data):
    """The policy reads ρ̄0 + s̄·c_a (c the clean estimates, s = 1 − ρ0 − ρ1, bars the means over the
    actions): the ranking of the corrected values with the raw values' scale of gaps."""
    X, y = data
    learner = nf.SquareCB(K, rho0=R0, rho1=R1, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(R0, R1), n_rounds=500, seed=0)
    c = learner.corrected_values(X[:20])
    s = 1 - R0 - R1
    np.testing.assert_allclose(learner.policy_values(X[:20]), R0.mean() + s.mean() * c, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(learner.predict(X[:20]), np.argmax(learner.policy_values(X[:20]), axis=1))


# ------------------------------------------------- compiled loop == python loop
PER_ACTION = [
    (lambda: nf.RCNBF(K, gamma=0.2, rho0=R0, rho1=R1, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.Banditron(K, gamma=0.2, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.RCINE(K, gamma=0.2, n_s=200, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.MCDBF(K, m=1, gamma=0.2, rho0=R0, rho1=R1, seed=4), nf.feedback.Diluted(1, R0, R1)),
    (lambda: nf.MCDBF(K, m=2, gamma=0.3, rho0=R0, rho1=R1, seed=4), nf.feedback.Diluted(2, R0, R1)),
    (lambda: nf.SquareCB(K, rho0=R0, rho1=R1, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.SquareCB(K, oracle="ridge", rho0=R0, rho1=R1, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.EpsilonGreedy(K, epsilon=0.1, rho0=R0, rho1=R1, seed=4), nf.feedback.NoisyBandit(R0, R1)),
    (lambda: nf.EpsilonGreedy(K, m=2, rho0=0.1, rho1=0.2, seed=4), nf.feedback.Diluted(2, R0, R1)),
]


@pytest.mark.parametrize("make, channel", PER_ACTION)
def test_simulate_equals_the_python_loop_with_per_action_rates(data, make, channel):
    X, y = data
    n = 300 if JIT_DISABLED else 800
    a, b = make(), make()
    t = nf.simulate(a, X, y, channel, n_rounds=n, seed=5)
    assert t.mistakes == python_loop(b, X, y, channel, n, seed=5)
    np.testing.assert_array_equal(a.W_, b.W_)
    assert a.rng_.bit_generator.state == b.rng_.bit_generator.state


def test_mcdbf_m1_is_rcnbf_bit_for_bit_with_per_action_rates(data):
    X, y = data
    a = nf.RCNBF(K, gamma=0.2, rho0=R0, rho1=R1, seed=6)
    b = nf.MCDBF(K, m=1, gamma=0.2, rho0=R0, rho1=R1, seed=6)
    ta = nf.simulate(a, X, y, nf.feedback.NoisyBandit(R0, R1), n_rounds=2000, seed=1)
    tb = nf.simulate(b, X, y, nf.feedback.Diluted(1, R0, R1), n_rounds=2000, seed=1)
    assert ta.mistakes == tb.mistakes
    np.testing.assert_array_equal(a.W_, b.W_)


# ------------------------------------------------------------------- checks
@pytest.mark.parametrize("make, match", [
    (lambda: nf.RCNBF(K, rho0=[0.1] * 4), "'rho0' parameter of RCNBF must hold one rate per action: 5 rates"),
    (lambda: nf.SquareCB(K, rho1=np.full(6, 0.1)), "'rho1' parameter of SquareCB must hold one rate per action"),
    (lambda: nf.EpsilonGreedy(K, rho0=[0.1, 0.2, 0.6, 0.0, 0.0], rho1=[0.1, 0.2, 0.4, 0.0, 0.0]),
     "rho0 \\+ rho1 < 1 for action 2"),
    (lambda: nf.MCDBF(K, m=2, rho0=[0.1, 1.0, 0.0, 0.0, 0.0]), "'rho0' parameter of MCDBF must be in \\[0, 1\\)"),
    (lambda: nf.SquareCB(K, m=2, rho0=R0), "must be single rates with m > 1"),
    (lambda: nf.RCNBF(K, rho0=[[0.1] * K]), "'rho0' parameter of RCNBF must be"),
])
def test_bad_rates_are_refused_naming_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make().act(np.ones((1, 3)))


def test_channel_rate_checks():
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1 for action 1"):
        nf.feedback.NoisyBandit([0.1, 0.6], [0.1, 0.5])
    with pytest.raises(ValueError, match="same length"):
        nf.feedback.NoisyBandit([0.1, 0.2], [0.1, 0.2, 0.3])
    ch = nf.feedback.NoisyBandit(R0, R1)
    assert ch == nf.feedback.NoisyBandit(R0.tolist(), R1.tolist()) and "rho0=[0." in repr(ch)
    X, y = np.ones((20, 2)), np.zeros(20, np.int64)
    with pytest.raises(ValueError, match="must hold one rate per action: 3 rates"):
        nf.simulate(nf.RCNBF(3, seed=0), X, y, ch, n_rounds=10, seed=0)
    with pytest.raises(ValueError, match="rates for 5 actions"):
        ch.respond(np.zeros(1, np.int64), np.array([7]), np.random.default_rng(0))


def test_known_per_action_rates_fix_the_ranking_action_dependent_flips_break():
    """One context, P(y=0) = 0.6: playing 1 is reported a hit half the times it is wrong (ρ0(1) = 0.5),
    so the raw oracle plays 1; told the per-action rates, SquareCB and ε-greedy play 0."""
    rng = np.random.default_rng(123)
    n = 20_000
    X = np.ones((n, 1))
    y = (rng.random(n) < 0.4).astype(np.int64)
    ch = nf.feedback.NoisyBandit([0.0, 0.5], [0.0, 0.0])
    for make in (lambda **kw: nf.EpsilonGreedy(2, epsilon=0.2, seed=0, **kw),
                 lambda **kw: nf.SquareCB(2, seed=0, **kw)):
        plain, known = make(), make(rho0=[0.0, 0.5])
        nf.simulate(plain, X, y, ch, n_rounds=n, seed=1, shuffle=False)
        nf.simulate(known, X, y, ch, n_rounds=n, seed=1, shuffle=False)
        assert plain.predict(X[:1])[0] == 1 and known.predict(X[:1])[0] == 0
        if isinstance(known, nf.EpsilonGreedy):  # explores label 1 often enough to estimate it
            np.testing.assert_allclose(known.predict_proba(X[:1])[0], [0.6, 0.4], atol=0.06)


# ------------------------------------------------------- RCINE: per-action estimates
#: the stated tolerance of per-action estimates from about a thousand tuples an arm
PER_ARM_TOL = 0.08


def _synsep_per_action(n=8000):
    X, y = nf.datasets.synsep(n_samples=n, seed=2)
    k = int(y.max()) + 1
    r0 = np.where(np.arange(k) < k // 2, 0.3, 0.0)
    r1 = np.where(np.arange(k) < k // 2, 0.0, 0.4)
    return X, y, k, r0, r1


@pytest.mark.skipif(JIT_DISABLED, reason="thousands of rounds and mixture fits")
def test_mixture_per_action_recovers_the_rates_of_every_action():
    from noisyfeedback.noise import estimate_flip_rates

    X, y, k, r0, r1 = _synsep_per_action()
    rng = np.random.default_rng(0)
    actions = np.where(rng.random(y.shape[0]) < 0.5, y, rng.integers(0, k, y.shape[0]))
    fb = nf.feedback.NoisyBandit(r0, r1).respond(y, actions, rng)
    e0, e1 = estimate_flip_rates(X, actions, fb, k, seed=0, per_action=True)
    np.testing.assert_allclose(e0, r0, atol=PER_ARM_TOL)  # about 900 tuples an arm
    np.testing.assert_allclose(e1, r1, atol=PER_ARM_TOL)
    s0, s1 = estimate_flip_rates(X, actions, fb, k, seed=0)  # one pair cannot describe them
    assert max(abs(s0 - r0).max(), abs(s1 - r1).max()) > 0.15


@pytest.mark.skipif(JIT_DISABLED, reason="thousands of rounds and mixture fits")
def test_rcine_per_action_estimates_and_corrects_each_action(tmp_path):
    X, y, k, r0, r1 = _synsep_per_action()
    ch = nf.feedback.NoisyBandit(r0, r1)
    learner = nf.RCINE(k, gamma=0.2, n_s=6000, per_action=True, seed=0)
    nf.simulate(learner, X, y, ch, n_rounds=12_000, seed=0)
    print(learner.rho_history_.round(3))
    np.testing.assert_allclose(learner.rates_[0], r0, atol=PER_ARM_TOL)
    np.testing.assert_allclose(learner.rates_[1], r1, atol=PER_ARM_TOL)
    assert learner.rho_history_.shape == (2, 1 + 2 * k)
    assert learner.rho0_ == pytest.approx(learner.rates_[0].mean())
    h0, h1 = learner._h()  # each action's feedback corrected with its own rates
    np.testing.assert_allclose(h1, (1 - learner.rates_[0]) / (1 - learner.rates_.sum(axis=0)))
    loaded = nf.load(learner.save(tmp_path / "rcine.npz"))
    np.testing.assert_array_equal(loaded.rates_, learner.rates_)
    with pytest.raises(ValueError, match="'per_action' parameter of RCINE needs estimator='mixture'"):
        nf.RCINE(k, per_action=True, estimator="nrest").act(X[:1])
