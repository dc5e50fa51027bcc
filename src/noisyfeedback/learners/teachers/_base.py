"""Shared machinery of the binary batch learners of Dekel & Shamir (docs/algorithms.md §4.12).

scikit-learn estimators (``ClassifierMixin``, ``BaseEstimator``; like ``UMA``), with
the library's parameter messages and ``.npz`` persistence. Labels: any two classes
(``classes_``, sorted; ``classes_[1]`` is the +1 class), mapped to ±1 internally.
Teachers: non-negative integer ids, one per row, passed to ``fit`` as
``teachers=`` (None: every row from one teacher).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._state import Array, Flag, Real
from ..._validation import Integer, check_sparse_structure, check_X
from ...base import EstimatorMixin, Tags

__all__ = ["BinaryLinearLearner", "check_binary_labels", "check_teachers", "warn_not_converged"]


def check_binary_labels(y: Any, n_samples: int, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """(classes, y_pm): the two sorted classes and y mapped to float64 ±1 (classes[1] -> +1)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"y of {owner} must be 1-D; got shape {arr.shape}.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"y of {owner} has {arr.shape[0]} entries but X has {n_samples} rows.")
    if arr.dtype.kind == "c" or arr.dtype == object and any(isinstance(v, complex) for v in arr):
        raise TypeError(f"y of {owner} must hold class labels; got complex values.")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y of {owner} contains NaN or infinity (first in row {row}).")
    if arr.dtype == object:
        arr = arr.astype(str) if all(isinstance(v, str) for v in arr) else arr
    try:
        classes = np.unique(arr)
    except TypeError as exc:
        raise TypeError(f"y of {owner} holds labels that cannot be compared: {exc}") from None
    if classes.shape[0] != 2:
        shown = ", ".join(repr(c.item() if hasattr(c, "item") else c) for c in classes[:5])
        what = "1 class, nothing to learn" if classes.shape[0] == 1 else "Only binary classification is supported"
        raise ValueError(
            f"{owner} is a binary classifier: y must hold exactly two classes; got "
            f"{classes.shape[0]} ({shown}{', ...' if classes.shape[0] > 5 else ''}). {what}."
        )
    y_pm = np.where(arr == classes[1], 1.0, -1.0)
    return classes, y_pm


def check_teachers(teachers: Any, n_samples: int, owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, tid, sizes): the distinct teacher ids, each row's index into them (int64)
    and the teachers' example counts (float64). Ids must be integers >= 0; None means
    a single teacher 0 for every row."""
    if teachers is None:  # one teacher labelled everything
        return np.zeros(1, np.int64), np.zeros(n_samples, np.int64), np.array([float(n_samples)])
    arr = np.asarray(teachers)
    if arr.ndim != 1:
        raise ValueError(f"teachers of {owner} must be 1-D; got shape {arr.shape}.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"teachers of {owner} has {arr.shape[0]} entries but X has {n_samples} rows.")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"teachers of {owner} must hold integer teacher ids >= 0; got dtype {arr.dtype}.")
    if arr.size and arr.min() < 0:
        row = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"teachers of {owner} must be ids >= 0; row {row} has {int(arr[row])}.")
    ids, tid, counts = np.unique(arr, return_inverse=True, return_counts=True)
    if ids.size and ids[-1] >= 10 * ids.size + 10_000:
        raise ValueError(
            f"teachers of {owner}: ids go up to {int(ids[-1])} for only {ids.size} teachers, and "
            "per-teacher attributes are indexed by id; relabel them 0..T-1 first "
            "(numpy.unique(teachers, return_inverse=True)[1])."
        )
    return ids.astype(np.int64), tid.astype(np.int64).ravel(), counts.astype(np.float64)


def warn_not_converged(owner: str, gap: float, primal: float, tol: float, n_iter: int) -> None:
    warnings.warn(
        f"{owner} did not reach the relative duality gap tol={tol:g} in max_iter={n_iter} "
        f"passes (gap {gap:.3g}, relative {gap / max(abs(primal), 1e-300):.3g}); "
        "increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=3,
    )


class BinaryLinearLearner(EstimatorMixin, ClassifierMixin, BaseEstimator):
    """A linear binary classifier sign(⟨w, x⟩ + b) trained in batch by ``fit``.

    Fitted attributes shared by subclasses: ``classes_`` (the two labels, sorted;
    ``classes_[1]`` is the positive class), ``coef_`` (d,), ``intercept_`` (float,
    0.0 unless ``fit_intercept``), ``n_features_in_``.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {}
    #: what a model file may set (noisyfeedback._state); subclasses add their own
    _learned_state: ClassVar[dict[str, Any]] = {
        "classes_": Array((2,), "label"),
        "coef_": Array(("n_features_in_",)),
        "intercept_": Real(),
        "n_features_in_": Integer(1),
        "feature_names_in_": Array(("n_features_in_",), "str"),
        "alpha_": Array(("n_samples",)),
        "n_iter_": Integer(0),
        "objective_": Real(),
        "dual_objective_": Real(),
        "duality_gap_": Real(),
        "converged_": Flag(),
    }
    #: keyword arguments of a small, quick instance (tests)
    _test_params: ClassVar[dict[str, Any]] = {}
    feedback_kind: ClassVar[str] = "label"
    _tags = Tags(family="teachers", batch=True)  # what it is, for every front door (noisyfeedback.base.Tags)

    # ------------------------------------------------------------ sklearn
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "coef_")

    def _reset(self) -> None:
        for name in self._learned_attributes():
            delattr(self, name)

    # ------------------------------------------------------------- inputs
    def _check_X_fit(self, X, y):
        """(X, y): X validated by scikit-learn (sets ``n_features_in_``), then a C-contiguous
        float64 array or a CSR matrix with sorted int64 indices (what the kernels take);
        NaN/inf raise naming the row."""
        check_sparse_structure(X, owner=type(self).__name__)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False,
                             y_numeric=False, reset=True)
        X = check_X(X, owner=type(self).__name__)
        check_classification_targets(y)
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        bad = ~np.isfinite(sq)
        if bad.any():  # the solvers divide by ‖x‖² and add multiples of x: both must stay finite
            raise ValueError(f"X of {type(self).__name__}: the squared norm of row {int(np.flatnonzero(bad)[0])} "
                             "overflows; rescale X.")
        return X, y

    def _check_X(self, X):
        self._validate_params()  # parameters may have been changed since fitting
        check_sparse_structure(X, owner=type(self).__name__)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=False, reset=False)
        return check_X(X, owner=type(self).__name__)

    def _augment(self, X):
        """Append the constant feature 1 of the (regularised) intercept when ``fit_intercept``."""
        if not self.fit_intercept:
            return X
        if sp.issparse(X):
            ones = sp.csr_matrix(np.ones((X.shape[0], 1)))
            out = sp.hstack([X, ones], format="csr")
            out.indices = out.indices.astype(np.int64)
            out.indptr = out.indptr.astype(np.int64)
            return out
        return np.hstack([X, np.ones((X.shape[0], 1))])

    def _split_coef(self, w: np.ndarray) -> None:
        if not np.isfinite(w).all():
            self._reset()
            raise ValueError(f"{type(self).__name__}: the fit diverged (non-finite weights); rescale X or raise "
                             "lam. Nothing was learned.")
        if self.fit_intercept:
            self.coef_ = np.ascontiguousarray(w[:-1])
            self.intercept_ = float(w[-1])
        else:
            self.coef_ = np.ascontiguousarray(w)
            self.intercept_ = 0.0

    # ---------------------------------------------------------- inference
    def decision_function(self, X) -> np.ndarray:
        """Scores ⟨w, x⟩ + b, shape (n_samples,); positive means ``classes_[1]``."""
        check_is_fitted(self, "coef_")
        X = self._check_X(X)
        return np.asarray(X @ self.coef_, dtype=np.float64).ravel() + self.intercept_

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the score is > 0, else ``classes_[0]``."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.int64)]
