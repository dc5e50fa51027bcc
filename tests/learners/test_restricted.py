"""act / action_probabilities / predict restricted to allowed actions (``allowed=``, ``excluded=``).

The restricted draw must give the distribution, the action, the propensity and the consumption of the
learner's random stream of the decision service's former restricted draw (tests/reference.py): one uniform a row drawn
after the row's distribution, the inverse CDF over the allowed labels in increasing order.
"""

import copy

import numpy as np
import pytest
from reference import restricted_draw_reference as service_draw

import noisyfeedback as nf
from noisyfeedback.learners._linear import action_mask, restricted_draw

K, D = 6, 5

LEARNERS = [
    lambda: nf.Banditron(K, gamma=0.3, seed=1),
    lambda: nf.RCNBF(K, gamma=0.2, rho0=0.1, rho1=0.2, seed=2),
    lambda: nf.BPA(K, gamma=0.2, seed=3),
    lambda: nf.SOBA(K, gamma=0.2, diagonal=True, seed=4),
    lambda: nf.RCINE(K, gamma=0.2, n_s=50, seed=5),
    lambda: nf.SquareCB(K, seed=6),
    lambda: nf.SquareCB(K, oracle="ridge", seed=6),
    lambda: nf.EpsilonGreedy(K, epsilon=0.3, seed=7),
    lambda: nf.MCDBF(K, m=1, gamma=0.3, seed=8),
]


def trained(make, n=300):
    rng = np.random.default_rng(0)
    W = rng.normal(size=(K, D))
    learner = make()
    X = rng.normal(size=(n, D))
    y = np.argmax(X @ W.T, axis=1)
    a, p = learner.act(X)
    learner.learn(X, a, (a.reshape(n, -1)[:, 0] == y).astype(np.int64), p)
    return learner, rng


def service_reference(learner, X, allowed_rows):
    """The service's per-event restricted draw (engine.rank), row by row."""
    acts, probs, dists = [], [], []
    for x, allowed in zip(X, allowed_rows):
        p = learner.action_probabilities(x[None])[0]
        u = float(learner.rng_.random()) if learner.draws_per_round else 0.0
        a, pr, q = service_draw(p, np.unique(np.asarray(allowed)), u)
        acts.append(a), probs.append(pr), dists.append(q)
    return np.array(acts), np.array(probs), np.array(dists)


@pytest.mark.parametrize("make", LEARNERS)
def test_restricted_act_equals_the_service_draw_and_consumes_the_stream_alike(make):
    learner, rng = trained(make)
    twin = copy.deepcopy(learner)
    X = rng.normal(size=(40, D))
    allowed = [1, 3, 4]
    a, p = learner.act(X, allowed=allowed)
    q = learner.action_probabilities(X, allowed=allowed)
    ra, rp, rq = service_reference(twin, X, [allowed] * len(X))
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(p, rp)
    np.testing.assert_array_equal(q, rq)
    assert set(a) <= set(allowed)
    # the streams are in the same place afterwards: the next unrestricted draws agree
    a2, p2 = learner.act(X)
    b2, q2 = twin.act(X)
    np.testing.assert_array_equal(a2, b2)
    np.testing.assert_array_equal(p2, q2)


@pytest.mark.parametrize("make", LEARNERS)
def test_masks_per_row_and_excluded(make):
    learner, rng = trained(make)
    X = rng.normal(size=(30, D))
    mask = rng.random((30, K)) < 0.5
    mask[np.arange(30), rng.integers(0, K, 30)] = True
    q = learner.action_probabilities(X, allowed=mask)
    assert np.all(q[~mask] == 0) and np.allclose(q.sum(axis=1), 1) and np.all(q >= 0)
    a, p = learner.act(X, allowed=mask)
    assert mask[np.arange(30), a].all() and np.all(p > 0)
    np.testing.assert_array_equal(learner.action_probabilities(X, excluded=~mask), q)
    g = learner.predict(X, allowed=mask)
    v = learner.decision_function(X)
    assert mask[np.arange(30), g].all()
    assert np.all(v[np.arange(30), g] == np.where(mask, v, -np.inf).max(axis=1))
    # excluded on its own, and both together
    q2 = learner.action_probabilities(X, excluded=[0, 2])
    assert np.all(q2[:, [0, 2]] == 0) and np.allclose(q2.sum(axis=1), 1)
    q3 = learner.action_probabilities(X, allowed=[0, 1, 2], excluded=[2])
    assert np.all(q3[:, 2:] == 0) and np.allclose(q3.sum(axis=1), 1)
    # an unrestricted call is unchanged by the new arguments
    np.testing.assert_array_equal(learner.action_probabilities(X, allowed=None), learner.action_probabilities(X))


@pytest.mark.parametrize("allowed, excluded, match", [
    ([], None, "allowed is empty"),
    ([K], None, "allowed must hold action indices"),
    ([-1], None, "allowed must hold action indices"),
    (None, [K + 3], "excluded must hold action indices"),
    ([1, 2], [1, 2], "allowed minus excluded leaves no action for row 0"),
    (None, list(range(K)), "excluded leaves no action for row 0"),
    (np.zeros((4, K), bool), None, "allowed leaves no action for row 0"),
    (np.ones((3, K), bool), None, r"allowed as a boolean mask must have shape \(4, 6\)"),
    ([0.5, 1.0], None, "allowed must be a list of action indices"),
])
def test_bad_restrictions_are_refused_naming_the_parameter(allowed, excluded, match):
    learner = nf.SquareCB(K, seed=0)
    X = np.ones((4, D))
    for call in (lambda: learner.act(X, allowed=allowed, excluded=excluded),
                 lambda: learner.action_probabilities(X, allowed=allowed, excluded=excluded),
                 lambda: learner.predict(X, allowed=allowed, excluded=excluded)):
        with pytest.raises(ValueError, match=match):
            call()


def test_sets_refuse_restrictions_and_greedy_learners_take_the_best_allowed():
    X = np.ones((2, D))
    for learner in (nf.MCDBF(K, m=2, seed=0), nf.SquareCB(K, m=2, seed=0)):
        with pytest.raises(ValueError, match="proposes sets"):
            learner.act(X, allowed=[0, 1, 2])
    p = nf.Perceptron(K).learn(X, feedback=np.array([3, 3]))
    a, pr = p.act(X, excluded=[3])
    assert (a != 3).all() and (pr == 1).all()
    np.testing.assert_array_equal(p.action_probabilities(X, excluded=[3]).sum(axis=1), [1, 1])


def test_restricted_draw_with_no_mass_on_the_allowed_labels_is_uniform_over_them():
    a, pr, q = restricted_draw(np.array([1.0, 0, 0, 0]), np.array([2, 3]), 0.7)
    assert a == 3 and pr == 0.5 and q.tolist() == [0, 0, 0.5, 0.5]
    assert action_mask(None, None, 3, 4) is None
