"""WeightedRLS: the weighted ridge solution after every round, equal variances, the twin, budgets, save/load."""

import numpy as np
import pytest
from reference import wrls_run

import noisyfeedback as nf
from noisyfeedback.datasets.regression import ors_synthetic


def _data(n=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    v = rng.uniform(0.05, 3.0, n)
    y = X @ rng.normal(size=d) + np.sqrt(v) * rng.normal(size=n)
    return X, y, v


def test_equals_batch_weighted_ridge_after_every_round():
    X, y, v = _data()
    lam = 0.7
    m = nf.WeightedRLS(lam=lam)
    for t in range(X.shape[0]):
        m.learn(X[t:t + 1], y[t:t + 1], variance=v[t:t + 1])
        Wt = 1.0 / v[:t + 1]
        A = lam * np.eye(X.shape[1]) + (X[:t + 1].T * Wt) @ X[:t + 1]
        w_batch = np.linalg.solve(A, (X[:t + 1].T * Wt) @ y[:t + 1])
        np.testing.assert_allclose(m.w_, w_batch, rtol=0, atol=1e-8)
        np.testing.assert_allclose(m.P_, np.linalg.inv(A), rtol=0, atol=1e-8)


def test_equal_variances_are_ordinary_rls():
    X, y, _ = _data()
    c = 2.5
    known = nf.WeightedRLS(lam=0.4 / c).learn(X, y, variance=np.full(len(y), c))
    plain = nf.WeightedRLS(lam=0.4, variance="none").learn(X, y)
    np.testing.assert_allclose(known.w_, plain.w_, rtol=0, atol=1e-10)
    # and the scikit-learn face: unit weights are ordinary RLS, sample_weight = 1/variance
    np.testing.assert_array_equal(nf.WeightedRLS(lam=0.4).fit(X, y).w_, plain.w_)
    _, _, v = _data()
    np.testing.assert_array_equal(nf.WeightedRLS(lam=0.4).fit(X, y, sample_weight=1 / v).w_,
                                  nf.WeightedRLS(lam=0.4).learn(X, y, variance=1 / (1 / v)).w_)


def test_weight_zero_rows_change_nothing():
    X, y, v = _data()
    v2 = v.copy()
    v2[::3] = np.inf
    a = nf.WeightedRLS(lam=1.0).learn(X, y, variance=v2)
    keep = np.isfinite(v2)
    b = nf.WeightedRLS(lam=1.0).learn(X[keep], y[keep], variance=v2[keep])
    np.testing.assert_allclose(a.w_, b.w_, atol=1e-12)


@pytest.mark.parametrize("params", [
    {"variance": "known"},
    {"variance": "none"},
    {"variance": "unknown"},
    {"variance": "unknown", "shrink": float("inf")},
    {"variance": "unknown", "n_labels": 2, "shrink": 0.0},
    {"variance": "unknown", "budget": 1.5, "strategy": "auto_self_tuned", "seed": 3},
    {"variance": "known", "budget": 2.5, "strategy": "const", "seed": 1},
    {"variance": "unknown", "budget": 2.0, "strategy": "begin", "horizon": 50, "seed": 1},
])
def test_kernel_matches_reference_twin(params):
    X, y, v = _data(n=50)
    m = nf.WeightedRLS(lam=0.5, **params)
    k = m.labels_per_round
    rng = np.random.default_rng(7)
    Y = y[:, None] + np.sqrt(v)[:, None] * rng.normal(size=(len(y), k))
    Y[5] = Y[5, 0]  # equal labels: a zero sample variance (floored)
    u = nf.base.make_rng(params["seed"]).random(len(y)) if params.get("budget") else None
    m.learn(X, Y, variance=v if params["variance"] == "known" else None)
    kw = {k_: v_ for k_, v_ in params.items() if k_ not in ("seed", "variance")}
    w_ref, used, a = wrls_run(X, Y, v, lam=0.5, mode=params["variance"], u=u, **kw)
    np.testing.assert_allclose(m.w_, w_ref, rtol=0, atol=1e-9)
    assert m.labels_ == int(np.sum(used))


def test_simulate_equals_plain_python_loop_bit_for_bit():
    X, y = ors_synthetic(n_samples=300, seed=0)
    noise = nf.feedback.GaussianNoise.uniform(2.0, n_rounds=500, seed=1)
    for params in ({"lam": 1.0}, {"lam": 1.0, "variance": "unknown", "budget": 1.5, "seed": 4}):
        a = nf.WeightedRLS(**params)
        tr = nf.simulate(a, X, y, noise, n_rounds=500, seed=2)
        b = nf.WeightedRLS(**params)
        from noisyfeedback.simulate import RoundOrder, simulation_streams

        rng_order, rng_fb, ss_learner = simulation_streams(2)
        b._init_state(X.shape[1], ss_learner)
        order = RoundOrder(X.shape[0], rng_order, True).take(500)
        sq = []
        for t, i in enumerate(order):
            yhat = float(b.predict(X[i:i + 1])[0])
            labels = noise.respond(y[i:i + 1], rng=rng_fb, rounds=[t], n_samples=b.labels_per_round)
            b.learn(X[i:i + 1], np.asarray(labels).reshape(1, -1), variance=noise.variance_at(np.array([t])))
            sq.append((yhat - y[i]) ** 2)
        assert tr.mse == float(np.cumsum(sq)[-1] / 500)
        np.testing.assert_array_equal(a.w_, b.w_)


def test_beats_ors_and_save_load(tmp_path):
    X, y = ors_synthetic(n_samples=4000, seed=0)
    noise = nf.feedback.GaussianNoise.uniform(3.0, n_rounds=4000, seed=1)
    ors = nf.simulate(nf.ORS(r=1.0, scaling="beta", beta=1.0), X, y, noise, n_rounds=4000, seed=2)
    m = nf.WeightedRLS(lam=1.0)
    rls = nf.simulate(m, X, y, noise, n_rounds=4000, seed=2)
    assert rls.mse < 0.5 * ors.mse
    m2 = nf.load(m.save(tmp_path / "w.npz"))
    np.testing.assert_array_equal(m2.P_, m.P_)
    np.testing.assert_array_equal(m2.predict(X[:10]), m.predict(X[:10]))


def test_validation():
    X, y, v = _data(n=5)
    with pytest.raises(ValueError, match="'lam' parameter"):
        nf.WeightedRLS(lam=0).learn(X, y, variance=v)
    with pytest.raises(ValueError, match="variance="):
        nf.WeightedRLS().learn(X, y)
    with pytest.raises(ValueError, match="row 2"):
        nf.WeightedRLS().learn(X, y, variance=np.array([1, 1, np.nan, 1, 1.0]))
    with pytest.raises(ValueError, match="n_labels"):
        nf.WeightedRLS(budget=2.0, n_labels=2).learn(X, y)
