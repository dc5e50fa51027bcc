"""Banditron: multiclass Perceptron under bandit feedback."""

from __future__ import annotations

import numpy as np

from ..._validation import AnySeed, Interval
from ...base import Tags
from ...feedback import CODE_BANDIT, kernel_feedback
from ...kernels.bandit import RULE_BANDITRON, bandit_act, bandit_learn, bandit_simulate
from ...kernels.linear import predict_rows
from .._linear import LinearClassifier, LoggedLearning, class_major, kernel_view, row_range


class Banditron(LoggedLearning, LinearClassifier):
    """Banditron: ε-greedy exploration with an importance-weighted Perceptron update.

    P(r) = (1-γ)·1[r = ŷ] + γ/K; draw ỹ ~ P; observe f = 1[ỹ = y];
    W += (f·e_ỹ / P(ỹ) − e_ŷ) ⊗ x every round [1]_.

    Parameters
    ----------
    n_classes : int
        Number of classes K.
    gamma : float in (0, 1)
        Exploration rate γ.
    seed : int, SeedSequence or None
        Seed of the exploration draws. With None, ``nf.simulate`` seeds it from
        its own seed; ``act`` outside a simulation then uses fresh entropy.

    Examples
    --------
    >>> import numpy as np
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> learner = nf.Banditron(9, gamma=0.1, seed=0)
    >>> actions, probs = learner.act(X[:3])
    >>> actions, probs.round(3)
    (array([0, 0, 0]), array([0.911, 0.911, 0.911]))
    >>> rng = np.random.default_rng(0)
    >>> feedback = nf.feedback.NoisyBandit(0, 0).respond(y[:3], actions, rng)
    >>> learner.learn(X[:3], actions, feedback, probs) is learner
    True

    References
    ----------
    .. [1] Kakade, S., Shalev-Shwartz, S. & Tewari, A. (2008). Efficient bandit
       algorithms for online multiclass prediction. ICML.
    """

    feedback_kind = "bandit"
    #: what it is, for every front door (noisyfeedback.base.Tags)
    _tags = Tags(family="bandit", online=True, servable=True)
    draws_per_round = 1
    _parameter_constraints = {"gamma": Interval(0, 1, closed="neither"), "seed": AnySeed()}
    _test_params = {"n_classes": 3, "gamma": 0.2, "seed": 0}

    def __init__(self, n_classes: int, gamma: float = 0.1, seed: int | None = None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.seed = seed

    _rule = RULE_BANDITRON
    _NO_STATE = (np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0))
    _NO_RECORD = (np.zeros(0, np.int64), np.zeros(0, np.int64))

    def _extra_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta, A, cum) for learners with second-order state; empty here."""
        return self._NO_STATE

    def _h(self) -> tuple[float, float]:
        """Feedback estimate (h(0), h(1)); clean bandit feedback is used as is."""
        return 0.0, 1.0

    def act(self, X, allowed=None, excluded=None) -> tuple[np.ndarray, np.ndarray]:
        """Draw one exploratory action per row: returns (actions, P(action)).

        ``allowed``/``excluded`` (action indices for every row, or an (n, K) boolean mask): draw from the
        distribution restricted to the actions a row may take and renormalised (one uniform a row); the
        propensity is the restricted probability (`restricted_draw`)."""
        if allowed is not None or excluded is not None:
            return self._act_restricted(X, allowed, excluded)
        X = self._check_X(X, fitting=True)
        u = self.rng_.random(X.shape[0] * self.draws_per_round)
        actions = np.empty(X.shape[0], dtype=np.int64)
        probs = np.empty(X.shape[0], dtype=np.float64)
        bandit_act(self.W_, *kernel_view(X), float(self.gamma), u, actions, probs)
        return actions, probs

    def act_explained(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``act(X)`` with what a service logs beside each draw, from one validation of X: (actions,
        P(action), ``action_probabilities(X)``, ``predict(X)``); the same values and the same draws as
        the three calls (which it makes where one of them is redefined)."""
        for name, own in (("act", Banditron.act), ("action_probabilities", Banditron.action_probabilities),
                          ("predict", LinearClassifier.predict), ("_check_X", LinearClassifier._check_X)):
            if getattr(getattr(self, name), "__func__", None) is not own:
                dist, greedy = self.action_probabilities(X), self.predict(X)
                return (*self.act(X), dist, greedy)
        X = self._check_X(X, fitting=True)
        n, K, gamma = X.shape[0], self.n_classes, float(self.gamma)
        view = kernel_view(X)
        greedy = np.zeros(n, dtype=np.int64)
        predict_rows(self.W_, *view, greedy)
        dist = np.full((n, K), gamma / K)
        for i in range(n):  # as action_probabilities (one row: cheaper than fancy indexing)
            dist[i, greedy[i]] += 1.0 - gamma
        u = self.rng_.random(n * self.draws_per_round)
        actions = np.empty(n, dtype=np.int64)
        probs = np.empty(n, dtype=np.float64)
        bandit_act(self.W_, *view, gamma, u, actions, probs)
        return actions, probs, dist, greedy

    def action_probabilities(self, X, allowed=None, excluded=None) -> np.ndarray:
        """P(r) = (1−γ)·1[r = ŷ] + γ/K for every row, shape (n_samples, n_classes): what ``act`` draws from
        (restricted to ``allowed`` minus ``excluded`` and renormalised when given)."""
        greedy = self.predict(X)
        K = self.n_classes
        out = np.full((greedy.shape[0], K), float(self.gamma) / K)
        out[np.arange(greedy.shape[0]), greedy] += 1.0 - float(self.gamma)
        return self._restrict_probabilities(out, self._mask(allowed, excluded, out.shape[0]))

    def learn(self, X, actions, feedback, propensities) -> "Banditron":
        """Update from logged rows in order: action taken, 0/1 feedback, its propensity."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        actions = self._check_actions(actions, n)
        feedback = self._check_binary(feedback, n)
        propensities = self._check_propensities(propensities, n)
        h0, h1 = self._h()
        extra = self._extra_state()
        self._guarded(n, lambda lo, hi: bandit_learn(
            self._rule, self.W_, *kernel_view(row_range(X, lo, hi)), actions[lo:hi], feedback[lo:hi],
            propensities[lo:hi], h0, h1, *extra))
        return self

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes):
        code, rho0, rho1 = kernel_feedback(feedback, self.n_classes)
        if code != CODE_BANDIT:
            raise TypeError(f"{type(self).__name__} learns from bandit feedback; got {feedback!r}.")
        h0, h1 = self._h()
        with class_major(self) as W:
            bandit_simulate(self._rule, W, *kernel_view(X), y, order, float(self.gamma), h0, h1,
                            rho0, rho1, u_learner, u_feedback, mistakes, *self._extra_state(),
                            *self._NO_RECORD)
