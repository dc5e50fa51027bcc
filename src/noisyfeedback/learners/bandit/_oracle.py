"""Shared machinery of the regression-oracle bandits (SquareCB, EpsilonGreedy).

Why a regression oracle needs no knowledge of the flip rates: with class-independent flips
(P(f̃=1 | f=0) = ρ0, P(f̃=0 | f=1) = ρ1),

    E[f̃ | x, a] = ρ0 + (1 − ρ0 − ρ1)·P(y = a | x),

an increasing affine map of the clean value P(y = a | x) whenever ρ0 + ρ1 < 1. A least-squares
model of the raw 0/1 feedback therefore ranks the actions exactly as a model of the clean feedback
would; the flips only add variance. Diluted (set) feedback is additive in the same way:
E[f̃ | x, S] = ρ0 + (1 − ρ0 − ρ1)·Σ_{a∈S} P(y = a | x), so the set's prediction is the sum of its
labels' values. Where it fails: flip rates that depend on the class (ρ0, ρ1 functions of y or of
the action) or on the context x. Then E[f̃ | x, a] = ρ0(a) + (1 − ρ0(a) − ρ1(a))·P(y = a | x) is no
longer the same increasing map for every action and can rank a worse action first (a test in
tests/learners/test_oracle_bandits.py builds such a case). Known per-action rates fix it: the policy then ranks by
c_a = (v_a − ρ0(a))/(1 − ρ0(a) − ρ1(a)) on the raw scale of the mean action, ρ̄0 + (1 − ρ̄0 − ρ̄1)·c_a
(``rho0``/``rho1`` arrays; ``OracleBandit._correction``); rates equal for every action leave v as it is.

Graded rewards: the oracle fits any real-valued reward r as it is (v_a then estimates E[r | x, a]; a 0.5
for a partial success, −cost of a VW label). The flip rates describe clicks, so rewards other than 0/1 are
refused when rates are set (``learn`` says so).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..._rows import CodedRows
from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, OneOf, Options, check_memory
from ...base import Tags
from ...feedback import CODE_BANDIT, CODE_DILUTED, Rates, kernel_feedback, per_action, rate_arrays
from ...kernels.features import quadratic_dimension, quadratic_rows
from ...kernels.oracle import (
    ORACLE_ADAGRAD,
    ORACLE_NORMALIZED,
    ORACLE_RIDGE,
    oracle_act,
    oracle_learn,
    oracle_simulate,
    oracle_values_rows,
    row_sqnorms,
)
from .._linear import (
    LinearClassifier,
    LoggedLearning,
    NonFiniteUpdate,
    _masked_argmax,
    check_rewards,
    finite_scale_rows,
    kernel_view,
    row_range,
)
from ..diluted._sets import SetPredictor

_ORACLES = {"adagrad": ORACLE_ADAGRAD, "normalized": ORACLE_NORMALIZED, "ridge": ORACLE_RIDGE}

#: ``oracle="auto"`` takes the ridge oracle for one action a round (m = 1) up to this many features, AdaGrad
#: above (and for sets). Chosen by benchmarks/auto_oracle_sweep.py on tuning data (docs/algorithms.md §4.13):
#: SquareCB, NoisyBandit(0.1, 0.2), 100,000 rounds, online error AdaGrad -> ridge (ridge's share of AdaGrad's
#: rounds/s): linear streams d = 8: 0.235 -> 0.201 (0.95), 16: 0.252 -> 0.188 (0.88), 32: 0.271 -> 0.219
#: (0.49), 64: 0.340 -> 0.242 (0.28), 96: 0.356 -> 0.271 (0.12), 128: 0.336 -> 0.294 (0.12), 192: 0.404 ->
#: 0.339 (0.14), 256: 0.475 -> 0.371 (0.065); digits (d = 64): 0.071 -> 0.025 (0.27). Rule: the largest grid
#: d where ridge errs less and keeps >= 1/20 of AdaGrad's rounds/s at every tuning set of dimension <= d.
AUTO_RIDGE_MAX_FEATURES = 256

#: ``features="auto"`` with ``oracle="auto"`` and m = 1 takes the degree-2 map (``kernels/features.py``) up to
#: this many features: the largest d whose map, d + d(d+1)/2 columns, is within AUTO_RIDGE_MAX_FEATURES (21 ->
#: 252), so that auto's ridge oracle runs on it at no more cost than auto already accepts for raw features.
#: Checked by benchmarks/feature_map_sweep.py on tuning data (see its docstring and benchmarks/RESULTS.md).
AUTO_QUADRATIC_MAX_FEATURES = max(d for d in range(1, AUTO_RIDGE_MAX_FEATURES + 1)
                                  if quadratic_dimension(d) <= AUTO_RIDGE_MAX_FEATURES)


def _estimating(rate) -> bool:
    """True for the rate "estimate" (rather than a number or an array of rates)."""
    return isinstance(rate, str) and rate == "estimate"


def resolve_oracle(oracle: str, m: int, n_features: int) -> str:
    """The oracle ``oracle="auto"`` stands for: "ridge" where m = 1 and d <= AUTO_RIDGE_MAX_FEATURES, else
    "adagrad"; any other value is itself.

    >>> resolve_oracle("auto", 1, 64), resolve_oracle("auto", 1, 784), resolve_oracle("auto", 2, 16)
    ('ridge', 'adagrad', 'adagrad')
    """
    if oracle != "auto":
        return oracle
    return "ridge" if m == 1 and n_features <= AUTO_RIDGE_MAX_FEATURES else "adagrad"


def resolve_features(features: str, oracle: str, m: int, n_features: int) -> str:
    """The feature map ``features="auto"`` stands for: "quadratic" where the oracle is "auto", m = 1 and
    d <= AUTO_QUADRATIC_MAX_FEATURES, else "linear" (an explicit oracle keeps the raw features); any other
    value is itself.

    >>> resolve_features("auto", "auto", 1, 16), resolve_features("auto", "auto", 1, 64)
    ('quadratic', 'linear')
    >>> resolve_features("auto", "ridge", 1, 16), resolve_features("auto", "auto", 2, 16)
    ('linear', 'linear')
    """
    if features != "auto":
        return features
    return "quadratic" if oracle == "auto" and m == 1 and n_features <= AUTO_QUADRATIC_MAX_FEATURES else "linear"


def mapped_dimension(features: str, n_features: int) -> int:
    """The number of columns the oracle sees: d ("linear") or d + d(d+1)/2 ("quadratic")."""
    return quadratic_dimension(n_features) if features == "quadratic" else n_features


class _FeedbackKind:
    """``feedback_kind``: on an instance 'bandit' (m = 1) or 'set' (m > 1); on the class 'bandit' (the
    default m = 1), for code that asks the class. ``feedback_kinds`` lists both."""

    def __get__(self, obj, objtype=None) -> str:
        if obj is None:
            return "bandit"
        return "set" if obj._sets() else "bandit"


class OracleBandit(LoggedLearning, LinearClassifier):
    """A linear regression oracle of the feedback (0/1 clicks or any real-valued reward), v = W x̂ + b (x̂ = x/‖x‖: rows
    scaled to unit norm inside, so that the step sizes do not depend on the scale of the features), with a
    policy over v.

    Subclasses set ``_policy`` (a ``kernels.oracle.POLICY_*`` code) and implement ``_explore()``
    -> (explore, gamma_exponent) for the kernels.
    """

    _policy: ClassVar[int] = 0
    _common_constraints: ClassVar[dict] = {
        "m": Integer(1),
        # bounded so that no in-range value overflows: an AdaGrad step moves a weight by at most
        # learning_rate, so |w| <= learning_rate·t after t rounds; the ridge inverse starts at I/lam
        # and its update squares it (lam below 1e-154 overflowed it on the first round)
        "learning_rate": Interval(0, 1e3, closed="right"),
        "oracle": Options(("auto", "adagrad", "normalized", "ridge")),
        "features": Options(("auto", "linear", "quadratic")),
        "lam": Interval(1e-8, 1e8, closed="both"),
        "rho0": OneOf((Rates(), Options(("estimate",)))),
        "rho1": OneOf((Rates(), Options(("estimate",)))),
        "seed": AnySeed(),
    }

    # ------------------------------------------------------------- kind
    @property
    def draws_per_round(self) -> int:  # type: ignore[override]
        """Uniforms a round: 1 with m = 1; with m > 1 also K − 1 for the random label order of the sampler."""
        return int(self.n_classes) if self._sets() else 1

    def _sets(self) -> bool:
        """True when the learner proposes sets (m > 1). An invalid m raises the parameter error here, so that
        every use (e.g. simulate matching the channel to ``feedback_kind``) reports it by name."""
        m = self.m
        if not (isinstance(m, (int, np.integer)) and not isinstance(m, bool) and m >= 1):
            self._validate_params()
        return m > 1

    #: 'bandit' (NoisyBandit) with m = 1, 'set' (Diluted(m)) with m > 1
    feedback_kind = _FeedbackKind()  # type: ignore[assignment]
    #: what it is, for every front door (noisyfeedback.base.Tags)
    _tags = Tags(family="bandit", online=True, servable=True)
    #: what a model file may hold (checked by nf.load): the weights, the intercepts, AdaGrad's sums
    _learned_state: ClassVar[dict] = {
        # the oracle in use ("auto" resolved at the first fit from m and the number of features)
        "oracle_": Options(("adagrad", "normalized", "ridge")),
        # the feature map in use ("auto" resolved at the first fit; absent from files saved before it existed:
        # "linear"); W_ then has d + d(d+1)/2 columns with "quadratic"
        "features_": Options(("linear", "quadratic")),
        **LinearClassifier._learned_state,
        "intercept_": Array(("n_classes",)),
        "sum_sq_grad_": Array(("n_classes", "d")),
        "sum_sq_grad_intercept_": Array(("n_classes",)),
        "n_updates_": Array((1,), dtype="int64"),
        # oracle="ridge": each label's (d+1)×(d+1) inverse of λI + Σ z zᵀ, z = (x̂, 1); else empty
        "ridge_inverse_": Array(lambda p: ("n_classes", "d+1", "d+1")
                                if p.get("oracle_", p.get("oracle")) == "ridge" else ("n_classes", 0, 0)),
        # rho0="estimate": the estimated (rho0, rho1) per action, (whether they are in use, estimates made) and
        # the anchor tallies (n_hi, s_hi, n_lo, s_lo) per action (see _estimate_rates); empty otherwise
        "rate_estimates_": Array(lambda p: (2, "n_classes") if _estimating(p.get("rho0")) else (2, 0)),
        "rate_state_": Array((2,), dtype="int64"),
        "rate_stats_": Array(lambda p: (4, "n_classes") if _estimating(p.get("rho0")) else (4, 0)),
        # (Σ r², n) of the oracle's prequential residuals r = feedback − prediction (the adaptive γ_scale of
        # SquareCB reads them: kernels.oracle.adaptive_scale); absent from files saved before it existed: zeros
        "noise_": Array((2,)),
    }
    _mutable_state = ("W_", "intercept_", "sum_sq_grad_", "sum_sq_grad_intercept_", "ridge_inverse_", "n_updates_",
                      "rate_stats_", "noise_")
    #: model files saved before these attributes existed (an explicit oracle, known rates) still load: without
    #: oracle_ the oracle is the parameter; the rate attributes are needed only with rho0="estimate"
    #: (a file saved with oracle="auto" always records the oracle it resolved to: there oracle_ is required)
    _optional_state = staticmethod(lambda p: ("features_", "noise_") + tuple(
        a for a in ("oracle_", "rate_estimates_", "rate_state_", "rate_stats_")
        if (a != "oracle_" or p.get("oracle") != "auto") and (a == "oracle_" or not _estimating(p.get("rho0")))))

    #: rho0="estimate": no correction before this many rounds; then an estimate every RATE_EVERY rounds from
    #: the anchor tallies, after which the right-play tallies are multiplied by RATE_DECAY (a memory of about
    #: RATE_EVERY/(1 − RATE_DECAY) = 20,000 rounds: the learner's beliefs, hence its anchors, improve as it
    #: learns); the wrong-play tallies, rare under inverse-gap weighting, accumulate over the whole stream.
    #: Chosen on tuning streams (MNIST-test, Fashion-MNIST-test, digits; seeds 100-107; 300,000 rounds;
    #: benchmarks/tune_rates.py): the sooner the estimates start (the same memory), the more of the gap they
    #: close (a first estimate after 10,000 / 5,000 / 2,500 / 1,000 rounds: 69.0 / 73.5 / 75.0 / 75.8 % with
    #: RATE_PRIOR 3; 60.9 % for the former 20,000 with 10); the chi-square test keeps early noise out. Every
    #: 1,000 rounds closes 0.8 points more than every 2,500 but costs 15-20 % more time (each estimate is a
    #: return from the compiled loop to Python)
    RATE_WARMUP: ClassVar[int] = 2_500
    RATE_EVERY: ClassVar[int] = 2_500
    RATE_DECAY: ClassVar[float] = 0.875
    #: an estimate is used once the (decayed) right-play anchors number this many per action on average; an
    #: action's 1 − ρ1 is shrunk toward the pooled rate of all actions by this many pseudo-anchors (a label the
    #: learner is never sure of, such as Fashion-MNIST's shirts for a linear model, takes the pooled rate)
    RATE_MIN_ANCHORS: ClassVar[float] = 50.0
    #: ρ0(a) = s_lo/(n_lo + RATE_PRIOR): wrong-play anchors are rare under inverse-gap weighting (it seldom plays
    #: a label it believes wrong), so the estimate is shrunk toward 0 (the uncorrected offset) until they accrue
    #: (tuning streams as above, every 2,500 rounds: 1 / 3 / 10 pseudo-anchors close 75.5 / 75.0 / 72.4 % of the
    #: gap; 1 lets the uniform flips' estimates in more often, up to 1.016x the plain error)
    RATE_PRIOR: ClassVar[float] = 3.0
    #: the per-action estimates are used only when the anchors' feedback rates differ between the actions (a
    #: chi-square test of equal rates rejected at this level); equal rates leave the ranking of the raw values
    #: right (the papers' assumption) and the learner keeps them uncorrected
    RATE_LEVEL: ClassVar[float] = 1e-3
    #: every kind of feedback the class learns from, by its m
    feedback_kinds: ClassVar[tuple[str, ...]] = ("bandit", "set")

    @property
    def extra_metrics(self) -> tuple[str, ...]:  # type: ignore[override]
        """With m > 1, simulations also report the greedy set's miss rate 1[y ∉ Ŷ] (``set_miss``)."""
        return ("set_miss",) if self._sets() else ()

    def _check_params(self) -> None:
        K, m = self.n_classes, self.m
        if m > K - 1:
            raise ValueError(
                f"The 'm' parameter of {type(self).__name__} must be an int in [1, n_classes-1] = [1, {K - 1}] "
                f"(a set of all {K} labels carries no information). Got {m!r} instead."
            )
        if self.oracle == "ridge" and m > 1:
            raise ValueError(
                f"The 'oracle' parameter of {type(self).__name__} must be 'adagrad' or 'normalized' with m > 1 "
                f"(the ridge oracle fits one label's feedback a round). Got 'ridge' with m={m!r} instead."
            )
        if self.oracle == "normalized" and not self.learning_rate < 2:
            raise ValueError(
                f"The 'learning_rate' parameter of {type(self).__name__} must be in (0, 2) with oracle='normalized' "
                f"(the normalised step diverges from 2 on). Got {self.learning_rate!r} instead."
            )
        if (_estimating(self.rho0)) != (_estimating(self.rho1)):
            raise ValueError(
                f"The 'rho0' and 'rho1' parameters of {type(self).__name__} must both be 'estimate' or both rates. "
                f"Got rho0={self.rho0!r}, rho1={self.rho1!r} instead."
            )
        if _estimating(self.rho0):
            if m > 1:
                raise ValueError(f"The 'rho0' parameter of {type(self).__name__} must be rates with m > 1: "
                                 f"'estimate' needs m = 1. Got m={m!r} instead.")
            return
        if m > 1 and (per_action(self.rho0) or per_action(self.rho1)):
            raise ValueError(
                f"The 'rho0' and 'rho1' parameters of {type(self).__name__} must be single rates with m > 1 "
                f"(per-action rates correct one action's value). Got rho0={self.rho0!r}, rho1={self.rho1!r} "
                f"with m={m!r} instead."
            )
        rate_arrays(type(self).__name__, self.rho0, self.rho1, K)

    _NO_RATES = np.zeros(0)

    def _correction(self) -> tuple[np.ndarray, np.ndarray]:
        """(c0, cb) of the values the policy reads, (v_a − c0(a))/cb(a) (one entry per action; the kernels'
        ``correct_values``): the clean estimates c_a = (v_a − ρ0(a)/m)/s(a), s = 1 − ρ0 − ρ1, mapped back
        onto the raw scale of the mean action, ρ̄0/m + s̄·c_a (ρ̄0, s̄ the means over the actions), so that

            (v_a − c0(a))/cb(a) = ρ̄0/m + s̄·(v_a − ρ0(a)/m)/s(a),   cb = s/s̄,   c0 = (ρ0 − ρ̄0·cb)/m.

        The rates then change the policy only through their differences between actions: an action's
        value moves relative to the others by how much its own rates differ from the mean, and the gaps
        keep the raw values' scale (dividing every gap by s would raise the effective γ of SquareCB by
        1/s and change its exploration even where every action has the same rates). Rates that are equal
        for every action (a scalar pair, or equal arrays) rank the raw values right already: empty arrays,
        the policy reads v itself (the uncorrected learner, bit for bit); only `predict_proba` and
        `corrected_values` use them."""
        r0, r1 = self._rates()
        if not (r0.any() or r1.any()) or ((r0 == r0[0]).all() and (r1 == r1[0]).all()):
            return self._NO_RATES, self._NO_RATES
        s = 1.0 - r0 - r1
        cb = s / s.mean()
        return (r0 - r0.mean() * cb) / int(self.m), cb

    def _rates(self) -> tuple[np.ndarray, np.ndarray]:
        """(ρ0, ρ1) in use: the known rates (arrays of one value or K), or with rho0="estimate" the current
        estimates when they are in use, else zeros (the uncorrected values)."""
        if _estimating(self.rho0):
            if getattr(self, "rate_state_", None) is not None and self.rate_state_[0] == 1:
                return self.rate_estimates_[0], self.rate_estimates_[1]
            return np.zeros(1), np.zeros(1)
        return self._derived_from_params(
            "rates", lambda: rate_arrays(type(self).__name__, self.rho0, self.rho1, self.n_classes))

    # ------------------------------------------------------ estimated rates
    def _estimate_rates(self) -> None:
        """Estimate (ρ0(a), ρ1(a)) from the anchor tallies (``kernels.oracle.rate_tally``), as NREst reads the
        rates off the extremes of a calibrated P(f̃ = 1 | x, a), with the learner's own beliefs for the
        calibration: the feedback rate of confident right plays of a (greedy, margin >= RATE_MARGIN) estimates
        1 − ρ1(a) (shrunk toward the pooled rate by RATE_MIN_ANCHORS), that of plays of a well below the greedy
        label ρ0(a) (shrunk toward 0 by RATE_PRIOR). Used when there are RATE_MIN_ANCHORS right-play anchors
        per action on average, 1 − ρ0 − ρ1 >= 0.05 everywhere, and the rates differ between the actions
        (chi-square at RATE_LEVEL); else the values stay uncorrected: without anchors (no context where the
        learner is confident) and where the rates are the same for every action (the ranking of the raw values
        is then already right). The right-play tallies then decay by RATE_DECAY.

        Both ends are biased toward each other by the learner's mistakes (a confident play that is wrong, a
        doubtful one that is right), less as it learns; the ranking is robust to that (on MNIST with the
        action-dependent flips of benchmarks/per_action_mnist.py, ρ0 at half its value costs 3 % error)."""
        from scipy.stats import chi2

        n_hi, s_hi, n_lo, s_lo = self.rate_stats_
        K = self.n_classes
        a = self.RATE_MIN_ANCHORS
        pooled_hi = s_hi.sum() / max(n_hi.sum(), 1e-12)
        hi = (s_hi + a * pooled_hi) / (n_hi + a)
        r1 = np.clip(1.0 - hi, 0.0, 0.99)
        r0 = np.clip(s_lo / (n_lo + self.RATE_PRIOR), 0.0, 0.99)
        ok = bool(n_hi.sum() >= a * K and (1.0 - r0 - r1 >= 0.05).all())
        if ok:
            differ = False
            for n, h in ((n_hi, s_hi), (n_lo, s_lo)):
                seen = n > 0
                pooled = h[seen].sum() / max(n[seen].sum(), 1e-12)
                if seen.sum() > 1 and 0.0 < pooled < 1.0:
                    stat = float((n[seen] * (h[seen] / n[seen] - pooled) ** 2).sum() / (pooled * (1.0 - pooled)))
                    differ = differ or stat > chi2.ppf(1.0 - self.RATE_LEVEL, int(seen.sum()) - 1)
            ok = differ
        self.rate_estimates_ = np.vstack([r0, r1])
        self.rate_state_[0] = 1 if ok else 0
        self.rate_state_[1] += 1
        self.rate_stats_[:2] *= self.RATE_DECAY

    def _rate_segments(self, n: int):
        """Split n rounds at the estimates (rounds t >= RATE_WARMUP with t % RATE_EVERY == 0, t = updates so far)."""
        if not _estimating(self.rho0) or n == 0:
            yield 0, n
            return
        t0 = int(self.n_updates_[0])
        start = 0
        while start < n:
            stop = min(n, start + (self._next_estimate(t0 + start) - (t0 + start)))
            yield start, stop
            start = stop

    def _next_estimate(self, t: int) -> int:
        """The first estimate round after t updates: the least multiple of RATE_EVERY that is > t and
        >= RATE_WARMUP."""
        every = self.RATE_EVERY
        nxt = max(self.RATE_WARMUP, (t // every + 1) * every)
        return nxt if nxt % every == 0 else (nxt // every + 1) * every

    def _after_rounds(self, t_before: int, n: int) -> None:
        """After rounds t_before .. t_before + n − 1 (a segment of `_rate_segments`): estimate at a boundary."""
        if n and t_before + n == self._next_estimate(t_before + n - 1):
            self._estimate_rates()

    def _rate_tallies(self) -> np.ndarray:
        """The tallies the kernels update: ``rate_stats_`` (4, K) when estimating, else empty."""
        if not _estimating(self.rho0):
            return _NO_STATS
        if not self.rate_stats_.flags.c_contiguous:
            self.rate_stats_ = np.ascontiguousarray(self.rate_stats_)
        return self.rate_stats_

    def corrected_values(self, X) -> np.ndarray:
        """The clean estimates, shape (n_samples, n_classes): with flip rates c_a = (v_a − ρ0(a)/m)/(1 − ρ0(a)
        − ρ1(a)), the clean P(y = a | x) the raw v_a estimates (m = 1), inverted per action; without rates
        v itself (`decision_function`). The policy ranks the actions as these do (`policy_values`)."""
        v = self.decision_function(X)
        r0, r1 = self._rates()
        if not (r0.any() or r1.any()):
            return v
        return (v - r0 / int(self.m)) / (1.0 - r0 - r1)

    def policy_values(self, X) -> np.ndarray:
        """The values the policy explores and exploits on, shape (n_samples, n_classes): v itself where the
        flip rates are the same for every action (or none), else ρ̄0/m + s̄·c_a, the clean estimates
        (`corrected_values`) on the raw scale of the mean action (`_correction`)."""
        v = self.decision_function(X)
        c0, cb = self._correction()
        return v if c0.shape[0] == 0 else (v - c0) / cb

    def _explore(self) -> tuple[float, float]:
        raise NotImplementedError

    _FIXED = np.zeros(0)

    def _adaptation(self) -> np.ndarray:
        """The adaptive exploration's constants for the kernels (`kernels.oracle.adaptive_scale`), or empty: the
        ``explore`` of `_explore` is used as it is."""
        return self._FIXED

    def _noise(self) -> np.ndarray:
        """(Σ r², n) of the oracle's residuals, the array the kernels add to (zeros for a model file saved
        before it was kept)."""
        noise = getattr(self, "noise_", None)
        if noise is None:
            self.noise_ = noise = np.zeros(2)
        return noise

    def _check_X(self, X, fitting: bool):
        """Validated X; rows whose ‖x‖² would overflow or underflow rescaled by a power of 2 (the learner
        sees x/‖x‖, the same for both; every other row keeps its bits): see ``finite_scale_rows``; then the
        feature map in use (`_mapped`)."""
        self._validate_params()
        if hasattr(self, "W_") and self.features not in ("auto", self._features()):
            raise ValueError(f"The 'features' parameter of {type(self).__name__} cannot change after fitting: the "
                             f"weights are over the {self._features()!r} features. Got {self.features!r}; "
                             "refit from scratch (fit_logged, or a fresh learner) to change it.")
        return self._mapped(finite_scale_rows(super()._check_X(X, fitting)))

    def _simulation_rows(self, X):
        """simulate's rows: rescaled as ``_check_X`` does and mapped (same rows, same bits as act/learn)."""
        return self._mapped(finite_scale_rows(X))

    def _features(self) -> str:
        """The feature map in use: ``features_`` once fitted ("linear" for a model saved before the map
        existed), else the parameter (unresolved "auto" before the first fit)."""
        fitted = getattr(self, "features_", None)
        if fitted is not None:
            return fitted
        return "linear" if hasattr(self, "W_") else self.features

    def _mapped(self, X):
        """X as the oracle sees it: itself ("linear", or before any fit), or the degree-2 map of its rows
        (``kernels.features.quadratic_rows``; a CSR X is made dense first, as the map is dense)."""
        if self._features() != "quadratic":
            return X
        X = X.toarray() if sp.issparse(X) else X
        X = np.ascontiguousarray(X, dtype=np.float64)
        n, d = X.shape
        D = quadratic_dimension(d)
        check_memory(8.0 * n * D, f"{type(self).__name__}(features='quadratic') rows ({n} x {D})")
        out = np.empty((n, D))
        quadratic_rows(X, out)
        return out

    @property
    def n_features_(self) -> int:
        """The number of features of X (before the feature map): d of W_'s d + d(d+1)/2 with "quadratic"."""
        D = self.W_.shape[1]
        if self._features() != "quadratic":
            return D
        d = int((np.sqrt(9.0 + 8.0 * D) - 3.0) / 2.0)
        while quadratic_dimension(d) < D:
            d += 1
        return d

    # ------------------------------------------------------------ state
    def _oracle(self) -> str:
        """The oracle in use: ``oracle_`` once fitted (``oracle`` resolved), else ``oracle`` itself."""
        fitted = getattr(self, "oracle_", None)
        if fitted is not None and (self.oracle == "auto" or self.oracle == fitted):
            return fitted
        if fitted is not None:  # the parameter was changed since fitting: the new oracle from now on
            self.oracle_ = self.oracle
            return self.oracle
        if self.oracle == "auto" and hasattr(self, "W_"):  # weights set without the resolved oracle
            self.oracle_ = resolve_oracle("auto", int(self.m), self.W_.shape[1])
            return self.oracle_
        return self.oracle

    def _init_state(self, n_features: int, seed_fallback=None) -> None:
        """State for rows of ``n_features`` features (before the feature map): the map and the oracle
        resolved, the weights over the mapped features."""
        fresh = not hasattr(self, "W_")
        if fresh:
            self._validate_params()
            self.features_ = resolve_features(self.features, self.oracle, int(self.m), int(n_features))
            n_features = mapped_dimension(self.features_, int(n_features))
            self.oracle_ = resolve_oracle(self.oracle, int(self.m), n_features)
        super()._init_state(n_features, seed_fallback)
        if fresh:
            K = self.n_classes
            self.intercept_ = np.zeros(K)
            self.sum_sq_grad_ = np.zeros((K, n_features))  # row-major: the update reads one label's row
            self.sum_sq_grad_intercept_ = np.zeros(K)
            self.n_updates_ = np.zeros(1, dtype=np.int64)
            self.ridge_inverse_ = self._fresh_ridge_inverse(n_features)
            est = _estimating(self.rho0)
            self.rate_estimates_ = np.zeros((2, K if est else 0))
            self.rate_state_ = np.zeros(2, dtype=np.int64)  # (in use, estimates made)
            self.rate_stats_ = np.zeros((4, K if est else 0))
            self.noise_ = np.zeros(2)

    def _fresh_ridge_inverse(self, n_features: int) -> np.ndarray:
        """I/λ for every label with oracle="ridge" (ridge before any data), else an empty (K, 0, 0)."""
        K = self.n_classes
        if self._oracle() != "ridge":
            return np.zeros((K, 0, 0))
        check_memory(8.0 * K * (n_features + 1) ** 2,
                     f"{type(self).__name__}(oracle='ridge') with {K} labels and {n_features} features")
        return np.repeat(np.eye(n_features + 1)[None] / float(self.lam), K, axis=0)

    def _state(self) -> tuple:
        if not self.W_.flags.f_contiguous:  # column-major: a feature's K weights adjacent (see class_major)
            self.W_ = np.asfortranarray(self.W_)
        if not self.sum_sq_grad_.flags.c_contiguous:
            self.sum_sq_grad_ = np.ascontiguousarray(self.sum_sq_grad_)
        d = self.W_.shape[1]
        oracle = self._oracle()
        want = (self.n_classes, d + 1, d + 1) if oracle == "ridge" else (self.n_classes, 0, 0)
        P = getattr(self, "ridge_inverse_", None)
        if P is None or P.shape != want:  # the oracle changed since fitting: ridge restarts from I/λ
            self.ridge_inverse_ = self._fresh_ridge_inverse(d)
        elif not P.flags.c_contiguous:
            self.ridge_inverse_ = np.ascontiguousarray(P)
        return (_ORACLES[oracle], self.W_, self.intercept_, self.sum_sq_grad_, self.sum_sq_grad_intercept_,
                self.ridge_inverse_, self.n_updates_)

    # -------------------------------------------------------- inference
    def decision_function(self, X) -> np.ndarray:
        """Predicted feedback of every label, v = W x̂ + b (x̂ = x/‖x‖), shape (n_samples, n_classes); zeros
        before learning.

        With flips these estimate ρ0 + (1−ρ0−ρ1)·P(y=a | x) (m = 1); see `predict_proba`.
        """
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.zeros((X.shape[0], self.n_classes))
        if hasattr(self, "W_"):
            oracle_values_rows(self.W_, self.intercept_, *kernel_view(X), out)
        return out

    def predict(self, X, allowed=None, excluded=None) -> np.ndarray:
        """Greedy labels: the argmax of the values the policy reads (`policy_values`: v, or with rates that
        differ between the actions the corrected values; lowest index on ties); 0 before any learning. With
        ``allowed``/``excluded`` the argmax over the actions a row may take."""
        v = self.policy_values(X)
        mask = self._mask(allowed, excluded, v.shape[0])
        if mask is not None:
            return _masked_argmax(v, mask)
        return np.argmax(v, axis=1).astype(np.int64)

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated estimates of the clean P(y = a | x), using the parameters ``rho0``, ``rho1``.

        Each value estimates ρ0/m + (1−ρ0−ρ1)·P(y=a | x); inverted, clipped to [0, 1] and normalised to
        rows summing to 1 (uniform where every estimate is 0). The actions never need ρ0, ρ1.
        """
        v = self.decision_function(X)
        r0, r1 = self._rates()
        p = np.clip((v - r0 / self.m) / (1.0 - r0 - r1), 0.0, 1.0)
        tot = p.sum(axis=1, keepdims=True)
        return np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), 1.0 / self.n_classes)

    def action_probabilities(self, X, allowed=None, excluded=None) -> np.ndarray:
        """The exploration distribution ``act`` draws from, (n_samples, n_classes): P(label a is played)
        (m = 1: rows sum to 1; m > 1: the inclusion probability of each label in the set, rows sum to m).
        With ``allowed``/``excluded`` (m = 1) restricted to the actions a row may take and renormalised."""
        X_in, X = X, self._check_X(X, fitting=True)
        n = X.shape[0]
        mask = self._mask(allowed, excluded, n)
        if mask is not None:  # from the rows as given (X is mapped: it must not be mapped twice)
            return self._restrict_probabilities(self.action_probabilities(X_in), mask)
        m = int(self.m)
        sets = np.empty((n, m), np.int64)
        pis = np.empty((n, self.n_classes))
        explore, expo = self._explore()
        oracle_act(self.W_, self.intercept_, *kernel_view(X), m, self._policy, explore, expo,
                   int(self.n_updates_[0]), np.zeros(n * self.draws_per_round), sets, np.empty(n), pis,
                   *self._correction())
        return pis

    # ------------------------------------------------------- act / learn
    def act(self, X, allowed=None, excluded=None) -> tuple[np.ndarray, np.ndarray]:
        """Draw one action (m = 1: shape (n,)) or set (m > 1: (n, m), increasing) per row; returns
        (actions, propensities): P(action), or for m > 1 P(set | the round's random label order).

        ``allowed``/``excluded`` (action indices for every row, or an (n, K) boolean mask): draw from the
        distribution restricted to the actions a row may take and renormalised (one uniform a row); the
        propensity is the restricted probability (`restricted_draw`)."""
        if allowed is not None or excluded is not None:
            return self._act_restricted(X, allowed, excluded)
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        m = int(self.m)
        u = self.rng_.random(n * self.draws_per_round)
        sets = np.empty((n, m), np.int64)
        probs = np.empty(n)
        explore, expo = self._explore()
        oracle_act(self.W_, self.intercept_, *kernel_view(X), m, self._policy, explore, expo,
                   int(self.n_updates_[0]), u, sets, probs, np.empty((n, self.n_classes)), *self._correction())
        return (sets[:, 0].copy() if m == 1 else sets), probs

    def _flips(self) -> str | None:
        """The flip rates as text when the learner corrects flips (rates not all 0, or "estimate"), else None."""
        if not _estimating(self.rho0):
            r0, r1 = self._rates()
            if not (r0.any() or r1.any()):
                return None
        return f"rho0={self.rho0!r}, rho1={self.rho1!r}"

    def learn(self, X, actions, feedback, propensities):
        """Update from logged rows in order: action (or set), its reward, its propensity.

        The regression oracle fits the observed reward of the played action (set: their sum) as it is:
        0/1 clicks, or any real-valued reward (a graded reward such as 0.5, −cost); the flip rates
        ``rho0``/``rho1`` correct clicks only, so rewards other than 0/1 are refused with them.
        Propensities are checked but not needed (no importance weights)."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        if self.m == 1:
            sets = self._check_actions(actions, n)[:, None]
        else:
            sets = SetPredictor._check_sets(self, actions, n)  # type: ignore[arg-type]
        feedback = check_rewards(feedback, n, type(self).__name__, self._flips())
        self._check_propensities(propensities, n)
        oracle, W, b, G, Gb, P, t = self._state()
        noise = self._noise()
        sets = np.ascontiguousarray(sets)
        lr = float(self.learning_rate)
        for a, z in list(self._rate_segments(n)):
            Xs, Ss, Fs = row_range(X, a, z), sets[a:z], feedback[a:z]
            t_before = int(t[0])
            c0, cb = self._correction()
            stats = self._rate_tallies()
            try:
                self._guarded(z - a, lambda lo, hi: oracle_learn(oracle, W, b, G, Gb, P, t,
                                                                 *kernel_view(row_range(Xs, lo, hi)), Ss[lo:hi],
                                                                 Fs[lo:hi], lr, c0, cb, stats, noise))
            except NonFiniteUpdate as exc:
                if a == 0:
                    raise
                raise NonFiniteUpdate(str(exc).replace(f"row {exc.row}", f"row {a + exc.row}"), a + exc.row) from None
            if _estimating(self.rho0):
                self._after_rounds(t_before, z - a)
        return self

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes, extras=None):
        code, rho0, rho1 = kernel_feedback(feedback, self.n_classes)
        m = int(self.m)
        if code != (CODE_BANDIT if m == 1 else CODE_DILUTED) or (m > 1 and feedback.m != m):
            raise TypeError(f"{type(self).__name__}(m={m}) learns from "
                            f"{'NoisyBandit' if m == 1 else f'Diluted(m={m})'} feedback; got {feedback!r}.")
        set_miss = extras["set_miss"] if extras and "set_miss" in extras else np.zeros(0)
        explore, expo = self._explore()
        oracle, W, b, G, Gb, P, t = self._state()
        nu = self.draws_per_round
        for a, z in list(self._rate_segments(order.shape[0])):
            t_before = int(t[0])
            oracle_simulate(oracle, W, b, G, Gb, P, t, *kernel_view(X), y, order[a:z], m, self._policy, explore, expo,
                            float(self.learning_rate), rho0, rho1, u_learner[a * nu:z * nu], u_feedback[a:z],
                            mistakes[a:z], set_miss[a:z], _row_sqnorms(X), *self._correction(), self._rate_tallies(),
                            self._noise(), self._adaptation())
            if _estimating(self.rho0):
                self._after_rounds(t_before, z - a)


def _row_sqnorms(X) -> np.ndarray:
    """Every row's ‖x‖² for coded rows (the form simulate gives a mostly-zero X it visits many times),
    computed on first use and kept with them; else empty (the kernel computes them each round)."""
    if not isinstance(X, CodedRows):
        return _NO_SQNORMS
    sq = X.derived.get("sqnorms")
    if sq is None:
        sq = np.empty(X.shape[0])
        row_sqnorms(*kernel_view(X), sq)
        X.derived["sqnorms"] = sq
    return sq


_NO_SQNORMS = np.zeros(0)
_NO_STATS = np.zeros((0, 0))
