"""Feedback channels: the rates they promise, the draws they consume, the inputs they refuse."""

import numpy as np
import pytest

import noisyfeedback as nf
from noisyfeedback.feedback import ConfusionNoise, Diluted, FullLabel, GaussianNoise, NoisyBandit

N = 200_000


def _se(p, n=N):
    return np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("rho0,rho1", [(0.0, 0.0), (0.2, 0.4), (0.4, 0.2), (0.15, 0.15)])
def test_noisy_bandit_flip_rates(rho0, rho1):
    rng = np.random.default_rng(0)
    y = np.zeros(N, dtype=np.int64)
    right = NoisyBandit(rho0, rho1).respond(y, np.zeros(N, np.int64), rng)
    wrong = NoisyBandit(rho0, rho1).respond(y, np.ones(N, np.int64), rng)
    # P(f̃=0 | f=1) = rho1, P(f̃=1 | f=0) = rho0, within 5 standard errors
    assert abs((1 - right.mean()) - rho1) <= 5 * _se(rho1) + 1e-12
    assert abs(wrong.mean() - rho0) <= 5 * _se(rho0) + 1e-12


@pytest.mark.parametrize(
    "channel,actions",
    [
        (NoisyBandit(0.1, 0.2), lambda n: np.zeros(n, np.int64)),
        (Diluted(2, 0.1, 0.1), lambda n: np.tile([0, 1], (n, 1))),
        (ConfusionNoise(np.full((3, 3), 1 / 3)), lambda n: None),
    ],
)
def test_channels_draw_exactly_draws_per_round_uniforms(channel, actions):
    n = 17
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    channel.respond(np.zeros(n, np.int64), actions(n), a)
    b.random(n * channel.draws_per_round(3))
    assert a.bit_generator.state == b.bit_generator.state


def test_full_label_is_the_label():
    y = np.array([2, 0, 1])
    np.testing.assert_array_equal(FullLabel().respond(y), y)
    assert FullLabel().draws_per_round(3) == 0


def test_diluted_says_whether_label_is_in_the_set():
    y = np.array([0, 1, 2, 3])
    sets = np.array([[0, 1], [0, 2], [3, 2], [1, 2]])
    np.testing.assert_array_equal(Diluted(2).respond(y, sets, np.random.default_rng(0)), [1, 0, 1, 0])
    with pytest.raises(ValueError, match="shape"):
        Diluted(3).respond(y, sets, np.random.default_rng(0))


def test_confusion_noise_frequencies():
    C = np.array([[0.7, 0.1, 0.0], [0.2, 0.8, 0.3], [0.1, 0.1, 0.7]])
    rng = np.random.default_rng(1)
    for q in range(3):
        noisy = ConfusionNoise(C).respond(np.full(N, q), None, rng)
        freq = np.bincount(noisy, minlength=3) / N
        assert np.all(np.abs(freq - C[:, q]) <= 5 * _se(C[:, q]) + 1e-12)


def test_gaussian_noise_variance_forms():
    rng = np.random.default_rng(2)
    y = np.zeros(N)
    assert abs(GaussianNoise(0.5).respond(y, rng=rng).var() - 0.5) < 0.01
    v = np.linspace(0, 2, N)
    out = GaussianNoise(v).respond(y, rng=rng)
    assert abs(out[: N // 10].var() - v[: N // 10].mean()) < 0.01
    out = GaussianNoise(lambda t: np.where(t < N // 2, 0.0, 1.0)).respond(y, rng=rng)
    assert out[: N // 2].var() == 0.0 and abs(out[N // 2:].var() - 1.0) < 0.02
    k = GaussianNoise(1.0).respond(np.zeros(5), rng=rng, n_samples=3)
    assert k.shape == (5, 3)
    with pytest.raises(ValueError, match="rounds"):
        GaussianNoise(np.ones(3)).respond(np.zeros(5), rng=rng)


@pytest.mark.parametrize(
    "build,exc,words",
    [
        (lambda: NoisyBandit(1.5, 0), ValueError, "'rho0' parameter of NoisyBandit must be in \\[0, 1\\). Got 1.5"),
        (lambda: NoisyBandit(0.5, 0.5), ValueError, "rho0 \\+ rho1 < 1"),
        (lambda: NoisyBandit("0.1", 0), TypeError, "rho0"),
        (lambda: Diluted(0), ValueError, "'m' parameter"),
        (lambda: Diluted(2, 0.6, 0.6), ValueError, "rho0 \\+ rho1"),
        (lambda: ConfusionNoise(np.eye(3)[:2]), ValueError, "square"),
        (lambda: ConfusionNoise([[0.5, 0.5], [0.4, 0.5]]), ValueError, "column 0 sums"),
        (lambda: ConfusionNoise([[1.2, 0.0], [-0.2, 1.0]]), ValueError, ">= 0"),
        (lambda: GaussianNoise(-1.0), ValueError, "variance"),
        (lambda: GaussianNoise([1.0, np.nan]), ValueError, "variance"),
    ],
)
def test_channels_reject_bad_parameters(build, exc, words):
    with pytest.raises(exc, match=words):
        build()


def test_channel_repr_and_equality():
    assert repr(NoisyBandit(0.2, 0.4)) == "NoisyBandit(rho0=0.2, rho1=0.4)"
    assert NoisyBandit(0.2, 0.4) == NoisyBandit(0.2, 0.4) != NoisyBandit(0.2, 0.3)
    assert ConfusionNoise(np.eye(2)) == ConfusionNoise(np.eye(2))


def test_confusion_noise_class_count_must_match_learner():
    X, y = nf.datasets.synsep(n_samples=50, seed=0)
    with pytest.raises(ValueError, match="classes"):
        nf.simulate(nf.Perceptron(9), X, y, ConfusionNoise(np.eye(3)), n_rounds=10)
