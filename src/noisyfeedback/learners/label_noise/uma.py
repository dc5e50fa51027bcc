"""UMA: Unconfused Ultraconservative Multiclass Algorithm (Louche & Ralaivola 2015), docs/algorithms.md §4.10.

Batch learning of a linear multiclass classifier from labels corrupted by a known
confusion matrix C, C[r, q] = P(noisy = r | true = q) (columns sum to 1).

Each iteration, with the current classifier h(x) = argmax_k (W x)_k:

    μ[p, r] = (1/n) Σ_i 1[ỹ_i = r] · 1[h(x_i) = p] · x_i          (d-vectors)
    Z[p, ·] = C⁻¹ μ[p, ·]      (E[μ[p, ·]] = C Z*[p, ·], Z*[p, q] = E[1[y=q] 1[h(x)=p] x])
    (p, q) = a pair p ≠ q chosen by the strategy; W[q] += Z[p, q], W[p] −= Z[p, q]

μ is computed in one vectorised pass over the data: the scores X Wᵀ (BLAS or a
sparse product), then one sparse indicator product G X with G[p·K + r, i] = 1 for
the rows predicted p (with margin ≥ θ) whose noisy label is r (dense X), or one
``bincount`` of the non-zeros into their (group, column) cells (CSR X) — O(nnz(X)).
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._state import Array, Flag
from ..._validation import AnySeed, Integer, Interval, IsNone, OneOf, Options, check_param, check_sparse_structure
from ...base import EstimatorMixin, Tags, make_rng
from ...feedback import check_confusion_matrix

__all__ = ["UMA", "make_kernel_uma", "uma_statistics", "update_vectors", "standard_errors", "DEFAULT_MAX_CONDITION"]

#: largest condition number of C that UMA accepts by default (C⁻¹ amplifies the
#: sampling error of μ by up to cond(C); beyond ~1e8 Z is dominated by noise and
#: rounding, and an exactly singular C — a class never recognised — has cond = inf)
DEFAULT_MAX_CONDITION = 1e8

_STRATEGIES = ("error", "confusion", "random")


class UMA(EstimatorMixin, ClassifierMixin, BaseEstimator):
    """Unconfused Ultraconservative Multiclass Algorithm: a linear classifier from noisy labels.

    Learns W (one weight vector per class) from labels ỹ corrupted by a known,
    invertible confusion matrix ``C[r, q] = P(ỹ = r | y = q)`` (columns sum to 1).
    Every iteration estimates, for each pair (p, q), the vector
    E[1[y = q] 1[h(x) = p] x] (the points of TRUE class q that the current
    classifier h predicts as p, summed and divided by n) by
    ``Z[p, ·] = C⁻¹ μ[p, ·]`` with ``μ[p, r] = (1/n) Σ_i 1[ỹ_i = r] 1[h(x_i) = p] x_i``,
    picks one pair p ≠ q and makes the ultraconservative Perceptron step
    ``W[q] += Z[p, q]``, ``W[p] −= Z[p, q]``. E[Z] is the clean-label statistic, so
    the noise is undone on average (Louche & Ralaivola 2015, Proposition 1).

    **Batch Perceptron.** With ``confusion=None`` (or C = I), Z = μ and UMA is the
    *batch Perceptron* used as the paper's baseline: each iteration computes, on
    the whole data set, ``μ[p, q] = (1/n) Σ_i 1[ỹ_i = q] 1[h(x_i) = p] x_i`` (the
    points labelled q and predicted p, summed, divided by n), and applies the
    same single-pair update to the pair of largest ‖μ[p, q]‖ (strategy "error"). (It is not the online Perceptron
    ``nf.Perceptron``, which updates after every mistaken example.)

    Parameters
    ----------
    confusion : array-like of shape (K, K) or None, default=None
        C[r, q] = P(noisy label = r | true label = q); columns must sum to 1 and
        cond(C) must not exceed ``max_condition``. Row/column k refers to
        ``classes_[k]``. None means the identity (no noise: the batch Perceptron).
    strategy : {"error", "confusion", "random"}, default="error"
        How the pair (p, q), p ≠ q, is chosen among the pairs with ‖Z[p, q]‖ > tol:
        "error": the largest ‖Z[p, q]‖ (an estimate of P(y=q, h(x)=p), eq. (19));
        "confusion": the largest ‖Z[p, q]‖ / π̂_q with π̂ = C⁻¹ π̃ the estimated
        true class proportions (π̃ the noisy ones, eq. (20)); classes with π̂_q ≤ 0
        are skipped (if that leaves none, "error" decides);
        "random": uniformly at random (seeded). Ties go to the first pair in
        row-major (p, q) order.
    theta : float >= 0, default=0.0
        Margin θ: only points predicted p with margin ≥ θ enter μ[p, ·]. The
        margin of x predicted p is its Euclidean distance to the nearest boundary
        of p's region, ``min_{r ≠ p} (s_p − s_r) / ‖w_p − w_r‖`` with s = W x
        (scale-free, unlike the raw score gap s_p − max_{r≠p} s_r, which it equals
        up to the factor ‖w_p − w_r‖). A class r with w_r = w_p has no boundary
        with p and is skipped, so at the start (W = 0) every point counts.
        θ = 0 uses every point.
    max_iter : int >= 1, default=1000
        Largest number of iterations (passes computing μ; one update each).
    tol : float >= 0, default=0.0
        Stop when no pair p ≠ q has ‖Z[p, q]‖ > tol (an absolute norm, in the
        units of x). With C = I and tol = 0 this is "no training mistake left".
    significance : float >= 0, default=0.0
        κ: a pair is a candidate only if also ‖Z[p, q]‖ > κ·σ̂[p, q], where
        σ̂[p, q]² = (1/n²) Σ_i 1[h(x_i) = p] C⁻¹[q, ỹ_i]² ‖x_i‖² estimates the
        sampling error of Z[p, q] (see `standard_errors`). 0 (default, the
        paper's algorithm) disables it; κ ≈ 2–3 stops UMA once every remaining
        Z is indistinguishable from estimation noise (a data-driven form of the
        ε of the paper's stopping criterion, Proposition 4), instead of
        following noise amplified by C⁻¹ for the remaining iterations.
    batch_size : int >= 1 or None, default=None
        None: every iteration uses all n rows (the batch algorithm). An int b:
        the online mode of the paper's Section 3.4 — rows are cut, in the given
        order, into consecutive chunks of b (the last may be shorter) and each
        update is estimated from one chunk (μ normalised by the chunk size);
        ``fit`` cycles over the chunks until ``max_iter`` updates or a full cycle
        without any pair above ``tol``. ``partial_fit`` does one such step on the
        chunk it is given.
    max_condition : float >= 1, default=1e8
        Largest accepted condition number (2-norm) of C.
    seed : None, int >= 0 or numpy.random.SeedSequence, default=None
        Seeds the "random" strategy (the other strategies draw nothing).

    Attributes
    ----------
    W_ : ndarray of shape (K, n_features)
    classes_ : ndarray of shape (K,)
        The labels; integer labels within 0..K−1 of a given C map to 0..K−1
        even when some class is absent from y.
    confusion_ : ndarray of shape (K, K)
        The validated C (the identity when ``confusion=None``).
    n_iter_ : int
        Iterations run (μ computations), including a final one that found no pair above tol.
    n_updates_ : int
        Updates made.
    converged_ : bool
        Whether the last iteration (``fit``: a whole cycle of chunks) found no pair above tol.
    n_features_in_ : int
    rng_ : numpy.random.Generator
        The stream of the "random" strategy (continues across ``partial_fit`` calls).

    Notes
    -----
    - ``decision_function`` returns (n, K) scores W x, or for K = 2 the
      scikit-learn binary convention s_1 − s_0 (positive means ``classes_[1]``).
    - ``predict`` picks argmax_k (W x)_k, the lowest index winning ties.
    - Unfitted estimators raise ``NotFittedError`` (scikit-learn contract), unlike
      the online learners which predict class 0 before learning.
    - Saved with ``save(path)`` as ``.npz`` + JSON (no pickle); ``nf.load`` /
      ``UMA.load`` restore it exactly, the "random" stream included.

    Examples
    --------
    >>> import numpy as np
    >>> from noisyfeedback.datasets.uma_toy import uma_toy
    >>> from noisyfeedback.feedback import ConfusionNoise
    >>> X, y = uma_toy(2000, n_classes=3, n_features=5, margin=0.1, seed=0)
    >>> C = np.array([[0.7, 0.2, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]])
    >>> y_noisy = ConfusionNoise(C).respond(y, rng=np.random.default_rng(0))
    >>> uma = UMA(confusion=C, max_iter=300).fit(X, y_noisy)
    >>> bool((uma.predict(X) == y).mean() > 0.9)
    True

    References
    ----------
    .. [1] Louche, U. & Ralaivola, L. (2015). Unconfused ultraconservative
       multiclass algorithms. Machine Learning 99(2), 327-351.
    """

    #: constraints of the scalar parameters; ``confusion`` is checked by ``check_confusion_matrix``
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "strategy": Options(_STRATEGIES),
        "theta": Interval(0, None, closed="left"),
        "max_iter": Integer(1),
        "tol": Interval(0, None, closed="left"),
        "significance": Interval(0, None, closed="left"),
        "batch_size": OneOf((IsNone(), Integer(1))),
        "max_condition": Interval(1, None, closed="left"),
        "seed": AnySeed(),
    }
    #: keyword arguments of a small, quick instance (tests)
    _test_params: ClassVar[dict[str, Any]] = {"max_iter": 200}
    #: what a model file may set (noisyfeedback._state)
    _learned_state: ClassVar[dict[str, Any]] = {
        "classes_": Array(("n_labels",), "label"),
        "confusion_": Array(("n_labels", "n_labels")),
        "W_": Array(("n_labels", "n_features_in_")),
        "n_features_in_": Integer(1),
        "feature_names_in_": Array(("n_features_in_",), "str"),
        "n_iter_": Integer(0),
        "n_updates_": Integer(0),
        "converged_": Flag(),
    }
    feedback_kind: ClassVar[str] = "label"
    _tags = Tags(family="label_noise", batch=True)  # what it is, for every front door (noisyfeedback.base.Tags)

    def __init__(
        self,
        confusion=None,
        strategy: str = "error",
        theta: float = 0.0,
        max_iter: int = 1000,
        tol: float = 0.0,
        significance: float = 0.0,
        batch_size: int | None = None,
        max_condition: float = DEFAULT_MAX_CONDITION,
        seed=None,
    ):
        self.confusion = confusion
        self.strategy = strategy
        self.theta = theta
        self.max_iter = max_iter
        self.tol = tol
        self.significance = significance
        self.batch_size = batch_size
        self.max_condition = max_condition
        self.seed = seed

    # ------------------------------------------------------------ sklearn
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -------------------------------------------------------- validation
    def _validate_params(self) -> None:
        super()._validate_params()
        if self.confusion is not None:
            self._check_confusion(None)

    def _check_confusion(self, n_classes: int | None) -> np.ndarray:
        """The validated C (identity if None); K must match n_classes when given."""
        if self.confusion is None:
            if n_classes is None:
                raise ValueError("UMA with confusion=None needs the classes (pass y or classes=).")
            return np.eye(n_classes)
        try:
            C = check_confusion_matrix(self.confusion, owner="UMA", max_condition=float(self.max_condition))
        except (ValueError, TypeError) as exc:
            raise type(exc)(str(exc).replace("'C' parameter", "'confusion' parameter")) from None
        if n_classes is not None and C.shape[0] != n_classes:
            raise ValueError(
                f"The 'confusion' parameter of UMA is {C.shape[0]} x {C.shape[0]}, but there are "
                f"{n_classes} classes: C[r, q] must refer to classes_[r] and classes_[q]."
            )
        return C

    @staticmethod
    def _check_finite(X) -> None:
        values = X.data if sp.issparse(X) else X
        finite = np.isfinite(values)
        if finite.all():
            return
        if sp.issparse(X):
            pos = int(np.flatnonzero(~finite)[0])
            row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
        else:
            row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise ValueError(f"X of UMA contains NaN or infinity (first in row {row}).")

    def _validate_X(self, X, reset: bool):
        self._validate_params()  # every entry point: parameters may have been changed since fitting
        check_sparse_structure(X, owner="UMA")
        X = validate_data(
            self, X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False, reset=reset
        )
        self._check_finite(X)
        return X

    def _validate_Xy(self, X, y, reset: bool):
        self._validate_params()  # every entry point: parameters may have been changed since fitting
        check_sparse_structure(X, owner="UMA")
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False,
            y_numeric=False, reset=reset,
        )
        self._check_finite(X)
        check_classification_targets(y)
        return X, y

    def _init_classes(self, y, classes=None) -> None:
        K_C = None
        if self.confusion is not None:
            K_C = self._check_confusion(None).shape[0]
        if classes is not None:
            cls = np.unique(np.asarray(classes))
        elif K_C is not None and np.issubdtype(y.dtype, np.integer) and y.size and y.min() >= 0 and y.max() < K_C:
            cls = np.arange(K_C, dtype=y.dtype)
        else:
            cls = np.unique(y)
            if K_C is not None and cls.size != K_C and np.issubdtype(y.dtype, np.integer):
                bad = np.flatnonzero((y < 0) | (y >= K_C))
                if bad.size:
                    row = int(bad[0])
                    raise ValueError(
                        f"y must hold labels in 0..{K_C - 1} (C is {K_C} x {K_C}); row {row} has label {y[row]!r}."
                    )
        if cls.size < 2:
            raise ValueError(
                f"UMA needs at least 2 classes; y holds {cls.size} class ({cls.tolist()!r}), "
                "so there is nothing to learn."
            )
        self.confusion_ = self._check_confusion(int(cls.size))
        self.classes_ = cls

    def _encode(self, y) -> np.ndarray:
        """Indices of y's labels in classes_; ValueError naming the first unknown row."""
        idx = np.searchsorted(self.classes_, y)
        idx_c = np.clip(idx, 0, self.classes_.size - 1)
        bad = self.classes_[idx_c] != y
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"y has label {y[row]!r} in row {row}, which is not one of classes_ {self.classes_.tolist()!r}."
            )
        return idx_c.astype(np.int64)

    def _reset_state(self) -> None:
        for name in self._learned_attributes():
            delattr(self, name)

    # ------------------------------------------------------------- learning
    def fit(self, X, y) -> "UMA":
        """Learn W from X (n, d), dense or CSR, and noisy labels y; returns self."""
        self._validate_params()
        self._reset_state()
        X, y = self._validate_Xy(X, y, reset=True)
        self._init_classes(y)
        yi = self._encode(y)
        K, d = self.classes_.size, X.shape[1]
        self.W_ = np.zeros((K, d))
        self.rng_ = make_rng(self.seed)
        self.n_iter_ = 0
        self.n_updates_ = 0
        self.converged_ = False
        Cinv, identity = self._inverse()
        n = X.shape[0]
        b = n if self.batch_size is None else min(int(self.batch_size), n)
        bounds = [(s, min(s + b, n)) for s in range(0, n, b)]
        chunks = [(X[s:e], yi[s:e]) for s, e in bounds]
        pihats = [self._pihat(c[1], Cinv) for c in chunks] if self.strategy == "confusion" else [None] * len(chunks)
        quiet = 0  # consecutive chunks without an update
        for it in range(int(self.max_iter)):
            c = it % len(chunks)
            Xc, yc = chunks[c]
            updated = _uma_step(self.W_, Xc, yc, K, Cinv, identity, self.strategy, float(self.theta),
                                float(self.tol), pihats[c], self.rng_, float(self.significance))
            self.n_iter_ += 1
            if updated is None:
                quiet += 1
                if quiet >= len(chunks):
                    self.converged_ = True
                    break
            else:
                quiet = 0
                self.n_updates_ += 1
        return self

    def partial_fit(self, X, y, classes=None) -> "UMA":
        """One UMA step estimated from this chunk (the online mode of the paper's Section 3.4).

        The update is computed from the given rows only (μ normalised by their
        number), so a stream of fresh chunks gives updates from samples that are
        independent of the current classifier. ``classes`` is needed on the first
        call unless ``confusion`` is given and the labels are integers in 0..K−1.
        """
        first = not hasattr(self, "W_")
        if first:
            self._validate_params()
            self._reset_state()
            X, y = self._validate_Xy(X, y, reset=True)
            if classes is None and self.confusion is None:
                raise ValueError(
                    "UMA.partial_fit needs classes= on its first call (all labels that will occur), "
                    "unless confusion is given and the labels are integers 0..K-1."
                )
            self._init_classes(y, classes)
            self.W_ = np.zeros((self.classes_.size, X.shape[1]))
            self.rng_ = make_rng(self.seed)
            self.n_iter_ = 0
            self.n_updates_ = 0
            self.converged_ = False
        else:
            X, y = self._validate_Xy(X, y, reset=False)
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
                raise ValueError(
                    f"classes={np.asarray(classes).tolist()!r} differs from the classes of the first "
                    f"partial_fit call, {self.classes_.tolist()!r}."
                )
        yi = self._encode(y)
        Cinv, identity = self._inverse()
        pihat = self._pihat(yi, Cinv) if self.strategy == "confusion" else None
        updated = _uma_step(self.W_, X, yi, self.classes_.size, Cinv, identity, self.strategy,
                            float(self.theta), float(self.tol), pihat, self.rng_, float(self.significance))
        self.n_iter_ += 1
        self.converged_ = updated is None
        if updated is not None:
            self.n_updates_ += 1
        return self

    def _inverse(self) -> tuple[np.ndarray, bool]:
        C = self.confusion_
        identity = bool(np.array_equal(C, np.eye(C.shape[0])))
        return (np.eye(C.shape[0]) if identity else np.linalg.inv(C)), identity

    def _pihat(self, yi: np.ndarray, Cinv: np.ndarray) -> np.ndarray:
        K = self.classes_.size
        pitilde = np.bincount(yi, minlength=K) / max(yi.shape[0], 1)
        return Cinv @ pitilde

    # ------------------------------------------------------------ inference
    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self, "W_")
        X = self._validate_X(X, reset=False)
        return np.asarray(X @ self.W_.T)

    def decision_function(self, X) -> np.ndarray:
        """Scores W x, shape (n, K); for K = 2 the binary convention s_1 − s_0, shape (n,)."""
        S = self._scores(X)
        if S.shape[1] == 2:
            return S[:, 1] - S[:, 0]
        return S

    def predict(self, X) -> np.ndarray:
        """``classes_[argmax_k (W x)_k]``, the lowest index winning ties."""
        S = self._scores(X)
        return self.classes_[np.argmax(S, axis=1)]


# ---------------------------------------------------------------- the step
def uma_statistics(W: np.ndarray, X, yi: np.ndarray, K: int, theta: float = 0.0,
                   return_second_moments: bool = False):
    """μ of shape (K, K, d): μ[p, r] = (1/n) Σ_i 1[ỹ_i = r] 1[h(x_i) = p, margin_i ≥ θ] x_i.

    One pass: scores X Wᵀ, then the sparse indicator product G X with
    G[p·K + r, i] = 1 (a (K², n) matrix with one non-zero per used row); for CSR X
    the same sums by one ``bincount`` over the non-zeros (rows in order).
    With ``return_second_moments`` also A (K, K), A[p, r] = (1/n²) Σ_i 1[ỹ_i = r] 1[h(x_i) = p] ‖x_i‖².
    """
    n, d = X.shape
    S = np.asarray(X @ W.T)
    pred = np.argmax(S, axis=1)
    if theta > 0.0:
        rows = np.flatnonzero(_margins(S, pred, W) >= theta)
    else:
        rows = np.arange(n)
    groups = pred[rows] * K + yi[rows]
    if sp.issparse(X):
        # CSR: scatter every non-zero into its group's row (a bincount), O(nnz + K²d)
        group_of_row = np.full(n, -1, dtype=np.int64)
        group_of_row[rows] = groups
        g = np.repeat(group_of_row, np.diff(X.indptr))
        if rows.shape[0] < n:
            keep = g >= 0
            flat, vals = g[keep] * d + X.indices[keep], X.data[keep]
        else:
            flat, vals = g * d + X.indices, X.data
        mu = np.bincount(flat, weights=vals, minlength=K * K * d)
    else:
        G = sp.csr_matrix((np.ones(rows.shape[0]), (groups, rows)), shape=(K * K, n))
        mu = np.asarray(G @ X)
    mu = (mu / n).reshape(K, K, d)
    if not return_second_moments:
        return mu
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    A = np.bincount(groups, weights=sq[rows], minlength=K * K)
    return mu, A.reshape(K, K) / float(n) ** 2


def update_vectors(mu: np.ndarray, C_inv: np.ndarray) -> np.ndarray:
    """Z of shape (K, K, d) with Z[p] = C⁻¹ μ[p]: Z[p, q] estimates E[1[y=q] 1[h(x)=p] x].

    >>> import numpy as np
    >>> mu = np.arange(8.0).reshape(2, 2, 2)
    >>> bool(np.array_equal(update_vectors(mu, np.eye(2)), mu))
    True
    """
    return np.matmul(C_inv, mu)


def standard_errors(A: np.ndarray, C_inv: np.ndarray) -> np.ndarray:
    """σ̂ (K, K): σ̂[p, q]² = Σ_r C⁻¹[q, r]² A[p, r], the plug-in estimate of E‖Z[p, q] − E Z[p, q]‖²
    (an upper bound: the second moment of the per-row terms, whose sum of variances it estimates)."""
    return np.sqrt(A @ (C_inv**2).T)


def _margins(S: np.ndarray, pred: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Distance of each x to the nearest boundary of its predicted region (inf if none)."""
    diffW = W[:, None, :] - W[None, :, :]
    D = np.sqrt(np.einsum("pqd,pqd->pq", diffW, diffW))  # ‖w_p − w_r‖
    n = S.shape[0]
    gap = S[np.arange(n), pred][:, None] - S  # s_p − s_r >= 0
    Dp = D[pred]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(Dp > 0, gap / np.where(Dp > 0, Dp, 1.0), np.inf)
    return ratio.min(axis=1)


def _uma_step(W, X, yi, K, Cinv, identity, strategy, theta, tol, pihat, rng, significance=0.0):
    """One UMA iteration on (X, yi), updating W in place; returns (p, q) or None (no pair above tol)."""
    if significance > 0.0:
        mu, A = uma_statistics(W, X, yi, K, theta, return_second_moments=True)
    else:
        mu = uma_statistics(W, X, yi, K, theta)
    Z = mu if identity else update_vectors(mu, Cinv)
    norms = np.linalg.norm(Z, axis=2)
    cand = norms > tol
    if significance > 0.0:
        cand &= norms > significance * standard_errors(A, Cinv)
    np.fill_diagonal(cand, False)
    if not cand.any():
        return None
    if strategy == "random":
        flat = np.flatnonzero(cand)
        f = int(flat[rng.integers(flat.shape[0])])
    else:
        score = np.where(cand, norms, -np.inf)
        if strategy == "confusion":
            valid = cand & (pihat > 0)[None, :]
            if valid.any():
                with np.errstate(divide="ignore", invalid="ignore"):
                    score = np.where(valid, norms / np.where(pihat > 0, pihat, 1.0)[None, :], -np.inf)
        f = int(np.argmax(score))
    p, q = divmod(f, K)
    z = Z[p, q]
    W[q] += z
    W[p] -= z
    return p, q


# ----------------------------------------------------------- kernel front end
def make_kernel_uma(
    confusion=None,
    n_components: int = 100,
    kernel: str = "rbf",
    gamma: float | None = None,
    method: str = "nystroem",
    **uma_params,
):
    """A scikit-learn Pipeline: a kernel feature map, then UMA (the paper's Section 3.6).

    ``method="kpca"``: kernel PCA onto ``n_components`` principal axes (the
    paper's Kernel Projection Machine route; O(n²) memory in fit);
    ``method="nystroem"``: the Nyström approximation with ``n_components``
    landmarks, centred (UMA has no intercept). ``seed`` among ``uma_params`` also
    seeds the feature map (landmark choice / eigensolver).

    >>> import numpy as np
    >>> from noisyfeedback.datasets.uma_toy import uma_toy
    >>> X, y = uma_toy(300, n_classes=3, n_features=4, margin=0.05, seed=1)
    >>> model = make_kernel_uma(None, n_components=30, gamma=1.0, max_iter=100, seed=0).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    """
    from sklearn.decomposition import KernelPCA
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    check_param("method", method, Options(("nystroem", "kpca")), "make_kernel_uma")
    check_param("n_components", n_components, Integer(1), "make_kernel_uma")
    seed = uma_params.get("seed")
    rs = seed if isinstance(seed, numbers.Integral) else (
        int(seed.generate_state(1)[0]) if isinstance(seed, np.random.SeedSequence) else None)
    if method == "kpca":
        steps = [("features", KernelPCA(n_components=n_components, kernel=kernel, gamma=gamma, random_state=rs))]
    else:
        steps = [
            ("features", Nystroem(kernel=kernel, gamma=gamma, n_components=n_components, random_state=rs)),
            ("center", StandardScaler(with_std=False)),
        ]
    steps.append(("uma", UMA(confusion=confusion, **uma_params)))
    return Pipeline(steps)
