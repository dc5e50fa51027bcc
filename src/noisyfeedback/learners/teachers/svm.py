"""LinearSVM: the plain soft-margin linear SVM of Dekel & Shamir's eq. (1), solved to a certified optimum."""

from __future__ import annotations

from typing import Any, ClassVar

from ..._validation import AnySeed, Integer, Interval, Options
from ...base import make_rng
from . import _solver
from ._base import BinaryLinearLearner, check_binary_labels, warn_not_converged

__all__ = ["LinearSVM"]


class LinearSVM(BinaryLinearLearner):
    """Linear SVM with the paper's scaling: min_w λ/2‖w‖² + (1/m)·Σ_i [1 − y_i⟨x_i, w⟩]_+.

    The baseline of Dekel & Shamir (2009), eq. (1) — no bias term, as in the paper
    (``fit_intercept=True`` appends a constant feature 1, i.e. a *regularised*
    bias, liblinear-style). Equivalent to liblinear's L1-loss dual solver
    (``LinearSVC(loss="hinge", C=1/(λm), fit_intercept=False)``) but solved to a
    certified optimum: it is `EvilTeacherSVM` with every ν fixed at 0, the
    same dual coordinate ascent with shrinking (Hsieh et al. 2008), stopped when
    the duality gap F(w) − D(α) ≤ tol·F(w).

    Parameters
    ----------
    lam : float > 0, default=1e-4
        λ. (scikit-learn's C = 1/(λm) for m training rows.)
    fit_intercept : bool, default=False
        Learn a bias b via a constant feature 1 (regularised like w).
    tol : float > 0, default=1e-6
        Relative duality gap at which to stop.
    max_iter : int >= 1, default=100000
        Most passes over the (shrunk) set of active dual variables.
    seed : None, int >= 0 or SeedSequence, default=0
        Seeds the random visiting order (the optimum does not depend on it).

    Attributes
    ----------
    classes_ : ndarray (2,)
        The labels; ``classes_[1]`` is the +1 class.
    coef_ : ndarray (n_features,)
    intercept_ : float
    alpha_ : ndarray (n_samples,)
        Dual variables α_i ∈ [0, 1/m] of eq. (2); w = (1/λ)·Σ α_i y_i x_i.
    objective_ : float
        F(coef_) (primal objective, eq. (1)).
    dual_objective_ : float
        D(α_) ≤ optimum ≤ objective_.
    duality_gap_ : float
        objective_ − dual_objective_ (an upper bound on the suboptimality).
    converged_ : bool
    n_iter_ : int
        Passes made.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); y = np.where(X[:, 0] + 0.1 * rng.normal(size=200) > 0, 1, -1)
    >>> svm = LinearSVM(lam=1e-2).fit(X, y)
    >>> bool(svm.duality_gap_ <= 1e-6 * svm.objective_), svm.score(X, y) > 0.9
    (True, True)
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "lam": Interval(0, None, closed="neither"),
        "fit_intercept": Options((True, False)),
        "tol": Interval(0, None, closed="neither"),
        "max_iter": Integer(1),
        "seed": AnySeed(),
    }
    _test_params: ClassVar[dict[str, Any]] = {"lam": 1e-2}

    def __init__(self, lam: float = 1e-4, fit_intercept: bool = False, tol: float = 1e-6,
                 max_iter: int = 100_000, seed=0):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.seed = seed

    def fit(self, X, y, teachers=None) -> "LinearSVM":
        """Fit on X (dense or CSR) and two-class labels y. ``teachers`` is accepted and
        ignored, so that LinearSVM is a drop-in baseline for `EvilTeacherSVM`."""
        self._validate_params()
        self._reset()
        X, y = self._check_X_fit(X, y)
        classes, y_pm = check_binary_labels(y, X.shape[0], type(self).__name__)
        Xa = self._augment(X)
        res = _solver.solve(Xa, y_pm, float(self.lam), tol=float(self.tol),
                            max_iter=int(self.max_iter), rng=make_rng(self.seed))
        self.classes_ = classes
        self._split_coef(res.w)
        self.alpha_ = res.beta / X.shape[0]
        self.objective_ = res.primal
        self.dual_objective_ = res.dual
        self.duality_gap_ = res.primal - res.dual
        self.converged_ = res.converged
        self.n_iter_ = res.n_iter
        if not res.converged:
            warn_not_converged(type(self).__name__, self.duality_gap_, res.primal, self.tol, res.n_iter)
        return self
