"""SOBA: second-order banditron (Beygelzimer, Orabona & Zhang 2017)."""

from __future__ import annotations

import numpy as np

from ..._state import Array
from ..._validation import AnySeed, Interval, Options, check_memory
from ...kernels.bandit import RULE_SOBA_DIAG, RULE_SOBA_FULL
from .banditron import Banditron


class SOBA(Banditron):
    """Second-Order Banditron Algorithm (docs/algorithms.md §4.7).

    θ = 0, A = a·I, W = reshape(A⁻¹θ); ε-greedy draw ỹ as Banditron. When the
    feedback says ỹ is right (f̃ = 1, so y := ỹ): ȳ = argmax_{k≠y} (Wx)_k (y
    excluded — public code gets this wrong), g = (e_ȳ − e_y)⊗x / P(ỹ),
    z = √P(ỹ)·g, m = (⟨W,z⟩² + 2⟨W,g⟩)/(1 + zᵀA⁻¹z), n = 1[Σ_{s<t} n_s m_s + m ≥ 0],
    A += n·zzᵀ, θ −= n·g [1]_.

    ``diagonal=False`` keeps A⁻¹ exactly (Sherman–Morrison): O((Kd)²) memory and
    time per update — fine for SynSep (Kd = 3600), impractical for MNIST
    (Kd = 7840: 490 MB). ``diagonal=True`` keeps only diag(A) (A += z∘z): O(Kd).

    Parameters
    ----------
    n_classes : int
    gamma : float in (0, 1)
        Exploration rate.
    a : float in [1e-8, 1e8]
        Initial A = a·I.
    diagonal : bool
        Use the diagonal approximation of A.
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> t = nf.simulate(nf.SOBA(9, gamma=0.1, diagonal=True, seed=0), X, y,
    ...                 nf.feedback.NoisyBandit(0, 0), 20_000, seed=0)
    >>> t.error_rate < 0.2
    True

    References
    ----------
    .. [1] Beygelzimer, A., Orabona, F. & Zhang, C. (2017). Efficient online
       bandit multiclass learning with Õ(√T) regret. ICML.
    """

    _parameter_constraints = {
        "gamma": Interval(0, 1, closed="neither"),
        "a": Interval(1e-8, 1e8, closed="both"),  # A⁻¹ = I/a: a below ~1e-308 made it infinite
        "diagonal": Options((False, True)),
        "seed": AnySeed(),
    }
    _test_params = {"n_classes": 3, "gamma": 0.2, "seed": 0}
    _mutable_state = ("W_", "theta_", "A_", "cum_")
    _learned_state = {
        "W_": Array(("n_classes", "d")),
        "theta_": Array(("n_classes", "d")),
        "A_": Array(lambda p: ("n_classes", "d") if p["diagonal"] else ("n_classes*d", "n_classes*d")),
        "cum_": Array((1,)),
    }

    def __init__(self, n_classes: int, gamma: float = 0.1, a: float = 1.0, diagonal: bool = False,
                 seed: int | None = None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.a = a
        self.diagonal = diagonal
        self.seed = seed

    @property
    def _rule(self) -> int:  # type: ignore[override]
        return RULE_SOBA_DIAG if self.diagonal else RULE_SOBA_FULL

    def _init_state(self, n_features, seed_fallback=None):
        fresh = not hasattr(self, "W_")
        super()._init_state(n_features, seed_fallback)
        if fresh:
            K, a = self.n_classes, float(self.a)
            side = K * n_features
            check_memory(8.0 * (side if self.diagonal else side * side), f"SOBA's matrix A_ (K·d = {side})")
            self.theta_ = np.zeros((K, n_features))
            if self.diagonal:
                self.A_ = np.full((K, n_features), a)  # diag(A)
            else:
                self.A_ = np.eye(K * n_features) / a  # A⁻¹
            self.cum_ = np.zeros(1)

    def _extra_state(self):
        return self.theta_, self.A_, self.cum_
