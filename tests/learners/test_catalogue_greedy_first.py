"""Greedy first (CatalogueSquareCB's gamma_scale="adaptive"): the leverage check against its reference twin,
the switch on one-hot candidates and none where candidates share features, a one-point grid equal to the fixed
γ_scale bit for bit, simulate equal to the Python loop across a switch, model files, parameters."""

import numpy as np
import pytest
import reference_catalogue as ref
from test_catalogue import _python_loop  # the documented act → clicks → learn loop

import noisyfeedback as nf
from noisyfeedback.catalogue import CandidateRounds, CandidateStream
from noisyfeedback.datasets.ranking import multiclass_candidates
from noisyfeedback.kernels.catalogue import CHECK_EVERY, CHECK_RATIO, CHECK_WINDOW
from noisyfeedback.learners.catalogue import CatalogueSquareCB
from noisyfeedback.learners.catalogue.squarecb import ADAPTIVE_GAMMA_SCALE


@pytest.fixture(scope="module")
def one_hot():
    """scikit-learn's digits as candidate lists of 5-10 one-hot classes (an item known only by its weights)."""
    X, y = nf.datasets.load("digits")
    perm = np.random.default_rng(3).permutation(X.shape[0])
    return multiclass_candidates(X[perm], y[perm], n_classes=10, k_min=5, p_label=0.9, seed=3)


def shared_stream(n_rounds: int, seed: int = 0) -> CandidateStream:
    """Logistic clicks σ(uᵀAz + bᵀz + c) over 200 items of 5 shared features, 8 candidates a round."""
    rng = np.random.default_rng(seed)
    items = rng.normal(size=(200, 5))
    A = rng.normal(size=(6, 5)) * 0.4
    b = rng.normal(size=5) * 0.3
    u = rng.normal(size=(n_rounds, 6))
    ids = np.array([rng.choice(200, 8, replace=False) for _ in range(n_rounds)]).ravel()
    rows = np.repeat(np.arange(n_rounds), 8)
    logit = np.einsum("ij,jk,ik->i", u[rows], A, items[ids]) + items[ids] @ b - 2.0
    off = np.arange(n_rounds + 1) * 8
    return CandidateStream(CandidateRounds(u, items[ids], off, ids), 1.0 / (1.0 + np.exp(-logit)))


def test_the_sampled_ratio_is_the_reference_leverage_ratio():
    """One learned round at a sampled count adds the reference's ratio (P and θ random, before the step)."""
    rng = np.random.default_rng(0)
    n, d_c, d_a = 7, 4, 3
    rounds = CandidateRounds(rng.normal(size=(1, d_c)), rng.normal(size=(n, d_a)), [0, n])
    L = CatalogueSquareCB(oracle="ridge", seed=0)
    L.learn(rounds, [0], [1.0], [0.5])  # fitted: state sized
    D = L.weights_.shape[0]
    B = rng.normal(size=(D, D))
    P = B @ B.T / D + np.eye(D) * 0.1
    theta = rng.normal(size=D)
    Phi = np.array([ref.phi_dense(rounds.context[0], z, unit_context=False) for z in rounds.items])
    for t, sampled in ((3 * CHECK_EVERY, True), (3 * CHECK_EVERY + 1, False)):
        L.ridge_inverse_, L.weights_ = P.copy(), theta.copy()
        L.n_updates_[:] = t
        L.exploration_[:] = (-1.0, 0.0, 0.0)
        L.learn(rounds, [2], [0.0], [0.5])
        want = ref.greedy_first_ratio(P, Phi, theta) if sampled else 0.0
        np.testing.assert_allclose(L.exploration_[1], want, rtol=1e-12)
        assert L.exploration_[2] == (1.0 if sampled else 0.0) and L.exploration_[0] == -1.0


@pytest.mark.slow  # compiled loops: not in the run without the JIT
def test_one_hot_candidates_switch_in_the_first_windows_and_shared_features_never(one_hot):
    a = CatalogueSquareCB(seed=1)
    nf.simulate(a, one_hot, None, nf.feedback.NoisyBandit(0.2, 0.4), n_rounds=4 * CHECK_WINDOW, seed=1)
    assert a.oracle_ == "ridge" and a.exploration_[0] in (CHECK_WINDOW, 2 * CHECK_WINDOW)
    assert a.gamma_scale_in_use() == ADAPTIVE_GAMMA_SCALE[1]
    # after the switch the schedule starts again: γ_t = γ_low·√(t − t_switch + 1)
    r0 = one_hot.rounds[:1]
    gamma = ADAPTIVE_GAMMA_SCALE[1] * np.sqrt(a.n_updates_[0] - a.exploration_[0] + 1.0)
    np.testing.assert_allclose(a.action_probabilities(r0), ref.igw(a.decision_function(r0), gamma), rtol=1e-12)
    stream = shared_stream(6000)
    b = CatalogueSquareCB(seed=2)
    tb = nf.simulate(b, stream, None, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=12_000, seed=2)
    assert b.exploration_[0] == -1.0 and b.gamma_scale_in_use() == ADAPTIVE_GAMMA_SCALE[0]
    fixed = CatalogueSquareCB(gamma_scale=ADAPTIVE_GAMMA_SCALE[0], seed=2)  # no switch: the fixed high value
    tf = nf.simulate(fixed, stream, None, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=12_000, seed=2)
    np.testing.assert_array_equal(b.weights_, fixed.weights_)
    assert tb.metrics["regret_rate"] == tf.metrics["regret_rate"]


@pytest.mark.slow  # compiled loops: not in the run without the JIT
@pytest.mark.parametrize("g", [300.0, 10_000.0])
def test_a_one_point_grid_is_the_fixed_gamma_scale_bit_for_bit(one_hot, g):
    """(g, g) is the fixed γ_scale g (no check, nothing to switch to); (g, g/10) switches and changes the run."""
    n = 5 * CHECK_WINDOW
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    a = CatalogueSquareCB(gamma_scale=(g, g), seed=4)
    ta = nf.simulate(a, one_hot, None, ch, n_rounds=n, seed=4)
    b = CatalogueSquareCB(gamma_scale=g, seed=4)
    tb = nf.simulate(b, one_hot, None, ch, n_rounds=n, seed=4)
    assert a.exploration_.tolist() == [-1.0, 0.0, 0.0] and a._adapt() == (g, g, False)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(ta.curve, tb.curve)
    assert ta.metrics["regret_rate"] == tb.metrics["regret_rate"]
    c = CatalogueSquareCB(gamma_scale=(g, g / 10), seed=4)
    nf.simulate(c, one_hot, None, ch, n_rounds=n, seed=4)
    assert 0 < c.exploration_[0] < n and not np.array_equal(c.weights_, b.weights_)


@pytest.mark.slow  # compiled loops: not in the run without the JIT
def test_simulate_equals_the_python_loop_across_the_switch(one_hot):
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    n = 2 * CHECK_WINDOW + 50
    a = CatalogueSquareCB(seed=None)
    nf.simulate(a, one_hot, None, ch, n_rounds=n, seed=6)
    b = CatalogueSquareCB(seed=None)
    b._init_state(one_hot.rounds, np.random.SeedSequence(6).spawn(4)[2])
    _python_loop(b, one_hot, ch, n, 6)
    assert a.exploration_[0] > 0
    np.testing.assert_array_equal(a.exploration_, b.exploration_)
    np.testing.assert_array_equal(a.weights_, b.weights_)


@pytest.mark.slow  # compiled loops: not in the run without the JIT
def test_the_switch_is_saved_with_the_model_and_old_files_load(one_hot, tmp_path):
    a = CatalogueSquareCB(seed=1)
    nf.simulate(a, one_hot, None, nf.feedback.NoisyBandit(0.2, 0.4), n_rounds=6 * CHECK_WINDOW, seed=1)
    assert a.exploration_[0] > 0
    b = nf.load(a.save(tmp_path / "m"))
    np.testing.assert_array_equal(a.exploration_, b.exploration_)
    assert b.gamma_scale_in_use() == a.gamma_scale_in_use() == ADAPTIVE_GAMMA_SCALE[1]
    del a.exploration_  # as a model file written before greedy first
    c = nf.load(a.save(tmp_path / "old"))
    assert not hasattr(c, "exploration_") and c.gamma_scale_in_use() == ADAPTIVE_GAMMA_SCALE[0]
    c.act(one_hot.rounds[:3])
    assert c.exploration_.tolist() == [-1.0, 0.0, 0.0]
    # a file from before the context kept its scale: its "auto" context stays x/‖x‖, as it was trained
    u = CatalogueSquareCB(context_norm="unit", seed=2)
    nf.simulate(u, one_hot, None, None, n_rounds=300, seed=2)
    want = u.decision_function(one_hot.rounds[:50])
    u.context_norm = "auto"
    del u.exploration_, u.feature_scale_
    old = nf.load(u.save(tmp_path / "older"))
    assert old._context_norm() == "unit"
    np.testing.assert_array_equal(old.decision_function(one_hot.rounds[:50]), want)


def test_gamma_scale_parameters():
    doc = " ".join(CatalogueSquareCB.__doc__.split())  # the class docstring states the kernel's constants
    assert (f"Every {CHECK_EVERY}th round" in doc and f"window of {CHECK_WINDOW} rounds" in doc
            and f"exceeds {CHECK_RATIO:g}" in doc and f"{ADAPTIVE_GAMMA_SCALE[0]:,.0f} (nearly greedy)" in doc)
    assert CatalogueSquareCB().gamma_scale == "adaptive"
    assert CatalogueSquareCB().gamma_scale_in_use() == 10.0  # before the first round: AdaGrad's "auto" value
    with pytest.raises(ValueError, match="high >= low"):
        CatalogueSquareCB(gamma_scale=(30.0, 100.0)).act(shared_stream(2).rounds)
    with pytest.raises(ValueError, match="needs the ridge oracle"):
        CatalogueSquareCB(gamma_scale=(100.0, 30.0), oracle="adagrad").act(shared_stream(2).rounds)
    ada = CatalogueSquareCB(oracle="adagrad", seed=0)
    ada.act(shared_stream(2).rounds)
    assert ada.gamma_scale_in_use() == 10.0 and ada._adapt() == (10.0, 10.0, False)
