"""How a ``/rank`` of the numeric API chooses: the distribution the learner draws from, its greedy
action and the draw, each checked. A model that gives no finite distribution or probability draws
nothing: `Invalid`, and the learner's random stream is left as it was.

A learner that offers ``act_explained`` (act, with the distribution and greedy action of the same
rows, from one validation of the context) is asked once a request; the others three times
(``action_probabilities``, ``predict``/``predict_set``, ``act``): the same values and draws."""

from __future__ import annotations

import math

import numpy as np

from .errors import Invalid

__all__ = ["choose", "greedy_of", "distribution"]

NO_DISTRIBUTION = ("the model gives no finite distribution of actions for this context (its values are too "
                   "extreme); nothing was drawn or logged.")
NO_PROBABILITY = "the model gives no finite probability for this context; nothing was logged."


def greedy_of(learner, x: np.ndarray, m: int) -> list | int:
    """The greedy action (or top-m set, in increasing label order) of one row."""
    if m > 1:
        return sorted(learner.predict_set(x)[0].tolist())
    return int(learner.predict(x)[0])


def distribution(learner, x: np.ndarray, m: int, allowed: np.ndarray | None = None) -> np.ndarray:
    """What ``act`` draws from for this row (restricted to ``allowed`` and renormalised; set learners:
    inclusion probabilities, summing to m); `Invalid` when the model gives no finite distribution."""
    kw = {} if allowed is None else {"allowed": allowed}
    dist = np.asarray(learner.action_probabilities(x, **kw), dtype=np.float64)[0]
    if not _valid(dist.tolist(), m):
        raise Invalid("context", NO_DISTRIBUTION)
    return dist


def _valid(values: list[float], m: int) -> bool:
    """A finite distribution of m draws: entries in [0, inf), summing to m (within 1e-6·m)."""
    return all(0.0 <= v < math.inf for v in values) and abs(math.fsum(values) - m) <= 1e-6 * m


def _refuse(learner, state, message: str) -> Invalid:
    """Nothing is logged: the draw is undone (the learner's stream back at ``state``, when it draws)."""
    if state is not None:
        learner.rng_.bit_generator.state = state
    return Invalid("context", message)


def choose(learner, xt: np.ndarray, K: int, m: int, allowed: np.ndarray | None, default_action=None):
    """(action, probability, uniforms drawn, distribution, distribution as a list, greedy action) of one
    validated row. With ``default_action`` (apprentice mode) nothing is drawn: the application's action
    is logged with probability 1 (and the distribution puts all mass on it)."""
    explained = getattr(learner, "act_explained", None)
    if explained is not None and default_action is None and allowed is None and m == 1:
        state = learner.rng_.bit_generator.state if learner.draws_per_round else None
        acts, probs, dists, greedy = explained(xt)
        dist, prob = dists[0], float(probs[0])
        values = dist.tolist()
        if not _valid(values, m):
            raise _refuse(learner, state, NO_DISTRIBUTION)
        if not 0.0 < prob <= 1.0:
            raise _refuse(learner, state, NO_PROBABILITY)
        return acts[0].tolist(), prob, learner.draws_per_round, dist, values, int(greedy[0])
    dist = distribution(learner, xt, m, allowed)
    greedy = greedy_of(learner, xt, m)
    if default_action is not None:
        dist = np.zeros(K)
        dist[np.atleast_1d(default_action)] = 1.0
        return default_action, 1.0, 0, dist, dist.tolist(), greedy
    state = learner.rng_.bit_generator.state if learner.draws_per_round else None
    acts, probs = learner.act(xt) if allowed is None else learner.act(xt, allowed=allowed)
    prob = float(probs[0])
    if not 0.0 < prob <= 1.0:
        raise _refuse(learner, state, NO_PROBABILITY)
    return acts[0].tolist(), prob, learner.draws_per_round, dist, dist.tolist(), greedy
