"""Inputs at the edge of floating point and of the shapes, each refused with a message that says what to do
or handled to a finite answer (never a silent 0, NaN or an infinite interval)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback.datasets.ranking import ranking_stream
from noisyfeedback.learners.catalogue import CatalogueSquareCB
from noisyfeedback.ope import evaluate, evaluate_candidates
from noisyfeedback.ope.slates import pseudoinverse, sequential_slate_moments


# ------------------------------------------------------------------ WeightedRLS
def test_wrls_refuses_weights_whose_variance_overflows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    with pytest.raises(ValueError, match=r"row 0 has 1e-320.*read as weight 0"):
        nf.WeightedRLS().fit(X, y, sample_weight=np.full(40, 1e-320))
    sw = np.ones(40)
    sw[7] = 1e-320
    with pytest.raises(ValueError, match="row 7"):
        nf.WeightedRLS().fit(X, y, sample_weight=sw)
    # zero weights are still allowed (variance inf: the row is skipped), and normal weights still fit
    sw[7] = 0.0
    m = nf.WeightedRLS(lam=1e-6).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(m.predict(X[:3]), y[:3], atol=1e-4)


# ------------------------------------------------------------------ evaluate_candidates
def test_candidates_refuse_an_empty_log():
    with pytest.raises(ValueError, match="at least one logged round"):
        evaluate_candidates(np.array([0]), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), "ips")


@pytest.mark.parametrize("interval", ["normal", "bootstrap"])
def test_a_huge_but_finite_weight_gives_a_finite_interval(interval):
    offsets = np.array([0, 2, 4, 6])
    target = np.array([1.0, 0.0] * 3)
    est = evaluate_candidates(offsets, [0, 0, 0], [1e-300, 0.5, 0.5], [1.0, 1.0, 0.0], target, "ips",
                              interval=interval, seed=0)
    assert est.value == pytest.approx((1e300 + 2.0) / 3)
    assert math.isfinite(est.lower) and math.isfinite(est.upper) and est.lower <= est.value <= est.upper
    # and through nf.ope.evaluate (normal and Bernstein intervals used to square the terms into inf)
    for kind in ("normal", "bernstein"):
        e = evaluate(np.tile([1.0, 0.0], (3, 1)), None, [0, 0, 0], [1.0, 1.0, 0.0], [1e-300, 0.5, 0.5], "ips",
                     interval=kind)
        assert math.isfinite(e.lower) and math.isfinite(e.upper) and e.lower < e.value < e.upper


def test_candidates_refuse_an_infinite_weight():
    with pytest.raises(ValueError, match=r"round 1 has propensity 5e-324"):
        evaluate_candidates(np.array([0, 2, 4]), [0, 1], [0.5, 5e-324], [1.0, 1.0], np.array([0.5] * 4), "ips")


def test_pseudoinverse_refuses_a_logged_slate_outside_gamma():
    offsets = np.array([0, 3, 6])
    slates = np.array([[0, 1], [2, 0]])
    P = np.full((6, 2), 1 / 3)
    marg, gammas = sequential_slate_moments(offsets, np.full(6, 1 / 3), 2)
    ok = pseudoinverse(offsets, slates, np.ones((2, 2)), P, logging_gamma=gammas)
    assert math.isfinite(ok.value) and ok.value > 0
    with pytest.raises(ValueError, match="round 1's logged slate has probability 0"):
        pseudoinverse(offsets, slates, np.ones((2, 2)), P, logging_gamma=[gammas[0], np.zeros((6, 6))])


def test_sequential_slate_moments_refuses_before_allocating():
    with pytest.raises(ValueError, match=r"100 candidates has 6.28e\+19 ordered slates"):
        sequential_slate_moments(np.array([0, 100]), np.full(100, 0.01), 10)
    marg, _ = sequential_slate_moments(np.array([0, 4]), np.full(4, 0.25), 2)
    np.testing.assert_allclose(marg, 0.25)


# ------------------------------------------------------------------ Trace equality
def test_traces_compare_parameter_values_not_their_spelling():
    X, y = nf.datasets.load("digits", normalize=True)
    ch = nf.feedback.NoisyBandit(0.1, 0.2)
    run = lambda learner, c=ch: nf.simulate(learner, X, y, c, n_rounds=300, seed=1)  # noqa: E731
    a = run(nf.SquareCB(10, gamma_scale=100, seed=0))
    b = run(nf.SquareCB(10, gamma_scale=100.0, seed=0))
    assert a.learner != b.learner and a == b  # differently spelled, bit-identical runs
    assert a != run(nf.SquareCB(10, gamma_scale=101.0, seed=0))
    assert a != run(nf.SquareCB(10, gamma_scale=100, seed=0), nf.feedback.NoisyBandit(0.1, 0.25))
    c = run(nf.SquareCB(10, rho0=np.array([0.1] * 10), seed=0))
    assert c == run(nf.SquareCB(10, rho0=[0.1] * 10, seed=0))


# ------------------------------------------------------------------ parameter messages
def test_an_object_array_of_rates_gets_the_standard_message():
    X = np.random.default_rng(0).normal(size=(5, 3))
    with pytest.raises(ValueError, match=r"The 'rho0' parameter of SquareCB must be .* Got array\("):
        nf.SquareCB(3, rho0=np.array([0.1, 0.2, 0.1], dtype=object)).act(X)


def test_the_slot_shape_message_names_the_accepted_shapes():
    stream = ranking_stream(n_rounds=4, context_dim=3, item_dim=2, n_candidates=5, seed=0)
    L = CatalogueSquareCB(n_slots=3, seed=0)
    with pytest.raises(ValueError, match=r"must have shape \(4, 3\) \(one candidate a slot\) or \(12,\) "
                                         r"\(n_slots=3\); got \(4,\)"):
        L.fit_logged(stream.rounds, np.zeros(4, np.int64), np.zeros((4, 3), np.int64), np.full((4, 3), 0.5))


# ------------------------------------------------------------------ catalogue channels
def test_a_catalogue_simulation_refuses_per_action_rates():
    stream = ranking_stream(n_rounds=30, context_dim=3, item_dim=2, n_candidates=4, seed=0)
    with pytest.raises(ValueError, match="per-action rates have no action"):
        nf.simulate(CatalogueSquareCB(seed=0), stream, None, nf.feedback.NoisyBandit([0.1, 0.3], [0.2, 0.2]),
                    n_rounds=10)
    # equal per-action rates are the scalar rates
    a = nf.simulate(CatalogueSquareCB(seed=0), stream, None, nf.feedback.NoisyBandit([0.1, 0.1], [0.2, 0.2]),
                    n_rounds=50, seed=3)
    b = nf.simulate(CatalogueSquareCB(seed=0), stream, None, nf.feedback.NoisyBandit(0.1, 0.2), n_rounds=50, seed=3)
    assert a.metrics["regret_rate"] == b.metrics["regret_rate"]
