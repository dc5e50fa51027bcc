"""CatalogueEpsilonGreedy: ε-greedy over candidates described by features."""

from __future__ import annotations

from ..._validation import Interval
from ...kernels.catalogue import POLICY_EPSILON
from ._base import CatalogueOracle


class CatalogueEpsilonGreedy(CatalogueOracle):
    r"""ε-greedy over a candidate list with one regression oracle over context × item features.

    P(r) = (1−ε)·1[r = ŷ] + ε/n over the round's n candidates (ŷ the best score, first on ties); with
    several slots, slot s the same over the candidates not yet placed. The model, oracles, slots and
    parameters are `CatalogueSquareCB`'s (see ``_base.py``); ``epsilon`` replaces γ.

    With one-hot candidates, ``linear="item"``, dense features and the same oracle this is
    `EpsilonGreedy` (m = 1), bit for bit with AdaGrad (tested). ``oracle="auto"``
    (default): ridge for dense features with at most 2,048 weights, else AdaGrad (`CatalogueSquareCB`).

    References
    ----------
    .. [1] Bietti, A., Agarwal, A. & Langford, J. (2021). A contextual bandit bake-off. JMLR.
    """

    _policy = POLICY_EPSILON
    _parameter_constraints = {**CatalogueOracle._common_constraints, "epsilon": Interval(0, 1, closed="right")}
    _test_params = {"n_slots": 2, "seed": 0}

    def __init__(self, epsilon: float = 0.05, learning_rate: float = 0.05, oracle: str = "auto", lam: float = 1.0,
                 features: str = "dense", bits: int = 18, interactions: tuple | None = None, linear: str = "all",
                 item_norm: str = "none", context_norm: str = "auto", n_slots: int = 1,
                 examination: tuple | None = None, rho0: float = 0.0, rho1: float = 0.0, seed: int | None = None):
        self.epsilon = epsilon
        self.learning_rate = learning_rate
        self.oracle = oracle
        self.lam = lam
        self.features = features
        self.bits = bits
        self.interactions = interactions
        self.linear = linear
        self.item_norm = item_norm
        self.context_norm = context_norm
        self.n_slots = n_slots
        self.examination = examination
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def _explore(self) -> tuple[float, float]:
        return float(self.epsilon), 0.0
