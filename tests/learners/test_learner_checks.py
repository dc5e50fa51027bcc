"""The shared check suite: every registered learner gets the same checks (the public part of them is
``noisyfeedback.checks``, run on every registered learner by tests/test_checks.py).

A learner is tested the moment it is registered: the suite discovers the classes of the catalogue
(``noisyfeedback.checks.registered_learners()``, not ``nf.__all__``) that subclass ``nf.Learner``. Each
declares ``_test_params``.
"""

import inspect

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback import checks
from noisyfeedback._validation import AnySeed, Integer, Interval, Options

LEARNERS = sorted(
    (c for c in checks.registered_learners().values()
     if issubclass(c, nf.Learner) and c.feedback_kind != "catalogue"),  # their suite: test_catalogue_checks.py
    key=lambda c: c.__name__,
)
IDS = [c.__name__ for c in LEARNERS]


def test_every_learner_is_discovered():
    assert {"Perceptron", "Banditron"} <= set(IDS)


def make(cls, **override):
    params = dict(cls._test_params)
    params.update(override)
    return cls(**params)


def is_regressor(learner_or_cls):
    return learner_or_cls.feedback_kind == "target"


def weights(learner):
    """The learned weights: W_ (K, d) of a classifier, w_ (d,) of a regressor."""
    return learner.w_ if is_regressor(learner) else learner.W_


def problem(learner, n=60, seed=0):
    """A small problem matched to the learner's feedback kind: (X, y, channel)."""
    rng = np.random.default_rng(seed)
    if is_regressor(learner):  # real targets y = X u + small noise, seen through GaussianNoise
        X = rng.normal(size=(n, 5))
        y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=n)
        return X, y, nf.feedback.GaussianNoise(0.5)
    K = learner.n_classes
    d = 5
    protos = rng.normal(size=(K, d))
    y = rng.integers(0, K, size=n)
    X = protos[y] + 0.3 * rng.normal(size=(n, d))
    channel = {"label": nf.feedback.FullLabel(), "bandit": nf.feedback.NoisyBandit(0.1, 0.1),
               "set": nf.feedback.Diluted(getattr(learner, "m", 1), 0.1, 0.1)}[learner.feedback_kind]
    return X, y, channel


def interact(learner, X, y, channel, seed=0):
    """Logged-events path: act on all rows, get feedback, learn (regressors: noisy labels, learn)."""
    if is_regressor(learner):
        labels = channel.respond(y, rng=np.random.default_rng(seed), n_samples=learner.labels_per_round)
        return learner.learn(X, labels, variance=channel.variance_at(np.arange(len(y))), y_clean=y)
    actions, probs = learner.act(X)
    feedback = channel.respond(y, actions, np.random.default_rng(seed))
    return learner.learn(X, actions, feedback, probs)


def invalid_values(constraint):
    if isinstance(constraint, Interval):
        out = [float("nan"), "0.5"]
        if constraint.low is not None:
            out.append(constraint.low - 1.0)
            if constraint.closed in ("neither", "right"):
                out.append(constraint.low)
        if constraint.high is not None:
            out.append(constraint.high + 1.0)
            if constraint.closed in ("neither", "left"):
                out.append(constraint.high)
        return out
    if isinstance(constraint, Integer):
        out = [1.5, "3"]
        if constraint.low is not None:
            out.append(constraint.low - 1)
        if constraint.high is not None:
            out.append(constraint.high + 1)
        return out
    if isinstance(constraint, AnySeed):
        return [-1, 1.5, "0"]
    if isinstance(constraint, Options):
        return ["__not_an_option__"]
    return []


def all_constraints(cls):
    c = dict(getattr(cls, "_base_constraints", {}))
    c.update(cls._parameter_constraints)
    return c


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_declares_test_params(cls):
    assert cls._test_params, f"{cls.__name__} must declare _test_params for the check suite"
    make(cls)._validate_params()


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_clone_has_same_params_and_no_state(cls):
    learner = make(cls)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    assert learner.is_fitted
    twin = learner.clone()
    assert twin is not learner
    assert twin.get_params() == learner.get_params()
    assert not twin.is_fitted and not hasattr(twin, "W_") and not hasattr(twin, "w_")
    assert repr(twin) == repr(learner)
    # set_params discards state and rejects unknown names
    learner.set_params(**learner.get_params())
    assert not learner.is_fitted
    with pytest.raises(ValueError, match="Invalid parameter"):
        learner.set_params(not_a_parameter=1)


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_repr_round_trips(cls):
    learner = make(cls)
    rebuilt = eval(repr(learner), checks.registered_learners())
    assert rebuilt.get_params() == learner.get_params()


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_same_seed_same_results(cls):
    a, b = make(cls), make(cls)
    X, y, ch = problem(a)
    ta = nf.simulate(a, X, y, ch, n_rounds=300, seed=3)
    tb = nf.simulate(b, X, y, ch, n_rounds=300, seed=3)
    assert ta == tb
    np.testing.assert_array_equal(weights(a), weights(b))
    c, d = make(cls), make(cls)
    np.testing.assert_array_equal(weights(interact(c, X, y, ch)), weights(interact(d, X, y, ch)))
    if "seed" in cls._get_param_names():  # the seed must matter, or the check proves nothing
        e = make(cls, seed=12345)
        nf.simulate(e, X, y, ch, n_rounds=300, seed=3)
        assert not np.array_equal(weights(a), weights(e))


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_defaults_are_immutable_and_params_untouched(cls):
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.default is not inspect.Parameter.empty:
            assert p.default is None or isinstance(p.default, (bool, int, float, str, tuple)), p.name
    learner = make(cls)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in learner.get_params().items()}
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    nf.simulate(learner, X, y, ch, n_rounds=100, seed=0)
    after = learner.get_params()
    assert before.keys() == after.keys()
    for k in before:
        assert np.array_equal(before[k], after[k]) if isinstance(before[k], np.ndarray) else before[k] == after[k]


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_predict_before_learning(cls):
    learner = make(cls)
    X, _, _ = problem(learner)
    if is_regressor(learner):  # scikit-learn's regressors: NotFittedError; regressors do not act
        from sklearn.exceptions import NotFittedError

        with pytest.raises(NotFittedError):
            learner.predict(X)
        assert not learner.is_fitted
        return
    np.testing.assert_array_equal(learner.predict(X), np.zeros(X.shape[0], dtype=np.int64))
    np.testing.assert_array_equal(learner.decision_function(X), np.zeros((X.shape[0], learner.n_classes)))
    assert learner.predict(X).dtype == np.int64
    actions, probs = learner.act(X)  # acting before learning works too
    # set learners propose m labels a row (with the probability of the set)
    shape = (X.shape[0], learner.m) if learner.feedback_kind == "set" else (X.shape[0],)
    assert actions.shape == shape and probs.shape == (X.shape[0],)
    assert ((0 <= actions) & (actions < learner.n_classes)).all() and ((probs > 0) & (probs <= 1)).all()


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_learn_returns_self(cls):
    learner = make(cls)
    X, y, ch = problem(learner)
    assert interact(learner, X, y, ch) is learner


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_save_load_round_trip(cls, tmp_path):
    learner = make(cls)
    X, y, ch = problem(learner)
    nf.simulate(learner, X, y, ch, n_rounds=200, seed=1)
    path = learner.save(tmp_path / "model.npz")
    loaded = nf.load(path)
    assert type(loaded) is cls and repr(loaded) == repr(learner)
    assert loaded._learned_attributes() == learner._learned_attributes()
    np.testing.assert_array_equal(weights(loaded), weights(learner))
    assert cls.load(path).get_params() == learner.get_params()
    # the random stream continues identically after loading
    nf.simulate(learner, X, y, ch, n_rounds=200, seed=2)
    nf.simulate(loaded, X, y, ch, n_rounds=200, seed=2)
    np.testing.assert_array_equal(weights(loaded), weights(learner))
    # no pickle inside
    with np.load(path, allow_pickle=False) as data:
        assert "__metadata__" in data.files


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_bad_parameters_are_rejected_naming_the_parameter(cls):
    X, y, ch = problem(make(cls))
    for name, constraint in all_constraints(cls).items():
        for value in invalid_values(constraint):
            learner = make(cls, **{name: value})
            with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter of {cls.__name__}"):
                nf.simulate(learner, X, y, ch, n_rounds=5, seed=0)
            with pytest.raises((ValueError, TypeError), match=f"'{name}'"):
                learner.predict(X)


@pytest.mark.parametrize("cls", LEARNERS, ids=IDS)
def test_bad_input_is_rejected_naming_the_row(cls):
    learner = make(cls)
    X, y, ch = problem(learner)
    bad = X.copy()
    bad[3, 1] = np.inf
    if is_regressor(learner):
        _check_regressor_bad_input(learner, X, y, ch, bad)
        return
    for call in (learner.predict, learner.act, learner.decision_function):
        with pytest.raises(ValueError, match="row 3"):
            call(bad)
    with pytest.raises(ValueError, match="2-D"):
        learner.predict(X[0])
    with pytest.raises(TypeError):
        learner.predict(np.array([["a"] * X.shape[1]]))
    actions, probs = learner.act(X)
    feedback = ch.respond(y, actions, np.random.default_rng(0))
    bad_actions = actions.copy()
    bad_actions[5] = learner.n_classes
    if learner.feedback_kind == "label":
        with pytest.raises(ValueError, match="row 5"):
            learner.learn(X, feedback=np.where(np.arange(len(y)) == 5, learner.n_classes, y))
    else:
        with pytest.raises(ValueError, match="row 5"):
            learner.learn(X, bad_actions, feedback, probs)
        bad_p = probs.copy()
        bad_p[2] = 0.0
        with pytest.raises(ValueError, match="row 2"):
            learner.learn(X, actions, feedback, bad_p)
        bad_f = feedback.astype(np.float64)
        bad_f[4] = np.nan  # not a click, nor a real-valued reward (the regression oracles learn those)
        with pytest.raises(ValueError, match="row 4"):
            learner.learn(X, actions, bad_f, probs)
    with pytest.raises(ValueError, match="features"):
        learner.predict(np.zeros((2, X.shape[1] + 1)))


def _check_regressor_bad_input(learner, X, y, ch, bad):
    """Regressors: bad X, noisy labels, variances and clean targets are refused naming the row."""
    labels = ch.respond(y, rng=np.random.default_rng(0), n_samples=learner.labels_per_round)
    v = ch.variance_at(np.arange(len(y)))
    learner.learn(X[:3], labels[:3], variance=v[:3], y_clean=y[:3])  # predict needs a fitted regressor
    for call in (learner.predict, lambda Z: learner.learn(Z, labels, variance=v, y_clean=y)):
        with pytest.raises(ValueError, match="row 3"):
            call(bad)
    with pytest.raises(ValueError, match="2-D"):
        learner.predict(X[0])
    with pytest.raises(TypeError):
        learner.predict(np.array([["a"] * X.shape[1]]))
    bad_labels = labels.copy()
    bad_labels[5] = np.nan
    with pytest.raises(ValueError, match="row 5"):
        learner.learn(X, bad_labels, variance=v, y_clean=y)
    with pytest.raises(ValueError, match="entries"):
        learner.learn(X, labels[:-1], variance=v, y_clean=y)
    bad_v = v.copy()
    bad_v[2] = -1.0
    with pytest.raises(ValueError, match="row 2"):
        learner.learn(X, labels, variance=bad_v, y_clean=y)
    with pytest.raises(ValueError, match="row 4"):
        nf.simulate(learner.clone(), X, np.where(np.arange(len(y)) == 4, np.nan, y), ch, n_rounds=5)
    with pytest.raises(ValueError, match="features"):
        learner.predict(np.zeros((2, X.shape[1] + 1)))


# ------------------------------------------- scikit-learn conventions (clone, action distribution)
ESTIMATORS = [c for c in checks.registered_learners().values()
              if hasattr(c, "get_params") and getattr(c, "feedback_kind", None) != "catalogue"]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=[c.__name__ for c in ESTIMATORS])
def test_sklearn_clone(cls):
    """sklearn.base.clone works on every exported learner (and estimator): same parameters, no state."""
    from sklearn.base import clone

    params = dict(getattr(cls, "_test_params", {}) or {})
    est = cls(**params)
    if issubclass(cls, nf.Learner):
        X, y, ch = problem(est)
        interact(est, X, y, ch)
        assert est.is_fitted
    twin = clone(est)
    assert type(twin) is cls and twin is not est
    assert set(twin.get_params(deep=False)) == set(est.get_params(deep=True))
    for k, v in est.get_params(deep=False).items():
        w = twin.get_params()[k]
        assert np.array_equal(v, w) if isinstance(v, np.ndarray) else v == w
    if issubclass(cls, nf.Learner):
        assert not twin.is_fitted


BANDITS = [c for c in LEARNERS if c.feedback_kind in ("bandit", "set")]


@pytest.mark.parametrize("cls", BANDITS, ids=[c.__name__ for c in BANDITS])
def test_fit_logged_trains_from_scratch_on_logged_rows(cls):
    """fit_logged(X, actions, rewards, propensities) = a fresh learner's learn on the same rows, whatever
    was learned before; rewards read as floats 0.0/1.0 (VW text, a table) are accepted."""
    logger = make(cls)
    X, y, ch = problem(logger)
    actions, probs = logger.act(X)
    rewards = ch.respond(y, actions, np.random.default_rng(1))
    fresh = make(cls).learn(X, actions, rewards, probs)
    used = make(cls).learn(X[:20], actions[:20], rewards[:20], probs[:20])
    no_reset = make(cls).learn(X[:20], actions[:20], rewards[:20], probs[:20]).learn(X, actions, rewards, probs)
    assert not np.array_equal(weights(no_reset), weights(fresh))  # so the check below can fail
    out = used.fit_logged(X, actions, rewards.astype(np.float64), probs)
    assert out is used
    assert np.array_equal(weights(used), weights(fresh))


CLASSIFIERS = [c for c in LEARNERS if c.feedback_kind in ("label", "bandit", "set")]


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=[c.__name__ for c in CLASSIFIERS])
def test_action_probabilities_and_decision_function(cls):
    """The whole action distribution act draws from: (n, K), >= 0, rows summing to 1 (set learners: m)."""
    learner = make(cls)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    P = learner.action_probabilities(X)
    S = learner.decision_function(X)
    m = learner.m if learner.feedback_kind == "set" else 1
    assert P.shape == S.shape == (X.shape[0], learner.n_classes)
    assert (P >= 0).all() and (P <= 1).all()
    np.testing.assert_allclose(P.sum(axis=1), m)
    # the greedy label carries the most probability (set learners: as much as any label of the top-m set)
    np.testing.assert_array_equal(P[np.arange(X.shape[0]), learner.predict(X)], P.max(axis=1))
    assert (P.max(axis=1) > P.min(axis=1)).any()
    if learner.feedback_kind == "bandit":  # act's propensities are read off the same distribution
        actions, probs = learner.act(X)
        np.testing.assert_allclose(probs, P[np.arange(X.shape[0]), actions])


@pytest.mark.parametrize("cls", [c for c in LEARNERS if c.__name__ in ("Perceptron", "MCSLP", "NLMS", "ORS")],
                         ids=lambda c: c.__name__)
def test_fit_and_partial_fit_in_a_pipeline(cls):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # ORS's test parameters use a label budget (several labels a row); a pipeline gives one
    learner = cls(r=1.0, scaling="one_sample_pred", variance="unknown") if cls.__name__ == "ORS" else make(cls)
    X, y, _ = problem(learner, n=200)
    pipe = make_pipeline(StandardScaler(), learner).fit(X, y)
    pred = pipe.predict(X)
    assert pred.shape == (X.shape[0],)
    if not is_regressor(learner):
        assert (pred == y).mean() > 0.8
    else:
        assert np.mean((pred - y) ** 2) < np.var(y)
    w = weights(pipe[-1]).copy()
    pipe[-1].fit(StandardScaler().fit_transform(X), y)  # fit starts over: same weights again
    np.testing.assert_array_equal(weights(pipe[-1]), w)
    assert pipe[-1].partial_fit(X[:5], y[:5]) is pipe[-1]
