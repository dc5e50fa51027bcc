"""A river adapter: any noisyfeedback classifier as a river ``Classifier`` (``learn_one``/``predict_one``
on dict rows), so it runs in river's ``evaluate.progressive_val_score`` and pipelines.

Needs the optional dependency river (``pip install river``).

>>> from river import evaluate, metrics, stream
>>> import noisyfeedback as nf
>>> X, y = nf.datasets.load("iris")
>>> model = RiverClassifier(nf.Perceptron(3), classes=[0, 1, 2])
>>> evaluate.progressive_val_score(stream.iter_array(X, y), model, metrics.Accuracy())
Accuracy: 98.67%
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np
from river import base

__all__ = ["RiverClassifier"]


class RiverClassifier(base.Classifier):
    """Wrap a noisyfeedback learner with ``n_classes`` labels for river.

    ``predict_one(x)`` is the learner's greedy label; ``learn_one(x, y)`` is one round: a
    full-information learner (Perceptron, MCSLP) learns the label; a bandit learner acts, sees
    ``1[action = y]`` (clean bandit feedback) and learns from it with its propensity (set learners:
    ``1[y ∈ set]``). So on the same order of rows, a full-information learner makes exactly the
    online mistakes of ``nf.simulate(learner, X, y, FullLabel(), ...)``.

    Parameters
    ----------
    learner : noisyfeedback learner
    features : sequence of keys, optional
        The order of the dict keys as columns; default: the keys of the first row, sorted.
    classes : sequence of labels, optional
        The labels, mapped to 0..K−1 in this order; default: in order of first appearance
        (at most ``learner.n_classes`` of them).
    """

    def __init__(self, learner: Any, features: Sequence[Hashable] | None = None,
                 classes: Sequence[Hashable] | None = None):
        self.learner = learner
        self.features = features
        self.classes = classes
        self._features = list(features) if features is not None else None
        self._codes: dict[Hashable, int] = {c: i for i, c in enumerate(classes)} if classes is not None else {}
        self._labels: list[Hashable] = list(classes) if classes is not None else []

    def _row(self, x: dict) -> np.ndarray:
        if self._features is None:
            self._features = sorted(x)
        return np.array([[float(x.get(f, 0.0)) for f in self._features]])

    def _code(self, y: Hashable) -> int:
        if y not in self._codes:
            if len(self._labels) >= self.learner.n_classes:
                raise ValueError(f"label {y!r} is new, and the learner already has its {self.learner.n_classes} "
                                 f"labels {self._labels}.")
            self._codes[y] = len(self._labels)
            self._labels.append(y)
        return self._codes[y]

    def learn_one(self, x: dict, y: Hashable) -> None:
        X = self._row(x)
        k = self._code(y)
        kind = self.learner.feedback_kind
        if kind == "label":
            self.learner.learn(X, feedback=np.array([k]))
        elif kind in ("bandit", "set"):
            actions, probs = self.learner.act(X)
            hit = (actions.reshape(1, -1) == k).any(axis=1).astype(np.int64)
            self.learner.learn(X, actions, hit, probs)
        else:
            raise TypeError(f"RiverClassifier wraps classifiers; {type(self.learner).__name__} learns {kind!r} "
                            "feedback.")

    def predict_one(self, x: dict) -> Hashable | None:
        k = int(self.learner.predict(self._row(x))[0])
        return self._labels[k] if k < len(self._labels) else None  # a label not seen yet

    def predict_proba_one(self, x: dict) -> dict[Hashable, float]:
        """The learner's action distribution over the labels seen so far."""
        P = self.learner.action_probabilities(self._row(x))[0]
        return {c: float(P[i]) for i, c in enumerate(self._labels)}
