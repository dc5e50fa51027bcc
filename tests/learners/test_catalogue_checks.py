"""The shared check suite for the catalogue learners (feedback_kind 'catalogue'): discovered in
the catalogue (``noisyfeedback.checks.registered_learners()``) as test_learner_checks.py discovers the index learners,
with a candidate stream in place of (X, y). The same contract: parameters, clone, repr, seeds, save/load, bad input
named, fit_logged."""

import inspect

import numpy as np
import pytest
from test_learner_checks import all_constraints, invalid_values

import noisyfeedback as nf
from noisyfeedback import checks
from noisyfeedback.catalogue import CandidateRounds
from noisyfeedback.datasets.ranking import ranking_stream

CATALOGUE = sorted((c for c in checks.registered_learners().values()
                    if issubclass(c, nf.Learner) and c.feedback_kind == "catalogue"), key=lambda c: c.__name__)
IDS = [c.__name__ for c in CATALOGUE]


def test_catalogue_learners_are_discovered():
    assert {"CatalogueSquareCB", "CatalogueEpsilonGreedy"} <= set(IDS)


def make(cls, **override):
    return cls(**{**cls._test_params, **override})


@pytest.fixture(scope="module")
def stream():
    return ranking_stream(n_rounds=60, context_dim=5, item_dim=3, n_candidates=4, seed=0,
                          examination=(1.0, 0.6, 0.35))


def interact(learner, stream, seed=0):
    actions, probs = learner.act(stream.rounds)
    rng = np.random.default_rng(seed)
    f = (rng.random(np.shape(actions)) < 0.3).astype(np.int64)
    return learner.learn(stream.rounds, actions, f, probs), actions, f, probs


CH = nf.feedback.NoisyBandit(0.1, 0.1)


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_params_clone_repr(cls, stream):
    learner = make(cls)
    learner._validate_params()
    interact(learner, stream)
    assert learner.is_fitted
    twin = learner.clone()
    assert twin.get_params() == learner.get_params() and not twin.is_fitted and repr(twin) == repr(learner)
    rebuilt = eval(repr(learner), checks.registered_learners())
    assert rebuilt.get_params() == learner.get_params()
    from sklearn.base import clone
    assert clone(learner).get_params() == learner.get_params()
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.default is not inspect.Parameter.empty:
            assert p.default is None or isinstance(p.default, (bool, int, float, str, tuple)), p.name


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_same_seed_same_results(cls, stream):
    a, b, e = make(cls), make(cls), make(cls, seed=12345)
    ta = nf.simulate(a, stream, None, CH, n_rounds=300, seed=3)
    tb = nf.simulate(b, stream, None, CH, n_rounds=300, seed=3)
    nf.simulate(e, stream, None, CH, n_rounds=300, seed=3)
    assert ta == tb
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert not np.array_equal(a.weights_, e.weights_)


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_before_learning(cls, stream):
    learner = make(cls)
    r = stream.rounds
    np.testing.assert_array_equal(learner.decision_function(r), np.zeros(r.n_candidates))
    assert not learner.is_fitted
    actions, probs = learner.act(r)
    k = learner.n_slots
    assert np.shape(actions) == np.shape(probs) == ((r.n_rounds,) if k == 1 else (r.n_rounds, k))
    assert ((probs > 0) & (probs <= 1)).all()


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_action_probabilities(cls, stream):
    learner = make(cls)
    interact(learner, stream)
    r = stream.rounds
    P = learner.action_probabilities(r)
    v = learner.decision_function(r)
    sums = np.add.reduceat(P, r.offsets[:-1])
    np.testing.assert_allclose(sums, 1.0)
    greedy = np.atleast_2d(learner.predict(r).T).T[:, 0] if learner.n_slots > 1 else learner.predict(r)
    for i in range(r.n_rounds):
        s, p = v[r.candidates(i)], P[r.candidates(i)]
        assert greedy[i] == int(np.argmax(s)) and p[greedy[i]] == p.max()
    if learner.n_slots == 1:
        a, probs = learner.act(r)
        np.testing.assert_allclose(probs, P[r.offsets[:-1] + a])


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_save_load_round_trip(cls, stream, tmp_path):
    learner = make(cls)
    nf.simulate(learner, stream, None, CH, n_rounds=200, seed=1)
    path = learner.save(tmp_path / "model.npz")
    loaded = nf.load(path)
    assert type(loaded) is cls and repr(loaded) == repr(learner)
    np.testing.assert_array_equal(loaded.weights_, learner.weights_)
    nf.simulate(learner, stream, None, CH, n_rounds=200, seed=2)
    nf.simulate(loaded, stream, None, CH, n_rounds=200, seed=2)
    np.testing.assert_array_equal(loaded.weights_, learner.weights_)
    np.testing.assert_array_equal(loaded.exam_scores_, learner.exam_scores_)
    with np.load(path, allow_pickle=False) as data:
        assert "__metadata__" in data.files


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_bad_parameters_are_rejected_naming_the_parameter(cls, stream):
    for name, constraint in all_constraints(cls).items():
        for value in invalid_values(constraint):
            learner = make(cls, **{name: value})
            with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter of {cls.__name__}"):
                nf.simulate(learner, stream, None, CH, n_rounds=5, seed=0)
    for name, value in (("interactions", "ab"), ("interactions", ("abc",)), ("examination", (1.0,) * 5),
                        ("examination", (0.0, 1.0)), ("rho0", 0.6)):
        learner = make(cls, **{name: value}, rho1=0.5) if name == "rho0" else make(cls, **{name: value})
        with pytest.raises(ValueError, match=f"'{name}'"):
            learner.decision_function(stream.rounds)
    with pytest.raises(ValueError, match="'oracle'"):
        make(cls, oracle="ridge", features="hashed").decision_function(stream.rounds)


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_bad_input_is_rejected_naming_the_row(cls, stream):
    learner = make(cls)
    r = stream.rounds
    bad = r.items.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        CandidateRounds(r.context, bad, r.offsets)
    learner, actions, f, probs = interact(learner, stream)
    bad_f = f.astype(np.float64)
    bad_f.flat[4] = np.nan
    with pytest.raises(ValueError, match=f"finite; row {4 // (f.size // f.shape[0])} "):
        learner.learn(r, actions, bad_f, probs)
    with pytest.raises(TypeError, match="CandidateRounds"):
        learner.act(np.zeros((3, 5)))
    other = ranking_stream(n_rounds=5, context_dim=6, item_dim=3, n_candidates=2, seed=0)
    with pytest.raises(ValueError, match="fitted with"):
        learner.decision_function(other.rounds)


@pytest.mark.parametrize("cls", CATALOGUE, ids=IDS)
def test_fit_logged_trains_from_scratch(cls, stream):
    logger = make(cls)
    _, actions, f, probs = interact(logger, stream)
    fresh = make(cls).learn(stream.rounds, actions, f, probs)
    used = make(cls).learn(stream.rounds[:20], actions[:20], f[:20], probs[:20])
    out = used.fit_logged(stream.rounds, actions, f.astype(np.float64), probs)
    assert out is used
    np.testing.assert_array_equal(used.weights_, fresh.weights_)
