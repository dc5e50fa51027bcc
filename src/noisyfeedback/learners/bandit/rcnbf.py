"""RCNBF: Banditron with an unbiased estimate of flipped bandit feedback (Agarwal & Manwani 2021)."""

from __future__ import annotations

from ..._validation import AnySeed, Interval
from .banditron import Banditron


class RCNBF(Banditron):
    """Robust Classifier for Noisy Bandit Feedback, with known flip rates ρ0, ρ1.

    As Banditron, but the observed feedback f̃ (f flipped with P(f̃=1|f=0) = ρ0,
    P(f̃=0|f=1) = ρ1) is replaced by the unbiased estimate [1]_

        h(f̃) = (f̃ − ρ0) / (1 − ρ0 − ρ1),   so  E[h(f̃) | f] = f,

    i.e. h(1) = (1−ρ0)/(1−ρ0−ρ1) and h(0) = −ρ0/(1−ρ0−ρ1), in the update
    W[ỹ] += h(f̃)/P(ỹ)·x, W[ŷ] −= x (the paper's Algorithm 1 prints 1[ŷ=r] in the
    first term of H; it is 1[ỹ=r], docs/algorithms.md §4.3). With ρ0 = ρ1 = 0 it is Banditron.

    Parameters
    ----------
    n_classes : int
    gamma : float in (0, 1)
        Exploration rate.
    rho0, rho1 : float in [0, 1), rho0 + rho1 < 1
        Flip rates of the feedback channel.
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> nf.RCNBF(9, gamma=0.1, rho0=0.2, rho1=0.4)._h()
    (-0.5, 2.0)

    References
    ----------
    .. [1] Agarwal, M. & Manwani, N. (2021). Learning multiclass classifier under
       noisy bandit feedback. PAKDD.
    """

    _parameter_constraints = {
        "gamma": Interval(0, 1, closed="neither"),
        "rho0": Interval(0, 1, closed="left"),
        "rho1": Interval(0, 1, closed="left"),
        "seed": AnySeed(),
    }
    _test_params = {"n_classes": 3, "gamma": 0.2, "rho0": 0.1, "rho1": 0.2, "seed": 0}

    def __init__(self, n_classes: int, gamma: float = 0.1, rho0: float = 0.0, rho1: float = 0.0,
                 seed: int | None = None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def _check_params(self) -> None:
        if self.rho0 + self.rho1 >= 1:
            raise ValueError(
                f"The 'rho0' and 'rho1' parameters of {type(self).__name__} must satisfy rho0 + rho1 < 1. "
                f"Got rho0={self.rho0!r}, rho1={self.rho1!r} instead."
            )

    def _h(self) -> tuple[float, float]:
        """(h(0), h(1)) with h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1)."""
        return self._estimate(self.rho0, self.rho1)

    @staticmethod
    def _estimate(rho0: float, rho1: float) -> tuple[float, float]:
        beta = 1.0 - rho0 - rho1
        return (0.0 - rho0) / beta, (1.0 - rho0) / beta
