"""Parameters are checked at every entry point, but only re-checked when one changed: a change made
after fitting (by assignment, ``set_params`` or in place in an array) is still caught at the next call;
the hot service routes solve their dependencies directly and keep FastAPI's contract."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi import APIRouter, Depends, Request

import noisyfeedback as nf
from noisyfeedback.service.routers._direct import DirectRoute


def _fitted(**params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 5))
    learner = nf.SquareCB(n_classes=4, seed=0, **params)
    a, p = learner.act(X)
    learner.learn(X, a, (rng.random(50) < 0.5).astype(np.int64), p)
    return learner, X


def test_a_parameter_set_after_fitting_is_checked_at_the_next_call():
    learner, X = _fitted()
    learner.predict(X)
    learner.gamma_scale = -1.0
    with pytest.raises(ValueError, match="gamma_scale"):
        learner.predict(X)
    learner.gamma_scale = 10.0
    learner.predict(X)


def test_an_array_of_rates_changed_in_place_is_checked_and_used():
    learner, X = _fitted(rho0=np.full(4, 0.1), rho1=np.full(4, 0.2))
    before = learner.action_probabilities(X[:3])
    learner.rho0[2] = 0.95  # rho0 + rho1 >= 1 for action 2
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1 for action 2"):
        learner.act(X[:3])
    learner.rho0[2] = 0.3  # valid, and different: the policy must use it (no stale rates)
    after = learner.action_probabilities(X[:3])
    fresh = nf.SquareCB(**learner.get_params())
    for name in learner._learned_attributes():
        setattr(fresh, name, getattr(learner, name))
    np.testing.assert_array_equal(after, fresh.action_probabilities(X[:3]))
    assert not np.array_equal(before, after)


def test_validation_runs_once_while_nothing_changes(monkeypatch):
    learner, X = _fitted()
    calls = []
    original = nf.SquareCB._check_params
    monkeypatch.setattr(nf.SquareCB, "_check_params", lambda self: (calls.append(1), original(self))[1])
    for _ in range(5):
        learner.predict(X[:1])
    assert len(calls) == 0  # validated when fitted, unchanged since
    learner.set_params(gamma_scale=20.0)
    learner.predict(X[:1])
    learner.predict(X[:1])
    assert len(calls) == 1


def test_direct_route_refuses_parameters_it_would_not_read():
    router = APIRouter(route_class=DirectRoute)

    async def dep(request: Request) -> str:
        return "ok"

    @router.post("/fine")
    async def fine(request: Request, value: str = Depends(dep)):
        return value

    with pytest.raises(TypeError, match="query params"):
        @router.post("/bad")
        async def bad(limit: int, value: str = Depends(dep)):
            return value


def test_live_learning_in_one_call_equals_one_call_a_row_with_a_refused_row():
    """The service learns a batch of committed rewards in one call; a row whose step would overflow is
    refused and the rows after it are still learned: the model is that of one call a row."""
    import copy
    import types

    from noisyfeedback.service.engine import Engine
    from noisyfeedback.service.storage import encode_action

    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 5))
    props = np.full(12, 0.25)
    for bad in (4, 9):  # W += x/P overflows: refused
        X[bad] = 1.7e308 * np.sign(rng.normal(size=5))
        props[bad] = 1e-10
    learner = nf.Banditron(4, gamma=0.2, seed=0)
    learner.learn(np.ones((1, 5)), [0], [1], [0.5])
    acts = rng.integers(0, 4, size=12)
    rows = [(100 + i, 1.0, X[i].tobytes(), encode_action(int(acts[i])), float(props[i]), None) for i in range(12)]

    def engine_with(model):
        eng = types.SimpleNamespace(learner=model, model_version=0, _rebuilt=False, _seen_event_seq=0)
        eng._arrays = Engine._arrays
        eng._learn_guarded = types.MethodType(Engine._learn_guarded, eng)
        eng.LEARN_IN_ONE_CALL = True
        eng._rebuild_model = lambda upto: pytest.fail("the state stayed finite: no rebuild")
        return eng

    batch = engine_with(copy.deepcopy(learner))
    refused_batch = Engine._learn_live(batch, rows)
    single = engine_with(copy.deepcopy(learner))
    refused_single = [s for row in rows for s in Engine._learn_live(single, [row])]
    assert refused_batch == refused_single == [104, 109]
    assert batch.model_version == single.model_version == 111
    for name in learner._learned_attributes():
        a, b = getattr(batch.learner, name), getattr(single.learner, name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
