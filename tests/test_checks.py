"""noisyfeedback.checks, the public check suite: it passes every registered learner and fails broken ones."""

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback import checks, registry

NAMES = list(checks.registered_learners())


def test_registered_learners_are_the_registry_not_the_exports():
    found = checks.registered_learners()
    assert list(found) == list(registry.LEARNERS)
    assert all(isinstance(c, type) and c.__name__ == n for n, c in found.items())


@pytest.mark.parametrize("name", NAMES)
def test_check_learner_passes_every_registered_learner(name):
    done = checks.check_learner(checks.registered_learners()[name])
    assert done == [c.__name__ for c in checks.learner_checks()]


def test_check_learner_takes_an_instance():
    assert "check_save_load" in checks.check_learner(nf.Banditron(4, gamma=0.3, seed=2))


class WrongShape(nf.Banditron):
    """predict gives a column (n, 1) instead of one label a row."""

    def predict(self, X):
        return super().predict(X)[:, None]


class NotADistribution(nf.Banditron):
    """action_probabilities whose rows sum to 2."""

    def action_probabilities(self, X):
        return 2 * super().action_probabilities(X)


class KeepsState(nf.Perceptron):
    """clone copies the learned weights too."""

    def clone(self, **params):
        twin = super().clone(**params)
        if hasattr(self, "W_"):
            twin.W_ = self.W_.copy()
        return twin


@pytest.mark.parametrize("broken, check", [(WrongShape, "check_predict_shapes"),
                                           (NotADistribution, "check_action_probabilities"),
                                           (KeepsState, "check_clone")])
def test_check_learner_fails_a_broken_learner(broken, check):
    with pytest.raises(AssertionError, match=f"{broken.__name__} fails {check}"):
        checks.check_learner(broken)
    assert np.ndim(broken(3).predict(np.ones((2, 4)))) >= 1
