"""ORS: online regression with scaling (Moroshko & Crammer), docs/algorithms.md §4.11."""

from __future__ import annotations

import math

from ..._validation import AnySeed, Integer, Interval, OneOf, Options
from ...kernels.regression import (
    RULE_BETA,
    RULE_NONE,
    RULE_ONE_SAMPLE,
    RULE_ONE_SAMPLE_PRED,
    RULE_OPT,
    RULE_TWO_SAMPLES,
)
from ._base import AUTO_STATE, R_CONSTRAINT, LinearRegressor, auto_optional_state
from .budget import STRATEGIES, budget_plan

SCALINGS = {
    "none": RULE_NONE,
    "beta": RULE_BETA,
    "opt": RULE_OPT,
    "one_sample": RULE_ONE_SAMPLE,
    "one_sample_pred": RULE_ONE_SAMPLE_PRED,
    "two_samples": RULE_TWO_SAMPLES,
}
#: rules that can run without knowing the noise variance (the paper's "unknown variance" variants)
UNKNOWN_VARIANCE_SCALINGS = ("none", "one_sample_pred", "two_samples")


class ORS(LinearRegressor):
    """Online Regression with Scaling: NLMS whose step shrinks with the label noise.

    ŷ = w·x; the learner sees ỹ = y + ε, Var ε = v_t, and updates
    w += α_t·(ỹ − ŷ)·x / (r + α_t·‖x‖²)  (= (ỹ − ŷ)·x / (r/α_t + ‖x‖²), eq. (4)) [1]_.

    ``scaling`` chooses α_t:

    ``"none"``
        α = 1: NLMS (``NLMS(r)`` bit for bit).
    ``"beta"``
        α = 1/(1 + β·v_t), eq. (6); β tuned (known variance).
    ``"opt"``
        eq. (5) α = 1/(1 + (r + ‖x‖²)·v_t / (r·(y − ŷ)²)) with the CLEAN y: an oracle
        for reference (``learn`` needs ``y_clean``; ``nf.simulate`` passes it).
    ``"one_sample"``
        eq. (5) with y ≈ ỹ (known variance).
    ``"one_sample_pred"``
        eq. (5) with y ≈ (ỹ + ŷ)/2; variance unknown: v ≈ (ỹ − ŷ)²/4 too. (Then
        v/(y − ŷ)² = 1 and α = r/(2r + ‖x‖²): exactly half the NLMS step.)
    ``"two_samples"``
        two noisy labels a round: y ≈ their mean m, which is also the label of the
        update; v = v_t/2 (the variance of m) when known, (ỹ1 − ỹ2)²/4 when unknown.

    ``variance="known"`` (rules read v_t: ``learn(..., variance=...)``; ``nf.simulate``
    passes the channel's) or ``"unknown"`` (only ``none``, ``one_sample_pred``,
    ``two_samples``, as in the paper). With v_t = 0 every known-variance rule is NLMS;
    so is ``two_samples`` with unknown variance (its two labels then agree).

    Guard of eq. (5): α = 1 when v = 0 (also for 0/0), α = 0 (no update) when the
    error is 0 and v > 0 — the limit of (5) — so no NaN can arise.

    Label budget (Section 4.2): ``budget=B`` (average labels a round, B ≥ 1) gives a
    round either one label or k = ⌈B⌉; ``strategy`` (``"const"``, ``"begin"``,
    ``"auto"``, ``"auto_self_tuned"``; see `noisyfeedback.learners.regression.budget`)
    decides which, with one uniform a round from ``rng_``. A round with k labels
    updates with their mean and (variance unknown) their sample variance over k
    (the variance of the mean); a round with one label applies ``scaling`` to it.
    The paper's budget experiments are ``scaling="one_sample_pred", variance="unknown"``
    (and ``"none"`` for its "no scaling" lines). ``labels_`` counts the labels used.

    Parameters
    ----------
    r : float > 0 or "auto", default "auto"
        Regularisation of the update. ``"auto"``: one member for each r of ``AUTO_R_GRID`` (10^-2 …
        10^4 in half decades), each updated exactly as ``ORS(r)`` with the other parameters, on the
        same rows and labels; the prediction is the leader's, the member of smallest discounted
        running squared error on the labels, L_j ← 0.9995·L_j + (m − ŷ_j)² (m the mean of the round's
        labels; ties: the smaller r); ``r_`` is its r, ``w_`` its weights. With a label budget the
        leader's prediction decides how many labels a round takes, and every member updates from
        them. See `NLMS` for why and how it was checked (``benchmarks/tune_defaults.py``).
    scaling : str, default "one_sample_pred"
    variance : {"known", "unknown"}, default "known"
    beta : float >= 0, default 1.0
        β of ``scaling="beta"``.
    budget : float >= 1 or None, default None
    strategy : str, default "auto_self_tuned"
    a : float > 0, default 1.0
        a of ``"auto"`` (fixed) and the starting a of ``"auto_self_tuned"``.
    horizon : int or None
        Number of rounds of the run; needed by ``strategy="begin"``.
    seed : int, SeedSequence or None
        Seed of the budget decisions (None: ``nf.simulate`` seeds it from its own seed).

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> from noisyfeedback.datasets.regression import ors_synthetic
    >>> X, y = ors_synthetic(n_samples=5000, seed=0)
    >>> noise = nf.feedback.GaussianNoise.uniform(5.0, n_rounds=5000, seed=1)
    >>> nlms = nf.simulate(nf.NLMS(r=1.0), X, y, noise, n_rounds=5000, seed=2)
    >>> ors = nf.simulate(nf.ORS(r=1.0, scaling="beta", beta=1.0), X, y, noise, n_rounds=5000, seed=2)
    >>> bool(ors.mse < nlms.mse)
    True

    References
    ----------
    .. [1] Moroshko, E. & Crammer, K. Online regression with controlled label noise rate.
    """

    _parameter_constraints = {
        "r": R_CONSTRAINT,
        "scaling": Options(tuple(SCALINGS)),
        "variance": Options(("known", "unknown")),
        "beta": Interval(0, None),
        "budget": OneOf((Options((None,)), Interval(1, None))),
        "strategy": Options(tuple(STRATEGIES)),
        "a": Interval(0, None, closed="neither"),
        "horizon": OneOf((Options((None,)), Integer(1))),
        "seed": AnySeed(),
    }
    _learned_state = {**LinearRegressor._learned_state, "a_": Interval(0, None, closed="neither"), **AUTO_STATE}
    _optional_state = staticmethod(auto_optional_state)
    _test_params = {"r": "auto", "scaling": "one_sample_pred", "variance": "unknown", "budget": 1.5,
                    "strategy": "auto", "seed": 0}

    def __init__(
        self,
        r: float | str = "auto",
        scaling: str = "one_sample_pred",
        variance: str = "known",
        beta: float = 1.0,
        budget: float | None = None,
        strategy: str = "auto_self_tuned",
        a: float = 1.0,
        horizon: int | None = None,
        seed: int | None = None,
    ):
        self.r = r
        self.scaling = scaling
        self.variance = variance
        self.beta = beta
        self.budget = budget
        self.strategy = strategy
        self.a = a
        self.horizon = horizon
        self.seed = seed

    def _check_params(self) -> None:
        if self.variance == "unknown" and self.scaling not in UNKNOWN_VARIANCE_SCALINGS:
            raise ValueError(
                f"The 'variance' parameter of ORS is 'unknown', but scaling={self.scaling!r} needs the known "
                f"noise variance; with unknown variance use one of {UNKNOWN_VARIANCE_SCALINGS}."
            )
        if self.budget is not None and self.scaling == "two_samples":
            raise ValueError(
                "The 'budget' parameter of ORS cannot be combined with scaling='two_samples' (which takes two "
                "labels every round); with a budget use scaling='one_sample_pred' (k-label rounds use the "
                "mean and the sample variance)."
            )
        if self.budget is not None and self.strategy == "begin" and self.horizon is None:
            raise ValueError(
                "The 'horizon' parameter of ORS must be the number of rounds when strategy='begin' "
                "(k labels go to the first horizon·(B−1)/(k−1) rounds)."
            )

    # ------------------------------------------------------ configuration
    @property
    def draws_per_round(self) -> int:
        return 0 if self.budget is None else 1

    @property
    def labels_per_round(self) -> int:
        if self.scaling == "two_samples":
            return 2
        if self.budget is not None:
            return max(1, math.ceil(self.budget))
        return 1

    @property
    def needs_variance(self) -> bool:
        return self.variance == "known" and self.scaling != "none"

    @property
    def needs_clean_target(self) -> bool:
        return self.scaling == "opt"

    def _config(self) -> tuple:
        strategy, B, k, p, n_begin = budget_plan(self.budget, self.strategy, self.horizon)
        return (SCALINGS[self.scaling], self.variance == "known", self._r_number(), float(self.beta),
                strategy, B, k, p, n_begin)

    def _tuning_state(self) -> float:
        return float(getattr(self, "a_", self.a))

    def _set_tuning_state(self, a: float) -> None:
        self.a_ = float(a)

    def _check_label_columns(self, j: int) -> None:
        super()._check_label_columns(j)
        if self.budget is not None and j != self.labels_per_round:
            raise ValueError(
                f"y must have {self.labels_per_round} columns (k = ceil(budget) independent noisy labels a row) "
                f"with budget={self.budget!r}; got {j}."
            )
        if self.scaling == "two_samples" and j < 2:
            raise ValueError("y must have at least 2 columns (noisy labels a row) with scaling='two_samples'.")
