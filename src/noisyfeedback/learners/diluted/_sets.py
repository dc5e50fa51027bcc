"""Shared machinery of the set-predicting learners (MC-SLP, MC-DBF): the size m, top-m sets, set checks."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...kernels.diluted import top_m_rows
from .._linear import LinearClassifier, kernel_view


class SetPredictor(LinearClassifier):
    """A linear multiclass learner that also predicts Ŷ, the top-m labels of W x.

    Ties are broken lowest index first, so ``predict_set(X)[:, 0] == predict(X)``.
    Simulations report the per-round miss of the greedy set, 1[y ∉ Ŷ], as
    ``Trace.metrics["set_miss_rate"]`` / ``["set_miss_curve"]`` (the paper's
    mistake count M̂); ``Trace.error_rate`` is that of the greedy label argmax W x.
    """

    extra_metrics: ClassVar[tuple[str, ...]] = ("set_miss",)

    def _check_params(self) -> None:
        K, m = self.n_classes, self.m
        if m > K - 1:
            raise ValueError(
                f"The 'm' parameter of {type(self).__name__} must be an int in [1, n_classes-1] = [1, {K - 1}] "
                f"(a set of all {K} labels carries no information). Got {m!r} instead."
            )

    def predict_set(self, X) -> np.ndarray:
        """Ŷ for every row: the m labels of largest score, in rank order, shape (n_samples, m).

        Before any learning every score is 0 and Ŷ = (0, 1, ..., m-1).
        """
        self._validate_params()
        X = self._check_X(X, fitting=False)
        out = np.empty((X.shape[0], self.m), dtype=np.int64)
        W = self.W_ if hasattr(self, "W_") else np.zeros((self.n_classes, X.shape[1]))
        top_m_rows(W, *kernel_view(X), int(self.m), out)
        return out

    def _check_sets(self, sets, n: int, name: str = "actions") -> np.ndarray:
        """(n, m) int64 array of m distinct labels per row (a 1-D array is accepted when m = 1)."""
        arr = np.asarray(sets)
        m, K = self.m, self.n_classes
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name} must hold integer labels 0..{K - 1}; got dtype {arr.dtype}.")
        if arr.ndim == 1 and m == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape != (n, m):
            raise ValueError(f"{name} must be the proposed sets, of shape ({n}, {m}); got shape {arr.shape}.")
        bad = ((arr < 0) | (arr >= K)).any(axis=1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} must hold labels in 0..{K - 1}; row {row} is {arr[row].tolist()}.")
        if m > 1:
            srt = np.sort(arr, axis=1)
            dup = (np.diff(srt, axis=1) == 0).any(axis=1)
            if dup.any():
                row = int(np.flatnonzero(dup)[0])
                raise ValueError(f"{name} must hold {m} distinct labels per row; row {row} is {arr[row].tolist()}.")
        return np.ascontiguousarray(arr, dtype=np.int64)

    @staticmethod
    def _set_miss_out(extras, n: int) -> np.ndarray:
        if extras and "set_miss" in extras:
            return extras["set_miss"]
        return np.empty(n, dtype=np.float64)
