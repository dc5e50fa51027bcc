"""Off-policy evaluation (nf.ope): exact unbiasedness, interval coverage, noise correction, inputs."""

import itertools

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback.ope import evaluate

# ------------------------------------------------------------ a tiny problem, enumerated exactly
PX = np.array([0.5, 0.3, 0.2])  # P(context)
MU = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [1 / 3, 1 / 3, 1 / 3]])  # logging policy
PI = np.array([[0.1, 0.2, 0.7], [0.8, 0.0, 0.2], [0.0, 1.0, 0.0]])  # target policy
R = np.array([[0.9, 0.2, 0.4], [0.1, 0.6, 0.3], [0.5, 0.5, 0.05]])  # P(reward = 1 | x, a)
XS = np.eye(3)  # one-hot contexts
TRUE = float((PX[:, None] * PI * R).sum())


def _expected(estimator, rho0=0.0, rho1=0.0, **kw):
    """E[estimate] over one logged row (x, a, observed reward), enumerated exactly."""
    total = 0.0
    for x, a, f in itertools.product(range(3), range(3), (0, 1)):
        p_f = R[x, a] if f else 1 - R[x, a]
        for obs in (0, 1):  # the flip channel
            p_obs = (1 - rho1 if obs else rho1) if f else (rho0 if obs else 1 - rho0)
            prob = PX[x] * MU[x, a] * p_f * p_obs
            if prob == 0:
                continue
            est = evaluate(PI[[x]], XS[[x]], [a], [obs], [MU[x, a]], estimator, rho0=rho0, rho1=rho1,
                           interval="none", **kw)
            total += prob * est.value
    return total


def test_ips_is_unbiased_by_enumeration():
    assert _expected("ips") == pytest.approx(TRUE, abs=1e-12)


@pytest.mark.parametrize("rates", [(0.2, 0.1), (0.0, 0.3), (0.35, 0.4)])
def test_noise_corrected_ips_is_unbiased_under_flips(rates):
    assert _expected("ips", *rates) == pytest.approx(TRUE, abs=1e-12)


def test_plain_ips_is_biased_under_flips_by_the_predicted_amount():
    # E[plain] = rho0·E[w] + (1 − rho0 − rho1)·V with E[w] = 1
    assert _expected("ips") == pytest.approx(TRUE)
    plain = sum(PX[x] * MU[x, a] * (PI[x, a] / MU[x, a]) * (0.2 + 0.7 * R[x, a])
                for x in range(3) for a in range(3))
    assert plain == pytest.approx(0.2 + 0.7 * TRUE)
    assert abs(plain - TRUE) > 0.05


@pytest.mark.parametrize("rates", [(0.0, 0.0), (0.2, 0.1)])
def test_doubly_robust_is_unbiased_with_a_wrong_reward_model(rates):
    wrong = np.array([[0.0, 1.0, 0.3], [0.7, 0.1, 0.9], [0.2, 0.0, 1.0]])  # far from R
    total = 0.0
    for x, a, f, obs in itertools.product(range(3), range(3), (0, 1), (0, 1)):
        rho0, rho1 = rates
        p = PX[x] * MU[x, a] * (R[x, a] if f else 1 - R[x, a]) * \
            ((1 - rho1 if obs else rho1) if f else (rho0 if obs else 1 - rho0))
        if p:
            total += p * evaluate(PI[[x]], XS[[x]], [a], [obs], [MU[x, a]], "dr", rho0=rho0, rho1=rho1,
                                  interval="none", reward_model=wrong[[x]]).value
    assert total == pytest.approx(TRUE, abs=1e-12)
    # the direct method with the same wrong model is biased: DR's unbiasedness is not an accident
    dm = sum(PX[x] * (PI[x] * wrong[x]).sum() for x in range(3))
    assert abs(dm - TRUE) > 0.05


# ------------------------------------------------------------ synthetic logs on digits
@pytest.fixture(scope="module")
def digits_logs():
    X, y = nf.datasets.load("digits", normalize=True)
    K = 10
    cent = np.array([X[y == k][:20].mean(axis=0) for k in range(K)])
    pred = np.argmax(X @ cent.T, axis=1)  # a decent classifier (~90 %)
    weak = np.where(np.arange(len(y)) % 3 == 0, (pred + 1) % K, pred)  # a worse one
    mu = 0.6 / K + 0.4 * np.eye(K)[weak]  # logging: 40 % greedy on the weak classifier
    half = np.where(np.arange(len(y)) % 2 == 0, pred, (pred + 2) % K)  # right on about half the rows
    pi = 0.4 / K + 0.6 * np.eye(K)[half]  # target: 60 % greedy on it; value ≈ 0.3, far from 2/3
    true = float(pi[np.arange(len(y)), y].mean())
    return X, y, mu, pi, true


def _log(X, y, mu, n, seed, flips=None):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(y), n)
    cum = np.cumsum(mu[rows], axis=1)
    a = np.minimum((cum < rng.random((n, 1))).sum(axis=1), mu.shape[1] - 1)
    r = (a == y[rows]).astype(np.int64)
    if flips is not None:
        u = rng.random(n)
        r = np.where(r == 1, u >= flips[1], u < flips[0]).astype(np.int64)
    return rows, a, r, mu[rows, a]


def test_intervals_cover_the_true_value_in_90_percent_of_200_seeds(digits_logs):
    X, y, mu, pi, true = digits_logs
    hits = {"ips": 0, "snips": 0}
    for seed in range(200):
        rows, a, r, p = _log(X, y, mu, 400, seed)
        for e in hits:
            hits[e] += evaluate(pi[rows], None, a, r, p, e, seed=seed).covers(true)
    assert hits["ips"] >= 180 and hits["snips"] >= 180, hits


def test_flips_bias_plain_estimates_and_not_corrected_ones(digits_logs):
    X, y, mu, pi, true = digits_logs
    assert 0.2 < true < 0.4
    rho0, rho1 = 0.2, 0.1
    vals = {(e, c): [] for e in ("ips", "snips") for c in (False, True)}
    cover = 0
    for seed in range(200):
        rows, a, r, p = _log(X, y, mu, 400, seed, flips=(rho0, rho1))
        for e in ("ips", "snips"):
            for corr in (False, True):
                est = evaluate(pi[rows], None, a, r, p, e, rho0=rho0 if corr else 0.0, rho1=rho1 if corr else 0.0,
                               interval="normal")
                vals[(e, corr)].append(est.value)
                cover += corr and e == "ips" and est.covers(true)
    for e in ("ips", "snips"):
        plain, corr = np.array(vals[(e, False)]), np.array(vals[(e, True)])
        se_p, se_c = plain.std() / np.sqrt(200), corr.std() / np.sqrt(200)
        # plain: E = 0.2 + 0.7·V (IPS), so the bias is 0.2 − 0.3·V ≈ +0.1 here, > 8 standard errors
        assert abs(plain.mean() - true) > 8 * se_p, (e, plain.mean(), true, se_p)
        assert abs(plain.mean() - (0.2 + 0.7 * true)) < 4 * se_p
        assert abs(corr.mean() - true) < 4 * se_c, (e, corr.mean(), true, se_c)
    assert cover >= 180


def test_dm_and_dr_with_a_fitted_model_are_close_on_a_large_log(digits_logs):
    X, y, mu, pi, true = digits_logs
    rows, a, r, p = _log(X, y, mu, 4000, 0)
    for e in ("dm", "dr"):
        est = evaluate(pi[rows], X[rows], a, r, p, e, seed=0, interval="normal")
        assert abs(est.value - true) < 0.06, (e, est)
    logistic = evaluate(pi[rows], X[rows], a, r, p, "dr", seed=0, reward_model="logistic", interval="none")
    assert abs(logistic.value - true) < 0.06


# ------------------------------------------------------------ inputs and the contract
def test_policy_as_learner_array_or_callable_gives_the_same_estimate():
    X, y = nf.datasets.load("digits", normalize=True)
    learner = nf.Banditron(10, gamma=0.3, seed=0)
    nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0, 0), n_rounds=3000, seed=0)
    rng = np.random.default_rng(1)
    a = rng.integers(0, 10, len(y))
    r = (a == y).astype(int)
    p = np.full(len(y), 0.1)
    P = learner.action_probabilities(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    outs = [evaluate(pol, X, a, r, p, "ips", seed=0) for pol in (learner, P, learner.action_probabilities)]
    assert outs[0] == outs[1] == outs[2]
    assert outs[0].estimator == "ips" and outs[0].n == len(y) and outs[0].interval == "bootstrap"
    assert outs[0].lower < outs[0].value < outs[0].upper
    with pytest.raises(AttributeError):
        outs[0].value = 1.0  # frozen


def test_bad_inputs_are_rejected_naming_the_row():
    P = np.full((5, 2), 0.5)
    a, r, p = np.array([0, 1, 0, 1, 0]), np.array([1, 0, 1, 0, 1]), np.full(5, 0.5)
    bad = P.copy()
    bad[3] = [0.9, 0.9]
    with pytest.raises(ValueError, match="row 3"):
        evaluate(bad, None, a, r, p)
    with pytest.raises(ValueError, match="row 2"):
        evaluate(P, None, a, r, np.where(np.arange(5) == 2, 0.0, p))
    with pytest.raises(ValueError, match="row 4"):
        evaluate(P, None, np.where(np.arange(5) == 4, 2, a), r, p)
    with pytest.raises(ValueError, match="row 1"):
        evaluate(P, None, a, np.where(np.arange(5) == 1, 0.5, r), p, rho0=0.1)
    with pytest.raises(ValueError, match="'rho0' and 'rho1'"):
        evaluate(P, None, a, r, p, rho0=0.6, rho1=0.5)
    with pytest.raises(ValueError, match="'estimator'"):
        evaluate(P, None, a, r, p, "magic")
    with pytest.raises(ValueError, match="'interval'"):
        evaluate(P, None, a, r, p, interval="magic")


@pytest.mark.parametrize("interval", ["bootstrap", "normal", "bernstein"])
def test_intervals_shrink_with_more_rows_and_bernstein_is_widest(interval):
    rng = np.random.default_rng(0)
    widths = []
    for n in (500, 8000):
        a = rng.integers(0, 4, n)
        r = (rng.random(n) < 0.3).astype(int)
        e = evaluate(np.tile([0.7, 0.1, 0.1, 0.1], (n, 1)), None, a, r, np.full(n, 0.25), "ips",
                     interval=interval, seed=0)
        assert e.lower <= e.value <= e.upper
        widths.append(e.upper - e.lower)
    assert widths[1] < widths[0] / 2
    if interval == "bernstein":
        n = 8000
        a = rng.integers(0, 4, n)
        r = (rng.random(n) < 0.3).astype(int)
        args = (np.tile([0.7, 0.1, 0.1, 0.1], (n, 1)), None, a, r, np.full(n, 0.25), "ips")
        b = evaluate(*args, interval="bernstein")
        z = evaluate(*args, interval="normal")
        assert b.upper - b.lower > z.upper - z.lower


def test_train_on_half_evaluate_on_the_other():
    X, y = nf.datasets.load("digits", normalize=True)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, len(y))
    r = (a == y).astype(int)
    out = nf.ope.train_and_evaluate(nf.RCNBF(10, gamma=0.2, seed=0), X, a, r, np.full(len(y), 0.1), seed=0,
                                    interval="normal")
    assert set(out["estimates"]) == {"ips", "snips", "dm", "dr"}
    assert out["n_train"] + out["n_eval"] == len(y)
    assert out["estimates"]["ips"].value > 3 * out["logging_value"]  # a learned policy beats uniform (0.1)
    assert not hasattr(nf.RCNBF(10), "W_")  # the original is untouched; a clone was trained


def test_fit_logged_trains_from_scratch():
    X, y = nf.datasets.load("digits", normalize=True)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, len(y))
    r = (a == y).astype(int)
    p = np.full(len(y), 0.1)
    one = nf.Banditron(10, seed=0).fit_logged(X, a, r, p)
    two = nf.Banditron(10, seed=0).fit_logged(X[:50], a[:50], r[:50], p[:50]).fit_logged(X, a, r, p)
    np.testing.assert_array_equal(one.W_, two.W_)
    sets = nf.MCDBF(10, m=2, seed=0)
    s, ps = sets.act(X[:20])
    sets.fit_logged(X[:20], s, (s == y[:20, None]).any(axis=1).astype(int), ps)
    np.testing.assert_allclose(sets.action_probabilities(X[:5]).sum(axis=1), 2.0)


def test_estimated_flip_rates_feed_the_corrected_estimate():
    X, y = nf.datasets.load("digits", normalize=True)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, len(y))
    f = (a == y).astype(int)
    u = rng.random(len(y))
    f = np.where(f == 1, u >= 0.1, u < 0.2).astype(int)
    rho0, rho1 = nf.ope.estimate_rho(X, a, f, 10, seed=0)
    assert abs(rho0 - 0.2) < 0.05 and abs(rho1 - 0.1) < 0.15
    target = np.full((len(y), 10), 0.1)  # the uniform policy: value 0.1; plain IPS expects 0.2 + 0.7·0.1
    plain = evaluate(target, X, a, f, np.full(len(y), 0.1), "ips", interval="none").value
    corr = evaluate(target, X, a, f, np.full(len(y), 0.1), "ips", rho0=rho0, rho1=rho1, interval="none").value
    assert abs(plain - 0.1) > 0.12 and abs(corr - 0.1) < 0.05


# ------------------------------------------------------------------ hostile input
def test_empty_input_is_refused_for_every_estimator():
    for e in ("ips", "snips", "dm", "dr"):
        for interval in ("bootstrap", "none"):
            with pytest.raises(ValueError, match="at least one logged row"):
                evaluate(np.zeros((0, 3)), np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), e,
                         interval=interval)


@pytest.mark.parametrize("e", ["ips", "snips", "dm", "dr"])
def test_tiny_propensity_is_refused_naming_the_row(e):
    pi = np.tile([0.5, 0.5], (3, 1))
    with pytest.raises(ValueError, match=r"row 1 has propensity 5e-324"):
        evaluate(pi, np.ones((3, 2)), [0, 1, 0], [0.0, 0.0, 1.0], [0.5, 5e-324, 0.5], e)
    # a small but representable weight is fine
    est = evaluate(pi, np.ones((3, 2)), [0, 1, 0], [0.0, 1.0, 1.0], [0.5, 1e-200, 0.5], "ips", interval="none")
    assert np.isfinite(est.value)


@pytest.mark.parametrize("interval", ["bootstrap", "normal", "bernstein"])
def test_an_interval_from_one_row_is_refused(interval):
    args = (np.array([[1.0, 0.0]]), None, [0], [1.0], [0.5])
    with pytest.raises(ValueError, match="needs at least 2 logged rows; got 1"):
        evaluate(*args, "ips", interval=interval)
    est = evaluate(*args, "ips", interval="none")
    assert est.value == 2.0 and est.interval == "none"
    two = evaluate(np.tile([1.0, 0.0], (2, 1)), None, [0, 0], [1.0, 0.0], [0.5, 0.5], "ips", seed=0,
                   interval=interval)
    assert two.lower < two.upper
