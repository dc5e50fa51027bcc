"""rho0="estimate": per-action flip rates estimated online from the feedback of the learner's own anchors
(confident right plays, plays well below the greedy label), with a fall-back to the uncorrected values where
the learner has no anchors and where the rates are the same for every action."""

import numpy as np
import pytest
from conftest import JIT_DISABLED

import noisyfeedback as nf

#: 100,000-round simulations: minutes without the JIT (the Python loop equality below runs either way)
slow_without_jit = pytest.mark.skipif(JIT_DISABLED, reason="100,000 rounds in pure Python")

K, C = 4, 24
R0 = np.array([0.1, 0.3, 0.0, 0.2])
R1 = np.array([0.2, 0.0, 0.4, 0.1])
TOL = 0.05  # the stated tolerance of the recovered rates on an anchored stream


#: the label distribution of a cluster without anchors (shifted by the cluster): no label is ever nearly sure
VAGUE = np.array([0.35, 0.25, 0.2, 0.2])


def tabular(anchors, n=20_000, seed=7):
    """One-hot contexts of C clusters (the linear oracle is a table). ``anchors`` True: each cluster has one
    label; "mixed": its label is right 55 % of the time, else uniform (P(y | x) = 0.6625 or 0.1125: the same
    stream as an anchored one under other flip rates, ρ0' = ρ0 + 0.1125·β, β' = 0.55·β, which no estimator
    can tell apart); False: P(y | x) is VAGUE shifted by the cluster (no anchors, no label the learner
    becomes sure of)."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, C, n)
    X = np.eye(C)[c]
    if anchors is True:
        y = c % K
    elif anchors == "mixed":
        y = np.where(rng.random(n) < 0.55, c % K, rng.integers(0, K, n))
    else:
        y = (c + np.searchsorted(np.cumsum(VAGUE), rng.random(n), side="right")) % K
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
def test_squarecb_recovers_the_rates_and_ranks_better_on_a_stream_with_anchors():
    """Inverse-gap weighting seldom plays a label it believes wrong: ρ0 comes from few wrong-play anchors
    (shrunk toward 0), hence the wider tolerance on it; ρ1 from many right-play anchors."""
    ch = nf.feedback.NoisyBandit(R0, R1)
    learner, trace = run(lambda: nf.SquareCB(K, rho0="estimate", rho1="estimate", seed=0), True, ch)
    plain, ptrace = run(lambda: nf.SquareCB(K, seed=0), True, ch)
    assert learner.rate_state_[0] == 1
    np.testing.assert_allclose(learner.rate_estimates_[1], R1, atol=TOL)
    np.testing.assert_allclose(learner.rate_estimates_[0], R0, atol=2 * TOL)
    np.testing.assert_array_equal(learner.predict(np.eye(C)), np.arange(C) % K)
    assert trace.mistakes <= ptrace.mistakes


@slow_without_jit
@pytest.mark.parametrize("make", [lambda **kw: nf.EpsilonGreedy(K, epsilon=0.2, seed=0, **kw),
                                  lambda **kw: nf.SquareCB(K, seed=0, **kw)])
def test_without_anchors_the_learner_is_not_made_worse(make):
    """No label is ever nearly sure. Under uniform flips the learner falls back to its uncorrected values (the
    plain learner, bit for bit); under the action-dependent ones the rate offsets themselves make some plays
    confident, and the estimates they give (not the true rates: those are not identifiable here) must not
    rank worse than the raw values."""
    learner, trace = run(lambda: make(rho0="estimate", rho1="estimate"), False, nf.feedback.NoisyBandit(0.15, 0.25))
    plain, ptrace = run(make, False, nf.feedback.NoisyBandit(0.15, 0.25))
    assert learner.rate_state_[1] > 0 and learner.rate_state_[0] == 0  # estimated, never used ...
    assert trace.mistakes == ptrace.mistakes  # ... so it is the plain learner, bit for bit
    np.testing.assert_array_equal(learner.W_, plain.W_)
    learner, trace = run(lambda: make(rho0="estimate", rho1="estimate"), False, nf.feedback.NoisyBandit(R0, R1))
    plain, ptrace = run(make, False, nf.feedback.NoisyBandit(R0, R1))
    assert trace.mistakes <= ptrace.mistakes


@slow_without_jit
@pytest.mark.parametrize("anchors", [True, "mixed"])
def test_equal_rates_for_every_action_leave_the_plain_learner_bit_for_bit(anchors):
    """Where the papers' assumption holds the raw ranking is right: the test of differing rates keeps it."""
    ch = nf.feedback.NoisyBandit(0.15, 0.25)
    learner, trace = run(lambda: nf.SquareCB(K, rho0="estimate", rho1="estimate", seed=0), anchors, ch)
    plain, ptrace = run(lambda: nf.SquareCB(K, seed=0), anchors, ch)
    assert learner.rate_state_[0] == 0 and trace.mistakes == ptrace.mistakes
    np.testing.assert_array_equal(learner.W_, plain.W_)


@slow_without_jit
def test_a_stream_equivalent_to_anchors_under_other_rates_is_not_made_worse():
    """The "mixed" stream under (R0, R1) is an anchored stream under (ρ0', ρ1'): the estimates are those, and
    the ranking they give is the clean one (not worse than the plain learner's)."""
    ch = nf.feedback.NoisyBandit(R0, R1)
    learner, trace = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, rho0="estimate", rho1="estimate", seed=0),
                         "mixed", ch)
    plain, ptrace = run(lambda: nf.EpsilonGreedy(K, epsilon=0.2, seed=0), "mixed", ch)
    beta = 1 - R0 - R1
    if learner.rate_state_[0] == 1:
        np.testing.assert_allclose(learner.rate_estimates_[0], R0 + 0.1125 * beta, atol=TOL)
        np.testing.assert_allclose(1 - learner.rate_estimates_[1], R0 + 0.6625 * beta, atol=TOL)
    assert trace.mistakes <= ptrace.mistakes
    np.testing.assert_array_equal(learner.predict(np.eye(C)), np.arange(C) % K)


def test_before_the_warm_up_nothing_is_corrected_and_simulate_equals_the_python_loop():
    from noisyfeedback.simulate import round_order, simulation_streams

    X, y = tabular(True, n=3000)
    ch = nf.feedback.NoisyBandit(R0, R1)

    class Small(nf.EpsilonGreedy):  # a short warm-up and window, so that the loop crosses estimates
        RATE_WARMUP, RATE_EVERY, RATE_MIN_ANCHORS = 600, 300, 5.0

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
