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
tests/test_oracle_bandits.py builds such a case).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...base import Tags
from ..._rows import CodedRows
from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, Options, check_memory
from ...feedback import CODE_BANDIT, CODE_DILUTED
from ...kernels.oracle import (ORACLE_ADAGRAD, ORACLE_NORMALIZED, ORACLE_RIDGE, oracle_act, oracle_learn,
                               oracle_simulate, oracle_values_rows, row_sqnorms)
from .._linear import LinearClassifier, LoggedLearning, kernel_view
from ..diluted._sets import SetPredictor

_ORACLES = {"adagrad": ORACLE_ADAGRAD, "normalized": ORACLE_NORMALIZED, "ridge": ORACLE_RIDGE}


class _FeedbackKind:
    """``feedback_kind``: on an instance 'bandit' (m = 1) or 'set' (m > 1); on the class 'bandit' (the
    default m = 1), for code that asks the class. ``feedback_kinds`` lists both."""

    def __get__(self, obj, objtype=None) -> str:
        if obj is None:
            return "bandit"
        return "set" if obj._sets() else "bandit"


class OracleBandit(LoggedLearning, LinearClassifier):
    """A linear regression oracle of the 0/1 feedback, v = W x̂ + b (x̂ = x/‖x‖: rows scaled to unit norm
    inside, so that the step sizes do not depend on the scale of the features), with a policy over v.

    Subclasses set ``_policy`` (a ``kernels.oracle.POLICY_*`` code) and implement ``_explore()``
    -> (explore, gamma_exponent) for the kernels.
    """

    _policy: ClassVar[int] = 0
    _common_constraints: ClassVar[dict] = {
        "m": Integer(1),
        "learning_rate": Interval(0, None, closed="neither"),
        "oracle": Options(("adagrad", "normalized", "ridge")),
        "lam": Interval(0, None, closed="neither"),
        "rho0": Interval(0, 1, closed="left"),
        "rho1": Interval(0, 1, closed="left"),
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
    _tags = Tags(family="bandit", online=True, servable=True)  # what it is, for every front door (noisyfeedback.base.Tags)
    #: what a model file may hold (checked by nf.load): the weights, the intercepts, AdaGrad's sums
    _learned_state: ClassVar[dict] = {
        **LinearClassifier._learned_state,
        "intercept_": Array(("n_classes",)),
        "sum_sq_grad_": Array(("n_classes", "d")),
        "sum_sq_grad_intercept_": Array(("n_classes",)),
        "n_updates_": Array((1,), dtype="int64"),
        # oracle="ridge": each label's (d+1)×(d+1) inverse of λI + Σ z zᵀ, z = (x̂, 1); else empty
        "ridge_inverse_": Array(lambda p: ("n_classes", "d+1", "d+1") if p.get("oracle") == "ridge"
                                else ("n_classes", 0, 0)),
    }
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
        if self.rho0 + self.rho1 >= 1:
            raise ValueError(
                f"The 'rho0' and 'rho1' parameters of {type(self).__name__} must satisfy rho0 + rho1 < 1. "
                f"Got rho0={self.rho0!r}, rho1={self.rho1!r} instead."
            )

    def _explore(self) -> tuple[float, float]:
        raise NotImplementedError

    # ------------------------------------------------------------ state
    def _init_state(self, n_features: int, seed_fallback=None) -> None:
        fresh = not hasattr(self, "W_")
        super()._init_state(n_features, seed_fallback)
        if fresh:
            K = self.n_classes
            self.intercept_ = np.zeros(K)
            self.sum_sq_grad_ = np.zeros((K, n_features))  # row-major: the update reads one label's row
            self.sum_sq_grad_intercept_ = np.zeros(K)
            self.n_updates_ = np.zeros(1, dtype=np.int64)
            self.ridge_inverse_ = self._fresh_ridge_inverse(n_features)

    def _fresh_ridge_inverse(self, n_features: int) -> np.ndarray:
        """I/λ for every label with oracle="ridge" (ridge before any data), else an empty (K, 0, 0)."""
        K = self.n_classes
        if self.oracle != "ridge":
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
        want = (self.n_classes, d + 1, d + 1) if self.oracle == "ridge" else (self.n_classes, 0, 0)
        P = getattr(self, "ridge_inverse_", None)
        if P is None or P.shape != want:  # the oracle changed since fitting: ridge restarts from I/λ
            self.ridge_inverse_ = self._fresh_ridge_inverse(d)
        elif not P.flags.c_contiguous:
            self.ridge_inverse_ = np.ascontiguousarray(P)
        return (_ORACLES[self.oracle], self.W_, self.intercept_, self.sum_sq_grad_, self.sum_sq_grad_intercept_,
                self.ridge_inverse_, self.n_updates_)

    # -------------------------------------------------------- inference
    def decision_function(self, X) -> np.ndarray:
        """Predicted feedback of every label, v = W x̂ + b (x̂ = x/‖x‖), shape (n_samples, n_classes); zeros
        before learning.

        With flips these estimate ρ0 + (1−ρ0−ρ1)·P(y=a | x) (m = 1); see :meth:`predict_proba`.
        """
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.zeros((X.shape[0], self.n_classes))
        if hasattr(self, "W_"):
            oracle_values_rows(self.W_, self.intercept_, *kernel_view(X), out)
        return out

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_a v_a (lowest index on ties); 0 before any learning."""
        return np.argmax(self.decision_function(X), axis=1).astype(np.int64)

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated estimates of the clean P(y = a | x), using the parameters ``rho0``, ``rho1``.

        Each value estimates ρ0/m + (1−ρ0−ρ1)·P(y=a | x); inverted, clipped to [0, 1] and normalised to
        rows summing to 1 (uniform where every estimate is 0). The actions never need ρ0, ρ1.
        """
        v = self.decision_function(X)
        p = np.clip((v - self.rho0 / self.m) / (1.0 - self.rho0 - self.rho1), 0.0, 1.0)
        tot = p.sum(axis=1, keepdims=True)
        return np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), 1.0 / self.n_classes)

    def action_probabilities(self, X) -> np.ndarray:
        """The exploration distribution ``act`` draws from, (n_samples, n_classes): P(label a is played)
        (m = 1: rows sum to 1; m > 1: the inclusion probability of each label in the set, rows sum to m)."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        m = int(self.m)
        sets = np.empty((n, m), np.int64)
        pis = np.empty((n, self.n_classes))
        explore, expo = self._explore()
        oracle_act(self.W_, self.intercept_, *kernel_view(X), m, self._policy, explore, expo,
                   int(self.n_updates_[0]), np.zeros(n * self.draws_per_round), sets, np.empty(n), pis)
        return pis

    # ------------------------------------------------------- act / learn
    def act(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Draw one action (m = 1: shape (n,)) or set (m > 1: (n, m), increasing) per row; returns
        (actions, propensities): P(action), or for m > 1 P(set | the round's random label order)."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        m = int(self.m)
        u = self.rng_.random(n * self.draws_per_round)
        sets = np.empty((n, m), np.int64)
        probs = np.empty(n)
        explore, expo = self._explore()
        oracle_act(self.W_, self.intercept_, *kernel_view(X), m, self._policy, explore, expo,
                   int(self.n_updates_[0]), u, sets, probs, np.empty((n, self.n_classes)))
        return (sets[:, 0].copy() if m == 1 else sets), probs

    def learn(self, X, actions, feedback, propensities):
        """Update from logged rows in order: action (or set), 0/1 feedback, its propensity.

        The regression oracle fits the observed feedback of the played action; propensities are
        checked but not needed (no importance weights)."""
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        if self.m == 1:
            sets = self._check_actions(actions, n)[:, None]
        else:
            sets = SetPredictor._check_sets(self, actions, n)  # type: ignore[arg-type]
        feedback = self._check_binary(feedback, n)
        self._check_propensities(propensities, n)
        oracle, W, b, G, Gb, P, t = self._state()
        oracle_learn(oracle, W, b, G, Gb, P, t, *kernel_view(X), np.ascontiguousarray(sets), feedback,
                     float(self.learning_rate))
        return self

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes, extras=None):
        code, rho0, rho1, _ = feedback._kernel_args(self.n_classes)
        m = int(self.m)
        if code != (CODE_BANDIT if m == 1 else CODE_DILUTED) or (m > 1 and feedback.m != m):
            raise TypeError(f"{type(self).__name__}(m={m}) learns from "
                            f"{'NoisyBandit' if m == 1 else f'Diluted(m={m})'} feedback; got {feedback!r}.")
        set_miss = extras["set_miss"] if extras and "set_miss" in extras else np.zeros(0)
        explore, expo = self._explore()
        oracle, W, b, G, Gb, P, t = self._state()
        oracle_simulate(oracle, W, b, G, Gb, P, t, *kernel_view(X), y, order, m, self._policy, explore, expo,
                        float(self.learning_rate), rho0, rho1, u_learner, u_feedback, mistakes, set_miss,
                        _row_sqnorms(X))


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
