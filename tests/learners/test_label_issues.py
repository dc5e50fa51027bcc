"""nf.find_label_issues and CorrectedLogisticRegression(prune=True).

The score of a row is the Bayes posterior of a flip, P(y ≠ ỹ | x, ỹ) = 1 − C[ỹ, ỹ] p_ỹ(x) / Σ_j C[ỹ, j] p_j(x);
on a problem with KNOWN clean posteriors the score must equal that posterior (checked by a twin written from the
joint P(y, ỹ | x) and by the empirical flip frequency of each (x, ỹ) cell), and the number of rows flagged must
be the number of flips C implies.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_digits

import noisyfeedback as nf
from noisyfeedback.learners.label_noise import estimate_label_confusion
from noisyfeedback.noise.label_issues import clean_prior, em_step, expected_flips, flip_posterior

# an asymmetric C (columns = true class): transposing it changes the posteriors by far more than the tolerance
C3 = np.array([[0.70, 0.05, 0.30],
               [0.10, 0.90, 0.00],
               [0.20, 0.05, 0.70]])


def _cells(n: int, seed: int, C=C3, M: int = 5):
    """Rows in M cells (one-hot features); cell c has known clean posterior P[c]; labels flipped by C."""
    rng = np.random.default_rng(seed)
    K = C.shape[0]
    P = rng.dirichlet(np.full(K, 0.7), size=M)
    cell = rng.integers(0, M, n)
    u = rng.random(n)
    y = (u[:, None] > np.cumsum(P[cell], axis=1)).sum(axis=1)
    v = rng.random(n)
    yn = (v[:, None] > np.cumsum(C[:, y].T, axis=1)).sum(axis=1)
    X = np.eye(M)[cell]
    return X, y, np.minimum(yn, K - 1), cell, P


def _posterior_twin(p: np.ndarray, r: int, C: np.ndarray) -> float:
    """P(y ≠ r | x, ỹ = r) from the joint P(y = q, ỹ = r | x) = p_q C[r, q], one cell at a time."""
    joint = [p[q] * C[r, q] for q in range(C.shape[0])]
    return sum(j for q, j in enumerate(joint) if q != r) / sum(joint)


def test_score_is_the_bayes_posterior_of_a_flip():
    X, y, yn, cell, P = _cells(200_000, 0)
    idx, s = nf.find_label_issues(X, yn, C3, proba=P[cell], return_scores=True)
    assert s.shape == (yn.size,)
    twin = np.array([_posterior_twin(P[c], r, C3) for c, r in zip(cell[:500], yn[:500])])
    np.testing.assert_allclose(s[:500], twin, rtol=0, atol=1e-12)
    # the empirical flip frequency of every (cell, noisy label) group is the score (s.e. < 0.01 here)
    flipped = yn != y
    wrong_C = flip_posterior(P[cell], yn, C3.T / C3.T.sum(axis=0))  # a transposed-C formula
    gaps, wrong_gaps = [], []
    for c in range(P.shape[0]):
        for r in range(3):
            g = (cell == c) & (yn == r)
            if g.sum() < 2000:
                continue
            gaps.append(abs(flipped[g].mean() - s[g][0]))
            wrong_gaps.append(abs(flipped[g].mean() - wrong_C[g][0]))
    assert len(gaps) >= 8
    assert max(gaps) < 0.025
    assert max(wrong_gaps) > 0.05  # the check has the power to catch the transposed formula


def test_flagged_count_is_the_expected_number_of_flips():
    X, y, yn, cell, P = _cells(100_000, 1)
    idx = nf.find_label_issues(X, yn, C3, proba=P[cell])
    pi_true = np.bincount(y, minlength=3) / y.size
    m_true = y.size * pi_true @ (1 - np.diag(C3))
    assert len(idx) == round(expected_flips(yn, C3))
    assert abs(len(idx) - m_true) < 0.01 * y.size                       # π = C⁻¹ν recovers the clean prior
    np.testing.assert_allclose(clean_prior(yn, C3), pi_true, atol=0.01)
    assert abs(len(idx) - (yn != y).sum()) < 4 * np.sqrt(y.size * 0.25)  # and the realised number of flips
    # symmetric noise: m = nρ whatever the prior
    Cs = np.full((3, 3), 0.1)
    np.fill_diagonal(Cs, 0.8)
    X, y, yn, cell, P = _cells(20_000, 2, Cs)
    assert len(nf.find_label_issues(X, yn, Cs, proba=P[cell])) == round(0.2 * yn.size)


def test_indices_are_ranked_and_are_the_top_scores():
    X, y, yn, cell, P = _cells(5_000, 3)
    idx, s = nf.find_label_issues(X, yn, C3, proba=P[cell], return_scores=True)
    assert np.all(np.diff(s[idx]) <= 0)
    assert s[idx].min() >= np.delete(s, idx).max()
    post = nf.find_label_issues(X, yn, C3, proba=P[cell], filter_by="posterior", threshold=0.3)
    np.testing.assert_array_equal(np.sort(post), np.flatnonzero(s > 0.3))
    per = nf.find_label_issues(X, yn, C3, proba=P[cell], filter_by="per_label")
    pi = clean_prior(yn, C3)
    for r in range(3):
        m_r = yn.size * sum(C3[r, q] * pi[q] for q in range(3) if q != r)
        assert abs((yn[per] == r).sum() - round(m_r)) <= 0
    f1 = nf.find_label_issues(X, yn, C3, proba=P[cell], filter_by="f1")
    assert 0 < len(f1) < yn.size


class _NoisyOracle(ClassifierMixin, BaseEstimator):
    """A noise-unaware 'classifier' returning the exact noisy posterior η = C p of each cell."""

    def __init__(self, P=None, C=None):
        self.P = P
        self.C = C

    def fit(self, X, y):
        self.classes_ = np.arange(self.C.shape[0])
        return self

    def predict_proba(self, X):
        return (self.C @ self.P[np.argmax(X, axis=1)].T).T


def test_a_noise_unaware_estimator_is_inverted_through_C():
    X, y, yn, cell, P = _cells(3_000, 4)
    s_ref = nf.find_label_issues(X, yn, C3, proba=P[cell], return_scores=True)[1]
    s = nf.find_label_issues(X, yn, C3, estimator=_NoisyOracle(P, C3), return_scores=True, seed=0)[1]
    np.testing.assert_allclose(s, s_ref, atol=1e-10)


def test_em_step_is_a_fixed_point_at_the_truth_in_expectation():
    X, y, yn, cell, P = _cells(200_000, 5)
    C1 = em_step(C3, P[cell], yn)
    assert np.abs(C1 - C3).max() < 0.015
    np.testing.assert_allclose(C1.sum(axis=0), 1.0)


def _digits_noisy(rho=0.3, seed=0):
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    C = np.eye(10) * (1 - rho)
    for q in range(10):
        C[(q + 1) % 10, q] = rho
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng(seed))
    return X, y, yn, C


def _f1(idx, flipped):
    tp = flipped[idx].sum()
    p, r = tp / max(len(idx), 1), tp / flipped.sum()
    return 2 * p * r / (p + r)


def test_digits_pair_noise_finds_the_flips_known_and_estimated_C():
    X, y, yn, C = _digits_noisy()
    flipped = yn != y
    idx = nf.find_label_issues(X, yn, C, seed=0)
    assert _f1(idx, flipped) > 0.9
    Chat = estimate_label_confusion(X, yn, seed=0)
    assert np.abs(Chat - C).max() < 0.15
    idx_est = nf.find_label_issues(X, yn, Chat, seed=0)
    assert _f1(idx_est, flipped) > 0.85
    # a shuffled C (wrong noise model) must do worse than the right one
    wrong = np.eye(10) * 0.7 + np.roll(np.eye(10), 3, axis=0) * 0.3
    assert _f1(nf.find_label_issues(X, yn, wrong, seed=0), flipped) < _f1(idx, flipped) - 0.3


def test_prune_drops_the_flagged_rows_and_refits_on_the_rest():
    X, y, yn, C = _digits_noisy(seed=1)
    m = nf.CorrectedLogisticRegression(confusion=C, prune=True, seed=0, C=0.3).fit(X, yn)
    flipped = yn != y
    assert len(m.label_issues_) == round(expected_flips(yn, C))
    assert flipped[m.label_issues_].mean() > 0.9
    kept = np.setdiff1d(np.arange(yn.size), m.label_issues_)
    ref = nf.CorrectedLogisticRegression(confusion=m.pruned_confusion_, C=0.3).fit(X[kept], yn[kept])
    np.testing.assert_allclose(m.coef_, ref.coef_, atol=1e-10)
    assert np.abs(m.pruned_confusion_ - np.eye(10)).max() < 0.1   # the kept rows are nearly clean
    np.testing.assert_allclose(m.confusion_, C)
    plain = nf.CorrectedLogisticRegression(confusion=C, seed=0, C=0.3).fit(X, yn)
    assert not hasattr(plain, "label_issues_")


@pytest.mark.parametrize("kw, exc, msg", [
    ({"filter_by": "both"}, ValueError, "filter_by"),
    ({"threshold": 1.0}, ValueError, "threshold"),
    ({"n_folds": 1}, ValueError, "n_folds"),
    ({"confusion": np.eye(4)}, ValueError, "4 x 4"),
    ({"confusion": np.full((3, 3), 0.5)}, ValueError, "sum"),
    ({"confusion": "guess"}, ValueError, "estimate"),
    ({"estimator": object()}, TypeError, "predict_proba"),
    ({"proba": np.ones((7, 3))}, ValueError, "proba"),
    ({"return_scores": "yes"}, TypeError, "return_scores"),
])
def test_bad_arguments_are_refused(kw, exc, msg):
    X, y, yn, cell, P = _cells(300, 6)
    args = {"confusion": C3, "proba": P[cell]}
    args.update(kw)
    with pytest.raises(exc, match=msg):
        nf.find_label_issues(X, yn, **args)


def test_prune_is_validated():
    with pytest.raises(ValueError, match="prune"):
        nf.CorrectedLogisticRegression(prune="yes").fit(np.eye(4), [0, 1, 0, 1])


# ------------------------------------------------------------------ the default pipeline
def _digits_rows_unit_norm(kind="pair", rho=0.4, seed=0):
    from sklearn.preprocessing import normalize

    X, y = load_digits(return_X_y=True)
    C = (nf.feedback.pair_confusion if kind == "pair" else nf.feedback.symmetric_confusion)(10, rho)
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng([31, seed, 1]))
    return normalize(X.astype(float)), y, yn, C


def test_defaults_are_deterministic_and_scale_free():
    """seed=0 by default: two calls agree; the features are standardised inside, so rescaling the columns
    changes nothing that matters (the rows here are scaled to unit norm, where the old default lost)."""
    X, y, yn, C = _digits_rows_unit_norm("symmetric", 0.2)
    a = nf.find_label_issues(X, yn)
    assert _f1(a, yn != y) > 0.88  # the old default (no scaling, C_reg = 1): 0.76 here
    b = nf.find_label_issues(X * np.logspace(-3, 3, X.shape[1]), yn)  # wildly different column scales
    assert len(np.intersect1d(a, b)) >= 0.98 * len(a)
    np.testing.assert_array_equal(nf.find_label_issues(X[:300], yn[:300]), nf.find_label_issues(X[:300], yn[:300]))


def test_auto_keeps_the_estimate_of_least_held_out_noisy_log_loss():
    from noisyfeedback.learners.label_noise.label_issues import _default_pipeline
    from noisyfeedback.noise.label_issues import flag_issues

    X, y, yn, C = _digits_rows_unit_norm("pair", 0.4)
    fit = _default_pipeline(X, yn, 10, 5, 0, None, "auto")
    assert set(fit["losses"]) == {"corrected", "confident_joint"}
    assert fit["method"] == min(fit["losses"], key=fit["losses"].get) == "corrected"
    flipped = yn != y
    f1 = {k: _f1(flag_issues(flip_posterior(P, yn, Ch), yn, Ch, "expected_flips", 0.5), flipped)
          for k, (Ch, P) in fit["candidates"].items()}
    assert f1["corrected"] > 0.9 and f1["corrected"] > f1["confident_joint"] + 0.1  # CJ misreads pair noise
    auto = nf.find_label_issues(X, yn)
    assert _f1(auto, flipped) == f1["corrected"]
    with pytest.raises(ValueError, match="'method' parameter of find_label_issues"):
        nf.find_label_issues(X, yn, method="both")


# ---------------------------------------------------------------- temperature before the EM step
def test_temperature_scale_keeps_the_ranking_and_is_the_identity_at_one():
    from noisyfeedback.noise.label_issues import temperature_scale

    P = np.random.default_rng(0).dirichlet(np.ones(4), size=50)
    np.testing.assert_allclose(temperature_scale(P, 1.0), P, atol=1e-12)
    sharp, flat = temperature_scale(P, 0.5), temperature_scale(P, 2.0)
    np.testing.assert_allclose(sharp.sum(axis=1), 1.0)
    assert (np.argsort(sharp, axis=1) == np.argsort(P, axis=1)).all()
    assert (sharp.max(axis=1) >= P.max(axis=1) - 1e-12).all() and (flat.max(axis=1) <= P.max(axis=1) + 1e-12).all()
    # p^(1/T) normalised: T = 0.5 squares the odds
    np.testing.assert_allclose(sharp[:, 0] / sharp[:, 1], (P[:, 0] / P[:, 1]) ** 2, rtol=1e-9)


def test_fit_temperature_undoes_a_flattening_and_restores_the_em_count():
    """Clean posteriors p*, labels drawn from them and flipped by C; the model's probabilities are p* flattened
    at T = 2. Fitted on the noisy labels through C, the temperature is about 1/2, and the EM step's count of
    flips from the re-sharpened probabilities is near the true one where the flat ones count too few."""
    from noisyfeedback.noise.label_issues import fit_temperature, temperature_scale

    rng = np.random.default_rng(5)
    n, K = 40_000, 3
    logits = rng.normal(scale=2.5, size=(n, K))
    p_true = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (p_true.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)
    yn = (C3[:, y].T.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)
    flat = temperature_scale(p_true, 2.0)
    T = fit_temperature(C3, flat, yn)
    assert abs(T - 0.5) < 0.05, T
    flips_true = float(n * (clean_prior(yn, C3) @ (1 - np.diag(C3))))

    def em_flips(P):
        C_em = em_step(C3, P, yn)
        return float(n * (clean_prior(yn, C_em) @ (1 - np.diag(C_em))))

    assert abs(em_flips(temperature_scale(flat, T)) - flips_true) < 0.03 * flips_true
    assert em_flips(flat) < 0.9 * flips_true
