"""Shared machinery of the linear multiclass online learners (state W_ of shape (K, d))."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._rows import CodedRows
from .._state import Array
from .._validation import Integer, check_labels, check_memory, check_X
from ..base import Learner, make_rng
from ..kernels.linear import predict_rows, score_rows

_EMPTY_F = np.zeros((0, 0))
_EMPTY_I = np.zeros(1, np.int64)
_EMPTY_D = np.zeros(0)


#: ``sparse`` flags of :func:`kernel_view`: a dense X, a CSR X with float64 values (a kernel may read a
#: row's slices in place), a CSR X with other values (copied into float64 row buffers, so that the
#: arithmetic stays float64 with and without the JIT), coded rows (:class:`~noisyfeedback._rows.CodedRows`:
#: ``data`` holds the codes and ``Xd`` is the (1, n_values) table of values; copied into row buffers)
from ..kernels._codes import CSR_CODED, CSR_FLOAT64, CSR_OTHER, DENSE  # noqa: E402


def kernel_view(X) -> tuple:
    """(Xd, indptr, indices, data, sparse) for the kernels from a validated dense or CSR X or CodedRows;
    ``sparse`` is one of :data:`DENSE`, :data:`CSR_FLOAT64`, :data:`CSR_OTHER`, :data:`CSR_CODED`
    (true when CSR)."""
    if isinstance(X, CodedRows):
        return X.values.reshape(1, -1), X.indptr, X.indices, X.codes, CSR_CODED
    if sp.issparse(X):
        return _EMPTY_F, X.indptr, X.indices, X.data, CSR_FLOAT64 if X.data.dtype == np.float64 else CSR_OTHER
    return X, _EMPTY_I, _EMPTY_I, _EMPTY_D, DENSE


def _as_binary(rewards):
    """Float rewards that are all 0.0/1.0 (as read from VW text or a table) as int64; others unchanged
    (``learn`` then refuses them naming the row)."""
    arr = np.asarray(rewards)
    if np.issubdtype(arr.dtype, np.floating) and np.isin(arr, (0.0, 1.0)).all():
        return arr.astype(np.int64)
    return arr


class LoggedLearning:
    """``fit_logged``: train from scratch on logged rows, for every learner of bandit or set feedback
    (whose ``learn(X, actions, feedback, propensities)`` updates from logged rows in order)."""

    def fit_logged(self, X, actions, rewards, propensities):
        """Train from scratch on logged rows (context, action or set taken, 0/1 reward, its propensity),
        in order: discards any learned state, then ``learn``. Rewards read as floats 0.0/1.0 (VW text, a
        table) are accepted. Returns self."""
        self._reset()
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

    def _validate_params(self) -> None:
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
        return self.W_.shape[1]

    def _check_X(self, X, fitting: bool):
        self._validate_params()  # every entry point: parameters may have been changed since fitting
        n_features = self.W_.shape[1] if hasattr(self, "W_") else None
        X = check_X(X, n_features=n_features, owner=type(self).__name__)
        if fitting:
            self._init_state(X.shape[1])
        return X

    # ----------------------------------------------------------- inference
    def decision_function(self, X) -> np.ndarray:
        """Scores W x, shape (n_samples, n_classes); all zeros before any learning."""
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.zeros((X.shape[0], self.n_classes))
        if hasattr(self, "W_"):
            score_rows(self.W_, *kernel_view(X), out)
        return out

    def predict(self, X) -> np.ndarray:
        """Greedy labels argmax_k (W x)_k; label 0 for every row before any learning."""
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.zeros(X.shape[0], dtype=np.int64)
        if hasattr(self, "W_"):
            predict_rows(self.W_, *kernel_view(X), out)
        return out

    def action_probabilities(self, X) -> np.ndarray:
        """The distribution ``act`` draws from, shape (n_samples, n_classes), rows summing to 1.

        Here (learners that do not explore): all mass on the greedy label argmax W x (lowest index
        on ties; label 0 before any learning). Exploring learners override it."""
        greedy = self.predict(X)
        out = np.zeros((greedy.shape[0], self.n_classes))
        out[np.arange(greedy.shape[0]), greedy] = 1.0
        return out

    def _check_actions(self, actions, n: int, name: str = "actions") -> np.ndarray:
        return check_labels(actions, self.n_classes, n_samples=n, name=name)

    def _check_binary(self, feedback, n: int) -> np.ndarray:
        arr = np.asarray(feedback)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"feedback must be 1-D with {n} entries; got shape {arr.shape}.")
        if arr.dtype != bool and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"feedback must hold 0/1 integers or booleans; got dtype {arr.dtype}.")
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"feedback must be 0 or 1; row {row} has {arr[row]!r}.")
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
