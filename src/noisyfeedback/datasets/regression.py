"""Seeded regression data of Moroshko & Crammer: the synthetic linear task, channel
equalization, and a public-domain substitute for the paper's speech-dereverberation recording.

Every function returns ``(X, y)``: X float64 (n_samples, d) C-contiguous, y float64 (n_samples,)
CLEAN targets (the label noise of the experiments is added by ``nf.feedback.GaussianNoise``).
"""

from __future__ import annotations

import numpy as np

from .._validation import AnySeed, Integer, Interval, OneOf, Options, check_param
from ..base import make_rng

__all__ = ["ors_synthetic", "channel_equalization", "speech_substitute", "hammer_variance", "sinc_channel",
           "tapped_delay_line"]


def ors_synthetic(n_samples: int = 50_000, n_features: int = 20, noise_var: float = 0.01,
                  seed: int | np.random.SeedSequence | None = 0, return_coef: bool = False):
    """The paper's synthetic regression task (Section 4.1).

    x_t ~ N(0, I_d), a fixed target u ~ N(0, I_d), y_t = x_t·u + n_t with n_t ~ N(0, noise_var)
    (the paper: n = 50,000, d = 20, noise_var = 0.01). ``return_coef=True`` also returns u.

    >>> X, y = ors_synthetic(n_samples=3, seed=0)
    >>> X.shape, y.shape, y.dtype.name
    ((3, 20), (3,), 'float64')
    """
    check_param("n_samples", n_samples, Integer(1), "ors_synthetic")
    check_param("n_features", n_features, Integer(1), "ors_synthetic")
    check_param("noise_var", noise_var, Interval(0, None), "ors_synthetic")
    check_param("seed", seed, AnySeed(), "ors_synthetic")
    rng = make_rng(seed)
    u = rng.standard_normal(n_features)
    X = rng.standard_normal((n_samples, n_features))
    y = X @ u + np.sqrt(noise_var) * rng.standard_normal(n_samples)
    return (X, y, u) if return_coef else (X, y)


def sinc_channel() -> np.ndarray:
    """The paper's band-limited channel h(t) = sinc(t), t = 0, 0.5, …, 4.5 (10 taps, sinc(t) = sin πt/πt).

    It is minimum phase (all zeros of H(z) inside the unit circle, |z| ≤ 0.82), so a causal
    equalizer can estimate s(t) itself: delay 0 is the best delay (Wiener MMSE with 20 taps and
    noise 4e-4: 6.8e-4 at delay 0, 8.3e-4 at 5, 4.3e-3 at 10, 1.8e-2 at 16).
    """
    return np.sinc(np.arange(10) * 0.5)


def tapped_delay_line(x: np.ndarray, n_taps: int, start: int, n_rows: int) -> np.ndarray:
    """Rows [x(τ), x(τ−1), …, x(τ−n_taps+1)] for τ = start, …, start + n_rows − 1 (C-contiguous copy)."""
    view = np.lib.stride_tricks.sliding_window_view(x, n_taps)[start - n_taps + 1:start - n_taps + 1 + n_rows]
    return np.ascontiguousarray(view[:, ::-1])


def _convolved(s: np.ndarray, h: np.ndarray, noise_var: float, rng) -> np.ndarray:
    x = np.convolve(s, h)[: s.shape[0]]
    if noise_var > 0:
        x = x + np.sqrt(noise_var) * rng.standard_normal(s.shape[0])
    return x


def channel_equalization(n_samples: int = 50_000, n_taps: int = 20, delay: int = 0, noise_var: float = 4e-4,
                         seed: int | np.random.SeedSequence | None = 0):
    """Channel equalization (Section 4.1, Figure 3): recover s(t) from the channel's noisy output.

    Symbols s(t) ~ N(0, 1) pass through h = `sinc_channel` (10 taps) and get
    n(t) ~ N(0, noise_var) added: x(t) = (h∗s)(t) + n(t). Row t holds the ``n_taps`` = 20
    consecutive received samples [x(t), x(t−1), …, x(t−19)] and its target is the transmitted
    s(t − delay). The paper does not state a delay; it asks for "a good estimate of the
    transmitted signal s(t)", and as the channel is minimum phase delay 0 is also the
    MMSE-best choice (see `sinc_channel`). Every row has a full history (the first
    samples of the convolution are generated and dropped).

    >>> X, y = channel_equalization(n_samples=4, seed=0)
    >>> X.shape, bool(np.array_equal(X[1, 1:], X[0, :-1]))
    ((4, 20), True)
    """
    check_param("n_samples", n_samples, Integer(1), "channel_equalization")
    check_param("n_taps", n_taps, Integer(1), "channel_equalization")
    check_param("delay", delay, Integer(0), "channel_equalization")
    check_param("noise_var", noise_var, Interval(0, None), "channel_equalization")
    check_param("seed", seed, AnySeed(), "channel_equalization")
    rng = make_rng(seed)
    h = sinc_channel()
    warm = n_taps - 1 + h.shape[0] - 1 + delay
    s = rng.standard_normal(n_samples + warm)
    x = _convolved(s, h, noise_var, rng)
    X = tapped_delay_line(x, n_taps, warm, n_samples)
    y = np.ascontiguousarray(s[warm - delay: warm - delay + n_samples])
    return X, y


def _speech_like(n: int, fs: float, rng) -> np.ndarray:
    """A speech-like signal: syllables of formant-filtered pulse trains / noise with pauses, unit variance."""
    from scipy.signal import lfilter

    out = np.zeros(n + int(0.5 * fs))
    pos = int(rng.integers(0, int(0.1 * fs)))
    while pos < n:
        length = int(rng.uniform(0.12, 0.35) * fs)  # one syllable
        voiced = rng.random() < 0.8
        if voiced:
            f0 = rng.uniform(90.0, 220.0) * np.exp(0.05 * np.cumsum(rng.standard_normal(length)) / np.sqrt(length))
            phase = np.cumsum(f0 / fs)
            exc = (np.diff(np.floor(phase), prepend=0.0) > 0).astype(float) + 0.05 * rng.standard_normal(length)
        else:
            exc = rng.standard_normal(length) * 0.3
        poles = []
        for lo, hi, bw in ((300, 900, 80), (900, 2400, 110), (2400, 3400, 160)):
            f = rng.uniform(lo, hi)
            rad = np.exp(-np.pi * bw / fs)
            poles += [rad * np.exp(2j * np.pi * f / fs), rad * np.exp(-2j * np.pi * f / fs)]
        a = np.real(np.poly(poles))
        seg = lfilter([1.0], a, exc * np.sin(np.pi * np.arange(length) / length) ** 2)
        end = min(pos + length, out.shape[0])
        out[pos:end] += seg[: end - pos]
        pos += length
        if rng.random() < 0.3:  # a pause
            pos += int(rng.uniform(0.1, 0.4) * fs)
    out = out[:n]
    sd = out.std()
    return out / sd if sd > 0 else out


def _room_response(length: int, fs: float, rng) -> np.ndarray:
    """A synthetic room impulse response: direct path, sparse early reflections, exponential diffuse tail."""
    h = np.zeros(length)
    h[0] = 1.0
    for _ in range(6):  # early reflections within the first 40 ms
        k = int(rng.integers(int(0.002 * fs), min(length, int(0.04 * fs))))
        h[k] += rng.uniform(-0.5, 0.5)
    tau = length / np.log(1e3)  # -60 dB over the response length
    tail = rng.standard_normal(length) * np.exp(-np.arange(length) / tau) * 0.08
    tail[: int(0.002 * fs)] = 0.0
    return h + tail


def speech_substitute(n_samples: int = 20_000, n_taps: int = 1024, room_length: int = 1024, delay: int | None = None,
                      noise_var: float = 4e-4, fs: float = 8000.0,
                      seed: int | np.random.SeedSequence | None = 0):
    """A SUBSTITUTE for the paper's adaptive speech-filter experiment (Section 4.1, third experiment).

    The paper passes a clean speech RECORDING through "a typical room impulse response of
    length 1024" and trains a 1024-tap filter to recover the speech; neither the recording
    nor the response is public. This generator is NOT that data: the "speech" is a synthetic
    speech-like signal (syllables of 0.12–0.35 s: pitch pulse trains at 90–220 Hz or noise,
    through three random formant resonances, with a sin² envelope and random pauses; unit
    variance; ``fs`` = 8 kHz), and the room is a synthetic response of ``room_length``
    taps (direct path 1, six early reflections within 40 ms, a Gaussian diffuse tail decaying
    60 dB over the response). x(t) = (h∗s)(t) + N(0, noise_var); row t holds
    [x(t), …, x(t − n_taps + 1)] and its target is s(t − delay). The paper states no delay;
    a room response is not minimum phase (this one has zeros just outside the unit circle), so
    a causal filter needs one: the default ``delay=None`` is ``n_taps // 2`` (clean-label NLMS,
    20k rounds, r = 100: MSE over the last 20 % 0.54 at delay 0, 0.12 at 256, 0.08 at 512).
    Numbers measured on this data are not the paper's numbers; only the qualitative
    comparison (scaling vs none) carries over.

    Memory: X has n_samples × n_taps float64 entries (164 MB at the defaults).

    >>> X, y = speech_substitute(n_samples=10, n_taps=16, room_length=32, seed=0)
    >>> X.shape, y.shape
    ((10, 16), (10,))
    """
    check_param("n_samples", n_samples, Integer(1), "speech_substitute")
    check_param("n_taps", n_taps, Integer(1), "speech_substitute")
    check_param("room_length", room_length, Integer(1), "speech_substitute")
    check_param("delay", delay, OneOf((Options((None,)), Integer(0))), "speech_substitute")
    check_param("noise_var", noise_var, Interval(0, None), "speech_substitute")
    if delay is None:
        delay = n_taps // 2
    check_param("fs", fs, Interval(0, None, closed="neither"), "speech_substitute")
    check_param("seed", seed, AnySeed(), "speech_substitute")
    rng = make_rng(seed)
    h = _room_response(room_length, fs, rng)
    warm = n_taps - 1 + room_length - 1 + delay
    s = _speech_like(n_samples + warm, fs, rng)
    x = _convolved(s, h, noise_var, rng)
    X = tapped_delay_line(x, n_taps, warm, n_samples)
    y = np.ascontiguousarray(s[warm - delay: warm - delay + n_samples])
    return X, y


def hammer_variance(n_samples: int, peak: float = 5.0, floor: float = 0.05, decay: float = 0.02,
                    interval: tuple[float, float] = (0.25, 0.6), fs: float = 8000.0,
                    seed: int | np.random.SeedSequence | None = 0) -> np.ndarray:
    """A SUBSTITUTE for the paper's "hammer noise in the background": a per-sample noise variance.

    The paper records the speech filter's feedback with hammering in the background and gives
    neither the recording nor its level. This is a synthetic variance profile of that kind of
    noise: a constant ``floor`` plus strikes at random intervals (uniform in ``interval``
    seconds), each adding ``peak``·exp(−(t − t_k)/(decay·fs)) (an exponentially decaying burst of
    ``decay`` seconds). It is strongly non-stationary: mostly quiet, briefly very loud. Use it
    as ``GaussianNoise(hammer_variance(n))``.

    >>> v = hammer_variance(8000, seed=0)
    >>> v.shape, bool(v.min() >= 0.05), bool(v.max() > 4.0)
    ((8000,), True, True)
    """
    check_param("n_samples", n_samples, Integer(1), "hammer_variance")
    check_param("peak", peak, Interval(0, None), "hammer_variance")
    check_param("floor", floor, Interval(0, None), "hammer_variance")
    check_param("decay", decay, Interval(0, None, closed="neither"), "hammer_variance")
    check_param("fs", fs, Interval(0, None, closed="neither"), "hammer_variance")
    check_param("seed", seed, AnySeed(), "hammer_variance")
    lo, hi = (float(v) for v in interval)
    if not 0 < lo <= hi:
        raise ValueError(f"The 'interval' parameter of hammer_variance must be (lo, hi) with 0 < lo <= hi. "
                         f"Got {interval!r} instead.")
    rng = make_rng(seed)
    strikes = np.zeros(n_samples)
    pos = int(rng.uniform(0.0, hi) * fs)
    while pos < n_samples:
        strikes[pos] = 1.0
        pos += max(1, int(rng.uniform(lo, hi) * fs))
    from scipy.signal import lfilter

    env = lfilter([1.0], [1.0, -np.exp(-1.0 / (decay * fs))], strikes)  # Σ_k exp(−(t − t_k)/(decay·fs))
    return np.ascontiguousarray(floor + peak * env)
