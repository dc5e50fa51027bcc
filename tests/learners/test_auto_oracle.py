"""oracle="auto" (the default of SquareCB and EpsilonGreedy): ridge where m = 1 and d <= the threshold,
AdaGrad elsewhere; the choice is ``oracle_`` and travels with the model file."""

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback.learners.bandit._oracle import (
    AUTO_RIDGE_MAX_FEATURES,
    mapped_dimension,
    resolve_features,
    resolve_oracle,
)

T = AUTO_RIDGE_MAX_FEATURES


def stream(d, n=300, K=4, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(K, d))
    X = rng.normal(size=(n, d))
    return X, np.argmax(X @ W.T, axis=1)


@pytest.mark.parametrize("cls", [nf.SquareCB, nf.EpsilonGreedy])
@pytest.mark.parametrize("d, m, want", [(3, 1, "ridge"), (T, 1, "ridge"), (T + 1, 1, "adagrad"), (3, 2, "adagrad")])
def test_auto_picks_ridge_below_the_threshold_and_adagrad_above(cls, d, m, want):
    learner = cls(4, m=m, seed=0)
    assert learner.oracle == "auto" and not hasattr(learner, "oracle_")
    X, y = stream(d, n=40)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1) if m == 1 else nf.feedback.Diluted(m),
                n_rounds=50, seed=0)
    assert learner.features_ == resolve_features("auto", "auto", m, d)
    D = mapped_dimension(learner.features_, d)  # the oracle's dimension: the raw d, or the degree-2 map's
    assert learner.oracle_ == want == resolve_oracle("auto", m, D)
    assert learner.ridge_inverse_.shape == ((4, D + 1, D + 1) if want == "ridge" else (4, 0, 0))
    # the same learner as the explicit choices, bit for bit
    twin = cls(4, m=m, oracle=want, features=learner.features_, seed=0)
    nf.simulate(twin, X, y, nf.feedback.NoisyBandit(0.1, 0.1) if m == 1 else nf.feedback.Diluted(m),
                n_rounds=50, seed=0)
    np.testing.assert_array_equal(learner.W_, twin.W_)
    assert twin.oracle_ == want


def test_oracle_is_resolved_at_the_first_learn_and_explicit_choices_are_kept():
    X, y = stream(5)
    a = nf.SquareCB(4, seed=0).learn(X[:3], [0, 1, 2], [1, 0, 1], [0.5] * 3)
    assert a.oracle_ == "ridge"
    b = nf.SquareCB(4, oracle="adagrad", seed=0).learn(X[:3], [0, 1, 2], [1, 0, 1], [0.5] * 3)
    assert b.oracle_ == "adagrad" and b.ridge_inverse_.shape == (4, 0, 0)
    c = nf.SquareCB(4, seed=0)
    c.fit_logged(X[:3], [0, 1, 2], [1, 0, 1], [0.5] * 3)
    assert c.oracle_ == "ridge"


@pytest.mark.parametrize("d", [6, T + 8])
def test_a_model_saved_with_auto_loads_with_the_same_oracle_and_predictions(tmp_path, d):
    X, y = stream(d, n=200)
    learner = nf.SquareCB(4, seed=1)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=300, seed=2)
    path = learner.save(tmp_path / "m.npz")
    loaded = nf.load(path)
    assert loaded.oracle == "auto" and loaded.oracle_ == learner.oracle_
    np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))
    np.testing.assert_array_equal(loaded.action_probabilities(X), learner.action_probabilities(X))
    # and both go on identically
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=100, seed=3)
    nf.simulate(loaded, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=100, seed=3)
    np.testing.assert_array_equal(loaded.W_, learner.W_)
    np.testing.assert_array_equal(loaded.ridge_inverse_, learner.ridge_inverse_)


def test_a_model_file_whose_ridge_state_does_not_match_its_oracle_is_refused(tmp_path):
    X, y = stream(6, n=50)
    learner = nf.SquareCB(4, seed=1)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.0, 0.0), n_rounds=60, seed=2)
    learner.ridge_inverse_ = np.zeros((4, 0, 0))
    path = learner.save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="ridge_inverse_"):
        nf.load(path)
