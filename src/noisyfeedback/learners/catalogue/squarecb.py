"""CatalogueSquareCB: inverse-gap weighting over candidates described by features (Foster & Rakhlin 2020)."""

from __future__ import annotations

from ..._validation import Interval
from ...kernels.catalogue import POLICY_IGW
from ._base import CatalogueOracle


class CatalogueSquareCB(CatalogueOracle):
    r"""SquareCB over a candidate list: one regression oracle of the click over context × item features,
    explored by inverse-gap weighting [1]_ (VW's ``--cb_explore_adf --squarecb`` with ``-q``).

    Score f(x, z) = x̂ᵀ M ẑ + w_aᵀ ẑ + w_cᵀ x̂ + b (x̂, ẑ unit norm; ``kernels/catalogue.py``), fitted by
    square loss to the observed (possibly flipped) click of the played candidate. With γ_t =
    γ_scale·(t+1)^γ_exp (t = rounds learned) and ŷ the best of the round's n candidates:

        p(r) = 1 / (n + γ_t·(f_ŷ − f_r))  for r ≠ ŷ,    p(ŷ) = 1 − Σ_{r≠ŷ} p(r).

    With one-hot candidates (z = e_a, all K every round), ``linear="item"`` and dense features this is
    :class:`~noisyfeedback.SquareCB`: the same choices and weights, bit for bit (M = Wᵀ, w_a = b; tested).

    Parameters
    ----------
    gamma_scale, gamma_exponent : float
        γ_t = gamma_scale·(t+1)^gamma_exponent (SquareCB's defaults).
    learning_rate : float > 0
        AdaGrad step (per coordinate lr·g/√ΣG²), or the NLMS step with ``oracle="normalized"``.
    oracle : {"adagrad", "normalized", "ridge"}
        "ridge" (dense features, small d_c·d_a): recursive least squares over all weights, O(D²) a round.
    lam : float > 0
        Ridge penalty of ``oracle="ridge"``.
    features : {"dense", "hashed"}
        "dense": numeric context (n, d_c) and item (total, d_a) features, the interaction a bilinear form;
        "hashed": features hashed (namespaced dicts, or numeric columns) with the interaction into 2^bits.
    bits : int
        Hash table size 2^bits (features="hashed").
    interactions : None or tuple of str
        Hashed features: VW's ``-q`` pairs of namespace first letters (context, item), ':' any; None: all.
    linear : {"all", "item", "none"}
        Linear terms next to the interaction.
    item_norm : {"none", "unit"}
        "none" (default, as VW): the item features as given, so the length of an item's vector (e.g. of an
        embedding) carries information; "unit": each candidate's features scaled to unit norm
        (ẑ = z/‖z‖, as x̂), so the score does not see it. One-hot candidates are the same either way.
    n_slots : int ≥ 1
        Candidates placed a round (several slots: sequential IGW without replacement).
    examination : None or tuple of float
        Examination probability per slot (position-based click model); None: estimated online.
    rho0, rho1 : float
        Flip rates of the clicks, if known (the choices never need them).
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> stream = nf.datasets.ranking_stream(n_rounds=2000, seed=0)
    >>> learner = nf.CatalogueSquareCB(seed=0)
    >>> trace = nf.simulate(learner, stream, None, nf.feedback.NoisyBandit(0.1, 0.1), n_rounds=4000, seed=0)
    >>> trace.metrics["regret_rate"] < 0.1
    True
    >>> float(learner.action_probabilities(stream.rounds[:1]).sum().round(12))
    1.0

    References
    ----------
    .. [1] Foster, D. & Rakhlin, A. (2020). Beyond UCB: optimal and efficient contextual bandits with
       regression oracles. ICML.
    """

    _policy = POLICY_IGW
    _parameter_constraints = {
        **CatalogueOracle._common_constraints,
        "gamma_scale": Interval(0, None, closed="left"),
        "gamma_exponent": Interval(0, 1, closed="both"),
    }
    _test_params = {"seed": 0}

    def __init__(self, gamma_scale: float = 10.0, gamma_exponent: float = 0.5, learning_rate: float = 0.05,
                 oracle: str = "adagrad", lam: float = 1.0, features: str = "dense", bits: int = 18,
                 interactions: tuple | None = None, linear: str = "all", item_norm: str = "none", n_slots: int = 1,
                 examination: tuple | None = None, rho0: float = 0.0, rho1: float = 0.0, seed: int | None = None):
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.learning_rate = learning_rate
        self.oracle = oracle
        self.lam = lam
        self.features = features
        self.bits = bits
        self.interactions = interactions
        self.linear = linear
        self.item_norm = item_norm
        self.n_slots = n_slots
        self.examination = examination
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def _explore(self) -> tuple[float, float]:
        return float(self.gamma_scale), float(self.gamma_exponent)
