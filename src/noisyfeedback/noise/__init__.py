"""Noise-rate estimation for noisy bandit feedback (docs/algorithms.md §4.5).

- `estimate_flip_rates` — the entry point: ``(rho0_hat, rho1_hat)`` from
  logged tuples (x, action, f̃); ``method`` picks the estimator.
- `estimate_mixture` — ours, the default: the mixture structure
  P(f̃=1|x,a) = ρ0 + β·π_a(x) fitted with a softmax ranker, then cross-fitted
  plateau calibration.
- `estimate_nrest` — the paper's NREst (Agarwal & Manwani 2021, Algorithm 3).

Confusion-matrix estimation for label noise lives in `noisyfeedback.noise.confusion`;
the arithmetic of finding mislabelled rows (the Bayes posterior of a flip) in
`noisyfeedback.noise.label_issues`; the search itself is `noisyfeedback.find_label_issues`.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from ._common import FlipRateWarning, clip_rates
    from .estimate import DEFAULT_METHOD, METHODS, estimate_flip_rates
    from .mixture import estimate_mixture
    from .nrest import estimate_nrest

_LAZY = {
    'FlipRateWarning': '._common',
    'clip_rates': '._common',
    'DEFAULT_METHOD': '.estimate',
    'METHODS': '.estimate',
    'estimate_flip_rates': '.estimate',
    'estimate_mixture': '.mixture',
    'estimate_nrest': '.nrest',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = [
    "estimate_flip_rates",
    "METHODS",
    "DEFAULT_METHOD",
    "estimate_mixture",
    "estimate_nrest",
    "clip_rates",
    "FlipRateWarning",
]
