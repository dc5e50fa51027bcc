"""rho0="estimate": per-action flip rates estimated online from the oracle's own values (anchors), with a
fall-back to the uncorrected values where the data has no anchors."""

import numpy as np
import pytest

import noisyfeedback as nf
from conftest import JIT_DISABLED

#: 100,000-round simulations: minutes without the JIT (the Python loop equality below runs either way)
slow_without_jit = pytest.mark.skipif(JIT_DISABLED, reason="100,000 rounds in pure Python")

K, C = 4, 24
R0 = np.array([0.1, 0.3, 0.0, 0.2])
R1 = np.array([0.2, 0.0, 0.4, 0.1])
TOL = 0.05  # the stated tolerance of the recovered rates on an anchored stream


def tabular(anchors: bool, n=20_000, seed=7):
    """One-hot contexts of C clusters (the linear oracle is a table); with anchors each cluster has one
    label, without them its label is right only 55 % of the time (P(y | x) <= 0.66 for every label)."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, C, n)
    X = np.eye(C)[c]
    y = c % K if anchors else np.where(rng.random(n) < 0.55, c % K, rng.integers(0, K, n))
    return X, y


def run(make, anchors, channel, n_rounds=100_000):
    X, y = tabular(anchors)
    learner = make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=n_rounds, seed=1)
    return learner, trace


@slow_without_jit
def test_a_stream_with_anchors_recovers_the_per_action_rates():
    ch = nf.feedback.NoisyBandit(R0, R1)
    learner, trace = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0),
                         True, ch)
    assert learner.rate_state_[0] == 1  # the estimates are in use
    np.testing.assert_allclose(learner.rate_estimates_[0], R0, atol=TOL)
    np.testing.assert_allclose(learner.rate_estimates_[1], R1, atol=TOL)
    np.testing.assert_array_equal(learner.predict(np.eye(C)), np.arange(C) % K)


@slow_without_jit
@pytest.mark.parametrize("channel", [nf.feedback.NoisyBandit(R0, R1), nf.feedback.NoisyBandit(0.15, 0.25)])
def test_without_anchors_the_learner_keeps_its_uncorrected_ranking(channel):
    learner, trace = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0),
                         False, channel)
    plain, ptrace = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, seed=0), False, channel)
    assert learner.rate_state_[0] == 0  # the inconsistent estimates are not used ...
    assert trace.mistakes == ptrace.mistakes  # ... so it is not made worse: the plain learner, bit for bit
    np.testing.assert_array_equal(learner.W_, plain.W_)


def test_before_the_warm_up_nothing_is_corrected_and_simulate_equals_the_python_loop():
    from noisyfeedback.simulate import round_order, simulation_streams

    X, y = tabular(True, n=3000)
    ch = nf.feedback.NoisyBandit(R0, R1)

    class Small(nf.EpsilonGreedy):  # a short warm-up and window, so that the loop crosses estimates
        RATE_WARMUP, RATE_EVERY, RATE_WINDOW = 600, 300, 200

    a = Small(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0)
    b = Small(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0)
    n = 1500
    t = nf.simulate(a, X, y, ch, n_rounds=n, seed=3)
    rng_order, rng_fb, _ = simulation_streams(3)
    mistakes = 0
    for i in round_order(X.shape[0], n, rng_order):
        mistakes += int(b.predict(X[i:i + 1])[0] != y[i])
        act, p = b.act(X[i:i + 1])
        b.learn(X[i:i + 1], act, ch.respond(y[i:i + 1], act, rng_fb), p)
    assert t.mistakes == mistakes
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.rate_estimates_, b.rate_estimates_)
    assert a.rate_state_.tolist() == b.rate_state_.tolist()
    fresh = Small(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0)
    fresh.learn(X[:10], np.zeros(10, np.int64), np.ones(10, np.int64), np.ones(10))
    assert fresh.rate_state_[0] == 0 and fresh._correction()[0].size == 0


@slow_without_jit
def test_estimate_parameter_checks_and_save_load(tmp_path):
    with pytest.raises(ValueError, match="must both be 'estimate'"):
        nf.SquareCB(K, rho0="estimate").act(np.ones((1, 3)))
    with pytest.raises(ValueError, match="'estimate' needs m = 1"):
        nf.SquareCB(K, m=2, rho0="estimate", rho1="estimate").act(np.ones((1, 3)))
    learner, _ = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0), True,
                     nf.feedback.NoisyBandit(R0, R1), n_rounds=31_000)
    loaded = nf.load(learner.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.rate_estimates_, learner.rate_estimates_)
    np.testing.assert_array_equal(loaded.predict(np.eye(C)), learner.predict(np.eye(C)))
