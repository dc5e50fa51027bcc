"""Online regressors under hostile input: exact rows of WeightedRLS (variance 0), and the finite-state
guarantee (a row that would make the state non-finite is refused naming it; the state is as before it)."""

import copy

import numpy as np
import pytest

import noisyfeedback as nf


def constrained_wls(X, y, v, lam):
    """Weighted ridge with the rows of variance 0 as exact constraints, by its KKT system (numpy lstsq):
    min λ‖w‖² + Σ_{v>0} (y − w·x)²/v subject to w·x_i = y_i where v_i = 0."""
    exact = v == 0
    W = np.where(exact, 0.0, 1.0 / np.where(exact, 1.0, v))
    d = X.shape[1]
    A = lam * np.eye(d) + (X.T * W) @ X
    b = (X.T * W) @ y
    C, c = X[exact], y[exact]
    k = C.shape[0]
    K = np.block([[A, C.T], [C, np.zeros((k, k))]])
    sol = np.linalg.lstsq(K, np.concatenate([b, c]), rcond=None)[0]
    return sol[:d]


def state(m):
    return {k: copy.deepcopy(getattr(m, k)) for k in m._learned_attributes() if k != "rng_"}


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("seed", range(12))
def test_variance_zero_rows_are_exact_constraints(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6))
    n = int(rng.integers(d + 2, 30))
    X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 30.0])
    y = X @ rng.normal(size=d) + rng.normal(size=n)
    v = rng.uniform(0.1, 2.0, n)
    k = int(rng.integers(1, d + 1))  # at most d exact rows: independent, so a solution exists
    exact = rng.choice(n, k, replace=False)
    v[exact] = 0.0
    lam = float(rng.choice([1e-3, 1.0, 10.0]))
    m = nf.WeightedRLS(lam=lam).learn(X, y, variance=v)
    ref = constrained_wls(X, y, v, lam)
    np.testing.assert_allclose(m.w_, ref, rtol=0, atol=1e-7 * max(1.0, np.abs(ref).max()))
    np.testing.assert_allclose(X[exact] @ m.w_, y[exact], rtol=0, atol=1e-7 * max(1.0, np.abs(y).max()))


def test_tiny_positive_variance_is_an_exact_row():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=20)
    for tiny in (1e-300, 1e-200, 1e-30):
        v = np.ones(20)
        v[[2, 7]] = tiny
        m = nf.WeightedRLS(lam=1.0).learn(X, y, variance=v)
        v0 = v.copy()
        v0[[2, 7]] = 0.0
        np.testing.assert_allclose(m.w_, constrained_wls(X, y, v0, 1.0), atol=1e-8)
        assert np.isfinite(m.P_).all()


def test_repeated_consistent_exact_row_changes_nothing():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 0.3 * rng.normal(size=12)
    v = np.ones(12)
    v[4] = 0.0
    X2, y2, v2 = np.vstack([X, X[4:5], 2 * X[4:5]]), np.append(y, [y[4], 2 * y[4]]), np.append(v, [0.0, 0.0])
    a = nf.WeightedRLS(lam=1.0).learn(X, y, variance=v)
    b = nf.WeightedRLS(lam=1.0).learn(X2, y2, variance=v2)
    np.testing.assert_allclose(b.w_, a.w_, atol=1e-10)
    np.testing.assert_allclose(b.w_, constrained_wls(X, y, v, 1.0), atol=1e-8)


def test_contradicting_exact_rows_raise_naming_the_row_and_keep_the_state():
    """All variances 0 on noisy, overdetermined data (the hostile report: w = [-1.50, -3.87, -5.17] where
    least squares gives [0.99, -2.01, 0.51]): exact constraints without a solution are refused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=40)
    m = nf.WeightedRLS(lam=1.0)
    with pytest.raises(ValueError, match=r"row 3 is an exact constraint .*contradicts"):
        m.learn(X, y, variance=0.0)
    before = nf.WeightedRLS(lam=1.0).learn(X[:3], y[:3], variance=0.0)
    assert_same_state(state(m), state(before))
    assert m.rounds_ == 3
    # the weights stay the solution of the first three (independent) exact rows
    np.testing.assert_allclose(X[:3] @ m.w_, y[:3], atol=1e-9)
    with pytest.raises(ValueError, match="row 0 is an exact constraint"):
        m.learn(X[5:6], y[5:6], variance=1e-300)


def test_noiseless_simulation_with_variance_zero_learns_exactly():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4))
    w = np.array([0.5, -1.0, 2.0, 3.0])
    y = X @ w
    m = nf.WeightedRLS(lam=1.0)
    tr = nf.simulate(m, X, y, nf.feedback.GaussianNoise(0.0), n_rounds=400, seed=0)
    np.testing.assert_allclose(m.w_, w, atol=1e-9)
    assert np.isfinite(tr.mse)


@pytest.mark.parametrize("make", [
    lambda: nf.WeightedRLS(lam=1.0),
    lambda: nf.WeightedRLS(lam=1.0, variance="unknown", budget=1.5, seed=0),
    lambda: nf.NLMS(r=1.0),
    lambda: nf.ORS(r=1.0, scaling="one_sample_pred", variance="unknown", budget=1.5, seed=0),
    lambda: nf.ORS(r=1.0, scaling="beta"),
    lambda: nf.NLMS(),
    lambda: nf.ORS(variance="unknown", budget=1.5, seed=0),
], ids=["wrls", "wrls-budget", "nlms", "ors-budget", "ors-beta", "nlms-auto", "ors-auto-budget"])
@pytest.mark.parametrize("hostile", ["huge_x", "huge_y", "overflowing_norm"])
def test_a_row_that_would_make_the_state_non_finite_is_refused(make, hostile):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = X @ np.array([1.0, -1.0, 2.0])
    Xb, yb = X.copy(), y.copy()
    if hostile == "huge_x":
        Xb[7] = 1.7e308
    elif hostile == "huge_y":
        yb[7] = 1.7e308
        Xb[7] = 1e300
    else:
        Xb[7] = [1e160, -1e160, 1e160]
    m = make()
    k = m.labels_per_round
    Y = np.repeat(yb[:, None], k, axis=1) + np.where(k > 1, 0.01, 0.0) * rng.normal(size=(30, k))
    v = np.full(30, 0.5)
    ref = make().learn(X[:7], Y[:7], variance=v[:7])
    with pytest.raises(ValueError, match=r"row 7 would make the learned state non-finite"):
        m.learn(Xb, Y, variance=v)
    assert_same_state(state(m), state(ref))
    if hasattr(ref, "rng_"):  # the random stream too: as if the rows after 7 had never been seen
        assert m.rng_.random() == ref.rng_.random()
    # and learning goes on from there with ordinary rows
    m.learn(X[8:], Y[8:], variance=v[8:])
    assert np.isfinite(m.w_).all()
    # simulate refuses the same row, naming the round and the row
    with pytest.raises(ValueError, match=r"round 7 \(row 7 of X\) would make the learned state non-finite"):
        nf.simulate(make(), Xb, y, nf.feedback.GaussianNoise(0.5), n_rounds=30, seed=0, shuffle=False)


@pytest.mark.parametrize("lam", [0.0, 1e-320, 1e301])
def test_lam_range_cannot_overflow(lam):
    with pytest.raises(ValueError, match="'lam' parameter of WeightedRLS"):
        nf.WeightedRLS(lam=lam).fit(np.eye(2), np.ones(2))


def test_self_tuned_a_stays_in_range():
    from noisyfeedback.kernels.regression import A_MAX, A_MIN, tune_a

    a = 1e299
    for t in range(99, 10_000, 100):
        a = tune_a(10 * (t + 1), t, 1.5, a)
    assert a == A_MAX
    for t in range(99, 200_000, 100):
        a = tune_a(0, t, 1.5, a)
    assert a == A_MIN


# ------------------------------------------------------------------ property-based
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
_rows = st.integers(1, 6).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n, 3), elements=_finite), arrays(np.float64, (n,), elements=_finite),
    arrays(np.float64, (n,), elements=st.floats(0, 1e300))))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(_rows, min_size=1, max_size=3),
       which=st.sampled_from(["wrls", "wrls-unknown", "nlms", "ors", "ors-budget"]))
def test_any_accepted_input_keeps_the_state_finite(batches, which):
    make = {"wrls": lambda: nf.WeightedRLS(lam=1.0), "wrls-unknown": lambda: nf.WeightedRLS(variance="unknown"),
            "nlms": lambda: nf.NLMS(r=1.0), "ors": lambda: nf.ORS(r=1.0, scaling="one_sample"),
            "ors-budget": lambda: nf.ORS(r=1.0, variance="unknown", budget=1.5, seed=0)}[which]
    m = make()
    k = m.labels_per_round
    for X, y, v in batches:
        Y = np.repeat(y[:, None], k, axis=1)
        try:
            m.learn(X, Y, variance=v)
        except ValueError as e:
            assert "row" in str(e)
        for name in m._learned_attributes():
            value = getattr(m, name)
            if isinstance(value, (np.ndarray, float)):
                assert np.isfinite(value).all(), name
