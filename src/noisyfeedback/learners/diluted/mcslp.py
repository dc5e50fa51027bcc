"""MC-SLP: multiclass classification with subset label prediction, full information (Batra & Manwani 2021)."""

from __future__ import annotations

import numpy as np

from ..._validation import Integer
from ...base import Tags
from ...feedback import CODE_CONFUSION, CODE_FULL
from ...kernels.diluted import mcslp_learn, mcslp_simulate
from .._linear import kernel_view, row_range
from ._sets import SetPredictor


class MCSLP(SetPredictor):
    """MC-SLP: predict the top-m set Ŷ of W x; on the true label y, W += (e_y − 1[r∈Ŷ]/m) ⊗ x.

    The update is applied every round (docs/algorithms.md §4.8, the paper's Algorithm 1): it is
    the stochastic gradient of the average hinge loss
    [1 − (Wx)_y + (1/m)·Σ_{i∈Ŷ} (Wx)_i]_+ and is zero only when m = 1 and ŷ = y.
    With m = 1 it is the multiclass Perceptron, bit for bit. It is the
    full-information counterpart of `MCDBF`. Learns from full labels
    (``FullLabel``) or labels corrupted by ``ConfusionNoise``.

    ``act`` returns the greedy label with propensity 1 (like ``Perceptron``: a
    full-information learner does not explore); ``predict_set`` returns Ŷ.
    Simulations report ``set_miss_rate`` (1[y ∉ Ŷ], the paper's mistakes) in
    ``Trace.metrics``; ``Trace.error_rate`` is that of argmax W x.

    Parameters
    ----------
    n_classes : int
        Number of classes K.
    m : int in [1, K-1], default 2 (the smallest set of the paper's experiments; K = 2 needs m = 1)
        Size of the predicted label set.

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> learner = nf.MCSLP(9, m=3)
    >>> trace = nf.simulate(learner, X, y, nf.feedback.FullLabel(), n_rounds=10_000, seed=0)
    >>> trace.error_rate < 0.05, trace.metrics["set_miss_rate"] < trace.error_rate
    (True, True)
    >>> learner.predict_set(X[:2]).shape
    (2, 3)

    References
    ----------
    .. [1] Batra, G. & Manwani, N. (2021). Multiclass classification using dilute
       bandit feedback. Algorithm 1.
    """

    feedback_kind = "label"
    _tags = Tags(family="diluted", online=True)  # what it is, for every front door (noisyfeedback.base.Tags)
    draws_per_round = 0
    _parameter_constraints = {"m": Integer(1)}
    _test_params = {"n_classes": 4, "m": 2}

    def __init__(self, n_classes: int, m: int = 2):
        self.n_classes = n_classes
        self.m = m

    def act(self, X, allowed=None, excluded=None):
        """Greedy actions with propensity 1 (MC-SLP does not explore); see ``predict_set`` for Ŷ. With
        ``allowed``/``excluded`` the greedy label among the actions a row may take."""
        actions = self.predict(X, allowed, excluded)
        return actions, np.ones(actions.shape[0])

    def learn(self, X, actions=None, feedback=None, propensities=None) -> "MCSLP":
        """Process labelled rows in order; ``feedback`` holds the (possibly noisy) labels."""
        X = self._check_X(X, fitting=True)
        if feedback is None:
            raise ValueError("MCSLP.learn needs feedback: the label of each row.")
        labels = self._check_actions(feedback, X.shape[0], name="feedback")
        m = int(self.m)
        self._guarded(X.shape[0], lambda lo, hi: mcslp_learn(self.W_, *kernel_view(row_range(X, lo, hi)), m,
                                                             labels[lo:hi]))
        return self

    def partial_fit(self, X, y, classes=None) -> "MCSLP":
        """scikit-learn style alias of ``learn(X, feedback=y)`` (``classes`` is accepted and ignored:
        the labels are 0..n_classes−1)."""
        return self.learn(X, feedback=y)

    def fit(self, X, y) -> "MCSLP":
        """One pass over (X, y) in order from scratch (discards learned state); returns self.
        With ``partial_fit`` and ``predict`` it makes the learner a scikit-learn Pipeline step."""
        self._reset()
        return self.learn(X, feedback=y)

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes, extras=None):
        code, _, _, Ccum = feedback._kernel_args(self.n_classes)
        if code not in (CODE_FULL, CODE_CONFUSION):
            raise TypeError(f"MCSLP learns from labels; got {feedback!r}.")
        mcslp_simulate(self.W_, *kernel_view(X), y, order, int(self.m), code, u_feedback, Ccum, mistakes,
                       self._set_miss_out(extras, order.shape[0]))
