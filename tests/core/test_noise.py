"""Flip-rate estimation from logged noisy bandit tuples (noisyfeedback.noise, docs/algorithms.md §4.5)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from tolerances import FLIP_RATE_TOL

import noisyfeedback as nf
from noisyfeedback.noise import (
    DEFAULT_METHOD,
    METHODS,
    FlipRateWarning,
    clip_rates,
    estimate_flip_rates,
)

#: the mixture estimator meets this on every setting below (measured errors are <= 0.025; see tolerances.py)
TOL = FLIP_RATE_TOL
#: a cheap network for NREst in tests (the paper's is 2x128 for 70 epochs)
SMALL_NET = {"hidden_layer_sizes": (32,), "max_epochs": 20}


def logged_tuples(rho0, rho1, data="synsep", n=5000, explore=0.2, seed=0):
    """(X, actions, feedback, K) as a bandit learner would log them.

    The policy is a Perceptron trained on 300 clean examples, acting greedily
    and exploring uniformly with probability ``explore``; feedback comes from
    ``NoisyBandit(rho0, rho1)``. SynSep: the policy is (nearly) always right
    when greedy. Digits (resampled): right about 70 % of the time.
    """
    rng = np.random.default_rng(seed)
    if data == "synsep":
        X, y = nf.datasets.synsep(n_samples=n + 300, seed=seed)
    else:
        Xd, yd = load_digits(return_X_y=True)
        rows = rng.integers(0, yd.shape[0], n + 300)
        X, y = Xd[rows] / 16.0, yd[rows].astype(np.int64)
    K = int(y.max()) + 1
    policy = nf.Perceptron(K)
    for _ in range(2):
        policy.partial_fit(X[:300], y[:300])
    X, y = X[300:], y[300:]
    greedy = policy.predict(X)
    actions = np.where(rng.random(n) < explore, rng.integers(0, K, n), greedy)
    feedback = nf.feedback.NoisyBandit(rho0, rho1).respond(y, actions, rng)
    return X, actions, feedback, K


@pytest.fixture(scope="module")
def asymmetric():
    """Estimates for (0.2, 0.4) and (0.4, 0.2) on digits, shared by two tests."""
    out = {}
    for rho in [(0.2, 0.4), (0.4, 0.2)]:
        X, a, f, K = logged_tuples(*rho, data="digits")
        out[rho] = estimate_flip_rates(X, a, f, K, seed=0)
    return out


# ------------------------------------------------------------------ accuracy
@pytest.mark.parametrize(
    "rho0, rho1, data",
    [(0.0, 0.0, "synsep"), (0.15, 0.15, "synsep"), (0.4, 0.4, "synsep"),
     (0.0, 0.0, "digits"), (0.25, 0.25, "digits")],
)
def test_default_estimator_recovers_flip_rates(rho0, rho1, data):
    X, a, f, K = logged_tuples(rho0, rho1, data=data)
    r0, r1 = estimate_flip_rates(X, a, f, K, seed=0)
    assert abs(r0 - rho0) < TOL and abs(r1 - rho1) < TOL, (r0, r1)


def test_asymmetric_rates_recovered(asymmetric):
    for (rho0, rho1), (r0, r1) in asymmetric.items():
        assert abs(r0 - rho0) < TOL and abs(r1 - rho1) < TOL, ((rho0, rho1), (r0, r1))


def test_asymmetric_rates_are_told_apart(asymmetric):
    low0, high1 = asymmetric[(0.2, 0.4)]
    high0, low1 = asymmetric[(0.4, 0.2)]
    assert high0 - low0 > 0.12
    assert high1 - low1 > 0.12


def test_default_is_the_mixture_method():
    assert DEFAULT_METHOD == "mixture"
    assert {"mixture", "nrest"} <= set(METHODS)


# ------------------------------------------------------------------ determinism and inputs
def test_same_seed_same_estimate_and_seedsequence_accepted():
    X, a, f, K = logged_tuples(0.15, 0.25, data="digits", n=3000)
    first = estimate_flip_rates(X, a, f, K, seed=3)
    assert estimate_flip_rates(X, a, f, K, seed=3) == first
    ss = estimate_flip_rates(X, a, f, K, seed=np.random.SeedSequence(3))
    assert ss == estimate_flip_rates(X, a, f, K, seed=np.random.SeedSequence(3))
    other = estimate_flip_rates(X, a, f, K, seed=4)
    assert abs(other[0] - first[0]) < TOL and abs(other[1] - first[1]) < TOL


def test_sparse_input_matches_dense():
    X, a, f, K = logged_tuples(0.2, 0.3, n=3000)
    dense = estimate_flip_rates(X, a, f, K, seed=0)
    sparse = estimate_flip_rates(sp.csr_matrix(X), a, f, K, seed=0)
    assert np.allclose(dense, sparse, atol=0.01)  # the SVD rounds differently on CSR


def test_boolean_feedback_and_list_inputs():
    X, a, f, K = logged_tuples(0.1, 0.1, n=2000)
    assert estimate_flip_rates(X, a, f.astype(bool), K, seed=0) == estimate_flip_rates(X, a, f, K, seed=0)
    assert estimate_flip_rates(X.tolist(), a.tolist(), f.tolist(), K, seed=0) == estimate_flip_rates(X, a, f, K, seed=0)


@pytest.mark.parametrize("method", ["mixture", "nrest"])
def test_estimates_lie_in_the_valid_region_on_tiny_inputs(method):
    """RCINE may call the estimator on a small buffer: it must answer, inside the region."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    a = rng.integers(0, 3, 40)
    f = rng.integers(0, 2, 40)
    opts = SMALL_NET if method == "nrest" else {}
    r0, r1 = estimate_flip_rates(X, a, f, 3, method=method, seed=0, **opts)
    assert 0 <= r0 < 1 and 0 <= r1 < 1 and r0 + r1 < 1


@pytest.mark.parametrize("value", [0, 1])
def test_constant_feedback_warns_and_returns_zero(value):
    X, a, _, K = logged_tuples(0.0, 0.0, n=500)
    with pytest.warns(FlipRateWarning, match=f"every feedback value is {value}"):
        assert estimate_flip_rates(X, a, np.full(500, value), K) == (0.0, 0.0)


def test_input_validation_names_the_problem():
    X, a, f, K = logged_tuples(0.1, 0.1, n=300)
    bad_X = X.copy()
    bad_X[7, 2] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        estimate_flip_rates(bad_X, a, f, K)
    bad_a = a.copy()
    bad_a[5] = K
    with pytest.raises(ValueError, match=r"actions must hold labels in 0\.\.8; row 5"):
        estimate_flip_rates(X, bad_a, f, K)
    with pytest.raises(TypeError, match="actions must hold integer labels"):
        estimate_flip_rates(X, a.astype(float), f, K)
    bad_f = f.copy()
    bad_f[9] = 2
    with pytest.raises(ValueError, match="feedback must be 0 or 1; row 9"):
        estimate_flip_rates(X, a, bad_f, K)
    with pytest.raises(TypeError, match="feedback must hold 0/1 integers or booleans"):
        estimate_flip_rates(X, a, f.astype(float), K)
    with pytest.raises(ValueError, match="feedback has 299 entries but X has 300 rows"):
        estimate_flip_rates(X, a, f[:-1], K)
    with pytest.raises(ValueError, match="actions has 299 entries"):
        estimate_flip_rates(X, a[:-1], f, K)
    with pytest.raises(ValueError, match="must be 2-D"):
        estimate_flip_rates(X[0], a[:1], f[:1], K)
    with pytest.raises(ValueError, match="'n_classes' parameter .* must be an int >= 2"):
        estimate_flip_rates(X, np.zeros_like(a), f, 1)
    with pytest.raises(ValueError, match="'method' parameter of estimate_flip_rates must be one of"):
        estimate_flip_rates(X, a, f, K, method="argmax")
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['hidden_layer_sizes'\]"):
        estimate_flip_rates(X, a, f, K, method="mixture", hidden_layer_sizes=(8,))
    with pytest.raises(ValueError, match="'combine' parameter .* must be one of"):
        estimate_flip_rates(X, a, f, K, method="nrest", combine="max")
    with pytest.raises(ValueError, match="'l2' parameter"):
        estimate_flip_rates(X, a, f, K, l2=-1.0)
    with pytest.raises(ValueError, match="'seed' parameter"):
        estimate_flip_rates(X, a, f, K, seed=-1)


def test_clip_rates_projects_onto_the_valid_region():
    for r0, r1 in [(-0.2, 0.3), (0.9, 0.9), (1.5, -1.0), (0.3, 0.8), (0.2, 0.3)]:
        c0, c1 = clip_rates(r0, r1)
        assert 0 <= c0 < 1 and 0 <= c1 < 1 and c0 + c1 < 1
    assert clip_rates(0.2, 0.3) == (0.2, 0.3)


# ------------------------------------------------------------------ the paper's NREst
def test_nrest_runs_is_deterministic_and_orders_asymmetric_rates():
    est = {}
    for rho in [(0.2, 0.4), (0.4, 0.2)]:
        X, a, f, K = logged_tuples(*rho, data="digits", n=3000)
        est[rho] = estimate_flip_rates(X, a, f, K, method="nrest", seed=0, **SMALL_NET)
        assert estimate_flip_rates(X, a, f, K, method="nrest", seed=0, **SMALL_NET) == est[rho]
        for combine in ("per_arm", "counterfactual"):
            r0, r1 = estimate_flip_rates(X, a, f, K, method="nrest", seed=0, combine=combine, **SMALL_NET)
            assert 0 <= r0 < 1 and 0 <= r1 < 1 and r0 + r1 < 1
    assert est[(0.4, 0.2)][0] > est[(0.2, 0.4)][0]
    assert est[(0.2, 0.4)][1] > est[(0.4, 0.2)][1]


def test_nrest_percentile_reading_matches_the_authors_rule():
    """The perfect example of output i is the largest P(f̃=i) strictly below its ('higher') 89th percentile."""
    from noisyfeedback.noise.nrest import _perfect_index, _rates_from_q

    q = np.linspace(0.0, 1.0, 101)  # P(f̃=1) of 101 pooled tuples
    assert q[_perfect_index(q, 89.0)] == pytest.approx(0.88)
    rho0, rho1 = _rates_from_q(q, 89.0)
    assert rho0 == pytest.approx(0.12) and rho1 == pytest.approx(0.12)


# ------------------------------------------------------------------ the mixture estimator's pieces
def test_mixture_gradients_match_finite_differences():
    from scipy.optimize import approx_fprime

    from noisyfeedback.noise.mixture import _plateau_loss_grad, _ranker_loss_grad

    rng = np.random.default_rng(0)
    n, d, K = 60, 4, 3
    Z = rng.normal(size=(n, d))
    a = rng.integers(0, K, n)
    f = rng.integers(0, 2, n).astype(float)
    onehot = np.eye(K)[a]
    theta = rng.normal(scale=0.5, size=K * d + K + 2)
    _, grad = _ranker_loss_grad(theta, Z, a, f, onehot, K, 0.1)
    numeric = approx_fprime(theta, lambda t: _ranker_loss_grad(t, Z, a, f, onehot, K, 0.1)[0], 1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)
    s = rng.normal(size=n)
    theta = rng.normal(scale=0.5, size=2 + 2 * K)
    _, grad = _plateau_loss_grad(theta, s, a, f, K)
    numeric = approx_fprime(theta, lambda t: _plateau_loss_grad(t, s, a, f, K)[0], 1e-6)
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)


def test_mixture_identity_holds_for_the_simulated_channel():
    """P(f̃=1 | a = y) = 1 − ρ1 and P(f̃=1 | a ≠ y) = ρ0: the structure the estimators invert."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 200_000)
    a = np.where(rng.random(y.shape[0]) < 0.5, y, rng.integers(0, 4, y.shape[0]))
    f = nf.feedback.NoisyBandit(0.2, 0.3).respond(y, a, rng)
    assert f[a == y].mean() == pytest.approx(0.7, abs=0.005)
    assert f[a != y].mean() == pytest.approx(0.2, abs=0.005)


def test_mixture_ranker_subsample_is_a_cap_that_keeps_accuracy():
    """fit_samples caps the rows of each ranker fit; below the cap it changes nothing."""
    from noisyfeedback.noise.mixture import estimate_mixture

    X, a, f, K = logged_tuples(0.2, 0.3, data="synsep", n=4000)
    full = estimate_mixture(X, a, f, K, seed=1, fit_samples=None)
    assert estimate_mixture(X, a, f, K, seed=1, fit_samples=10_000) == full  # 2000-row folds: under the cap
    capped = estimate_mixture(X, a, f, K, seed=1, fit_samples=600)
    assert capped != full  # the cap is applied ...
    assert abs(capped[0] - 0.2) < TOL and abs(capped[1] - 0.3) < TOL, capped  # ... and the estimate holds
    with pytest.raises(ValueError, match="'fit_samples' parameter"):
        estimate_mixture(X, a, f, K, fit_samples=0)


def test_mixture_warm_state_reuses_the_basis_and_the_penalty(monkeypatch):
    """warm={} is a cold estimate that fills the state; a filled state skips the SVD fit and the l2 grid."""
    from noisyfeedback.noise import mixture

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    actions = np.where(rng.random(y.size) < 0.6, y, rng.integers(0, 10, y.size))
    fb = nf.feedback.NoisyBandit(0.2, 0.3).respond(y, actions, rng)
    warm: dict = {}
    opts = {"n_components": 16, "l2": (1e-2, 1e-3)}
    cold = mixture.estimate_mixture(X, actions, fb, 10, seed=3, **opts)
    assert mixture.estimate_mixture(X, actions, fb, 10, seed=3, warm=warm, **opts) == cold
    assert warm["l2"] in (1e-2, 1e-3) and warm["components"].shape == (16, 64)
    fits = []
    real_fit = mixture._fit_ranker
    monkeypatch.setattr(mixture, "_fit_ranker", lambda *a, **k: fits.append(a[4]) or real_fit(*a, **k))
    import sklearn.decomposition

    monkeypatch.setattr(sklearn.decomposition.TruncatedSVD, "fit", lambda *a, **k: pytest.fail("SVD refitted"))
    again = mixture.estimate_mixture(X, actions, fb, 10, seed=3, warm=warm, **opts)
    assert fits == [warm["l2"]] * 2  # one penalty, one ranker per fold
    assert abs(again[0] - 0.2) < 0.06 and abs(again[1] - 0.3) < 0.06, again
    with pytest.raises(TypeError, match="'warm' parameter"):
        mixture.estimate_mixture(X, actions, fb, 10, warm=[1])
