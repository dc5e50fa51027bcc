"""EvilTeacherSVM: the teacher-constrained SVM of Dekel & Shamir (2009), docs/algorithms.md §4.12."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..._state import Array
from ..._validation import AnySeed, Integer, Interval, Options
from ...base import make_rng
from . import _solver
from ._base import BinaryLinearLearner, check_binary_labels, check_teachers, warn_not_converged

__all__ = ["EvilTeacherSVM"]


class EvilTeacherSVM(BinaryLinearLearner):
    """Linear SVM that limits the influence of every teacher ("Good learners for evil teachers").

    Every training row i was labelled by a teacher t(i); S_t are teacher t's rows,
    m = |S|. The classifier w minimises (the paper's eq. (4))

        G(w) = min_{ν ≥ 0}  λ/2‖w‖² + Σ_t ε ν_t/√|S_t|
                            + (1/m) Σ_i [1 − (m ν_{t(i)}/|S_{t(i)}| − Σ_t ν_t) − y_i⟨x_i, w⟩]_+ ,

    jointly convex in (w, ν). Its dual is the SVM dual (eq. (2), 0 ≤ α_i ≤ 1/m)
    plus one constraint per teacher (eq. (3)):

        (1/|S_t|) Σ_{i∈S_t} α_i ≤ (1/m) Σ_i α_i + ε/(m√|S_t|),

    "no teacher's examples may carry much more than the average dual weight";
    ν_t is that constraint's Lagrange multiplier. A teacher with ν_t > 0 has its
    required margin lowered to 1 − m ν_t/|S_t| + Σν (and every other teacher's
    raised by Σν): a large ν_t means "judged evil". ν = 0 is the plain SVM
    (`LinearSVM`); as ε → ∞ the constraints go inactive.

    Solver (and why): two phases on the dual, handing the iterate (α, ν) back and
    forth (``_solver.py``).

    1. Dual coordinate ascent (liblinear's L1-loss solver, Hsieh et al. 2008):
       O(nnz) per pass, w = (1/λ)Σ α_i y_i x_i maintained, closed-form steps,
       shrinking. The T teacher constraints couple all α through T + 1 sums, so
       they enter through the method of multipliers (augmented Lagrangian, the
       own-teacher penalty maximised exactly along each coordinate, ν ← [ν + ρg]_+
       after each pass). On large sparse data this converges in tens to hundreds
       of passes (m = 10⁵, d = 2·10⁴, 100 teachers: ~120 passes, seconds).
    2. Its tail is slow where the dual is ill-conditioned (dense, low-dimensional
       data, small λ: thousands of passes per digit of accuracy), so the solve is
       finished exactly: α_i that phase 1 leaves at a bound with a clearly
       non-zero margin residual are fixed, and the dual QP in the others (free
       support vectors, near-margin and violating ones: a working set W) with
       the T constraints is solved by a primal–dual interior-point method
       (Mehrotra's predictor–corrector: ~20 Newton steps, each a Cholesky
       factorisation of |W|×|W|, independent of conditioning); violators
       outside W are added and W is solved again (a decomposition method with an
       exact subproblem solver; it stops once W holds the optimum's support). It
       is tried when phase 1 has spent as much work as it would cost, so neither
       phase costs much more than the better of the two.

    Why not the alternatives: the multiplier method alone converges linearly in
    theory (the problem is a QP), but with inexact inner solves on
    ill-conditioned data it stalled at relative gaps of 1e-4 in 10⁵ passes
    (the first version of this class); a generic conic solver (cvxpy/Clarabel,
    the tests' cross-check) factorises an (m + d + T)-sized system — fine for
    thousands of rows, not for 10⁵ sparse ones; a primal–dual first-order method
    (Chambolle–Pock) costs O(nnz) per iteration but converges sublinearly on
    this non-strongly-convex problem. One subtlety: the constraint rows are
    linearly dependent (Σ_t |S_t| g_t(α) = 0), so ν is pinned along n = (|S_t|)
    only by its linear cost; moving ν along n leaves every margin target
    unchanged and lowers the objective until a ν_t reaches 0, which the solver
    does exactly (``normalize_nu``) — without it ν, and the primal certificate,
    drift.

    Optimality is certified, not assumed: the solver stops when
    P(w, ν) − D(s·α) ≤ tol·P(w, ν), where P is the exact primal objective at the
    current (w, ν) and D the dual value of α scaled by the largest s ∈ [0, 1]
    making it feasible (α = 0 is strictly feasible) — so ``objective_`` is within
    ``duality_gap_`` of the optimum.

    Parameters
    ----------
    lam : float > 0, default=1e-4
        λ.
    eps : float > 0, default=1.0
        ε, the slack of the teacher constraints in units of 1/(m√|S_t|) (the
        paper's experiments use ε = 1; Proposition 1 wants ε > |S^e|√|S_t|/m).
    fit_intercept : bool, default=False
        The paper's classifier has no bias (b = 0). True appends a constant feature 1
        (a regularised bias, liblinear-style).
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
    nu_ : ndarray (max teacher id + 1,)
        ν_t per teacher id (0 for ids without rows). Large: judged evil.
    teacher_margin_ : ndarray (max teacher id + 1,)
        The margin 1 − m ν_t/|S_t| + Σν required of teacher t's rows (1 for all
        teachers when ν = 0; NaN for ids without rows).
    teacher_sizes_ : ndarray of int64 (max teacher id + 1,)
        |S_t|.
    alpha_ : ndarray (n_samples,)
        Dual variables α_i ∈ [0, 1/m]; w = (1/λ)·Σ α_i y_i x_i.
    objective_ : float
        P(coef_, nu_), the primal objective (eq. (4) at ν = nu_).
    dual_objective_ : float
        A feasible dual value: dual_objective_ ≤ optimum ≤ objective_.
    duality_gap_ : float
        objective_ − dual_objective_.
    converged_ : bool
    n_iter_ : int
        Passes made.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from noisyfeedback.datasets.teachers import flip_evil, random_teachers
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 10)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> t = random_teachers(1000, 10, seed=0)
    >>> y_bad, evil = flip_evil(y, t, n_evil=3, seed=0)
    >>> svm = EvilTeacherSVM(lam=1e-3, eps=1.0).fit(X, y_bad, teachers=t)
    >>> bool(svm.duality_gap_ <= 1e-6 * svm.objective_)
    True
    >>> sorted(np.argsort(svm.nu_)[-3:].tolist()) == sorted(evil.tolist())
    True

    Notes
    -----
    The objective is the paper's eq. (4) (= docs/algorithms.md §4.12) and its ξ-form after
    eq. (3); the dual constraint derived from it is exactly eq. (3), with ν_t its
    multiplier. With eq. (1)'s scaling the primal–dual relation is
    w = (1/λ)·Σ α_i y_i x_i (the paper writes w = Σ α_i y_i x_i).

    References
    ----------
    .. [1] Dekel, O. & Shamir, O. (2009). Good learners for evil teachers. ICML.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "lam": Interval(0, None, closed="neither"),
        "eps": Interval(0, None, closed="neither"),
        "fit_intercept": Options((True, False)),
        "tol": Interval(0, None, closed="neither"),
        "max_iter": Integer(1),
        "seed": AnySeed(),
    }
    _test_params: ClassVar[dict[str, Any]] = {"lam": 1e-2, "eps": 1.0}
    _learned_state: ClassVar[dict[str, Any]] = {
        **BinaryLinearLearner._learned_state,
        "nu_": Array(("n_teachers",)),
        "teacher_sizes_": Array(("n_teachers",), "int64"),
        "teacher_margin_": Array(("n_teachers",), finite=False),
    }

    def __init__(self, lam: float = 1e-4, eps: float = 1.0, fit_intercept: bool = False,
                 tol: float = 1e-6, max_iter: int = 100_000, seed=0):
        self.lam = lam
        self.eps = eps
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.seed = seed

    def fit(self, X, y, teachers=None) -> "EvilTeacherSVM":
        """Fit on X (dense or CSR), two-class labels y and ``teachers`` (an int id >= 0 per row).

        ``teachers=None`` means one teacher for all rows: constraint (3) then holds for
        every α, and the result is the plain SVM (`LinearSVM`)."""
        self._validate_params()
        self._reset()
        owner = type(self).__name__
        X, y = self._check_X_fit(X, y)
        classes, y_pm = check_binary_labels(y, X.shape[0], owner)
        ids, tid, sizes = check_teachers(teachers, X.shape[0], owner)
        Xa = self._augment(X)
        res = _solver.solve(Xa, y_pm, float(self.lam), tid=tid, sizes=sizes, eps=float(self.eps),
                            tol=float(self.tol), max_iter=int(self.max_iter), rng=make_rng(self.seed))
        m = X.shape[0]
        n_ids = int(ids[-1]) + 1
        self.classes_ = classes
        self._split_coef(res.w)
        self.nu_ = np.zeros(n_ids)
        self.nu_[ids] = res.nu
        self.teacher_sizes_ = np.zeros(n_ids, dtype=np.int64)
        self.teacher_sizes_[ids] = sizes.astype(np.int64)
        self.teacher_margin_ = np.full(n_ids, np.nan)
        self.teacher_margin_[ids] = 1.0 - m * res.nu / sizes + res.nu.sum()
        self.alpha_ = res.beta / m
        self.objective_ = res.primal
        self.dual_objective_ = res.dual
        self.duality_gap_ = res.primal - res.dual
        self.converged_ = res.converged
        self.n_iter_ = res.n_iter
        if not res.converged:
            warn_not_converged(owner, self.duality_gap_, res.primal, self.tol, res.n_iter)
        return self
