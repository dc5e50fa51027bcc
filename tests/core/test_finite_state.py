"""Learned state stays finite: rows whose norm overflows, updates that would overflow (refused, rolled back),
parameter ranges whose extremes cannot overflow; hypothesis property tests over hostile inputs."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noisyfeedback as nf
from noisyfeedback.learners._linear import NonFiniteUpdate, finite_scale_rows

K, D = 4, 64
HUGE = np.full((1, D), 1.7e308)


def trained_squarecb(oracle="adagrad", n=90, action=1):
    """SquareCB after n ordinary rounds that reward one action (the service's poisoning sequence)."""
    rng = np.random.default_rng(0)
    learner = nf.SquareCB(K, oracle=oracle, seed=0)
    X = rng.normal(size=(n, D))
    learner.learn(X, np.full(n, action), np.ones(n, np.int64), np.full(n, 0.5))
    return learner, rng


@pytest.mark.parametrize("oracle", ["adagrad", "normalized", "ridge"])
def test_a_huge_context_gives_finite_probabilities_and_keeps_the_model_finite(oracle):
    learner, rng = trained_squarecb(oracle)
    p = learner.action_probabilities(HUGE)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1)  # was NaN: ‖x‖² overflowed, W·x·0 = NaN
    q = learner.action_probabilities(HUGE, allowed=[2])
    assert q[0].tolist() == [0, 0, 1, 0]
    a, pr = learner.act(HUGE, allowed=[2])
    assert a[0] == 2 and pr[0] == 1.0
    learner.learn(HUGE, [1], [1], [0.5])  # was: NaN rows of W
    assert learner._state_is_finite()
    # the huge row is seen as its unit-norm direction: the same as any positive multiple of it
    twin, _ = trained_squarecb(oracle)
    twin.learn(np.ones((1, D)), [1], [1], [0.5])
    np.testing.assert_allclose(learner.W_, twin.W_, rtol=1e-12, atol=1e-15)
    X = rng.normal(size=(20, D))
    np.testing.assert_allclose(learner.decision_function(X), twin.decision_function(X), rtol=1e-12, atol=1e-15)


def test_tiny_rows_are_seen_as_their_direction():
    learner, rng = trained_squarecb()
    tiny = np.full((1, D), 1e-170)  # ‖x‖² underflows to 0: the row was treated as all zeros
    np.testing.assert_allclose(learner.decision_function(tiny), learner.decision_function(np.ones((1, D))),
                               rtol=1e-13)
    Xs = sp.csr_matrix(np.vstack([tiny, HUGE, np.ones((1, D))]))
    np.testing.assert_allclose(learner.decision_function(Xs), learner.decision_function(np.ones((3, D))),
                               rtol=1e-13)


def test_ordinary_rows_keep_their_bits():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, D)) * np.exp(rng.uniform(-300, 300, size=(50, 1)))  # |x| up to ~1e130
    assert finite_scale_rows(X) is X
    Xc = sp.csr_matrix(X)
    assert finite_scale_rows(Xc) is Xc


def test_simulate_with_huge_rows_equals_the_python_loop_and_stays_finite():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 8))
    X[::7] *= 1e300
    X[3::11] *= 1e-300
    y = rng.integers(0, K, 60)
    ch = nf.feedback.NoisyBandit(0.1, 0.1)
    a = nf.SquareCB(K, seed=3)
    t = nf.simulate(a, X, y, ch, n_rounds=500, seed=4)
    b = nf.SquareCB(K, seed=3)
    ref = nf.simulate(b, finite_scale_rows(X), y, ch, n_rounds=500, seed=4)
    assert t == ref and np.array_equal(a.W_, b.W_) and a._state_is_finite()


@pytest.mark.parametrize("make", [
    lambda: nf.Banditron(K, gamma=0.2, seed=0),
    lambda: nf.RCNBF(K, gamma=0.2, rho0=0.2, rho1=0.3, seed=0),
    lambda: nf.BPA(K, gamma=0.2, seed=0),
    lambda: nf.SOBA(K, gamma=0.2, diagonal=True, seed=0),
    lambda: nf.RCINE(K, gamma=0.2, n_s=10, seed=0),
    lambda: nf.MCDBF(K, m=1, gamma=0.2, seed=0),
    lambda: nf.MCDBF(K, m=2, gamma=0.2, seed=0),
    lambda: nf.SquareCB(K, oracle="ridge", seed=0),
])
def test_an_overflowing_update_is_refused_naming_the_row_and_rolled_back(make):
    rng = np.random.default_rng(5)
    learner = make()
    m = getattr(learner, "m", 1) if learner.feedback_kind == "set" else 1
    n = 30
    X = rng.normal(size=(n, D))
    bad = 17
    X[bad] = 1.7e308 * np.sign(rng.normal(size=D))  # W += x/P overflows (or, for the oracle, nothing does)
    X[bad + 1] = X[bad]
    acts = np.stack([rng.permutation(K)[:m] for _ in range(n)]) if m > 1 else rng.integers(0, K, n)
    fb = rng.integers(0, 2, n)
    fb[bad] = 1
    props = np.full(n, 1e-300)  # tiny logged propensities: importance weights that overflow
    before = make()
    before.learn(X[:bad], acts[:bad], fb[:bad], props[:bad])
    try:
        learner.learn(X, acts, fb, props)
    except NonFiniteUpdate as exc:
        assert isinstance(exc, ValueError) and f"row {exc.row}" in str(exc)
        k = exc.row
        ref = make()
        if k:
            ref.learn(X[:k], acts[:k], fb[:k], props[:k])
        for name in learner._mutable_state:
            if hasattr(ref, name):
                np.testing.assert_array_equal(getattr(learner, name), getattr(ref, name))
        if isinstance(learner, nf.RCINE):
            assert learner.t_ == k
    assert learner._state_is_finite()
    p = learner.action_probabilities(X)
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), m)


def test_a_refused_row_leaves_the_service_learner_as_it_was():
    learner = nf.Banditron(K, gamma=0.2, seed=0)
    learner.learn(np.ones((1, D)), [0], [1], [0.5])
    W = learner.W_.copy()
    with pytest.raises(ValueError, match="row 0 would make the learned state non-finite"):
        learner.learn(HUGE, [1], [1], [1e-10])
    np.testing.assert_array_equal(learner.W_, W)


@pytest.mark.parametrize("make, name", [
    (lambda: nf.SquareCB(K, learning_rate=1e300), "learning_rate"),
    (lambda: nf.EpsilonGreedy(K, learning_rate=1e300), "learning_rate"),
    (lambda: nf.SquareCB(K, gamma_scale=1e308), "gamma_scale"),
    (lambda: nf.SquareCB(K, oracle="ridge", lam=1e-300), "lam"),
    (lambda: nf.SquareCB(K, oracle="ridge", lam=1e300), "lam"),
    (lambda: nf.SquareCB(K, oracle="normalized", learning_rate=5.0), "learning_rate"),
    (lambda: nf.SOBA(K, a=1e-320), "a"),
])
def test_parameters_whose_extremes_overflow_are_refused(make, name):
    with pytest.raises(ValueError, match=f"The '{name}' parameter of"):
        make().act(np.ones((1, D)))


def test_the_largest_exploration_scale_keeps_restricted_draws_in_the_allowed_set():
    learner, rng = trained_squarecb()
    learner.gamma_scale, learner.gamma_exponent = 1e9, 1.0
    learner.n_updates_[0] = 10 ** 15
    X = np.vstack([rng.normal(size=(5, D)), np.zeros((1, D))])  # a zero row: every label tied
    for allowed in ([0], [0, 2], [3]):
        a, p = learner.act(X, allowed=allowed)
        assert set(a) <= set(allowed) and np.isfinite(p).all() and (p > 0).all()
        q = learner.action_probabilities(X, allowed=allowed)
        assert np.isfinite(q).all() and np.allclose(q.sum(axis=1), 1)


# ---------------------------------------------------------------- hypothesis
FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64)
LEARNERS = {
    "squarecb": lambda: nf.SquareCB(3, seed=0),
    "squarecb-ridge": lambda: nf.SquareCB(3, oracle="ridge", seed=0),
    "squarecb-normalized": lambda: nf.SquareCB(3, oracle="normalized", learning_rate=1.9, seed=0),
    "squarecb-extreme": lambda: nf.SquareCB(3, gamma_scale=1e9, gamma_exponent=1.0, learning_rate=1e3, seed=0),
    "epsilon-sets": lambda: nf.EpsilonGreedy(3, m=2, seed=0),
    "banditron": lambda: nf.Banditron(3, gamma=0.3, seed=0),
    "rcnbf": lambda: nf.RCNBF(3, gamma=0.3, rho0=0.3, rho1=0.3, seed=0),
    "bpa": lambda: nf.BPA(3, gamma=0.3, seed=0),
    "soba": lambda: nf.SOBA(3, gamma=0.3, seed=0),
    "mcdbf": lambda: nf.MCDBF(3, m=1, gamma=0.3, seed=0),
}


@pytest.mark.parametrize("name", sorted(LEARNERS))
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_any_accepted_input_keeps_the_state_finite_and_the_probabilities_a_distribution(name, data):
    learner = LEARNERS[name]()
    m = learner.m if learner.feedback_kind == "set" else 1
    n = data.draw(st.integers(1, 6))
    X = np.array(data.draw(st.lists(st.lists(FLOATS, min_size=3, max_size=3), min_size=n, max_size=n)))
    for _ in range(2):
        acts, props = learner.act(X)
        fb = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
        logged = np.array(data.draw(st.lists(st.floats(5e-324, 1.0), min_size=n, max_size=n)))
        P = data.draw(st.sampled_from([props, logged]))
        before = copy.deepcopy(learner)
        try:
            learner.learn(X, acts, fb, P)
        except NonFiniteUpdate as exc:  # refused: the state is that after the rows before it
            k = exc.row
            if k:
                before.learn(X[:k], acts[:k], fb[:k], P[:k])
            for attr in learner._mutable_state:
                if hasattr(before, attr):
                    np.testing.assert_array_equal(getattr(learner, attr), getattr(before, attr))
        assert learner._state_is_finite()
        p = learner.action_probabilities(X)
        assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1 + 1e-12).all()
        np.testing.assert_allclose(p.sum(axis=1), m, rtol=1e-9)
        if m == 1:
            allowed = data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True))
            q = learner.action_probabilities(X, allowed=allowed)
            out = np.setdiff1d(np.arange(3), allowed)
            assert np.isfinite(q).all() and (q[:, out] == 0).all() and (q >= 0).all()
            np.testing.assert_allclose(q.sum(axis=1), 1, rtol=1e-12)
            a, pr = learner.act(X, allowed=allowed)
            assert np.isin(a, allowed).all() and np.isfinite(pr).all() and (pr > 0).all()
