"""RCINE: RCNBF with implicit noise-rate estimation (Agarwal & Manwani 2021, Algorithm 2)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._rows import CodedRows
from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, IsNone, OneOf, Options
from ...kernels.bandit import RULE_BANDITRON, bandit_learn, bandit_simulate
from ...kernels.linear import csr_rows_to_dense
from .._linear import NonFiniteUpdate, class_major, kernel_view, row_range
from .rcnbf import RCNBF


def _gather_rows(X, rows: np.ndarray, out: np.ndarray) -> None:
    """out[:] = X[rows] as dense float64 (X dense, CSR or CodedRows), without a temporary copy."""
    if isinstance(X, CodedRows) or sp.issparse(X):
        csr_rows_to_dense(*kernel_view(X), np.ascontiguousarray(rows, dtype=np.int64), out)
    elif X.dtype == np.float64:
        np.take(X, rows, axis=0, out=out)
    else:
        np.copyto(out, X[rows])


def _move_rows_up(store: np.ndarray, old: np.ndarray, start: int, count: int) -> None:
    """store[:count] = old[start:start + count], where ``old`` may be a view of the front of ``store``.

    Copied in blocks of at most the shift, front to back, so no block overlaps its source
    (numpy would otherwise buffer a whole overlapping copy in fresh memory)."""
    if np.shares_memory(store, old) and old.__array_interface__["data"][0] == store.__array_interface__["data"][0]:
        if start == 0:
            return
        for lo in range(0, count, start):
            hi = min(count, lo + start)
            store[lo:hi] = old[start + lo:start + hi]
    else:
        store[:count] = old[start:start + count]


class RCINE(RCNBF):
    """RCNBF that estimates its flip rates from its own interactions (docs/algorithms.md §4.4).

    Starts with ρ̂0 = ρ̂1 = 0, keeps the last ``n_s`` tuples (x, ỹ, f̃) and every
    ``n_s`` rounds re-estimates (ρ̂0, ρ̂1) with
    `noisyfeedback.noise.estimate_flip_rates` (``estimator`` names the
    method), then continues as RCNBF with the new estimates. Estimation runs
    synchronously at rounds n_s, 2·n_s, ..., with a seed derived from the
    learner's, so results are deterministic for a fixed seed. The estimates
    are recorded in ``rho_history_`` (round, ρ̂0, ρ̂1).

    ``estimate_every`` (beyond the paper) re-estimates every that many rounds instead,
    still on the last ``n_s`` tuples before each estimate (only those are kept). An
    estimate costs time in proportion to ``n_s``, so over T rounds RCINE spends
    about (T / estimate_every)·cost(n_s): a long run can keep the paper's window and
    estimate less often. ``buffer_X_`` is a view of a reused (n_s, d) array: copy it to
    keep it while the learner goes on learning.

    Parameters
    ----------
    n_classes : int
    gamma : float in (0, 1)
    n_s : int >= 10
        Rounds between estimates, and size of the buffer they use.
    estimate_every : int >= 1 or None
        Rounds between estimates when not ``n_s`` (None: ``n_s``, the paper's algorithm).
    estimator : str
        Method of `noisyfeedback.noise.estimate_flip_rates`: "mixture" (ours, default)
        or "nrest" (the paper's NREst).
    warm_start : bool
        (beyond the paper; "mixture" only) Each estimate after the first reuses the first's SVD
        basis and chosen ranker penalty instead of searching the grid again, at about a third of
        the cost (`noisyfeedback.noise.estimate_mixture`'s ``warm``). The state is kept in
        ``warm_components_`` and ``warm_l2_``.
    per_action : bool
        (beyond the paper; "mixture" only) Estimate one pair of rates per action (flips that depend on the
        action: `noisyfeedback.noise.estimate_mixture`'s ``per_action``) and correct each action's
        feedback with its own, h(f̃, a) = (f̃ − ρ̂0(a))/(1 − ρ̂0(a) − ρ̂1(a)). The estimates are then
        ``rates_`` (rows ρ̂0, ρ̂1; ``rho0_``, ``rho1_`` their means over the actions) and ``rho_history_``
        rows (round, ρ̂0(0..K−1), ρ̂1(0..K−1)).
    seed : int, SeedSequence or None

    References
    ----------
    .. [1] Agarwal, M. & Manwani, N. (2021). Learning multiclass classifier under
       noisy bandit feedback. PAKDD.
    """

    _parameter_constraints = {
        "gamma": Interval(0, 1, closed="neither"),
        "n_s": Integer(10),
        "estimate_every": OneOf((Options((None,)), Integer(1))),
        "warm_start": Options((False, True)),
        "per_action": Options((False, True)),
        "seed": AnySeed(),
    }
    _test_params = {"n_classes": 3, "gamma": 0.2, "n_s": 100, "estimator": "mixture", "seed": 0}
    _learned_state = {
        "W_": Array(("n_classes", "d")),
        "rho0_": Interval(0, 1, closed="left"),
        "rho1_": Interval(0, 1, closed="left"),
        # per_action=True: the per-action estimates (rows ρ̂0, ρ̂1; zeros before the first); else empty
        "rates_": Array(lambda p: (2, "n_classes") if p.get("per_action") else (2, 0)),
        "t_": Integer(0),
        "estimator_seed_": Integer(0),
        "rho_history_": Array(lambda p: (None, "1+2*n_classes") if p.get("per_action") else (None, 3)),
        "buffer_X_": Array(("n_buffered", "d")),
        "buffer_actions_": Array(("n_buffered",), "int64", between=(0, "n_classes")),
        "buffer_feedback_": Array(("n_buffered",), "int64", between=(0, 2)),
        "warm_l2_": OneOf((IsNone(), Interval(0, None))),
        "warm_components_": Array((None, "d")),
    }
    #: files saved before per_action existed hold no rates_ (they never estimate per action)
    _optional_state = staticmethod(lambda p: (("rates_",) if not p.get("per_action") else ())
                                   + (() if p.get("warm_start") else ("warm_l2_", "warm_components_")))

    def __init__(self, n_classes: int, gamma: float = 0.1, n_s: int = 10_000, estimator: str = "mixture",
                 estimate_every: int | None = None, warm_start: bool = False, per_action: bool = False,
                 seed: int | None = None):
        self.n_classes = n_classes
        self.gamma = gamma
        self.n_s = n_s
        self.estimator = estimator
        self.estimate_every = estimate_every
        self.warm_start = warm_start
        self.per_action = per_action
        self.seed = seed

    def _every(self) -> int:
        return int(self.n_s if self.estimate_every is None else self.estimate_every)

    def _check_params(self) -> None:
        from ...noise import METHODS

        if self.estimator not in METHODS:
            raise ValueError(
                f"The 'estimator' parameter of RCINE must be one of {sorted(METHODS)}. Got {self.estimator!r} instead."
            )
        if self.warm_start and self.estimator != "mixture":
            raise ValueError(f"The 'warm_start' parameter of RCINE needs estimator='mixture'. Got {self.estimator!r}.")
        if self.per_action and self.estimator != "mixture":
            raise ValueError(f"The 'per_action' parameter of RCINE needs estimator='mixture'. Got {self.estimator!r}.")

    def _init_state(self, n_features, seed_fallback=None):
        fresh = not hasattr(self, "W_")
        super()._init_state(n_features, seed_fallback)
        if fresh:
            self.rho0_ = 0.0
            self.rho1_ = 0.0
            self.t_ = 0
            src = self.seed if self.seed is not None else seed_fallback
            ss = src if isinstance(src, np.random.SeedSequence) else np.random.SeedSequence(src)
            self.estimator_seed_ = int(ss.generate_state(1, np.uint32)[0])
            self.rho_history_ = np.zeros((0, 1 + 2 * self.n_classes if self.per_action else 3))
            self.rates_ = np.zeros((2, self.n_classes if self.per_action else 0))
            self.buffer_X_ = np.zeros((0, n_features))
            self.buffer_actions_ = np.zeros(0, np.int64)
            self.buffer_feedback_ = np.zeros(0, np.int64)
            if self.warm_start:
                self.warm_l2_ = None  # None: no estimate yet
                self.warm_components_ = np.zeros((0, n_features))  # no rows: X was narrow, no SVD

    def _h(self):
        rates = getattr(self, "rates_", None)
        if self.per_action and rates is not None and rates.shape[1]:
            return self._estimate(rates[0], rates[1])
        return self._estimate(self.rho0_, self.rho1_)

    # ------------------------------------------------------------------
    def _remember(self, X, actions, feedback, rows=None) -> None:
        """Append tuples to the buffer of the last n_s rounds before the next estimate.

        The contexts are ``X`` (or ``X[rows]`` when ``rows`` is given); only the rows that fall
        in the next estimate's window are gathered and copied."""
        n = actions.shape[0]
        every = self._every()
        due = (self.t_ // every + 1) * every  # the next estimate (segments never cross one)
        skip = min(n, max(0, due - self.n_s - self.t_))  # rounds too early to be in its window
        keep = max(skip, n - self.n_s)  # of the rest, at most the last n_s can stay in the buffer
        if keep < n:
            m = n - keep
            old = self.buffer_X_
            k_old = min(old.shape[0], self.n_s - m)  # the old rows that stay
            store = getattr(self, "_buffer_store", None)  # (n_s, d), reused: fresh memory costs page faults
            if store is None or store.shape != (self.n_s, old.shape[1]):
                store = self._buffer_store = np.empty((self.n_s, old.shape[1]))
            if k_old:
                _move_rows_up(store, old, old.shape[0] - k_old, k_old)
            _gather_rows(X, np.arange(keep, n) if rows is None else rows[keep:], store[k_old:k_old + m])
            self.buffer_X_ = store[:k_old + m]
            self.buffer_actions_ = np.concatenate([self.buffer_actions_, actions[keep:]])[-self.n_s:]
            self.buffer_feedback_ = np.concatenate([self.buffer_feedback_, feedback[keep:]])[-self.n_s:]
        self.t_ += n
        if self.t_ % every == 0:
            self._reestimate()

    def _reestimate(self) -> None:
        from ...noise import estimate_flip_rates

        seed = np.random.SeedSequence([self.estimator_seed_, self.t_])
        options = {"per_action": True} if self.per_action else {}
        if self.warm_start:
            options["warm"] = warm = {} if self.warm_l2_ is None else {
                "l2": self.warm_l2_, "components": self.warm_components_ if self.warm_components_.shape[0] else None}
        rho0, rho1 = estimate_flip_rates(self.buffer_X_, self.buffer_actions_, self.buffer_feedback_,
                                         self.n_classes, method=self.estimator, seed=seed, **options)
        if self.warm_start and "l2" in warm:
            self.warm_l2_ = float(warm["l2"])
            comps = warm["components"]
            self.warm_components_ = np.zeros((0, self.W_.shape[1])) if comps is None else np.array(comps)
        if self.per_action:
            self.rates_ = np.vstack([np.asarray(rho0, dtype=np.float64), np.asarray(rho1, dtype=np.float64)])
            self.rho0_, self.rho1_ = float(self.rates_[0].mean()), float(self.rates_[1].mean())
            row = np.r_[self.t_, self.rates_[0], self.rates_[1]]
        else:
            self.rho0_, self.rho1_ = float(rho0), float(rho1)
            row = np.array([self.t_, self.rho0_, self.rho1_])
        self.rho_history_ = np.vstack([self.rho_history_, row[None]])

    def _segments(self, n: int):
        """Split n rounds at the next estimation boundaries (multiples of the estimation interval)."""
        every = self._every()
        start = 0
        while start < n:
            stop = min(n, start + every - (self.t_ + start) % every)
            yield start, stop
            start = stop

    def learn(self, X, actions, feedback, propensities) -> "RCINE":
        X = self._check_X(X, fitting=True)
        n = X.shape[0]
        actions = self._check_actions(actions, n)
        feedback = self._check_binary(feedback, n)
        propensities = self._check_propensities(propensities, n)
        for a, b in list(self._segments(n)):
            h0, h1 = self._h()
            Xs = X[a:b]
            As, Fs, Ps = actions[a:b], feedback[a:b], propensities[a:b]
            try:
                self._guarded(b - a, lambda lo, hi: bandit_learn(
                    RULE_BANDITRON, self.W_, *kernel_view(row_range(Xs, lo, hi)), As[lo:hi], Fs[lo:hi], Ps[lo:hi],
                    h0, h1, *self._NO_STATE))
            except NonFiniteUpdate as exc:  # the rows before the refused one are learned: remember them
                if exc.row:
                    self._remember(Xs[:exc.row], As[:exc.row], Fs[:exc.row])
                raise NonFiniteUpdate(str(exc).replace(f"row {exc.row}", f"row {a + exc.row}"), a + exc.row) from None
            self._remember(Xs, As, Fs)
        return self

    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes):
        from ...feedback import CODE_BANDIT, kernel_feedback

        code, rho0, rho1 = kernel_feedback(feedback, self.n_classes)
        if code != CODE_BANDIT:
            raise TypeError(f"RCINE learns from bandit feedback; got {feedback!r}.")
        for a, b in list(self._segments(order.shape[0])):
            h0, h1 = self._h()
            rows = order[a:b]
            actions = np.empty(b - a, np.int64)
            fb = np.empty(b - a, np.int64)
            with class_major(self) as W:
                bandit_simulate(RULE_BANDITRON, W, *kernel_view(X), y, rows, float(self.gamma), h0, h1,
                                rho0, rho1, u_learner[a:b], u_feedback[a:b], mistakes[a:b], *self._NO_STATE,
                                actions, fb)
            self._remember(X, actions, fb, rows=rows)
