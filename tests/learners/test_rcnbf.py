"""RCNBF (Agarwal & Manwani 2021): unbiasedness, reduction to Banditron, robustness to noise."""

import numpy as np
import pytest
from conftest import JIT_DISABLED
from tolerances import EXACT_ATOL, EXACT_RTOL

import noisyfeedback as nf
from noisyfeedback.kernels.bandit import RULE_BANDITRON, bandit_learn
from noisyfeedback.learners._linear import kernel_view

SETTINGS = [(0.0, 0.0), (0.15, 0.15), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2), (0.0, 0.7), (0.6, 0.1)]


@pytest.mark.parametrize("rho0,rho1", SETTINGS)
def test_h_is_unbiased_in_closed_form(rho0, rho1):
    h0, h1 = nf.RCNBF(3, rho0=rho0, rho1=rho1)._h()
    # E[h(f̃) | f=1] = (1-ρ1)·h(1) + ρ1·h(0) = 1 ;  E[h(f̃) | f=0] = ρ0·h(1) + (1-ρ0)·h(0) = 0
    assert (1 - rho1) * h1 + rho1 * h0 == pytest.approx(1.0, rel=EXACT_RTOL, abs=EXACT_ATOL)
    assert rho0 * h1 + (1 - rho0) * h0 == pytest.approx(0.0, rel=EXACT_RTOL, abs=EXACT_ATOL)
    assert h1 == pytest.approx((1 - rho0) / (1 - rho0 - rho1)) and h0 == pytest.approx(-rho0 / (1 - rho0 - rho1))


@pytest.mark.parametrize("trial", range(20))
def test_expected_update_equals_perceptron_update_by_enumeration(trial):
    rng = np.random.default_rng(trial)
    K = int(rng.integers(2, 7))
    d = int(rng.integers(1, 6))
    W = rng.normal(size=(K, d))
    x = rng.normal(size=d)
    y = int(rng.integers(K))
    gamma = float(rng.uniform(0.01, 0.99))
    rho0 = float(rng.uniform(0, 0.5))
    rho1 = float(rng.uniform(0, 0.99 - rho0))
    h0, h1 = nf.RCNBF(K, gamma=gamma, rho0=rho0, rho1=rho1)._h()
    yhat = int(np.argmax(W @ x))
    P = np.full(K, gamma / K)
    P[yhat] += 1 - gamma
    expected = np.zeros_like(W)
    for a in range(K):  # every action ỹ ...
        f = int(a == y)
        for ft in (0, 1):  # ... and every observed feedback f̃
            p_ft = (1 - rho1 if ft else rho1) if f else (rho0 if ft else 1 - rho0)
            Wn = W.copy()
            bandit_learn(RULE_BANDITRON, Wn, *kernel_view(x[None]), np.array([a]), np.array([ft]), P[a:a + 1], h0, h1,
                         np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0))
            expected += P[a] * p_ft * (Wn - W)
    U = np.zeros_like(W)
    U[y] += x
    U[yhat] -= x
    np.testing.assert_allclose(expected, U, rtol=EXACT_RTOL, atol=1e-10)


def test_rcnbf_with_zero_noise_is_banditron_bit_for_bit():
    X, y = nf.datasets.synsep(n_samples=5000, seed=3)
    n = 2_000 if JIT_DISABLED else 50_000
    ch = nf.feedback.NoisyBandit(0, 0)
    b, r = nf.Banditron(9, gamma=0.07, seed=4), nf.RCNBF(9, gamma=0.07, rho0=0.0, rho1=0.0, seed=4)
    tb = nf.simulate(b, X, y, ch, n_rounds=n, seed=2)
    tr = nf.simulate(r, X, y, ch, n_rounds=n, seed=2)
    assert tb.mistakes == tr.mistakes
    np.testing.assert_array_equal(tb.curve, tr.curve)
    np.testing.assert_array_equal(b.W_, r.W_)
    assert r._h() == (0.0, 1.0)  # exactly, not approximately


@pytest.mark.skipif(JIT_DISABLED, reason="needs many rounds")
def test_rcnbf_beats_banditron_under_noise_on_synsep():
    """Acceptance: NoisyBandit(0.2, 0.4), same γ grid, best γ each, 3 seeds.

    At 200k rounds RCNBF is near 0.11 and Banditron near 0.50 (measured); the
    margin asserted (RCNBF below 0.6 x Banditron on every seed) cannot pass by chance.
    """
    X, y = nf.datasets.synsep(n_samples=20_000, seed=3)
    ch = nf.feedback.NoisyBandit(0.2, 0.4)
    grid = [0.02, 0.05, 0.1]
    for seed in range(3):
        best_b = min(nf.simulate(nf.Banditron(9, gamma=g, seed=seed), X, y, ch, 200_000, seed=seed).error_rate
                     for g in grid)
        best_r = min(nf.simulate(nf.RCNBF(9, gamma=g, rho0=0.2, rho1=0.4, seed=seed), X, y, ch, 200_000,
                                 seed=seed).error_rate for g in grid)
        assert best_r < 0.6 * best_b, (seed, best_r, best_b)
        assert best_r < 0.25


def test_rcnbf_rejects_rates_summing_to_one():
    X, y = nf.datasets.synsep(n_samples=50, seed=0)
    with pytest.raises(ValueError, match="rho0 \\+ rho1 < 1"):
        nf.simulate(nf.RCNBF(9, rho0=0.5, rho1=0.5), X, y, nf.feedback.NoisyBandit(0.2, 0.2), n_rounds=10)
