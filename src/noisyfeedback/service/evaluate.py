"""``GET /policy/evaluate``: an off-policy estimate of a candidate learner on the logged events.

The candidate is ``deployed`` (the serving model as it is now, on every logged context) or a registered
learner name with ``param`` entries ``key=value``: a fresh learner of that kind, trained on the log in
the service's learning order (reward seq) and evaluated progressively — the action probabilities of a
block of 256 events come from the candidate trained on the events before the block — as it would have
done deployed. The estimate is ``nf.ope.evaluate`` with the service's flip rates (noise-corrected).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import resolve_learner
from .errors import Invalid
from .learner import make_learner, parse_param_items, servable_learners
from .storage import decode_action

__all__ = ["Logged", "evaluate_candidate", "logged_rewarded"]

BLOCK = 256


@dataclass
class Logged:
    """What an evaluation reads (in a worker thread): the log, the service's sizes and flip rates, and a
    copy of the deployed model (for ``candidate=deployed``)."""

    storage: Any
    n_classes: int
    n_features: int
    m: int
    rho0: float | list[float]  # one rate, or one per action
    rho1: float | list[float]
    deployed: Any = None


def _rates(v):
    """A configured flip rate for nf.ope: the float, or an array of one per action."""
    return np.asarray(v, dtype=np.float64) if isinstance(v, (list, tuple)) else v


def logged_rewarded(logged) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(X, actions, rewards, propensities) of the rewarded events in reward-seq order."""
    rows = [r for chunk in logged.storage.rewards_after(0) for r in chunk]
    d = logged.n_features
    if not rows:
        return np.zeros((0, d)), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    X = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float64).reshape(len(rows), d)
    actions = np.array([decode_action(r[3]) for r in rows], dtype=np.int64)
    rewards = np.array([r[1] for r in rows], dtype=np.float64)
    props = np.array([r[4] for r in rows], dtype=np.float64)
    return X, actions, rewards, props


def _finite_policy(policy: np.ndarray, field: str) -> np.ndarray:
    if not (np.isfinite(policy).all() and np.allclose(policy.sum(axis=1), 1.0)):
        raise Invalid(field, "the candidate's action probabilities are not a finite distribution on the "
                                "logged contexts (it diverges with these parameters).")
    return policy


def evaluate_candidate(logged: Logged, candidate: str, params: list[str], estimator: str = "snips",
                       alpha: float = 0.05) -> dict:
    from .. import ope

    if logged.m > 1:
        raise Invalid("candidate", "off-policy evaluation of set actions (m > 1) is not supported.")
    X, actions, rewards, props = logged_rewarded(logged)
    if X.shape[0] == 0:
        raise Invalid("candidate", "no rewarded events in the log yet.")
    if candidate == "deployed":
        if params:
            raise Invalid("param", "the deployed candidate takes no param.")
        policy = _finite_policy(np.asarray(logged.deployed.action_probabilities(X), dtype=np.float64), "candidate")
    else:
        try:
            kw = parse_param_items(params, flag="param")
        except ValueError as exc:
            raise Invalid("param", str(exc)) from None
        try:
            klass = resolve_learner(candidate)
        except ValueError as exc:
            raise Invalid("candidate", str(exc)) from None
        if klass.__name__ not in servable_learners():
            raise Invalid("candidate", f"{klass.__name__} does not learn from bandit feedback; candidates: "
                                    f"{', '.join(servable_learners())}.")
        try:
            learner = make_learner(candidate, logged.n_classes, logged.n_features, kw, logged.rho0, logged.rho1)
        except ValueError as exc:
            raise Invalid("param", str(exc)) from None
        if learner.feedback_kind != "bandit":
            raise Invalid("candidate", f"{type(learner).__name__} is not a single-action bandit learner.")
        policy = np.empty((X.shape[0], logged.n_classes))
        fb = np.round(rewards).astype(np.int64)
        try:
            for a in range(0, X.shape[0], BLOCK):
                b = min(a + BLOCK, X.shape[0])
                policy[a:b] = _finite_policy(learner.action_probabilities(X[a:b]), "param")
                learner.learn(X[a:b], actions[a:b], fb[a:b], props[a:b])
        except (ValueError, FloatingPointError, OverflowError) as exc:
            raise Invalid("param", f"the candidate cannot learn the log with these parameters: {exc}") from None
    with np.errstate(all="ignore"):
        est = ope.evaluate(policy, X, actions, rewards, props, estimator=estimator, rho0=_rates(logged.rho0),
                           rho1=_rates(logged.rho1), alpha=alpha, seed=0)
    out = dataclasses.asdict(est) if dataclasses.is_dataclass(est) else dict(vars(est))
    out["candidate"] = candidate
    return out
