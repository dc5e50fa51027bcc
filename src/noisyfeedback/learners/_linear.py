"""Shared machinery of the linear multiclass online learners (state W_ of shape (K, d))."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._rows import CodedRows
from .._state import Array
from .._validation import Integer, check_labels, check_memory, check_X
from ..base import Learner, NonFiniteUpdate, make_rng
from ..kernels.linear import predict_rows, score_rows

_EMPTY_F = np.zeros((0, 0))
#: a dense X's stand-ins for the CSR arrays, of the dtypes of a validated CSR X's (int64 row pointers,
#: int32 column indices, float64 values: `check_X`): the kernels compiled for one serve the other
_EMPTY_INDPTR = np.zeros(1, np.int64)
_EMPTY_INDICES = np.zeros(1, np.int32)
_EMPTY_D = np.zeros(0)


#: ``sparse`` flags of `kernel_view`: a dense X, a CSR X with float64 values (a kernel may read a
#: row's slices in place), a CSR X with other values (copied into float64 row buffers, so that the
#: arithmetic stays float64 with and without the JIT), coded rows (`CodedRows`:
#: ``data`` holds the codes and ``Xd`` is the (1, n_values) table of values; copied into row buffers)
from ..kernels._codes import CSR_CODED, CSR_FLOAT64, CSR_OTHER, DENSE  # noqa: E402


def kernel_view(X) -> tuple:
    """(Xd, indptr, indices, data, sparse) for the kernels from a validated dense or CSR X or CodedRows;
    ``sparse`` is one of `DENSE`, `CSR_FLOAT64`, `CSR_OTHER`, `CSR_CODED`
    (true when CSR)."""
    if isinstance(X, CodedRows):
        return X.values.reshape(1, -1), X.indptr, X.indices, X.codes, CSR_CODED
    if sp.issparse(X):
        return _EMPTY_F, X.indptr, X.indices, X.data, CSR_FLOAT64 if X.data.dtype == np.float64 else CSR_OTHER
    return X, _EMPTY_INDPTR, _EMPTY_INDICES, _EMPTY_D, DENSE


def row_range(X, lo: int, hi: int):
    """Rows lo..hi−1 of X (X itself when that is all of it: no copy on the ordinary path)."""
    return X if lo == 0 and hi == X.shape[0] else X[lo:hi]


def _masked_argmax(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row the first index of the largest score among the masked-in entries."""
    s = np.where(mask, scores, -np.inf)
    out = np.argmax(s, axis=1)
    none = ~np.take_along_axis(mask, out[:, None], axis=1)[:, 0]  # all masked-in scores -inf or NaN
    if none.any():
        out[none] = np.argmax(mask[none], axis=1)
    return out.astype(np.int64)


#: rows whose largest |entry| is above _BIG or below _SMALL (and not 0) are rescaled by a power of 2 before
#: a learner that normalises rows sees them: their ‖x‖² would overflow to inf or underflow (to 0 or a
#: denormal) in float64. Between the two every ‖x‖² of up to 1.7e7 features is a normal number.
_BIG = 2.0 ** 500
_SMALL = 2.0 ** -500


def finite_scale_rows(X):
    """X with every row whose largest absolute entry M is above 2^500 or below 2^-500 (M > 0) multiplied
    by 2^(1−e), M = f·2^e (f in [0.5, 1)): its largest entry is then in [1, 2) and ‖x‖² cannot overflow
    or underflow. Exact (a power of 2), and only for those rows: x/‖x‖ is the same row, and every other
    row keeps its bits. Returns X itself when no row needs it (float32 rows never do).

    >>> X = np.array([[1.7e308] * 4, [3.0, 4.0, 0.0, 0.0], [1e-170, 0.0, 0.0, 0.0]])
    >>> finite_scale_rows(X).round(4).tolist()
    [[1.8913, 1.8913, 1.8913, 1.8913], [3.0, 4.0, 0.0, 0.0], [1.2077, 0.0, 0.0, 0.0]]
    """
    if isinstance(X, CodedRows) or getattr(X, "dtype", None) != np.float64:
        return X
    if sp.issparse(X):
        if X.nnz == 0:
            return X
        M = abs(X).max(axis=1).toarray().ravel()
    else:
        if X.size == 0:
            return X
        M = np.abs(X).max(axis=1)
    bad = np.flatnonzero((M > _BIG) | ((M < _SMALL) & (M > 0)))
    if bad.size == 0:
        return X
    shift = 1 - np.frexp(M[bad])[1]
    if sp.issparse(X):
        X = X.copy()
        for i, k in zip(bad, shift):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            X.data[lo:hi] = np.ldexp(X.data[lo:hi], int(k))
        return X
    X = np.array(X, dtype=np.float64, order="C")
    X[bad] = np.ldexp(X[bad], shift[:, None])
    return X




def _as_binary(rewards):
    """Float rewards that are all 0.0/1.0 (as read from VW text or a table) as int64; others unchanged
    (``learn`` then takes them as graded rewards where the learner can, or refuses them naming the row)."""
    arr = np.asarray(rewards)
    if np.issubdtype(arr.dtype, np.floating) and np.isin(arr, (0.0, 1.0)).all():
        return arr.astype(np.int64)
    return arr


def is_click(arr: np.ndarray) -> bool:
    """True when every reward is 0 or 1 (a click; −0.0 and 0.0 alike), whatever the dtype."""
    return arr.dtype == bool or bool(((arr == 0) | (arr == 1)).all())


def check_rewards(feedback, n: int, owner: str, flips: str | None = None, width: int = 1) -> np.ndarray:
    """Logged rewards for a regression oracle, 1-D with n entries (or (n, width) with ``width`` > 1), as
    float64: 0/1 clicks (booleans or numbers) or any finite real-valued reward, which the oracle fits as it
    is; −0.0 (−cost of a 0-cost VW label) reads as 0.0. One dtype for every kind of reward, so the kernels
    are compiled once; a click 0/1 converts exactly, and the kernels' arithmetic on it (f − v, a float)
    is the same as on the integer. Refuses non-numbers and non-finite rewards naming the row, and rewards
    other than clicks when the learner corrects flips (``flips``: its rates as text, None without them):
    the flip correction E[f̃] = ρ0 + (1 − ρ0 − ρ1)·E[f] is for clicks, rewards of two values 0 and 1.

    >>> check_rewards([0, 1, -0.0], 3, "SquareCB").tolist(), check_rewards([0.8, -0.0], 2, "SquareCB").tolist()
    ([0.0, 1.0, 0.0], [0.8, 0.0])
    """
    arr = np.asarray(feedback)
    want = (n,) if width == 1 else (n, width)
    if arr.shape != want and not (width > 1 and arr.size == n * width):
        raise ValueError(f"feedback must have shape {want}; got shape {arr.shape}.")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"feedback must hold numbers (0/1 clicks or real-valued rewards) or booleans; got dtype "
                        f"{arr.dtype}.")
    out = arr.reshape(want).astype(np.float64) + 0.0  # a new float64 array; + 0.0: −0.0 becomes 0.0
    if (flips is None and np.isfinite(out).all()) or is_click(out):  # the common cases, checked cheaply
        return out
    rows = out.reshape(n, -1)
    bad = ~np.isfinite(rows).all(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{owner}: feedback must be finite; row {row} has {_plain(rows[row])}.")
    other = ~((rows == 0) | (rows == 1)).all(axis=1)
    row = int(np.flatnonzero(other)[0])
    raise ValueError(f"{owner} has flip rates ({flips}): the flip correction is for clicks (rewards 0 or 1), "
                     f"but row {row} has {_plain(rows[row])}. Learn graded rewards without flip rates "
                     "(rho0=0, rho1=0).")


def _plain(row: np.ndarray):
    """A row's value(s) as plain Python numbers for messages (not ``np.float64(0.5)``)."""
    vals = row.tolist()
    return vals[0] if len(vals) == 1 else vals


def restricted_draw(p: np.ndarray, allowed: np.ndarray, u: float) -> tuple[int, float, np.ndarray]:
    """Draw one action from the distribution ``p`` (K,) restricted to the sorted labels ``allowed``
    and renormalised, by the inverse CDF of the uniform ``u`` over the labels in increasing order.

    Returns (action, its restricted probability, the restricted distribution q): q_a = p_a / Σ_{b∈allowed} p_b
    on ``allowed``, 0 elsewhere. Where the allowed labels hold no mass (p is 0 on all of them, e.g. a
    learner that does not explore and whose greedy label is excluded) q is uniform over them.

    >>> q = restricted_draw(np.array([0.7, 0.1, 0.1, 0.1]), np.array([1, 3]), 0.6)
    >>> q[0], q[1], q[2].tolist()
    (3, 0.5, [0.0, 0.5, 0.0, 0.5])
    """
    q = np.zeros_like(p)
    q[allowed] = p[allowed]
    total = q.sum()
    if not (total > 0.0 and np.isfinite(total) and np.isfinite(q).all()):
        q[:] = 0.0
        q[allowed] = 1.0
        total = q.sum()
    q /= total
    c = np.cumsum(q)
    a = int(np.searchsorted(c, u, side="right"))
    nz = np.flatnonzero(q)
    if a >= q.shape[0] or q[a] == 0.0:  # rounding at the top of the CDF
        a = int(nz[nz <= min(a, q.shape[0] - 1)][-1]) if (nz <= a).any() else int(nz[0])
    return a, float(q[a]), q


def _action_mask(value: Any, name: str, n: int, K: int) -> np.ndarray | None:
    """(n, K) boolean mask from ``allowed``/``excluded``: action indices applying to every row, a (K,)
    boolean mask for every row or an (n, K) boolean mask; None when ``value`` is None."""
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.dtype == bool:
        if arr.shape == (K,):
            return np.broadcast_to(arr, (n, K))
        if arr.shape != (n, K):
            raise ValueError(f"{name} as a boolean mask must have shape ({n}, {K}) (rows x actions) or ({K},); "
                             f"got shape {arr.shape}.")
        return arr
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{name} must be a list of action indices in 0..{K - 1} or a boolean mask of shape "
                         f"({n}, {K}); got {value!r}.")
    if name == "allowed" and arr.size == 0:
        raise ValueError("allowed is empty: give at least one action index in 0..{}.".format(K - 1))
    bad = (arr < 0) | (arr >= K)
    if bad.any():
        raise ValueError(f"{name} must hold action indices in 0..{K - 1}; got {arr[bad][0]!r}.")
    mask = np.zeros(K, dtype=bool)
    mask[arr.astype(np.int64)] = True
    return np.broadcast_to(mask, (n, K))


def action_mask(allowed: Any, excluded: Any, n: int, K: int) -> np.ndarray | None:
    """The (n, K) mask of the actions a row may take (``allowed`` minus ``excluded``), or None when neither
    is given. Raises ValueError naming the parameter when a row is left with no action."""
    a = _action_mask(allowed, "allowed", n, K)
    e = _action_mask(excluded, "excluded", n, K)
    if a is None and e is None:
        return None
    mask = np.ones((n, K), dtype=bool) if a is None else a
    if e is not None:
        mask = mask & ~e
    empty = ~mask.any(axis=1)
    if empty.any():
        row = int(np.flatnonzero(empty)[0])
        what = ("allowed leaves" if e is None else "excluded leaves" if a is None
                else "allowed minus excluded leaves")
        raise ValueError(f"{what} no action for row {row}.")
    return mask


#: rows of a dense chunk learned a call at a time by ``fit_logged`` on a stream: bounds the memory of the
#: rows' copies and feature map (8,192 rows of the degree-2 map of 30 features: 33 MB)
_LEARN_SLICE = 8192


class LoggedLearning:
    """``fit_logged``: train from scratch on logged rows, for every learner of bandit or set feedback
    (whose ``learn(X, actions, feedback, propensities)`` updates from logged rows in order)."""

    def fit_logged(self, X, actions=None, rewards=None, propensities=None):
        """Train from scratch on logged rows (context, action or set taken, reward, its propensity), in
        order: discards any learned state, then ``learn``. Rewards are 0/1 clicks (read as floats 0.0/1.0
        from VW text or a table too) or, for the regression oracles, any real-valued reward. Returns self.

        ``X`` alone may be a stream of chunks (``nf.datasets.stream_log(...)``, or any iterable of
        ``(X, actions, rewards, propensities)``): learned chunk by chunk in order, in bounded memory
        (a feature map is computed per chunk); the same model as one call on the whole log, as the
        update of each row depends only on the rows before it."""
        self._reset()
        if actions is None and rewards is None and propensities is None and not hasattr(X, "shape") \
                and not hasattr(X, "actions"):
            for chunk in X:
                Xc, a, r, p = chunk
                start = getattr(chunk, "start", None)
                try:
                    n = np.shape(a)[0]
                    step = max(n, 1) if sp.issparse(Xc) else _LEARN_SLICE  # dense rows: a slice a call
                    for lo in range(0, n, step):
                        hi = min(n, lo + step)
                        try:
                            self.learn(Xc[lo:hi], a[lo:hi], _as_binary(r[lo:hi]), p[lo:hi])
                        except NonFiniteUpdate as exc:
                            raise NonFiniteUpdate(str(exc).replace(f"row {exc.row}", f"row {lo + exc.row}"),
                                                  lo + exc.row) from None
                except NonFiniteUpdate as exc:
                    if not start:
                        raise
                    raise NonFiniteUpdate(str(exc).replace(f"row {exc.row}", f"row {start + exc.row}"),
                                          start + exc.row) from None
                except ValueError as exc:
                    if not start:
                        raise
                    raise ValueError(f"the chunk from row {start} of the log: {exc}") from None
            return self
        if hasattr(X, "actions") and actions is None:  # a BanditLog
            X, actions, rewards, propensities = X
        return self.learn(X, actions, _as_binary(rewards), propensities)


@contextmanager
def class_major(learner):
    """``learner.W_`` stored column-major (Fortran order) for a compiled loop, copied back after.

    A round reads the K weights of each non-zero feature; stored column-major they are adjacent
    (one or two cache lines instead of K), which made the bandit loop on MNIST about 0.6 µs a
    round faster. Same values, same arithmetic in the same order: same bits. The copies cost
    2·K·d numbers per call (a chunk of rounds)."""
    W = np.asfortranarray(learner.W_)
    try:
        yield W
    finally:
        if W is not learner.W_:
            learner.W_[...] = W


class LinearClassifier(Learner):
    """A linear multiclass learner: scores W x, greedy prediction argmax (lowest index on ties).

    Subclasses implement ``_simulate_chunk``, ``act`` (random learners) and ``learn``.
    """

    #: uniforms drawn from ``rng_`` per round by ``act`` (and the compiled loop)
    draws_per_round: ClassVar[int] = 0
    #: names of extra per-round metrics the compiled loop writes (``extras[name][t]``);
    #: ``simulate`` reports ``<name>_rate`` and ``<name>_curve`` in ``Trace.metrics``
    extra_metrics: ClassVar[tuple[str, ...]] = ()
    _base_constraints: ClassVar[dict[str, Any]] = {"n_classes": Integer(2)}
    #: what a model file may set (noisyfeedback._state): the weights, K = n_classes rows
    _learned_state: ClassVar[dict[str, Any]] = {"W_": Array(("n_classes", "d"))}
    #: the learned arrays an update changes: checked finite after learning, restored when not
    _mutable_state: ClassVar[tuple[str, ...]] = ("W_",)

    # ------------------------------------------------------ finite state
    def _state_arrays(self) -> list[np.ndarray]:
        return [a for a in (getattr(self, n, None) for n in self._mutable_state) if isinstance(a, np.ndarray)]

    def _state_is_finite(self) -> bool:
        """True when every learned array an update changes holds only finite numbers."""
        return all(np.isfinite(a).all() for a in self._state_arrays())

    def _guarded(self, n: int, run) -> None:
        """Run ``run(lo, hi)`` (learn rows lo..hi−1 in order, from the current state) on rows 0..n−1 and
        check the state finite after it. When it is not, the step that broke it is refused: the state is
        put back to that after the rows before it (found by bisection, replaying from a copy of the
        state; learning is deterministic) and `NonFiniteUpdate` (a ValueError) names the row.

        The check reads every learned array once a call (one pass over memory the update touches
        anyway for a batch; for one row a call, a pass over W); the copy is as large."""
        arrays = self._state_arrays()
        saved = [a.copy(order="K") for a in arrays]
        run(0, n)
        if all(np.isfinite(a).all() for a in arrays):
            return

        def replay(k: int) -> bool:
            for a, b in zip(arrays, saved):
                a[...] = b
            run(0, k)
            return all(np.isfinite(a).all() for a in arrays)

        lo, hi = 0, n  # rows [0, lo) keep the state finite, rows [0, hi) do not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if replay(mid):
                lo = mid
            else:
                hi = mid
        replay(lo)
        raise NonFiniteUpdate(
            f"{type(self).__name__}.learn: row {lo} would make the learned state non-finite (the update "
            f"overflows); it was refused: the rows before it are learned, row {lo} and the rows after it are "
            "not.", lo)

    def _validate_params(self) -> None:
        """Check every parameter, unless none changed since the last check passed (every entry point
        validates: parameters may have been set since fitting; a service calls them once a request)."""
        if self._params_unchanged():
            return
        from .._validation import check_param

        for name, c in self._base_constraints.items():
            check_param(name, getattr(self, name), c, type(self).__name__)
        super()._validate_params()

    # -------------------------------------------------------------- state
    def _init_state(self, n_features: int, seed_fallback: np.random.SeedSequence | None = None) -> None:
        """Create W_ (zeros) and rng_ if absent; rng_ is seeded by ``seed`` or, if None, the fallback."""
        if not hasattr(self, "W_"):
            self._validate_params()
            check_memory(8.0 * self.n_classes * n_features,
                         f"{type(self).__name__} weights W_ ({self.n_classes} x {n_features})")
            # Fortran order: the K scores of one feature are adjacent, which the kernels read together
            self.W_ = np.zeros((self.n_classes, n_features), dtype=np.float64, order="F")
        if self.draws_per_round and not hasattr(self, "rng_"):
            seed = getattr(self, "seed", None)
            self.rng_ = make_rng(seed if seed is not None else seed_fallback)

    @property
    def n_features_(self) -> int:
        """The number of features of X (W_'s columns here; a learner that maps its rows says otherwise)."""
        return self.W_.shape[1]

    def _check_X(self, X, fitting: bool):
        self._validate_params()  # every entry point: parameters may have been changed since fitting
        n_features = self.n_features_ if hasattr(self, "W_") else None  # of X (a learner may map its rows)
        X = check_X(X, n_features=n_features, owner=type(self).__name__)
        if fitting:
            self._init_state(X.shape[1])
        return X

    # ----------------------------------------------------------- inference
    def _mask(self, allowed, excluded, n: int) -> np.ndarray | None:
        """The actions each of n rows may take, or None (see `action_mask`); single actions only."""
        mask = action_mask(allowed, excluded, n, int(self.n_classes))
        if mask is not None and getattr(self, "feedback_kind", "") == "set" and int(getattr(self, "m", 1)) > 1:
            raise ValueError(f"allowed/excluded restrict single actions; {type(self).__name__} with m="
                             f"{self.m} proposes sets.")
        return mask

    def _act_restricted(self, X, allowed, excluded) -> tuple[np.ndarray, np.ndarray]:
        """``act`` restricted to allowed actions: per row one uniform from ``rng_`` (draws_per_round = 1;
        none for learners that do not explore) drawn after the row's distribution p is computed, then
        `restricted_draw` of p on the row's allowed labels."""
        n = self._check_X(X, fitting=True).shape[0]
        mask = self._mask(allowed, excluded, n)
        p = self.action_probabilities(X)  # the rows as given (a learner may map its rows in _check_X)
        u = self.rng_.random(n) if self.draws_per_round else np.zeros(n)
        actions = np.empty(n, dtype=np.int64)
        probs = np.empty(n)
        for i in range(n):
            actions[i], probs[i], _ = restricted_draw(p[i], np.flatnonzero(mask[i]), float(u[i]))
        return actions, probs

    def _restrict_probabilities(self, p: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """Rows of p restricted to the mask and renormalised (the distributions ``act`` then draws from)."""
        if mask is None:
            return p
        out = np.empty_like(p)
        for i in range(p.shape[0]):
            out[i] = restricted_draw(p[i], np.flatnonzero(mask[i]), 0.0)[2]
        return out

    def decision_function(self, X) -> np.ndarray:
        """Scores W x, shape (n_samples, n_classes); all zeros before any learning."""
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.zeros((X.shape[0], self.n_classes))
        if hasattr(self, "W_"):
            score_rows(self.W_, *kernel_view(X), out)
        return out

    def predict(self, X, allowed=None, excluded=None) -> np.ndarray:
        """Greedy labels argmax_k (W x)_k; label 0 for every row before any learning.

        ``allowed``/``excluded`` (action indices for every row, or an (n, K) boolean mask): the argmax
        over the actions a row may take (lowest index on ties)."""
        self._validate_params()
        X = self._check_X(X, fitting=False)
        mask = self._mask(allowed, excluded, X.shape[0])
        if mask is not None:
            return _masked_argmax(self.decision_function(X), mask)
        out = np.zeros(X.shape[0], dtype=np.int64)
        if hasattr(self, "W_"):
            predict_rows(self.W_, *kernel_view(X), out)
        return out

    def action_probabilities(self, X, allowed=None, excluded=None) -> np.ndarray:
        """The distribution ``act`` draws from, shape (n_samples, n_classes), rows summing to 1.

        Here (learners that do not explore): all mass on the greedy label argmax W x (lowest index
        on ties; label 0 before any learning), among the allowed actions when restricted. Exploring
        learners override it."""
        greedy = self.predict(X, allowed, excluded)
        out = np.zeros((greedy.shape[0], self.n_classes))
        out[np.arange(greedy.shape[0]), greedy] = 1.0
        return out

    def _check_actions(self, actions, n: int, name: str = "actions") -> np.ndarray:
        return check_labels(actions, self.n_classes, n_samples=n, name=name)

    def _check_binary(self, feedback, n: int) -> np.ndarray:
        arr = np.asarray(feedback)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"feedback must be 1-D with {n} entries; got shape {arr.shape}.")
        if arr.dtype != bool and arr.dtype.kind not in "iuf":
            raise TypeError(f"feedback must hold 0/1 integers or booleans; got dtype {arr.dtype}.")
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"feedback must be 0 or 1 ({type(self).__name__} learns from clicks; the regression "
                             f"oracles SquareCB and EpsilonGreedy learn real-valued rewards); row {row} has "
                             f"{arr[row].item()!r}.")
        return np.ascontiguousarray(arr, dtype=np.int64)

    def _check_propensities(self, propensities, n: int) -> np.ndarray:
        p = np.asarray(propensities, dtype=np.float64) if propensities is not None else None
        if p is None or p.ndim != 1 or p.shape[0] != n:
            raise ValueError(f"propensities must be 1-D with {n} entries (P of each logged action).")
        bad = ~((p > 0) & (p <= 1))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"propensities must be in (0, 1]; row {row} has {p[row]!r}.")
        return np.ascontiguousarray(p)

    # ------------------------------------------------------------ simulate
    def _simulate_chunk(self, X, y, order, u_learner, feedback, u_feedback, mistakes, extras=None) -> None:
        """Run rounds ``order`` in the compiled loop, writing ``mistakes[t]`` (and ``extras``)."""
        raise NotImplementedError
