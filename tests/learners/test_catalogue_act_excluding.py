"""Per-slot exclusions of the catalogue learners (``act_excluding``): without exclusions the same draws as
``act`` (bit for bit), an excluded candidate never fills its slot, a slot with nothing left stays empty,
and such logged pages (an empty slot among enough candidates) are learned."""

import copy

import numpy as np
import pytest

from noisyfeedback.catalogue import CandidateRounds
from noisyfeedback.learners.catalogue import CatalogueEpsilonGreedy, CatalogueSquareCB


def _round(rng, n=5):
    acts = [[{"t": f"k{j % 3}", "x": float(rng.normal())}] for j in range(n)]
    return CandidateRounds.from_features([[{"u": {"a": float(rng.normal())}}]], [acts])


@pytest.mark.parametrize("cls", [CatalogueSquareCB, CatalogueEpsilonGreedy])
def test_act_excluding_matches_act_and_honours_exclusions(cls):
    rng = np.random.default_rng(0)
    learner = cls(features="hashed", bits=10, n_slots=3, seed=1)
    for _ in range(60):
        r = _round(rng)
        twin = copy.deepcopy(learner)
        c1, p1 = learner.act(r)
        c2, p2 = twin.act_excluding(r, np.zeros((5, 3), bool))
        assert (c1 == c2).all() and (p1 == p2).all()
        learner.learn(r, c1, (c1 % 2 == 0).astype(float) * 0.7, p1)
    ex = np.zeros((5, 3), bool)
    ex[[0, 1], 0] = True  # candidates 0 and 1 never in slot 0
    ex[:, 2] = True  # slot 2 not shown
    firsts = set()
    for _ in range(40):
        r = _round(rng)
        c, p = learner.act_excluding(r, ex)
        assert c[0, 0] not in (0, 1) and c[0, 2] == -1 and p[0, 2] == 1.0 and c[0, 1] != c[0, 0]
        assert 0 < p[0, 0] <= 1 and 0 < p[0, 1] <= 1
        firsts.add(int(c[0, 0]))
        learner.learn(r, c, np.array([[1.0, 0.3, 0.0]]), p)  # an empty slot among 5 candidates: learned as shown
    assert firsts <= {2, 3, 4}
    with pytest.raises(ValueError, match="excluded must have shape"):
        learner.act_excluding(r, np.zeros((5, 2), bool))
