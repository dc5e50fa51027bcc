"""``estimate_flip_rates``: one entry point for the flip-rate estimators of noisy bandit feedback."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .mixture import estimate_mixture
from .nrest import estimate_nrest

__all__ = ["estimate_flip_rates", "METHODS", "DEFAULT_METHOD"]

#: method name -> estimator function (X, actions, feedback, n_classes, seed, **options) -> (rho0, rho1)
METHODS: dict[str, Callable[..., tuple[float, float]]] = {
    "mixture": estimate_mixture,
    "nrest": estimate_nrest,
}
DEFAULT_METHOD = "mixture"


def estimate_flip_rates(
    X: Any,
    actions: Any,
    feedback: Any,
    n_classes: int,
    method: str = DEFAULT_METHOD,
    seed: int | np.random.SeedSequence | None = 0,
    **options: Any,
) -> tuple[float, float]:
    """Estimate the flip rates (ρ0, ρ1) of noisy bandit feedback from logged tuples (x_t, a_t, f̃_t).

    A learner took action a_t ∈ {0..K−1} for context x_t and was shown f̃_t: the
    bandit feedback f_t = 1[a_t = y_t] flipped with P(f̃=1 | f=0) = ρ0 and
    P(f̃=0 | f=1) = ρ1. Since P(f̃=1 | x, a) = ρ0 + (1−ρ0−ρ1)·P(y=a | x), ρ0 is
    the feedback rate on actions that are surely wrong and 1 − ρ1 on actions
    that are surely right; the estimators find those from the tuples alone
    (no labels, no propensities).

    Parameters
    ----------
    X : array-like or CSR matrix, shape (n, d)
        Contexts (finite reals).
    actions : array-like of int, shape (n,)
        Actions taken, in 0..n_classes−1.
    feedback : array-like of 0/1 (int or bool), shape (n,)
        The feedback the learner saw.
    n_classes : int >= 2
        Number of actions K.
    method : str
        ``"mixture"`` (default; ours: maximum likelihood of the mixture structure
        with a softmax ranker, then cross-fitted plateau calibration — see
        `noisyfeedback.noise.estimate_mixture`) or ``"nrest"`` (the paper's
        Algorithm 3 with an MLP and the 89th percentile — see
        `noisyfeedback.noise.estimate_nrest`).
    seed : int, SeedSequence or None
        Fixed seed, same estimate.
    **options
        Keyword options of the chosen method.

    Returns
    -------
    (rho0_hat, rho1_hat) : tuple of float
        Each in [0, 1), with rho0_hat + rho1_hat < 1. When the tuples cannot
        identify the rates (constant feedback, too few tuples) a
        `FlipRateWarning` is issued and (0.0, 0.0) returned.

    Examples
    --------
    >>> import numpy as np
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=3000, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> actions = np.where(rng.random(3000) < 0.5, y, rng.integers(0, 9, 3000))
    >>> feedback = nf.feedback.NoisyBandit(0.2, 0.3).respond(y, actions, rng)
    >>> from noisyfeedback.noise import estimate_flip_rates
    >>> rho0, rho1 = estimate_flip_rates(X, actions, feedback, n_classes=9, seed=0)
    >>> abs(rho0 - 0.2) < 0.05 and abs(rho1 - 0.3) < 0.05
    True
    """
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(
            f"The 'method' parameter of estimate_flip_rates must be one of {sorted(METHODS)}. Got {method!r} instead."
        )
    func = METHODS[method]
    allowed = [p.name for p in inspect.signature(func).parameters.values() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"estimate_flip_rates(method={method!r}) got unknown option(s) {unknown}; its options are {allowed}."
        )
    return func(X, actions, feedback, n_classes, seed, **options)
