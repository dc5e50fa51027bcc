"""CatalogueSquareCB: inverse-gap weighting over candidates described by features (Foster & Rakhlin 2020)."""

from __future__ import annotations

from ..._validation import Interval, OneOf, Options, Pair
from ...kernels.catalogue import POLICY_IGW
from ._base import CatalogueOracle

#: ``gamma_scale="auto"``: γ_scale by the oracle in use. AdaGrad (and NLMS) take 10 (the index SquareCB's fixed
#: default before it adapted); the
#: ridge oracle 30 — its fit is the least-squares solution of every round so far (logarithmic regret, where a
#: gradient step's is of order √T), and SquareCB's γ ∝ √(n·T / oracle regret) grows as the oracle's regret
#: shrinks. Chosen by benchmarks/tune_catalogue.py on tuning data (benchmarks/RESULTS.md, "How the defaults
#: of the catalogue learners were chosen").
AUTO_GAMMA_SCALE = {"adagrad": 10.0, "normalized": 10.0, "ridge": 30.0}

#: ``gamma_scale="adaptive"`` (the default) with the ridge oracle: γ_scale (high, low) of greedy first — nearly
#: greedy while the candidates the model does not choose stay about as well known as the one it does, the index
#: SquareCB's former 10 after the check fails. The high value is the fixed γ_scale of least mean ratio to the best over
#: the churn tuning stream, clean and flipped (3,000: 1.00× and 1.02×; 10,000: 1.03× both). Chosen on tuning
#: streams (benchmarks/RESULTS.md, "Greedy first"); with AdaGrad or NLMS, which keep no P, "adaptive" is
#: their "auto" value.
ADAPTIVE_GAMMA_SCALE = (3_000.0, 10.0)


class CatalogueSquareCB(CatalogueOracle):
    r"""SquareCB over a candidate list: one regression oracle of the click over context × item features,
    explored by inverse-gap weighting [1]_ (VW's ``--cb_explore_adf --squarecb`` with ``-q``).

    Score f(x, z) = x̂ᵀ M ẑ + w_aᵀ ẑ + w_cᵀ x̂ + b (x̂, ẑ the features as ``context_norm`` and ``item_norm`` say;
    ``kernels/catalogue.py``), fitted by square loss to the observed (possibly flipped) click of the played
    candidate. With γ_t = γ_scale·(t+1)^γ_exp (t = rounds learned) and ŷ the best of the round's n candidates:

        p(r) = 1 / (n + γ_t·(f_ŷ − f_r))  for r ≠ ŷ,    p(ŷ) = 1 − Σ_{r≠ŷ} p(r).

    **Greedy first** (``gamma_scale="adaptive"`` with the ridge oracle; Bastani, Bayati & Khosravi [2]_, with
    IGW for both of its phases): γ_scale = 3,000 (nearly greedy) while the rounds played inform the model about
    the candidates it does not play, then 10 (the index SquareCB's former fixed default) for good, its schedule
    started again at the switch (t counted from it). Every 20th round the leverages h_r = φ_rᵀPφ_r (P the ridge
    inverse) give the ratio (mean_{r≠ŷ} h_r)/h_ŷ; the switch is made at the end of the first window of 500
    rounds whose mean ratio exceeds 4 (``exploration_[0]``: the rounds learned then). Candidates that share
    features keep the ratio near 1; one-hot candidates (an item known only by its own weights) raise it within the first
    windows.

    With one-hot candidates (z = e_a, all K every round), ``linear="item"``, dense features and the same
    γ_scale and oracle this is `SquareCB`: the same choices and weights, bit for bit
    with AdaGrad (M = Wᵀ, w_a = b), to rounding with the ridge oracle (tested). ``oracle="auto"`` resolves
    alike in both on such data (ridge for digits: d = 64, D = 715); the default γ_scale differs (greedy first
    here with ridge, adaptive to the residuals there).

    Parameters
    ----------
    gamma_scale : "adaptive", "auto", float >= 0 or a pair (high, low)
        γ_t = γ_scale·(t+1)^gamma_exponent. "adaptive" (default): with the ridge oracle, greedy first
        (``ADAPTIVE_GAMMA_SCALE``, below); with AdaGrad or NLMS, 10. "auto": a fixed γ_scale by the oracle, 30
        with ridge, 10 (the index SquareCB's former fixed default) with AdaGrad or NLMS (``AUTO_GAMMA_SCALE``). A pair
        (high, low), ridge oracle only: greedy first between those values; (g, g) is the fixed γ_scale g, bit
        for bit (nothing to switch to: no check). The value in use: `gamma_scale_in_use`.
    gamma_exponent : float in [0, 1]
        (SquareCB's default 0.5: VW's schedule.)
    learning_rate : float > 0
        AdaGrad step (per coordinate lr·g/√ΣG²), or the NLMS step with ``oracle="normalized"``.
    oracle : {"auto", "adagrad", "normalized", "ridge"}
        "ridge" (dense features only): recursive least squares over all D = d_c·d_a + d_a + d_c + 1 weights —
        after every round the ridge solution of all rounds so far — at O(D²) memory and time a round.
        "auto" (default): "ridge" for dense features with D <= ``AUTO_RIDGE_MAX_WEIGHTS`` (2,048), "adagrad"
        above and for hashed features; the choice is ``oracle_`` after the first fit and is saved with the
        model.
    lam : float > 0
        Ridge penalty of ``oracle="ridge"``, relative to the features' scale: the penalty of a weight is
        lam·s² with s² the squared norm of what it multiplies in the first round the learner sees (acts on or
        learns from): ‖x̂‖²·‖ẑ‖² for the interaction, ‖ẑ‖² for the items' linear term, ‖x̂‖² for the context's,
        1 for the intercept (the mean over the round's candidates for ẑ). Rescaling a side's features rescales
        its weights and changes nothing else (``feature_scale_``).
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
    context_norm : {"auto", "none", "unit"}
        "none": the context as given (x̂ = x), so its length (a user's activity, a scale that multiplies the
        utility) carries information, as in VW; "unit": x̂ = x/‖x‖, so step sizes do not depend on the
        features' scale. "auto" (default): "none" with the ridge oracle (its fit does not depend on the scale,
        its penalty is relative to it: ``lam``), "unit" with AdaGrad or NLMS.
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
    >>> learner.oracle_, learner.gamma_scale_in_use()  # 20 × 10 features: D = 231 weights; shared: no switch
    ('ridge', 3000.0)

    References
    ----------
    .. [1] Foster, D. & Rakhlin, A. (2020). Beyond UCB: optimal and efficient contextual bandits with
       regression oracles. ICML.
    .. [2] Bastani, H., Bayati, M. & Khosravi, K. (2021). Mostly exploration-free algorithms for contextual
       bandits. Management Science 67(3).
    """

    _policy = POLICY_IGW
    _parameter_constraints = {
        **CatalogueOracle._common_constraints,
        "gamma_scale": OneOf((Interval(0, None, closed="left"), Options(("adaptive", "auto")),
                              Pair(Interval(0, None, closed="left")))),
        "gamma_exponent": Interval(0, 1, closed="both"),
    }
    _test_params = {"seed": 0}

    def __init__(self, gamma_scale: float | str | tuple = "adaptive", gamma_exponent: float = 0.5,
                 learning_rate: float = 0.05, oracle: str = "auto", lam: float = 1.0, features: str = "dense",
                 bits: int = 18, interactions: tuple | None = None, linear: str = "all", item_norm: str = "none",
                 context_norm: str = "auto", n_slots: int = 1, examination: tuple | None = None, rho0: float = 0.0,
                 rho1: float = 0.0, seed: int | None = None):
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
        self.context_norm = context_norm
        self.n_slots = n_slots
        self.examination = examination
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed

    def gamma_scale_in_use(self) -> float:
        """γ_scale of the policy now: a fixed parameter; for "auto" ``AUTO_GAMMA_SCALE`` of the oracle in use
        (``oracle_`` once fitted; before any round, with oracle="auto", AdaGrad's: the oracle is resolved from
        the sizes of the features at the first round); for greedy first the high value until the switch, the
        low one after it."""
        high, low, adapt = self._adapt()
        switched = hasattr(self, "exploration_") and self.exploration_[0] >= 0
        return low if adapt and switched else high

    def _oracle_in_use(self) -> str:
        return self._oracle() if hasattr(self, "weights_") else self.oracle

    def _adapt(self) -> tuple[float, float, bool]:
        g = self.gamma_scale
        if isinstance(g, str):
            oracle = self._oracle_in_use()
            if g == "adaptive" and oracle == "ridge":
                return ADAPTIVE_GAMMA_SCALE[0], ADAPTIVE_GAMMA_SCALE[1], True
            x = AUTO_GAMMA_SCALE.get(oracle, AUTO_GAMMA_SCALE["adagrad"])
            return x, x, False
        if isinstance(g, (tuple, list)):
            if self._oracle_in_use() != "ridge":
                raise ValueError(f"The 'gamma_scale' parameter of CatalogueSquareCB as a pair (high, low) needs the "
                                 f"ridge oracle (greedy first reads its matrix P); the oracle is "
                                 f"{self._oracle_in_use()!r}. Got {g!r} instead.")
            high, low = float(g[0]), float(g[1])
            return high, low, high > low  # (g, g): nothing to switch to, no check: the fixed γ_scale g
        return float(g), float(g), False

    def _explore(self) -> tuple[float, float]:
        return self.gamma_scale_in_use(), float(self.gamma_exponent)

