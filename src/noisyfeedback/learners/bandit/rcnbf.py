"""RCNBF: Banditron with an unbiased estimate of flipped bandit feedback (Agarwal & Manwani 2021)."""

from __future__ import annotations

from ..._validation import AnySeed, Interval
from ...feedback import Rates, rate_arrays
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
    rho0, rho1 : float in [0, 1), or arrays of K such rates (one per action); rho0 + rho1 < 1 (per action)
        Flip rates of the feedback channel. Per action, h follows the played action ỹ:
        h(f̃, ỹ) = (f̃ − ρ0(ỹ)) / (1 − ρ0(ỹ) − ρ1(ỹ)), so E[h | f, ỹ] = f still.
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
        "rho0": Rates(),
        "rho1": Rates(),
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
        rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes)

    def _h(self):
        """(h(0), h(1)) with h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1): floats, or arrays of one per action when the
        rates differ between actions (equal per-action rates give the floats of the one pair, bit for bit)."""
        r0, r1 = self._derived_from_params(
            "rates", lambda: rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes))
        if r0.shape[0] == 1:
            return self._estimate(float(r0[0]), float(r1[0]))
        return self._estimate(r0, r1)

    @staticmethod
    def _estimate(rho0, rho1):
        beta = 1.0 - rho0 - rho1
        return (0.0 - rho0) / beta, (1.0 - rho0) / beta
