"""``GET /policy/evaluate``: an off-policy estimate of a candidate learner on the logged events.

The candidate is ``deployed`` (the serving model as it is now, on every logged context) or a registered
learner name with ``param`` entries ``key=value``: a fresh learner of that kind, trained on the log in
the service's learning order (reward seq) and evaluated progressively — the action probabilities of a
block of 256 events come from the candidate trained on the events before the block — as it would have
done deployed. The estimate is ``nf.ope.evaluate`` with the service's flip rates (noise-corrected).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import numpy as np

from .. import registry
from .engine import Engine, ServiceError
from .policy import action_distribution
from .storage import decode_action

__all__ = ["evaluate_candidate", "logged_rewarded"]

BLOCK = 256


def logged_rewarded(engine: Engine) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, actions, rewards, propensities) of the rewarded events in reward-seq order."""
    rows = [r for chunk in engine.storage.rewards_after(0) for r in chunk]
    d = engine.n_features
    if not rows:
        return np.zeros((0, d)), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), d)
    actions = np.array([decode_action(r[3]) for r in rows], dtype=np.int64)
    rewards = np.array([r[1] for r in rows], dtype=np.float64)
    props = np.array([r[4] for r in rows], dtype=np.float64)
    return X, actions, rewards, props


def _params(items: list[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ServiceError(422, f"param must be key=value; got {item!r}.", "param")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out


def evaluate_candidate(engine: Engine, candidate: str, params: list[str], estimator: str = "snips",
                       alpha: float = 0.05) -> dict:
    from .. import ope

    if engine.m > 1:
        raise ServiceError(422, "off-policy evaluation of set actions (m > 1) is not supported.", "candidate")
    X, actions, rewards, props = logged_rewarded(engine)
    if X.shape[0] == 0:
        raise ServiceError(422, "no rewarded events in the log yet.", "candidate")
    if candidate == "deployed":
        if params:
            raise ServiceError(422, "the deployed candidate takes no param.", "param")
        policy = action_distribution(engine.learner, X)
    else:
        try:
            klass = registry.resolve_learner(candidate)
        except ValueError as exc:
            raise ServiceError(422, str(exc), "candidate") from None
        kw = _params(params)
        names = registry.learner_params(klass)
        for k, v in (("rho0", engine.rho0), ("rho1", engine.rho1)):
            if k in names and k not in kw and v:
                kw[k] = v
        try:
            learner = registry.build_learner(klass, engine.n_classes, **kw)
            learner._validate_params()
        except (TypeError, ValueError) as exc:
            raise ServiceError(422, str(exc), "param") from None
        if getattr(learner, "feedback_kind", None) != "bandit":
            raise ServiceError(422, f"{klass.__name__} is not a single-action bandit learner.", "candidate")
        learner._init_state(engine.n_features)
        policy = np.empty((X.shape[0], engine.n_classes))
        fb = np.round(rewards).astype(np.int64)
        for a in range(0, X.shape[0], BLOCK):
            b = min(a + BLOCK, X.shape[0])
            policy[a:b] = action_distribution(learner, X[a:b])
            learner.learn(X[a:b], actions[a:b], fb[a:b], props[a:b])
    est = ope.evaluate(policy, X, actions, rewards, props, estimator=estimator, rho0=engine.rho0,
                       rho1=engine.rho1, alpha=alpha, seed=0)
    out = dataclasses.asdict(est) if dataclasses.is_dataclass(est) else dict(vars(est))
    out["candidate"] = candidate
    return out
