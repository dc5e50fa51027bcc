"""The degree-2 feature map of SquareCB and EpsilonGreedy (``features``; "auto" by default): the kernel against
its reference twin, the rule of "auto", simulate against the plain act/learn loop, model files."""

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from test_simulate import python_loop
from tolerances import KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback.kernels.features import quadratic_dimension, quadratic_rows
from noisyfeedback.learners._linear import finite_scale_rows
from noisyfeedback.learners.bandit._oracle import AUTO_QUADRATIC_MAX_FEATURES, AUTO_RIDGE_MAX_FEATURES, resolve_features

T = AUTO_QUADRATIC_MAX_FEATURES


def stream(d, n=300, K=4, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(K, d))
    X = rng.normal(size=(n, d))
    return X, np.argmax(X @ W.T, axis=1)


def _mapped(X):
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], quadratic_dimension(X.shape[1])))
    quadratic_rows(X, out)
    return out


# ------------------------------------------------------------------ kernel
@pytest.mark.parametrize("X", [
    np.array([[0.0, 0.0, 0.0]]),                       # the zero row: φ = 0
    np.array([[3.0]]), np.array([[-2.5]]),            # d = 1: (±1, 1)
    np.array([[3.0, 4.0], [1.0, -1.0], [0.0, 7.0]]),
    np.random.default_rng(1).normal(size=(20, 6)),
    np.random.default_rng(2).integers(0, 16, size=(20, 16)).astype(float),  # Letter-like integer features
    finite_scale_rows(np.array([[1e300, 1e300, -1e300], [1e-310, 0.0, 2e-310]])),  # rescaled extremes
])
def test_quadratic_rows_match_reference(X):
    got = _mapped(X)
    want = np.array([ref.quadratic_map(x) for x in X])
    assert got.shape == (X.shape[0], quadratic_dimension(X.shape[1]))
    np.testing.assert_allclose(got, want, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    assert np.isfinite(got).all()


def test_quadratic_map_is_the_degree_two_polynomial_kernel():
    X = np.random.default_rng(3).normal(size=(8, 5))
    Z = _mapped(X)
    Xh = X / np.linalg.norm(X, axis=1, keepdims=True)
    G = Xh @ Xh.T
    np.testing.assert_allclose(Z @ Z.T, G + G ** 2, rtol=1e-12, atol=1e-12)
    assert quadratic_dimension(16) == 152 and quadratic_dimension(T) <= AUTO_RIDGE_MAX_FEATURES \
        < quadratic_dimension(T + 1)


# ------------------------------------------------------------------ the rule
@pytest.mark.parametrize("cls", [nf.SquareCB, nf.EpsilonGreedy])
@pytest.mark.parametrize("d, m, params, want", [
    (3, 1, {}, "quadratic"), (T, 1, {}, "quadratic"), (T + 1, 1, {}, "linear"), (3, 2, {}, "linear"),
    (3, 1, {"oracle": "ridge"}, "linear"), (3, 1, {"oracle": "adagrad"}, "linear"),
    (T + 5, 1, {"features": "quadratic"}, "quadratic"), (3, 1, {"features": "linear"}, "linear")])
def test_auto_takes_the_map_for_few_features_with_the_auto_oracle(cls, d, m, params, want):
    learner = cls(4, m=m, seed=0, **params)
    X, y = stream(d, n=40)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.1) if m == 1 else nf.feedback.Diluted(m),
                n_rounds=50, seed=0)
    assert learner.features_ == want == resolve_features(params.get("features", "auto"),
                                                          params.get("oracle", "auto"), m, d)
    assert learner.W_.shape == (4, quadratic_dimension(d) if want == "quadratic" else d)
    assert learner.n_features_ == d
    if want == "quadratic" and "oracle" not in params and d <= T:
        assert learner.oracle_ == "ridge"


def test_the_default_above_the_threshold_is_the_linear_learner_bit_for_bit():
    X, y = nf.datasets.load("digits", normalize=True)  # d = 64: the raw features, as before the map existed
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    a, b = nf.SquareCB(10, seed=0), nf.SquareCB(10, features="linear", oracle="ridge", seed=0)
    ta, tb = nf.simulate(a, X, y, ch, n_rounds=3000, seed=1), nf.simulate(b, X, y, ch, n_rounds=3000, seed=1)
    assert ta.mistakes == tb.mistakes and np.array_equal(ta.curve, tb.curve)
    assert a.features_ == "linear"
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.ridge_inverse_, b.ridge_inverse_)


def test_the_map_is_the_linear_learner_on_mapped_rows():
    X, y = stream(5, n=200)
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    a = nf.SquareCB(4, seed=2)
    b = nf.SquareCB(4, oracle="ridge", features="linear", seed=2)
    ta = nf.simulate(a, X, y, ch, n_rounds=800, seed=3)
    tb = nf.simulate(b, _mapped(finite_scale_rows(X)), y, ch, n_rounds=800, seed=3)
    assert ta.mistakes == tb.mistakes and np.array_equal(ta.curve, tb.curve)
    np.testing.assert_array_equal(a.W_, b.W_)


def test_the_map_learns_what_a_linear_model_cannot():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 2))
    y = ((X[:, 0] * X[:, 1]) > 0).astype(int) + 2 * (np.abs(X[:, 0]) > 0.5)  # XOR-like quadrants and bands
    ch = nf.feedback.NoisyBandit(0.1, 0.1)
    quad = nf.simulate(nf.SquareCB(4, seed=0), X, y, ch, n_rounds=30_000, seed=0).error_rate
    lin = nf.simulate(nf.SquareCB(4, features="linear", seed=0), X, y, ch, n_rounds=30_000, seed=0).error_rate
    assert quad < 0.6 * lin, (quad, lin)


# ---------------------------------------------------------------- bit for bit
@pytest.mark.parametrize("make,X", [
    (lambda: nf.SquareCB(4, seed=3), "normal"),
    (lambda: nf.EpsilonGreedy(4, seed=3), "normal"),
    (lambda: nf.SquareCB(4, seed=3, rho0=0.1, rho1=0.2), "coded"),   # mostly zero: coded rows in simulate
    (lambda: nf.EpsilonGreedy(4, features="quadratic", oracle="adagrad", seed=3), "coded"),
])
def test_simulate_equals_python_loop_bit_for_bit(make, X):
    rng = np.random.default_rng(5)
    if X == "normal":
        X = rng.normal(size=(80, 6))
    else:
        X = rng.integers(0, 4, size=(80, 6)).astype(float) * (rng.random((80, 6)) < 0.4)
    y = rng.integers(0, 4, size=80)
    channel = nf.feedback.NoisyBandit(0.1, 0.2)
    learner, twin = make(), make()
    trace = nf.simulate(learner, X, y, channel, n_rounds=500, seed=7)
    mistakes = python_loop(twin, X, y, channel, 500, seed=7)
    assert trace.mistakes == int(mistakes.sum())
    assert learner.features_ == twin.features_ == "quadratic"
    for name in ("W_", "intercept_", "ridge_inverse_", "sum_sq_grad_", "n_updates_"):
        np.testing.assert_array_equal(getattr(learner, name), getattr(twin, name))
    assert learner.rng_.bit_generator.state == twin.rng_.bit_generator.state


def test_dense_and_csr_rows_give_the_same_run():
    X, y = stream(6, n=100)
    X[np.abs(X) < 0.8] = 0.0
    ch = nf.feedback.NoisyBandit(0.2, 0.1)
    a, b = nf.SquareCB(4, seed=0), nf.SquareCB(4, seed=0)
    assert nf.simulate(a, X, y, ch, n_rounds=700, seed=1) == nf.simulate(b, sp.csr_matrix(X), y, ch,
                                                                        n_rounds=700, seed=1)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.decision_function(X[:7]), b.decision_function(sp.csr_matrix(X[:7])))


# ------------------------------------------------------------ files and checks
def test_a_model_saved_with_the_map_loads_with_it(tmp_path):
    X, y = stream(7, n=200)
    learner = nf.SquareCB(4, seed=1)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=300, seed=2)
    loaded = nf.load(learner.save(tmp_path / "m.npz"))
    assert loaded.features == "auto" and loaded.features_ == "quadratic" and loaded.n_features_ == 7
    np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))
    np.testing.assert_array_equal(loaded.action_probabilities(X), learner.action_probabilities(X))
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=100, seed=3)
    nf.simulate(loaded, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=100, seed=3)
    np.testing.assert_array_equal(loaded.W_, learner.W_)


def test_a_model_file_without_the_map_loads_as_linear(tmp_path):
    X, y = stream(T + 3, n=100)  # auto keeps the raw features here: a file like those saved before the map
    learner = nf.SquareCB(4, seed=1)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=200, seed=2)
    del learner.features_
    loaded = nf.load(learner.save(tmp_path / "old.npz"))
    assert not hasattr(loaded, "features_") or loaded.features_ == "linear"
    assert loaded.n_features_ == T + 3
    np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))


def test_wrong_widths_and_a_changed_map_are_refused():
    X, y = stream(4, n=50)
    learner = nf.SquareCB(4, seed=0)
    learner.learn(X[:5], y[:5], np.ones(5, int), np.full(5, 0.5))
    assert learner.W_.shape == (4, 14)
    with pytest.raises(ValueError, match="4 features"):
        learner.predict(np.zeros((2, 14)))
    learner.features = "linear"  # assigned on a fitted learner (set_params would discard the state)
    with pytest.raises(ValueError, match="'features' parameter of SquareCB cannot change after fitting"):
        learner.predict(X)
    learner.features = "quadratic"
    learner.predict(X)  # the map it was fitted with
    learner.features = "linear"
    learner.fit_logged(X[:5], y[:5], np.ones(5, int), np.full(5, 0.5))  # from scratch: the new map
    assert learner.features_ == "linear" and learner.W_.shape == (4, 4)
    with pytest.raises(ValueError, match="The 'features' parameter of SquareCB must be"):
        nf.SquareCB(4, features="cubic").learn(X[:1], [0], [1], [0.5])
