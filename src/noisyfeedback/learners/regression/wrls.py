"""WeightedRLS: recursive least squares weighting each round by 1/v_t."""

from __future__ import annotations

import math

import numpy as np

from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, OneOf, Options
from ...kernels.rls import (
    STATUS_CONTRADICTS,
    STATUS_OK,
    VAR_KNOWN,
    VAR_NONE,
    VAR_UNKNOWN,
    rls_learn,
    rls_simulate,
)
from .._linear import kernel_view
from ._base import LinearRegressor, check_targets
from .budget import STRATEGIES, budget_plan

_VARIANCES = {"known": VAR_KNOWN, "none": VAR_NONE, "unknown": VAR_UNKNOWN}
_EMPTY = np.zeros(0)


class WeightedRLS(LinearRegressor):
    """Inverse-variance weighted recursive least squares: the Kalman filter of a fixed w.

    After every round w is the weighted ridge solution
    w_t = argmin λ‖w‖² + Σ_{s≤t} (ỹ_s − w·x_s)²/v_s, updated in O(d²):
    Px = P x, w += Px·(ỹ − ŷ)/(v + xᵀPx), P −= Px Pxᵀ/(v + xᵀPx), P_0 = I/λ.
    With Gaussian noise of variance v_t this is the best linear unbiased estimate
    (for λ → 0) and the posterior mean of w under the prior N(0, I/λ).

    ``variance``:

    ``"known"``
        v_t from the channel (``learn(..., variance=...)``; ``nf.simulate`` passes it).
        A round with k labels uses their mean, of variance v_t/k.
    ``"none"``
        v = 1 every round: ordinary RLS (equal variances c equal ``"none"`` with λ·c).
    ``"unknown"``
        ORS's estimates of one label's variance: the sample variance of a round's labels
        (two or more: ``n_labels=2`` or a budget round with k), else (ỹ − ŷ)²/4
        (one sample with the prediction); shrunk to their running mean v̄,
        ŝ = (shrink·v̄ + s)/(shrink + 1) (``shrink=inf``: the online estimate v̄ alone).

    Exact rows: a variance of 0 (or so small that double precision cannot weigh it against the
    prior, v ≤ 1e-15·‖x‖²/λ) makes the row an exact constraint w·x = ỹ: w is then the weighted
    ridge solution of the other rows subject to every exact row (the limit v → 0; tested against
    the KKT system). An exact row whose x is already determined by earlier exact rows changes
    nothing if it agrees with them and raises ``ValueError`` naming the row if it contradicts them
    (no solution exists; give such rows a positive variance).

    Finite state: a row whose update would make w, P or the variance estimate non-finite (an
    overflowing x, label or prediction) raises ``ValueError`` naming the row; the learned state
    (and the random stream) is as before that row, the rows before it learned.

    Label budgets (``budget``, ``strategy``, ``a``, ``horizon``) as `ORS`.
    scikit-learn face: ``fit(X, y, sample_weight)`` / ``partial_fit`` with
    ``sample_weight`` = 1/variance, ``predict``.

    Parameters
    ----------
    lam : float in [1e-300, 1e300), default 1.0
        Ridge λ (prior precision of w; the range keeps P₀ = I/λ finite).
    variance : {"known", "unknown", "none"}, default "known"
    n_labels : int >= 1, default 1
        Noisy labels a round without a budget (2: ORS's "two samples").
    shrink : float >= 0 or inf, default 10.0
        Weight of the running mean in the unknown-variance estimate.
    vfloor : float > 0, default 1e-6
        Smallest unknown-variance estimate used.
    budget, strategy, a, horizon, seed : as `ORS`.

    Examples
    --------
    >>> import noisyfeedback as nf
    >>> from noisyfeedback.datasets.regression import ors_synthetic
    >>> X, y = ors_synthetic(n_samples=5000, seed=0)
    >>> noise = nf.feedback.GaussianNoise.uniform(5.0, n_rounds=5000, seed=1)
    >>> ors = nf.simulate(nf.ORS(r=1.0, scaling="beta", beta=1.0), X, y, noise, n_rounds=5000, seed=2)
    >>> rls = nf.simulate(nf.WeightedRLS(lam=1.0), X, y, noise, n_rounds=5000, seed=2)
    >>> bool(rls.mse < 0.5 * ors.mse)
    True

    References
    ----------
    .. [1] Kalman, R. E. (1960). A new approach to linear filtering and prediction problems.
    .. [2] Moroshko, E. & Crammer, K. Online regression with controlled label noise rate.
    """

    _parameter_constraints = {
        "lam": Interval(1e-300, 1e300, closed="left"),
        "variance": Options(tuple(_VARIANCES)),
        "n_labels": Integer(1),
        "shrink": OneOf((Interval(0, None), Options((float("inf"),)))),
        "vfloor": Interval(0, None, closed="neither"),
        "budget": OneOf((Options((None,)), Interval(1, None))),
        "strategy": Options(tuple(STRATEGIES)),
        "a": Interval(0, None, closed="neither"),
        "horizon": OneOf((Options((None,)), Integer(1))),
        "seed": AnySeed(),
    }
    #: what a model file may hold (checked by nf.load): w, the inverse weighted Gram matrix P, the
    #: budget rule's a, and the variance estimate's running state (mean, count)
    _learned_state = {
        **LinearRegressor._learned_state,
        "P_": Array(("d", "d")),
        "a_": Interval(0, None, closed="neither"),
        "vstate_": Array((2,)),
    }
    _test_params = {"lam": 1.0, "variance": "unknown", "budget": 1.5, "strategy": "auto", "seed": 0}

    def __init__(
        self,
        lam: float = 1.0,
        variance: str = "known",
        n_labels: int = 1,
        shrink: float = 10.0,
        vfloor: float = 1e-6,
        budget: float | None = None,
        strategy: str = "auto_self_tuned",
        a: float = 1.0,
        horizon: int | None = None,
        seed: int | None = None,
    ):
        self.lam = lam
        self.variance = variance
        self.n_labels = n_labels
        self.shrink = shrink
        self.vfloor = vfloor
        self.budget = budget
        self.strategy = strategy
        self.a = a
        self.horizon = horizon
        self.seed = seed

    def _check_params(self) -> None:
        if self.budget is not None and self.n_labels != 1:
            raise ValueError(
                "The 'n_labels' parameter of WeightedRLS must be 1 with a budget (the budget decides the labels "
                f"of a round). Got {self.n_labels} instead."
            )
        if self.budget is not None and self.strategy == "begin" and self.horizon is None:
            raise ValueError("The 'horizon' parameter of WeightedRLS must be the number of rounds when "
                             "strategy='begin'.")

    # ------------------------------------------------------ configuration
    @property
    def draws_per_round(self) -> int:
        return 0 if self.budget is None else 1

    @property
    def labels_per_round(self) -> int:
        if self.budget is not None:
            return max(1, math.ceil(self.budget))
        return int(self.n_labels)

    @property
    def needs_variance(self) -> bool:
        return self.variance == "known"

    def _tuning_state(self) -> float:
        return float(getattr(self, "a_", self.a))

    def _set_tuning_state(self, a: float) -> None:
        self.a_ = float(a)

    def _kconfig(self) -> tuple:
        strategy, B, k, p, n_begin = budget_plan(self.budget, self.strategy, self.horizon)
        return (_VARIANCES[self.variance], float(self.shrink), float(self.vfloor), strategy, B, k, p, n_begin)

    def _init_state(self, n_features: int, seed_fallback=None) -> None:
        fresh = not hasattr(self, "w_")
        super()._init_state(n_features, seed_fallback)
        if fresh or not hasattr(self, "P_"):
            self.P_ = np.eye(n_features) / float(self.lam)
            self.vstate_ = np.zeros(2)

    def _check_label_columns(self, j: int) -> None:
        super()._check_label_columns(j)
        if self.budget is not None and j != self.labels_per_round:
            raise ValueError(
                f"y must have {self.labels_per_round} columns (k = ceil(budget) independent noisy labels a row) "
                f"with budget={self.budget!r}; got {j}."
            )

    # ------------------------------------------------------------ learning
    def learn(self, X, y, variance=None, y_clean=None) -> "WeightedRLS":
        """Update from rows in order (see `LinearRegressor.learn`); ``variance`` may hold ``inf``
        (a row of weight 0). Returns self."""
        self._validate_params()
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        Y = check_targets(y, n_samples=n, allow_2d=True)
        if Y.ndim == 1:
            Y = Y.reshape(n, 1)
        self._check_label_columns(Y.shape[1])
        v = self._check_variance_inf(variance, n)
        rng_state = self.rng_.bit_generator.state if self.draws_per_round else None
        u = self.rng_.random(n * self.draws_per_round) if self.draws_per_round else _EMPTY
        out_nlab = np.empty(n, dtype=np.int64)
        vmode, shrink, vfloor, strategy, B, k, p, n_begin = self._kconfig()
        t, spent, a, bad, status = rls_learn(self.w_, self.P_, *kernel_view(X), Y, v, u, vmode, shrink, vfloor,
                                             self.vstate_, strategy, B, k, p, n_begin, int(self.rounds_),
                                             int(self.labels_), float(self._tuning_state()), out_nlab,
                                             float(self.lam))
        self.rounds_, self.labels_ = int(t), int(spent)
        self._set_tuning_state(float(a))
        if status != STATUS_OK:
            self._rewind_rng(rng_state, bad)
            self._refuse_row(status, f"row {bad}", v[bad] if v.size else None)
        return self

    def _refuse_row(self, status: int, where: str, v) -> None:
        """Raise the ValueError of a round the kernel refused (the state is as before it)."""
        if status == STATUS_CONTRADICTS:
            raise ValueError(
                f"WeightedRLS: {where} is an exact constraint (variance {v!r} <= 1e-15·‖x‖²/lam, 0 included) whose "
                "x is already determined by earlier exact rows, and its label contradicts them: weighted least "
                "squares with these exact constraints has no solution. Give such rows a positive variance. "
                "The learned state is as before that row."
            )
        super()._refuse_row(status, where, v)

    def _check_variance_inf(self, variance, n: int) -> np.ndarray:
        if variance is None:
            return self._check_variance(None, n)
        v = np.asarray(variance, dtype=np.float64)
        if v.ndim == 0:
            v = np.full(n, float(v))
        if v.shape != (n,):
            raise ValueError(f"variance must be a scalar or have {n} entries (one a row); got shape {v.shape}.")
        bad = np.isnan(v) | (v < 0) | (v == -np.inf)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"variance must be >= 0 (inf: weight 0); row {row} has {v[row]!r}.")
        return np.ascontiguousarray(v)

    def partial_fit(self, X, y, variance=None, y_clean=None, sample_weight=None) -> "WeightedRLS":
        """`learn`; ``sample_weight`` (≥ 0) is 1/variance (scikit-learn face)."""
        if sample_weight is not None:
            if variance is not None:
                raise ValueError("Pass either variance= or sample_weight= (= 1/variance), not both.")
            sw = np.asarray(sample_weight, dtype=np.float64)
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError("sample_weight must be finite and >= 0.")
            with np.errstate(divide="ignore", over="ignore"):
                variance = 1.0 / sw
            lost = (sw > 0) & np.isinf(variance)
            if lost.any():
                row = int(np.flatnonzero(lost)[0])
                raise ValueError(f"sample_weight must be 0 or at least 1/{np.finfo(np.float64).max:.4g} (its "
                                 f"reciprocal, the row's variance, must be finite); row {row} has "
                                 f"{float(sw.flat[row])!r}, "
                                 "which would be read as weight 0. Rescale the weights (lam is relative to them).")
        elif variance is None and self.variance == "known":
            variance = 1.0
        return self.learn(X, y, variance=variance, y_clean=y_clean)

    def fit(self, X, y, sample_weight=None) -> "WeightedRLS":
        """Forget, then `partial_fit` on the rows in order (the weighted ridge solution). Returns self."""
        from ._base import _sklearn_fit_checks

        y = _sklearn_fit_checks(self, X, y)
        if sample_weight is not None and np.asarray(sample_weight).size and not np.any(np.asarray(sample_weight) != 0):
            raise ValueError("sample weights are all zero: there is nothing to fit.")
        self._reset()
        return self.partial_fit(X, y, sample_weight=sample_weight)

    # ------------------------------------------------------------ simulate
    def _simulate_targets(self, X, y, order, u_learner, variances, normals, sqerr, n_labels) -> None:
        vmode, shrink, vfloor, strategy, B, k, p, n_begin = self._kconfig()
        t, spent, a, bad, status = rls_simulate(
            self.w_, self.P_, *kernel_view(X), y, order, variances, normals, self.labels_per_round, u_learner,
            vmode, shrink, vfloor, self.vstate_, strategy, B, k, p, n_begin, int(self.rounds_), int(self.labels_),
            float(self._tuning_state()), sqerr, n_labels, float(self.lam))
        self.rounds_, self.labels_ = int(t), int(spent)
        self._set_tuning_state(float(a))
        if status != STATUS_OK:
            self._refuse_row(status, f"round {t} (row {int(order[bad])} of X)", float(variances[bad]))
