"""BPA: bandit passive-aggressive (simple PAB, Zhong & Daucé 2015)."""

from __future__ import annotations

from ...kernels.bandit import RULE_BPA
from .banditron import Banditron


class BPA(Banditron):
    """Bandit passive-aggressive with ε-greedy exploration (docs/algorithms.md §4.6).

    Draw ỹ as Banditron does; with a = f̃ (the feedback as seen),
    ℓ = max(0, 1 + (1−2a)·w_ỹ·x) and w_ỹ += (2a−1)·ℓ/‖x‖²·x: the score of the
    tried label is pushed to +1 when told right, to −1 when told wrong [1]_.
    Only row ỹ changes; rows with x = 0 change nothing. Propensities are not used.

    Parameters
    ----------
    n_classes : int
    gamma : float in (0, 1)
        Exploration rate.
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> t = nf.simulate(nf.BPA(9, gamma=0.1, seed=0), X, y, nf.feedback.NoisyBandit(0, 0), 20_000, seed=0)
    >>> t.error_rate < 0.2
    True

    References
    ----------
    .. [1] Zhong, H. & Daucé, E. (2015). Passive-aggressive bounds in bandit
       feedback classification. ECML-PKDD, 255-264.
    """

    _rule = RULE_BPA
    _test_params = {"n_classes": 3, "gamma": 0.2, "seed": 0}
