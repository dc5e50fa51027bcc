"""Shared machinery of the online linear regressors (state ``w_`` of shape (d,))."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..._state import Array
from ..._validation import Integer, Interval, OneOf, Options, check_targets, check_X  # noqa: F401  (check_targets: for the regressors)
from ...base import Learner, Tags, make_rng
from ...kernels.regression import (
    RULE_NONE,
    STRATEGY_ALL,
    auto_leader,
    ors_auto_learn,
    ors_auto_simulate,
    ors_learn,
    ors_simulate,
    regression_predict,
)
from ...kernels.rls import STATUS_NONFINITE
from .._linear import kernel_view

__all__ = ["LinearRegressor", "check_targets", "AUTO_R_GRID", "AUTO_DISCOUNT"]

_EMPTY = np.zeros(0)

#: the members of ``r="auto"``: r = 10^-2 … 10^4 in half decades (13 members), covering the best r of every
#: setting of the moroshko reproduction at its quick and full sizes (benchmarks/tune_defaults.py)
AUTO_R_GRID: np.ndarray = np.array([round(10.0 ** (e / 2), 6) for e in range(-4, 9)])
#: the running loss of a member forgets at this rate a round (a memory of about 2,000 rounds), chosen on the
#: moroshko tuning sequences (benchmarks/tune_defaults.py --only regression-auto)
AUTO_DISCOUNT: float = 0.9995

#: the constraint of ``r`` with ``"auto"`` (NLMS, ORS)
R_CONSTRAINT = OneOf((Options(("auto",)), Interval(0, None, closed="neither")))

#: the learned state of ``r="auto"``: the grid, each member's weights and running loss (``w_`` is the leader's)
AUTO_STATE: dict = {
    "r_grid_": Array(("m",)),
    "member_w_": Array(("m", "d")),
    "member_loss_": Array(("m",)),
}


def auto_optional_state(p: dict) -> tuple:
    """A fitted learner with a numeric r holds no members (and model files saved before r="auto" have none)."""
    return () if p.get("r") == "auto" else tuple(AUTO_STATE)


def _sklearn_prevalidate(X, owner: str):
    """scikit-learn's conventions for odd X before our own check: complex refused as such, object arrays of
    numbers converted (else TypeError), 1-D refused with the reshape advice."""
    if sp.issparse(X) or hasattr(X, "iloc") or not hasattr(X, "__len__") and not hasattr(X, "__array__"):
        return X
    arr = np.asarray(X)
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: X of {owner} must hold real numbers.")
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"X of {owner} must hold real numbers ({e}).") from None
    if arr.ndim == 1:
        raise ValueError(f"X of {owner} must be 2-D (n_samples, n_features); got shape {arr.shape}. Reshape your "
                         "data with x.reshape(1, -1) for a single sample or x.reshape(-1, 1) for one feature.")
    return arr


def _sklearn_fit_checks(learner, X, y):
    """fit's checks beyond learn's (scikit-learn's batch face): y given, at least one row, a column-vector y
    warned about and raveled (learn reads an (n, 1) y as one label a row: the same numbers)."""
    owner = type(learner).__name__
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
    if len(shape) == 2 and shape[0] == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={tuple(shape)}) while a minimum of 1 is required "
                         f"by {owner}.")
    if len(shape) == 2 and shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 is required "
                         f"by {owner}.")
    arr = np.asarray(y) if not hasattr(y, "to_numpy") else y.to_numpy()
    if arr.ndim == 2 and arr.shape[1] == 1 and learner.labels_per_round == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected; read as one label a row.",
                      DataConversionWarning, stacklevel=3)
        return arr.ravel()
    return y


class LinearRegressor(Learner):
    """An online linear regressor ŷ = w·x trained from noisy targets (``GaussianNoise`` feedback).

    A row whose update would make ``w_`` non-finite (an overflowing x, label, prediction or ‖x‖²)
    raises ``ValueError`` naming the row, with the state (and random stream) as before that row.

    Subclasses set the kernel configuration in `_config`. State: ``w_`` (d,),
    ``rounds_`` (rounds learned from), ``labels_`` (noisy labels used so far).
    """

    feedback_kind: ClassVar[str] = "target"
    _tags = Tags(family="regression", online=True)  # what it is, for every front door (noisyfeedback.base.Tags)
    #: what a model file may set (noisyfeedback._state)
    _learned_state: ClassVar[dict] = {"w_": Array(("d",)), "rounds_": Integer(0), "labels_": Integer(0)}

    # ------------------------------------------------------ configuration
    @property
    def draws_per_round(self) -> int:
        """Uniforms drawn from ``rng_`` per round (label-budget decisions)."""
        return 0

    @property
    def labels_per_round(self) -> int:
        """Noisy labels a round may use: ``learn`` takes that many columns, ``simulate`` draws that many."""
        return 1

    @property
    def needs_variance(self) -> bool:
        """Whether ``learn`` needs the noise variance of each row."""
        return False

    @property
    def needs_clean_target(self) -> bool:
        """Whether ``learn`` needs the clean target (the oracle rule ``opt``)."""
        return False

    def _config(self) -> tuple:
        """(rule, known, r, beta, strategy, budget, k, p, n_begin) for the kernels."""
        return RULE_NONE, True, self._r_number(), 0.0, STRATEGY_ALL, 0.0, 1, 0.0, 0

    def _r_number(self) -> float:
        """r as a float for the fixed-r kernels (NaN with r="auto": those kernels are not used then)."""
        return float("nan") if self._auto else float(self.r)

    def _tuning_state(self) -> float:
        return 1.0

    def _set_tuning_state(self, a: float) -> None:
        pass

    # -------------------------------------------------------------- state
    def _init_state(self, n_features: int, seed_fallback: np.random.SeedSequence | None = None) -> None:
        """Create w_ (zeros), the counters and rng_ (if the learner draws) when absent."""
        if not hasattr(self, "w_"):
            self._validate_params()
            self.w_ = np.zeros(n_features, dtype=np.float64)
            self.rounds_ = 0
            self.labels_ = 0
            self._set_tuning_state(self._tuning_state())
        if self._auto and not hasattr(self, "member_w_"):  # fresh, or r set to "auto" after learning: members
            self.r_grid_ = AUTO_R_GRID.copy()                  # start from the weights learned so far
            self.member_w_ = np.tile(self.w_, (self.r_grid_.shape[0], 1))
            self.member_loss_ = np.zeros(self.r_grid_.shape[0])
        elif not self._auto and hasattr(self, "member_w_"):  # r set to a number: w_ (the leader's) goes on alone
            for name in AUTO_STATE:
                delattr(self, name)
        if self.draws_per_round and not hasattr(self, "rng_"):
            seed = getattr(self, "seed", None)
            self.rng_ = make_rng(seed if seed is not None else seed_fallback)

    @property
    def _auto(self) -> bool:
        """Whether r is "auto" (members over AUTO_R_GRID, the leader predicts)."""
        r = getattr(self, "r", None)
        return isinstance(r, str) and r == "auto"

    @property
    def r_(self) -> float:
        """The r in use: with ``r="auto"`` the leader's (the member of smallest running loss, which predicts
        the next round), else ``r``. Absent before learning."""
        if not hasattr(self, "w_"):
            raise AttributeError(f"{type(self).__name__} has not learned yet: no r_.")
        if hasattr(self, "member_loss_") and self._auto:
            return float(self.r_grid_[auto_leader(self.member_loss_)])
        return float(self.r)

    def _sync_leader(self) -> None:
        """w_ ← the leader's weights (r="auto"), so predict and model files read the leader."""
        if self._auto:
            self.w_ = self.member_w_[auto_leader(self.member_loss_)].copy()

    @property
    def n_features_(self) -> int:
        return self.w_.shape[0]

    @property
    def n_features_in_(self) -> int:
        """Number of features seen (scikit-learn's name); absent before learning."""
        if not hasattr(self, "w_"):
            raise AttributeError(f"{type(self).__name__} has not learned yet: no n_features_in_.")
        return self.w_.shape[0]

    def _check_X(self, X, fitting: bool):
        self._validate_params()  # every entry point: parameters may have been changed since fitting
        owner = type(self).__name__
        X = _sklearn_prevalidate(X, owner)
        n_features = self.w_.shape[0] if hasattr(self, "w_") else None
        if n_features is not None and getattr(X, "ndim", 0) == 2 and X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} features, but {owner} is expecting {n_features} features as "
                             "input (the learner was fitted with that many).")
        X = check_X(X, n_features=n_features, owner=owner)
        if fitting:
            self._init_state(X.shape[1])
        return X

    def score(self, X, y, sample_weight=None) -> float:
        """R² of ``predict(X)`` against ``y`` (scikit-learn's regressor score)."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, self.predict(X), sample_weight=sample_weight))

    # ----------------------------------------------------------- inference
    def predict(self, X) -> np.ndarray:
        """Predictions w·x, shape (n_samples,). Before any learning: scikit-learn's ``NotFittedError``."""
        self._validate_params()
        if not hasattr(self, "w_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: call fit, partial_fit "
                                 "or learn before predict.")
        X = self._check_X(X, fitting=False)
        out = np.zeros(X.shape[0], dtype=np.float64)
        regression_predict(self.w_, *kernel_view(X), out)
        return out

    # ------------------------------------------------------------ learning
    def learn(self, X, y, variance=None, y_clean=None) -> "LinearRegressor":
        """Update from rows in order, each with its noisy label(s).

        Parameters
        ----------
        X : (n, d) array or CSR matrix
        y : (n,) or (n, j) array
            Noisy labels of each row. With j columns a round uses their mean (and, variance
            unknown, their sample variance). With a label budget pass exactly
            ``labels_per_round`` = ⌈B⌉ independent draws a row: the learner reads the first
            and uses the others only in the rounds where it queries them (``labels_``
            counts what it used). Drawing them all in advance keeps the random stream
            independent of the learner's decisions.
        variance : float or (n,) array, optional
            The noise variance v_t of ONE label of each row (rules with known variance).
        y_clean : (n,) array, optional
            The clean targets (only the oracle rule ``opt`` reads them).

        Returns
        -------
        self
        """
        self._validate_params()
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        Y = check_targets(y, n_samples=n, allow_2d=True)
        if Y.ndim == 1:
            Y = Y.reshape(n, 1)
        self._check_label_columns(Y.shape[1])
        v = self._check_variance(variance, n)
        yc = self._check_clean(y_clean, n)
        rng_state = self.rng_.bit_generator.state if self.draws_per_round else None
        u = self.rng_.random(n * self.draws_per_round) if self.draws_per_round else _EMPTY
        out_nlab = np.empty(n, dtype=np.int64)
        rule, known, r, beta, strategy, B, k, p, n_begin = self._config()
        if self._auto:
            t, spent, a, bad = ors_auto_learn(self.member_w_, self.r_grid_, self.member_loss_, *kernel_view(X), Y,
                                              v, yc, u, rule, known, beta, strategy, B, k, p, n_begin,
                                              int(self.rounds_), int(self.labels_), float(self._tuning_state()),
                                              AUTO_DISCOUNT, out_nlab)
            self._sync_leader()
        else:
            t, spent, a, bad = ors_learn(self.w_, *kernel_view(X), Y, v, yc, u, rule, known, r, beta,
                                         strategy, B, k, p, n_begin, int(self.rounds_), int(self.labels_),
                                         float(self._tuning_state()), out_nlab)
        self.rounds_, self.labels_ = int(t), int(spent)
        self._set_tuning_state(float(a))
        if bad >= 0:
            self._rewind_rng(rng_state, bad)
            self._refuse_row(STATUS_NONFINITE, f"row {bad}", None)
        return self

    def _rewind_rng(self, state, n_rows: int) -> None:
        """After a refused row: the learner's random stream as if only the rows before it were drawn for."""
        if state is not None:
            self.rng_.bit_generator.state = state
            self.rng_.random(n_rows * self.draws_per_round)

    def _refuse_row(self, status: int, where: str, v) -> None:
        """Raise the ValueError of a round the kernel refused: its update would make the state non-finite."""
        raise ValueError(
            f"{type(self).__name__}: {where} would make the learned state non-finite (its prediction, error, "
            "norm or update overflows); rescale X or the targets. The learned state is as before that row."
        )

    def partial_fit(self, X, y, variance=None, y_clean=None) -> "LinearRegressor":
        """scikit-learn style alias of `learn`."""
        return self.learn(X, y, variance=variance, y_clean=y_clean)

    def fit(self, X, y, variance=None, y_clean=None) -> "LinearRegressor":
        """One pass over (X, y) in order from scratch (discards learned state); returns self."""
        y = _sklearn_fit_checks(self, X, y)
        self._reset()
        return self.learn(X, y, variance=variance, y_clean=y_clean)

    def _check_label_columns(self, j: int) -> None:
        if j < 1:
            raise ValueError("y must hold at least one label a row.")

    def _check_variance(self, variance, n: int) -> np.ndarray:
        if variance is None:
            if self.needs_variance:
                raise ValueError(
                    f"{self!r} uses the known noise variance: pass variance= (one value a row, or a scalar)."
                )
            return np.zeros(n)
        v = np.asarray(variance, dtype=np.float64)
        if v.ndim == 0:
            v = np.full(n, float(v))
        if v.shape != (n,):
            raise ValueError(f"variance must be a scalar or have {n} entries (one a row); got shape {v.shape}.")
        bad = ~(np.isfinite(v) & (v >= 0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"variance must be finite and >= 0; row {row} has {v[row]!r}.")
        return np.ascontiguousarray(v)

    def _check_clean(self, y_clean, n: int) -> np.ndarray:
        if y_clean is None:
            if self.needs_clean_target:
                raise ValueError(f"{self!r} is the oracle rule: pass y_clean= (the clean targets).")
            return np.zeros(n)
        return check_targets(y_clean, n_samples=n, name="y_clean")

    # ------------------------------------------------------------ simulate
    def _simulate_targets(self, X, y, order, u_learner, variances, normals, sqerr, n_labels) -> None:
        """Run rounds ``order`` in the compiled loop (see ``nf.simulate``); writes sqerr and n_labels."""
        rule, known, r, beta, strategy, B, k, p, n_begin = self._config()
        if self._auto:
            t, spent, a, bad = ors_auto_simulate(self.member_w_, self.r_grid_, self.member_loss_, *kernel_view(X), y,
                                                 order, variances, normals, self.labels_per_round, u_learner, rule,
                                                 known, beta, strategy, B, k, p, n_begin, int(self.rounds_),
                                                 int(self.labels_), float(self._tuning_state()), AUTO_DISCOUNT,
                                                 sqerr, n_labels)
            self._sync_leader()
        else:
            t, spent, a, bad = ors_simulate(self.w_, *kernel_view(X), y, order, variances, normals,
                                            self.labels_per_round, u_learner, rule, known, r, beta, strategy, B, k,
                                            p, n_begin, int(self.rounds_), int(self.labels_),
                                            float(self._tuning_state()), sqerr, n_labels)
        self.rounds_, self.labels_ = int(t), int(spent)
        self._set_tuning_state(float(a))
        if bad >= 0:
            self._refuse_row(STATUS_NONFINITE, f"round {t} (row {int(order[bad])} of X)", None)
