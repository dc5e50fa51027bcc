"""The shared check suite of the learners, public (as ``river.checks``): run it on a learner of your own.

>>> from noisyfeedback import checks
>>> print(*sorted(checks.registered_learners())[:3])
BPA Banditron CatalogueEpsilonGreedy
>>> checks.check_learner(checks.registered_learners()["Perceptron"])  # doctest: +ELLIPSIS
['check_init', 'check_clone', 'check_params', ...]

`registered_learners` lists the registered learners (`noisyfeedback.registry`, not the
package's exports); `check_learner` runs the checks that apply to a learner class or instance on a
small problem matched to its family (tags) and feedback kind, and raises ``AssertionError`` naming the
check that failed:

- ``check_init``: built from its required parameters alone (the rest default), ``__init__`` only stores
  its arguments, the defaults are immutable values;
- ``check_clone``: a clone has the same parameters and no learned state;
- ``check_params``: ``set_params(**get_params())`` round-trips and an unknown parameter is refused;
- ``check_finite_state``: every learned number is finite after learning from accepted input;
- ``check_predict_shapes``: ``predict`` gives one prediction a row (a round), of the right kind;
- ``check_action_probabilities``: the action distribution is a distribution (rows sum to 1, set
  learners to m; a round's candidates to 1) and carries the greedy action;
- ``check_save_load``: ``save`` then `noisyfeedback.load` gives the same class, parameters, state
  and predictions, and the file holds no pickle;
- ``check_seeded_determinism``: two learners with the same parameters learn the same state from the same
  data;
- ``check_compiled_loop``: for learners with a compiled simulation loop whose rounds the public
  ``act``/``learn`` reproduce, ``nf.simulate`` equals the plain-Python loop, bit for bit.

A learner gives its check-suite parameters as the class attribute ``_test_params`` (small, fast); without
it the checks use its defaults (``n_classes=3`` where it takes one).
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import registry

__all__ = [
    "check_learner",
    "interact",
    "learned_state",
    "learner_checks",
    "make",
    "problem",
    "registered_learners",
    "test_params",
]


def registered_learners() -> dict[str, type]:
    """Every registered learner (`noisyfeedback.registry.LEARNERS`), by name -> class."""
    return registry.learner_classes()


# ------------------------------------------------------------------ problems
def test_params(cls: type) -> dict[str, Any]:
    """The parameters the checks build ``cls`` with: its ``_test_params``, else ``n_classes=3`` where it
    takes one."""
    params = dict(getattr(cls, "_test_params", None) or {})
    if not params and "n_classes" in registry.learner_params(cls):
        params["n_classes"] = 3
    return params


test_params.__test__ = False  # not a pytest test


def make(cls: type, **override: Any):
    """``cls`` built with its check-suite parameters (and ``override``)."""
    return cls(**{**test_params(cls), **override})


def _family(learner: Any) -> str:
    return registry.learner_tags(learner).family


def problem(learner: Any, n: int = 60, seed: int = 0) -> tuple[Any, Any, Any]:
    """A small problem matched to the learner: ``(X, y, channel)``; for a catalogue learner
    ``(stream, None, channel)``; for a batch learner ``(X, y, None)`` (teachers: y in {-1, 1})."""
    from . import feedback as fb

    rng = np.random.default_rng(seed)
    family = _family(learner)
    kind = getattr(learner, "feedback_kind", "label")
    if family == "catalogue":
        from .datasets.ranking import ranking_stream

        stream = ranking_stream(n_rounds=n, context_dim=5, item_dim=3, n_candidates=4, seed=seed,
                                examination=(1.0, 0.6, 0.35))
        return stream, None, fb.NoisyBandit(0.1, 0.1)
    if kind == "target":  # real targets y = X u + small noise, seen through GaussianNoise
        X = rng.normal(size=(n, 5))
        y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=n)
        return X, y, fb.GaussianNoise(0.5)
    K = int(getattr(learner, "n_classes", None) or (2 if family == "teachers" else 3))
    protos = rng.normal(size=(K, 5))
    y = np.arange(n) % K
    rng.shuffle(y)
    X = protos[y] + 0.3 * rng.normal(size=(n, 5))
    if registry.learner_tags(learner).batch:
        return X, (np.where(y == 1, 1, -1) if family == "teachers" else y), None
    channel = {"label": fb.FullLabel(), "bandit": fb.NoisyBandit(0.1, 0.1),
               "set": fb.Diluted(getattr(learner, "m", 1), 0.1, 0.1)}[kind]
    return X, y, channel


def interact(learner: Any, X: Any, y: Any, channel: Any, seed: int = 0):
    """Learn once from a problem through the public API (act, feedback, learn; a batch learner: fit)."""
    if registry.learner_tags(learner).batch:
        if _family(learner) == "teachers":
            return learner.fit(X, y, teachers=np.arange(len(y)) % 3)
        return learner.fit(X, y)
    if getattr(learner, "feedback_kind", None) == "target":
        labels = channel.respond(y, rng=np.random.default_rng(seed), n_samples=learner.labels_per_round)
        return learner.learn(X, labels, variance=channel.variance_at(np.arange(len(y))), y_clean=y)
    if _family(learner) == "catalogue":
        actions, probs = learner.act(X.rounds)
        f = (np.random.default_rng(seed).random(np.shape(actions)) < 0.3).astype(np.int64)
        return learner.learn(X.rounds, actions, f, probs)
    actions, probs = learner.act(X)
    return learner.learn(X, actions, channel.respond(y, actions, np.random.default_rng(seed)), probs)


def learned_state(learner: Any) -> dict[str, Any]:
    """The learned attributes (scikit-learn's convention: public names ending in ``_``), random streams
    left out."""
    return {k: v for k, v in sorted(vars(learner).items())
            if k.endswith("_") and not k.startswith("_") and not isinstance(v, np.random.Generator)}


def _inputs(learner: Any, X: Any) -> Any:
    return X.rounds if _family(learner) == "catalogue" else X


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # values that do not compare (e.g. arrays inside objects)
        return repr(a) == repr(b)


def _params_equal(p: dict, q: dict) -> bool:
    return p.keys() == q.keys() and all(_same(p[k], q[k]) for k in p)


# ------------------------------------------------------------------- checks
def check_init(cls: type, params: dict[str, Any]) -> None:
    sig = inspect.signature(cls.__init__)
    required = {n: params[n] for n, p in sig.parameters.items() if n != "self" and p.kind in (
        p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is inspect.Parameter.empty and n in params}
    learner = cls(**required)
    got = learner.get_params()
    for n, p in sig.parameters.items():
        if n == "self" or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        want = required.get(n, p.default)
        assert n in got and _same(got[n], want), f"__init__ must store {n!r} as given; get_params has {got.get(n)!r}"
        if p.default is not inspect.Parameter.empty:
            assert p.default is None or isinstance(p.default, (bool, int, float, str, tuple)), \
                f"the default of {n!r} must be an immutable value; got {p.default!r}"
    assert not learned_state(learner), f"a fresh {cls.__name__} holds learned state: {list(learned_state(learner))}"


def check_clone(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    assert learned_state(learner), "learning left no learned attribute (names ending in '_')"
    twin = learner.clone()
    assert type(twin) is cls and twin is not learner, "clone must give a new learner of the same class"
    assert _params_equal(twin.get_params(), learner.get_params()), "a clone must have the same parameters"
    assert not learned_state(twin), f"a clone must hold no learned state; it has {list(learned_state(twin))}"
    assert repr(twin) == repr(learner)


def check_params(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    p = learner.get_params()
    assert set(p) == set(registry.learner_params(cls)), "get_params must give every constructor parameter"
    out = learner.set_params(**p)
    assert out is learner, "set_params must return the learner"
    assert _params_equal(learner.get_params(), p), "set_params(**get_params()) must change nothing"
    try:
        learner.set_params(not_a_parameter=1)
    except ValueError:
        pass
    else:
        raise AssertionError("set_params must refuse a parameter the learner does not take (ValueError)")


def check_finite_state(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    for name, v in learned_state(learner).items():
        a = np.asarray(v) if isinstance(v, (np.ndarray, float, np.floating)) else None
        if a is not None and a.dtype.kind in "fc":
            assert np.isfinite(a).all(), f"learned attribute {name} is not finite after accepted input"


def check_predict_shapes(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    Z = _inputs(learner, X)
    pred = np.asarray(learner.predict(Z))
    if _family(learner) == "catalogue":
        k = int(getattr(learner, "n_slots", 1))
        want = (Z.n_rounds,) if k == 1 else (Z.n_rounds, k)
        assert pred.shape == want, f"predict must give shape {want}; got {pred.shape}"
        sizes = Z.sizes if k == 1 else Z.sizes[:, None]
        assert ((pred >= 0) & (pred < sizes)).all(), "predict must give candidate positions within each round"
        return
    n = X.shape[0]
    assert pred.shape == (n,), f"predict must give one prediction a row, shape ({n},); got {pred.shape}"
    if getattr(learner, "feedback_kind", None) == "target":
        assert pred.dtype.kind == "f" and np.isfinite(pred).all(), "a regressor predicts finite real numbers"
    elif registry.learner_tags(learner).batch:
        assert set(np.unique(pred)) <= set(np.unique(y)), "predict must give labels seen in fit"
    else:
        assert pred.dtype.kind in "iu" and ((pred >= 0) & (pred < learner.n_classes)).all(), \
            "predict must give integer labels 0..n_classes-1"


def check_action_probabilities(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    if not hasattr(learner, "action_probabilities"):
        return
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    Z = _inputs(learner, X)
    P = np.asarray(learner.action_probabilities(Z), dtype=np.float64)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1 + 1e-12).all(), "probabilities must be in [0, 1]"
    if _family(learner) == "catalogue":
        assert P.shape == (Z.n_candidates,), f"one probability a candidate, shape ({Z.n_candidates},); got {P.shape}"
        np.testing.assert_allclose(np.add.reduceat(P, Z.offsets[:-1]), 1.0, err_msg="a round's candidates sum to 1")
        return
    m = learner.m if getattr(learner, "feedback_kind", None) == "set" else 1
    assert P.shape == (X.shape[0], learner.n_classes), \
        f"action_probabilities must have shape ({X.shape[0]}, {learner.n_classes}); got {P.shape}"
    np.testing.assert_allclose(P.sum(axis=1), m, err_msg=f"each row of action_probabilities must sum to {m}")
    best = np.asarray(learner.predict(X))
    assert np.array_equal(P[np.arange(X.shape[0]), best], P.max(axis=1)), "the greedy action must be most probable"


def check_save_load(cls: type, params: dict[str, Any]) -> None:
    from .base import load

    learner = cls(**params)
    X, y, ch = problem(learner)
    interact(learner, X, y, ch)
    with tempfile.TemporaryDirectory() as tmp:
        path = learner.save(Path(tmp) / "model.npz")
        back = load(path)
        with np.load(path, allow_pickle=False) as data:
            assert "__metadata__" in data.files, "a model file must hold its metadata record"
    assert type(back) is cls, f"nf.load must give a {cls.__name__}; got {type(back).__name__}"
    assert _params_equal(back.get_params(), learner.get_params()), "nf.load must restore the parameters"
    a, b = learned_state(learner), learned_state(back)
    assert a.keys() == b.keys(), f"nf.load must restore every learned attribute: {sorted(set(a) ^ set(b))}"
    for k in a:
        assert _same(a[k], b[k]), f"nf.load must restore {k} exactly"
    Z = _inputs(learner, X)
    assert _same(np.asarray(back.predict(Z)), np.asarray(learner.predict(Z))), "a loaded learner predicts the same"


def check_seeded_determinism(cls: type, params: dict[str, Any]) -> None:
    a, b = cls(**params), cls(**params)
    X, y, ch = problem(a)
    interact(a, X, y, ch)
    interact(b, X, y, ch)
    sa, sb = learned_state(a), learned_state(b)
    assert sa.keys() == sb.keys() and all(_same(sa[k], sb[k]) for k in sa), \
        "two learners with the same parameters (and seed) must learn the same state from the same data"
    if not registry.learner_tags(a).online:
        return
    from .simulate import simulate

    c, d = cls(**params), cls(**params)
    tc = simulate(c, X, y, ch, n_rounds=2 * (X.n_rounds if hasattr(X, "n_rounds") else X.shape[0]), seed=3)
    td = simulate(d, X, y, ch, n_rounds=2 * (X.n_rounds if hasattr(X, "n_rounds") else X.shape[0]), seed=3)
    assert tc == td, "nf.simulate with the same seed must give the same trace"


def _python_loop(learner, X, y, channel, n_rounds: int, seed: int) -> np.ndarray:
    from .simulate import round_order, simulation_streams

    rng_order, rng_feedback, _ = simulation_streams(seed)
    order = round_order(X.shape[0], n_rounds, rng_order)
    mistakes = np.empty(n_rounds, dtype=np.int64)
    for t in range(n_rounds):
        i = order[t]
        x = X[i:i + 1]
        mistakes[t] = learner.predict(x)[0] != y[i]
        actions, propensities = learner.act(x)
        learner.learn(x, actions, channel.respond(y[i:i + 1], actions, rng_feedback), propensities)
    return mistakes


#: learners whose compiled loop draws its random numbers in another order than act/learn round by round (the
#: compiled loop is checked against the kernels' reference twins in the package's tests instead)
_NO_PYTHON_TWIN = ("RCINE", "SquareCB", "EpsilonGreedy", "MCDBF", "SOBA")


def check_compiled_loop(cls: type, params: dict[str, Any]) -> None:
    learner = cls(**params)
    tags = registry.learner_tags(learner)
    if not (tags.online and hasattr(cls, "_simulate_chunk")) or _family(learner) == "catalogue" \
            or getattr(learner, "feedback_kind", None) not in ("label", "bandit") or cls.__name__ in _NO_PYTHON_TWIN:
        return
    from .simulate import simulate

    X, y, ch = problem(learner, n=40)
    ref = cls(**params)
    trace = simulate(learner, X, y, ch, n_rounds=120, seed=1)
    mistakes = _python_loop(ref, X, y, ch, 120, seed=1)
    assert trace.mistakes == int(mistakes.sum()), "nf.simulate must make the mistakes of the Python loop"
    a, b = learned_state(learner), learned_state(ref)
    for k in a:
        assert k in b and _same(a[k], b[k]), f"nf.simulate must learn {k} as the Python loop does, bit for bit"


_CHECKS: tuple[Callable[[type, dict], None], ...] = (
    check_init, check_clone, check_params, check_finite_state, check_predict_shapes, check_action_probabilities,
    check_save_load, check_seeded_determinism, check_compiled_loop,
)


def learner_checks() -> list[Callable[[type, dict], None]]:
    """The checks `check_learner` runs, in order (each ``check(cls, params)``)."""
    return list(_CHECKS)


def check_learner(learner: Any) -> list[str]:
    """Run the shared checks on a learner class (built with its ``_test_params``) or instance (its
    parameters); return the names of the checks run. ``AssertionError`` names the failing check."""
    if isinstance(learner, type):
        cls, params = learner, test_params(learner)
    else:
        cls, params = type(learner), dict(learner.get_params())
    registry.learner_tags(cls)  # a learner declares its tags (TypeError otherwise)
    done = []
    for check in _CHECKS:
        try:
            check(cls, params)
        except AssertionError as exc:
            raise AssertionError(f"{cls.__name__} fails {check.__name__}: {exc}") from exc
        done.append(check.__name__)
    return done
