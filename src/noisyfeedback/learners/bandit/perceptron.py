"""Multiclass Perceptron, full information (Crammer & Singer 2003, ultraconservative form)."""

from __future__ import annotations

import numpy as np

from ...base import Tags
from ...feedback import CODE_CONFUSION, CODE_FULL
from ...kernels.perceptron import perceptron_learn, perceptron_simulate
from .._linear import LinearClassifier, kernel_view, row_range


class Perceptron(LinearClassifier):
    """Multiclass Perceptron: on a mistake, W[y] += x and W[ŷ] -= x.

    ŷ = argmax_k (W x)_k with the lowest index winning ties. Learns from full
    labels (``FullLabel``) or labels corrupted by ``ConfusionNoise``.

    Parameters
    ----------
    n_classes : int
        Number of classes K (labels 0..K-1).

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> trace = nf.simulate(nf.Perceptron(9), X, y, nf.feedback.FullLabel(), n_rounds=10_000, seed=0)
    >>> trace.error_rate < 0.05
    True

    References
    ----------
    .. [1] Crammer, K. & Singer, Y. (2003). Ultraconservative online algorithms
       for multiclass problems. JMLR 3, 951-991.
    """

    feedback_kind = "label"
    _tags = Tags(family="bandit", online=True)  # what it is, for every front door (noisyfeedback.base.Tags)
    draws_per_round = 0
    _test_params = {"n_classes": 3}

    def __init__(self, n_classes: int):
        self.n_classes = n_classes

    def act(self, X, allowed=None, excluded=None):
        """Greedy actions with propensity 1 (the Perceptron does not explore). With ``allowed``/``excluded``
        the greedy label among the actions a row may take."""
        actions = self.predict(X, allowed, excluded)
        return actions, np.ones(actions.shape[0])

    def learn(self, X, actions=None, feedback=None, propensities=None) -> "Perceptron":
        """Process labelled rows in order; ``feedback`` holds the (possibly noisy) labels."""
        X = self._check_X(X, fitting=True)
        if feedback is None:
            raise ValueError("Perceptron.learn needs feedback: the label of each row.")
        labels = self._check_actions(feedback, X.shape[0], name="feedback")
        self._guarded(X.shape[0], lambda lo, hi: perceptron_learn(self.W_, *kernel_view(row_range(X, lo, hi)),
                                                                  labels[lo:hi]))
        return self

    def partial_fit(self, X, y, classes=None) -> "Perceptron":
        """scikit-learn style alias of ``learn(X, feedback=y)`` (``classes`` is accepted and ignored:
        the labels are 0..n_classes−1)."""
        return self.learn(X, feedback=y)

    def fit(self, X, y) -> "Perceptron":
        """One pass over (X, y) in order from scratch (discards learned state); returns self.
        With ``partial_fit`` and ``predict`` it makes the learner a scikit-learn Pipeline step."""
        self._reset()
        return self.learn(X, feedback=y)

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes):
        code, _, _, Ccum = feedback._kernel_args(self.n_classes)
        if code not in (CODE_FULL, CODE_CONFUSION):
            raise TypeError(f"Perceptron learns from labels; got {feedback!r}.")
        perceptron_simulate(self.W_, *kernel_view(X), y, order, code, u_feedback, Ccum, mistakes)
