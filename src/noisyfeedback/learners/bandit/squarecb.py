"""SquareCB: inverse-gap-weighted exploration over a linear regression oracle (Foster & Rakhlin 2020)."""

from __future__ import annotations

import numpy as np

from ..._validation import Interval, OneOf, Options, Pair
from ...kernels.oracle import POLICY_IGW, adaptive_scale
from ._oracle import OracleBandit

#: ``gamma_scale="adaptive"`` (the default): γ_scale = c·√K/σ̂ with σ̂² the oracle's mean squared prequential
#: residual, shrunk toward s0 by n0 pseudo-rounds (`kernels.oracle.adaptive_scale`): (c, n0, s0). s0 = 1/4, the
#: variance of a fair 0/1 outcome: before the residuals count, it explores as for the noisiest 0/1 feedback.
#: c = 1 chosen on tuning streams (MNIST and Fashion-MNIST test splits, digits, SynSep seed 100; the five noise
#: settings of Agarwal & Manwani; 50,000, 200,000 and 1e6 rounds; seeds 100-103: benchmarks/tune_gamma.py,
#: benchmarks/tuning/adaptive_gamma*.csv; benchmarks/RESULTS.md, "How the defaults of SquareCB and EpsilonGreedy
#: were chosen").
ADAPTIVE_GAMMA = (1.0, 100.0, 0.25)
#: the bounds (high, low) of ``gamma_scale="adaptive"``: those of the parameter (a pair clips it)
ADAPTIVE_BOUNDS = (1e9, 0.0)


class SquareCB(OracleBandit):
    r"""SquareCB: a regression oracle of the observed feedback, explored by inverse-gap weighting [1]_.

    Values v = W x̂ + b with x̂ = x/‖x‖ (one linear model per label over the unit-norm row, fitted by
    square loss to the raw, possibly flipped, 0/1 feedback of the played label; AdaGrad step by
    default; the unit norm makes the step size independent of the features' scale). With γ_t = γ_scale·(t+1)^γ_exp (t =
    updates so far; Vowpal Wabbit's ``--squarecb`` schedule; γ_scale adapts to the oracle's residuals by default)
    and ŷ = argmax v, the action is drawn from

        p(a) = 1 / (K + γ_t·(v_ŷ − v_a))  for a ≠ ŷ,    p(ŷ) = 1 − Σ_{a≠ŷ} p(a).

    **Flipped feedback.** E[f̃ | x, a] = ρ0 + (1−ρ0−ρ1)·P(y=a | x) is an increasing affine map of the clean
    value when flips do not depend on the class or the context, so the oracle ranks the labels
    correctly without knowing ρ0, ρ1 (they only add variance). Flip rates that depend on the action
    break this (see ``_oracle.py`` and the test of that case): give them as per-action ``rho0``/``rho1``
    and the policy runs on the values corrected per action.

    **Sets (m > 1, ``Diluted(m)`` feedback).** The prediction for a set S is Σ_{a∈S} v_a
    (E[f̃ | x, S] = ρ0 + (1−ρ0−ρ1)·Σ_{a∈S} P(y=a | x)); every label of the set takes the same step on
    the residual f̃ − Σ_{a∈S} v_a. Inclusion probabilities π_a = p_a + (1 − p_a)·(m−1)/(K−1) (Σ π = m):
    an anchor drawn from the one-label distribution p above and m − 1 other labels uniformly, so the
    greedy label is nearly always in the set while the rest of the set stays random (a set of the top-m
    labels every round would give them all the same update and never tell them apart). The set is drawn
    by systematic sampling over a uniformly random label order, which includes each label with
    probability exactly π_a (``kernels/oracle.py``).

    Parameters
    ----------
    n_classes : int
    m : int in [1, K-1]
        1: one action, ``NoisyBandit`` feedback; m > 1: a set of m labels, ``Diluted(m)`` feedback.
    gamma_scale : "adaptive", float in [0, 1e9] or a pair (high, low)
        γ_t = γ_scale·(t+1)^gamma_exponent. "adaptive" (default): read every round,

            γ_scale = c·√K/σ̂,    σ̂² = (Σ r² + n0·s0)/(n + n0),

        r = f̃ − v the prequential residuals of the oracle (the feedback of the played action, or set, less its
        value before the step) over the n rounds so far, (c, n0, s0) = (1, 100, 1/4) (``ADAPTIVE_GAMMA``, chosen
        on tuning streams: benchmarks/tune_gamma.py). This is SquareCB's γ = √(K·T/Reg_sq) [1]_ with the oracle's
        observed square loss σ̂²·T in place of its regret bound: feedback the oracle predicts well is explored less
        (clean digits: about 40), noisy feedback more (flips (0.2, 0.4): about 6). A pair (high, low): the adaptive
        γ_scale clipped to [low, high]; (g, g) is the fixed g, bit for bit. A number: that fixed γ_scale (10 was
        the default before the adaptive one). In use: `gamma_scale_in_use`; the residuals: ``noise_``.
    gamma_exponent : float in [0, 1]
        (0.5: Vowpal Wabbit's schedule.)
    learning_rate : float in (0, 1000]; in (0, 2) with oracle="normalized"
        AdaGrad step (per coordinate lr·g/√ΣG²), or the NLMS step with ``oracle="normalized"``.
    oracle : {"auto", "adagrad", "normalized", "ridge"}
        "ridge" (m = 1; for small d): per label, recursive least squares on (x̂, 1) — after every round
        the ridge solution of that label's rounds — at O(d²) memory and time a round. "auto" (default):
        "ridge" where m = 1 and d <= ``AUTO_RIDGE_MAX_FEATURES`` (256, chosen by the sweep in
        benchmarks/auto_oracle_sweep.py, docs/algorithms.md), "adagrad" otherwise; the choice is
        ``oracle_`` after the first fit and is saved with the model.
    lam : float in [1e-8, 1e8]
        Ridge penalty λ of ``oracle="ridge"`` (unused otherwise).
    features : {"auto", "linear", "quadratic"}
        The features the oracle fits: "linear", x̂ itself; "quadratic", the degree-2 map
        φ(x) = (x̂, x̂_j·x̂_k for j <= k) of d + d(d+1)/2 columns (``kernels/features.py``; ⟨φ(x), φ(x')⟩ =
        x̂·x̂' + (x̂·x̂')², Vowpal Wabbit's ``-q`` self-interactions), so the values are quadratic in x̂.
        "auto" (default): "quadratic" where ``oracle="auto"``, m = 1 and d <= ``AUTO_QUADRATIC_MAX_FEATURES``
        (21: the map then has at most 256 columns, and auto's ridge oracle fits it), "linear" otherwise
        (benchmarks/feature_map_sweep.py, docs/algorithms.md). The map in use is ``features_`` after the
        first fit and is saved with the model; the weights W_ are over its columns, and ``n_features_`` is
        d of X. On Letter (d = 16) it costs the rounds/s of a 152-feature ridge oracle (about 1/15 of the
        raw 16).
    rho0, rho1 : float in [0, 1), or (m = 1) arrays of K rates, one per action (rho0 + rho1 < 1), or "estimate"
        Known flip rates (default 0: none). Rates that differ between the actions: the policy explores and
        exploits on the corrected values c_a = (v_a − ρ0(a)/m)/(1 − ρ0(a) − ρ1(a)) (`corrected_values`, the
        clean P(y = a | x) that v_a estimates, inverted per action) mapped onto the raw scale of the mean action,
        ρ̄0/m + (1 − ρ̄0 − ρ̄1)·c_a (`policy_values`), so that only the rates' differences between actions
        move the policy; rates equal for every action (scalars) leave the policy the uncorrected one, bit for
        bit. They also serve `predict_proba`. ``rho0="estimate"`` with
        ``rho1="estimate"`` (m = 1): estimated online from the feedback of the learner's own anchors — per
        action, 1 − ρ1(a) the feedback rate of its confident right plays of a (the greedy label by a margin
        of ``RATE_MARGIN`` = 0.25), ρ0(a) that of its plays of a well below the greedy label (NREst's extremes of
        P(f̃ = 1 | x, a), calibrated on the learner's beliefs) — first after ``RATE_WARMUP`` (2,500) rounds, then
        every ``RATE_EVERY`` (2,500; chosen on tuning streams, ``benchmarks/tune_rates.py``); used only when
        every action has anchors and the rates differ between the actions (a chi-square test), else the policy
        keeps the uncorrected values (equal rates leave the raw ranking right). Estimates: ``rate_estimates_``
        (rows ρ0, ρ1), in use: ``rate_state_[0]`` (`_estimate_rates`).
    seed : int, SeedSequence or None

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> X, y = nf.datasets.synsep(n_samples=2000, seed=0)
    >>> learner = nf.SquareCB(9, seed=0)
    >>> trace = nf.simulate(learner, X, y, nf.feedback.NoisyBandit(0.2, 0.2), n_rounds=20_000, seed=0)
    >>> trace.error_rate < 0.2
    True
    >>> learner.action_probabilities(X[:2]).sum(axis=1)
    array([1., 1.])

    References
    ----------
    .. [1] Foster, D. & Rakhlin, A. (2020). Beyond UCB: optimal and efficient contextual bandits with
       regression oracles. ICML.
    """

    _policy = POLICY_IGW
    _parameter_constraints = {
        **OracleBandit._common_constraints,
        # γ_t = gamma_scale·(t+1)^gamma_exponent stays finite for any number of rounds (an infinite γ_t
        # made p = 1/(K + γ_t·0) NaN for labels tied with the greedy one)
        "gamma_scale": OneOf((Interval(0, 1e9, closed="both"), Options(("adaptive",)),
                              Pair(Interval(0, 1e9, closed="both")))),
        "gamma_exponent": Interval(0, 1, closed="both"),
    }
    _test_params = {"n_classes": 3, "seed": 0}

    def __init__(self, n_classes: int, m: int = 1, gamma_scale: float | str | tuple = "adaptive",
                 gamma_exponent: float = 0.5,
                 learning_rate: float = 0.05, oracle: str = "auto", lam: float = 1.0, rho0: float = 0.0,
                 rho1: float = 0.0, seed: int | None = None, features: str = "auto"):
        self.n_classes = n_classes
        self.m = m
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.learning_rate = learning_rate
        self.oracle = oracle
        self.lam = lam
        self.rho0 = rho0
        self.rho1 = rho1
        self.seed = seed
        self.features = features

    def _bounds(self) -> tuple[float, float, bool]:
        """(high, low, adaptive) of γ_scale: "adaptive" the default bounds; a pair its values ((g, g): the fixed
        g, nothing to adapt); a number itself."""
        g = self.gamma_scale
        if isinstance(g, str):
            return ADAPTIVE_BOUNDS[0], ADAPTIVE_BOUNDS[1], True
        if isinstance(g, (tuple, list)):
            high, low = float(g[0]), float(g[1])
            return high, low, high > low
        return float(g), float(g), False

    def _adaptation(self) -> np.ndarray:
        high, low, adapt = self._bounds()
        if not adapt:
            return self._FIXED
        c, n0, s0 = ADAPTIVE_GAMMA
        return self._derived_from_params(
            "adaptation", lambda: np.array([c * np.sqrt(float(self.n_classes)), high, low, n0, s0]))

    def gamma_scale_in_use(self) -> float:
        """γ_scale of the policy now: the parameter when fixed; adaptive, clip(c·√K/σ̂, low, high) from the
        residuals so far (`kernels.oracle.adaptive_scale`; before any round σ̂ is the prior's)."""
        high, low, adapt = self._bounds()
        if not adapt:
            return high
        return float(adaptive_scale(high, self._noise(), self._adaptation()))

    def _explore(self) -> tuple[float, float]:
        return self.gamma_scale_in_use(), float(self.gamma_exponent)
