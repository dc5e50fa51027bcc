"""Dekel & Shamir's learners (docs/algorithms.md §4.12): LinearSVM, EvilTeacherSVM, TeacherSGD, and the
teacher-assignment generators.

Optimality is checked against an independent conic solver (cvxpy + Clarabel, the
optional extra ``solvers``), the certificate (primal − dual gap) against its own
definition, the SGD kernel and the coordinate step against naive reference twins.
"""

import inspect

import numpy as np
import pytest
import reference
import scipy.sparse as sp
from conftest import JIT_DISABLED
from sklearn.exceptions import NotFittedError
from tolerances import KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback._validation import AnySeed, Integer, Interval, OneOf, Options
from noisyfeedback.datasets.teachers import flip_evil, random_teachers, topic_teachers
from noisyfeedback.kernels.teachers import dcd_epoch
from noisyfeedback.learners.teachers import EvilTeacherSVM, LinearSVM, TeacherSGD
from noisyfeedback.learners.teachers._solver import kernel_view, primal_value
from noisyfeedback.metrics import damage_ratio

try:
    import cvxpy as cp

    HAVE_CVXPY = "CLARABEL" in cp.installed_solvers()
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_CVXPY = False

needs_cvxpy = pytest.mark.skipif(
    not HAVE_CVXPY,
    reason="cvxpy with Clarabel is not installed (pip install 'noisyfeedback[solvers]'); "
    "the cross-check against a generic conic solver needs it",
)

CLASSES = [LinearSVM, EvilTeacherSVM, TeacherSGD]
NAMESPACE = {c.__name__: c for c in CLASSES}


# ----------------------------------------------------------------- problems
def planted(m=400, d=10, n_teachers=20, n_evil=6, seed=0, margin=0.1, n_test=0, sparse_density=None):
    """Linearly separable data (margin ``margin`` around a random unit w*), teachers
    assigned at random, the labels of ``n_evil`` teachers flipped."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    n = m + n_test
    if sparse_density is None:
        X = rng.normal(size=(3 * n, d))
        s = X @ w
        keep = np.flatnonzero(np.abs(s) >= margin)[:n]
        X, s = X[keep], s[keep]
    else:
        X = sp.random(n, d, density=sparse_density, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.normal(size=k))
        s = X @ w
    y = np.where(s > 0, 1, -1)
    t = random_teachers(m, n_teachers, seed=seed)
    y_bad, evil = flip_evil(y[:m], t, n_evil=n_evil, seed=seed)
    return X[:m], y[:m], y_bad, t, evil, X[m:], y[m:]


def cvx_objective(X, y, lam, teachers=None, eps=None, fit_intercept=False):
    """The same problems written for cvxpy (Clarabel): (optimal value, w, ν)."""
    m, d = X.shape
    if fit_intercept:
        X = sp.hstack([X, np.ones((m, 1))], format="csr") if sp.issparse(X) else np.hstack([X, np.ones((m, 1))])
        d += 1
    Z = sp.diags(y.astype(float)) @ X if sp.issparse(X) else y[:, None] * X
    w = cp.Variable(d)
    margin_target = 1.0
    obj = lam / 2 * cp.sum_squares(w)
    nu = None
    if teachers is not None:
        ids, tid, sizes = np.unique(teachers, return_inverse=True, return_counts=True)
        T = ids.shape[0]
        nu = cp.Variable(T, nonneg=True)
        onehot = sp.csr_matrix((np.ones(m), (np.arange(m), tid)), shape=(m, T))
        margin_target = 1.0 - cp.multiply(m / sizes[tid], onehot @ nu) + cp.sum(nu)
        obj = obj + cp.sum(cp.multiply(eps / np.sqrt(sizes), nu))
    obj = obj + cp.sum(cp.pos(margin_target - Z @ w)) / m
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    return prob.value, w.value, (None if nu is None else nu.value)


# ------------------------------------------------------ optimality (cvxpy)
@needs_cvxpy
@pytest.mark.parametrize("kind", ["dense", "sparse", "dense_intercept"])
def test_evil_teacher_svm_matches_cvxpy(kind):
    if kind == "sparse":
        X, y, y_bad, t, evil, _, _ = planted(m=600, d=200, sparse_density=0.05, seed=1)
    else:
        X, y, y_bad, t, evil, _, _ = planted(m=500, d=15, seed=2)
    lam = 1e-3
    fit_intercept = kind == "dense_intercept"
    svm = EvilTeacherSVM(lam=lam, eps=1.0, fit_intercept=fit_intercept).fit(X, y_bad, teachers=t)
    ref, w_ref, nu_ref = cvx_objective(X, y_bad, lam, t, 1.0, fit_intercept)
    assert svm.converged_
    assert abs(svm.objective_ - ref) <= 1e-4 * abs(ref)
    # the certificate brackets the optimum (up to the conic solver's own accuracy)
    assert svm.dual_objective_ <= ref + 1e-7 * abs(ref) and svm.objective_ >= ref - 1e-7 * abs(ref)
    assert svm.duality_gap_ <= svm.tol * svm.objective_
    np.testing.assert_allclose(svm.nu_, nu_ref, atol=1e-3 * max(nu_ref.max(), 1e-3))
    w = np.append(svm.coef_, svm.intercept_) if fit_intercept else svm.coef_
    np.testing.assert_allclose(w, w_ref, atol=1e-3 * np.abs(w_ref).max())
    # the reported objective is the primal objective at (coef_, nu_)
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    ids, tid, sizes = np.unique(t, return_inverse=True, return_counts=True)
    again = primal_value(Xa, np.where(y_bad > 0, 1.0, -1.0), w, lam, tid, sizes.astype(float), 1.0, svm.nu_[ids])
    assert again == pytest.approx(svm.objective_, rel=1e-12)


@needs_cvxpy
@pytest.mark.parametrize("sparse", [False, True])
def test_linear_svm_matches_cvxpy_and_liblinear(sparse):
    from sklearn.svm import LinearSVC

    if sparse:
        X, y, y_bad, t, _, _, _ = planted(m=500, d=150, sparse_density=0.05, seed=3)
    else:
        X, y, y_bad, t, _, _, _ = planted(m=400, d=12, seed=3)
    lam = 1e-3
    svm = LinearSVM(lam=lam).fit(X, y_bad)
    ref, w_ref, _ = cvx_objective(X, y_bad, lam)
    assert svm.converged_ and abs(svm.objective_ - ref) <= 1e-4 * ref
    assert svm.dual_objective_ <= ref + 1e-7 * ref
    np.testing.assert_allclose(svm.coef_, w_ref, atol=1e-3 * np.abs(w_ref).max())
    # liblinear's L1-loss dual solver, C = 1/(λm), reaches the same optimum
    lib = LinearSVC(loss="hinge", C=1.0 / (lam * X.shape[0]), fit_intercept=False, dual=True,
                    tol=1e-10, max_iter=200_000).fit(X, y_bad)
    f_lib = primal_value(X, y_bad.astype(float), lib.coef_.ravel(), lam)
    assert svm.objective_ <= f_lib * (1 + 1e-6) and f_lib <= svm.objective_ * (1 + 1e-4)


@needs_cvxpy
def test_interior_point_subsolver_matches_cvxpy():
    """qp_ipm (phase 2 of the solver) on min ½xᵀKx − pᵀx, Ax ≤ b, 0 ≤ x ≤ 1, with teacher-like rows."""
    from noisyfeedback.learners.teachers._solver import qp_ipm

    rng = np.random.default_rng(17)
    for _ in range(3):
        n, d, T = 120, 6, 5
        Z = rng.normal(size=(n, d))
        tid = rng.integers(0, T, size=n)
        sizes = np.bincount(tid, minlength=T)
        A = (tid[None, :] == np.arange(T)[:, None]) / sizes[:, None] - 1.0 / n
        b = 0.2 * rng.random(T) / np.sqrt(sizes)
        p = 1.0 + rng.normal(size=n)
        x, nu, ok = qp_ipm(3.0 * Z @ Z.T, p, A, b, gap_tol=1e-10)
        xv = cp.Variable(n)
        con = [A @ xv <= b, xv >= 0, xv <= 1]
        prob = cp.Problem(cp.Minimize(1.5 * cp.sum_squares(Z.T @ xv) - p @ xv), con)
        prob.solve(solver="CLARABEL")
        f = 1.5 * float(np.sum((Z.T @ x) ** 2)) - p @ x
        assert ok and 0.0 <= x.min() and x.max() <= 1.0 and np.all(A @ x <= b + 1e-12)
        assert f == pytest.approx(prob.value, rel=1e-7, abs=1e-9)
        assert f <= prob.value + 1e-7 * abs(prob.value)  # at least as good as the conic solver
        # its multipliers are non-negative and complementary to the constraints
        assert np.all(nu >= 0) and np.abs(nu * (A @ x - b)).max() < 1e-7


@pytest.mark.skipif(JIT_DISABLED, reason="thousands of coordinate-ascent passes: 90 s without numba")
def test_phase_two_finishes_where_coordinate_ascent_stalls():
    """Dense, low-dimensional, small λ (C = 1/(λm) large): coordinate ascent alone needs thousands of
    passes; the interior-point finish certifies the optimum after a few dozen."""
    from noisyfeedback.learners.teachers import _solver

    X, y, y_bad, t, evil, _, _ = planted(m=800, d=30, n_teachers=40, n_evil=12, seed=0, margin=0.0)
    Xa = np.hstack([X, np.ones((800, 1))])
    ids, tid, sizes = np.unique(t, return_inverse=True, return_counts=True)
    yb = y_bad.astype(float)
    full = _solver.solve(Xa, yb, 1e-4, tid=tid, sizes=sizes.astype(float), eps=1.0, tol=1e-8, max_iter=100_000)
    assert full.converged and full.n_refine >= 1 and full.primal - full.dual <= 1e-8 * full.primal
    # coordinate ascent alone (the finish disabled) is still far from it after more passes
    alone = _solver.solve(Xa, yb, 1e-4, tid=tid, sizes=sizes.astype(float), eps=1.0, tol=1e-8,
                          max_iter=5 * full.n_iter, ws_max=0)
    assert not alone.converged and alone.n_refine == 0
    assert alone.primal - alone.dual > 100 * (full.primal - full.dual)


def test_nu_normalisation_keeps_the_margins_and_lowers_the_objective():
    from noisyfeedback.learners.teachers._solver import normalize_nu

    X, y, y_bad, t, evil, _, _ = planted(m=300, d=5, n_teachers=6, n_evil=2, seed=18)
    ids, tid, sizes = np.unique(t, return_inverse=True, return_counts=True)
    sizes = sizes.astype(float)
    nu = np.array([0.3, 0.01, 0.2, 0.05, 0.4, 0.02]) + 0.01 * sizes
    nn = normalize_nu(nu, sizes)
    m = 300
    shift = lambda v: m / sizes * v - v.sum()  # noqa: E731  margin shift k_t ν_t − Σν
    np.testing.assert_allclose(shift(nn), shift(nu), atol=1e-12)
    assert nn.min() == 0.0 and np.all(nn <= nu)
    w = np.ones(5)
    yb = y_bad.astype(float)
    assert primal_value(X, yb, w, 0.1, tid, sizes, 1.0, nn) < primal_value(X, yb, w, 0.1, tid, sizes, 1.0, nu)


def test_large_eps_is_the_plain_svm():
    X, y, y_bad, t, _, _, _ = planted(m=500, d=10, seed=4)
    plain = LinearSVM(lam=1e-2, tol=1e-10).fit(X, y_bad)
    loose = EvilTeacherSVM(lam=1e-2, eps=1e6, tol=1e-10).fit(X, y_bad, teachers=t)
    assert np.all(loose.nu_ == 0.0) and np.all(loose.teacher_margin_ == 1.0)
    assert loose.objective_ == pytest.approx(plain.objective_, rel=1e-9)
    np.testing.assert_allclose(loose.coef_, plain.coef_, atol=1e-6 * np.abs(plain.coef_).max())


@pytest.mark.skipif(JIT_DISABLED, reason="20k rows x many passes is too slow without numba")
def test_gap_is_reached_on_a_sparse_problem_with_20k_rows():
    """A smaller version of benchmarks/teachers_scale.py (m = 100k there)."""
    rng = np.random.default_rng(0)
    m, d, k = 20_000, 5_000, 50  # 1 % dense
    ind = np.sort(rng.integers(0, d, size=(m, k)), axis=1)
    val = rng.random((m, k))
    val /= np.linalg.norm(val, axis=1, keepdims=True)
    X = sp.csr_matrix((val.ravel(), ind.ravel(), np.arange(0, m * k + 1, k)), shape=(m, d))
    X.sum_duplicates()
    w_star = rng.normal(size=d)
    y = np.where(X @ w_star > 0, 1, -1)
    t = random_teachers(m, 50, seed=0)
    y_bad, evil = flip_evil(y, t, n_evil=15, seed=0)
    svm = EvilTeacherSVM(lam=1e-5, eps=1.0).fit(X, y_bad, teachers=t)
    assert svm.converged_ and -1e-12 <= svm.duality_gap_ / svm.objective_ <= 1e-6
    assert set(np.flatnonzero(svm.nu_ > 0)) >= set(evil.tolist())


# ------------------------------------------------------------ behaviour
def test_nu_is_zero_for_good_teachers_and_large_for_evil_ones():
    X, y, y_bad, t, evil, _, _ = planted(m=2000, d=10, n_teachers=20, n_evil=6, seed=5)
    svm = EvilTeacherSVM(lam=1e-2, eps=1.0).fit(X, y_bad, teachers=t)
    good = np.setdiff1d(np.arange(20), evil)
    assert np.all(svm.nu_[good] <= 1e-8)
    assert svm.nu_[evil].min() > 0.05
    # evil teachers' required margin is lowered (here below 0), good ones' raised
    assert np.all(svm.teacher_margin_[evil] < 0) and np.all(svm.teacher_margin_[good] > 1)
    assert svm.teacher_sizes_.sum() == 2000


def test_damage_ratio_below_one_with_30_percent_evil_teachers():
    ratios = []
    for seed in range(4):
        X, y, y_bad, t, evil, Xt, yt = planted(m=2000, d=10, n_teachers=20, n_evil=6, seed=seed, n_test=4000)
        e1 = 1 - LinearSVM(lam=1e-2).fit(X, y).score(Xt, yt)
        e2 = 1 - LinearSVM(lam=1e-2).fit(X, y_bad).score(Xt, yt)
        e3 = 1 - EvilTeacherSVM(lam=1e-2, eps=1.0).fit(X, y_bad, teachers=t).score(Xt, yt)
        assert e2 > e1  # the evil teachers did damage
        ratios.append(damage_ratio(e1, e2, e3))
    assert max(ratios) < 1.0 and np.median(ratios) < 0.6, ratios


def test_labels_any_two_classes_and_dense_equals_csr():
    X, y, y_bad, t, _, _, _ = planted(m=300, d=8, seed=6)
    a = EvilTeacherSVM(lam=1e-2).fit(X, y_bad, teachers=t)
    b = EvilTeacherSVM(lam=1e-2).fit(X, (y_bad + 1) // 2, teachers=t)
    c = EvilTeacherSVM(lam=1e-2).fit(X, np.where(y_bad > 0, "spam", "ham"), teachers=t)
    d = EvilTeacherSVM(lam=1e-2).fit(sp.csr_matrix(X), y_bad, teachers=t)
    for other in (b, c):  # the same arithmetic: the same bits
        np.testing.assert_array_equal(other.coef_, a.coef_)
    # CSR takes other arithmetic paths (rounding differs); both are certified optima
    np.testing.assert_allclose(d.coef_, a.coef_, rtol=0, atol=1e-7 * np.abs(a.coef_).max())
    assert c.classes_.tolist() == ["ham", "spam"] and set(c.predict(X).tolist()) <= {"ham", "spam"}
    assert b.predict(X).dtype == b.classes_.dtype
    np.testing.assert_array_equal(a.predict(X) > 0, c.predict(X) == "spam")
    # teacher ids need not be contiguous: nu_ is indexed by id, zero for absent ids
    e = EvilTeacherSVM(lam=1e-2).fit(X, y_bad, teachers=2 * t + 1)
    np.testing.assert_allclose(e.nu_[1::2], a.nu_, atol=1e-12)
    assert np.all(e.nu_[0::2] == 0) and np.isnan(e.teacher_margin_[0])


def test_fit_intercept_learns_an_offset():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] > 1.0, 1, -1)  # the boundary does not pass through 0
    t = random_teachers(400, 4, seed=0)
    for cls in CLASSES:
        kw = {"teachers": t}
        eps = {} if cls is LinearSVM else {"eps": 1.0}  # a loose cap: clean labels, the intercept is the point
        without = cls(lam=1e-3, **eps).fit(X, y, **kw).score(X, y)
        with_b = cls(lam=1e-3, fit_intercept=True, **eps).fit(X, y, **kw)
        assert with_b.intercept_ < 0 and with_b.score(X, y) > max(without, 0.95)


# ------------------------------------------------------------ TeacherSGD
@pytest.mark.parametrize("eps", [1.0, None])
def test_teacher_sgd_equals_its_reference_twin(eps):
    X, y, y_bad, t, _, _, _ = planted(m=120, d=5, n_teachers=6, n_evil=2, seed=8)
    sgd = TeacherSGD(lam=1e-2, eps=eps, n_epochs=3, seed=11).fit(X, y_bad, teachers=t)
    w, alpha, n_capped = reference.teacher_sgd_run(X, y_bad.astype(float), t, 1e-2, eps, 3, nf.base.make_rng(11))
    np.testing.assert_allclose(sgd.coef_, w, rtol=1e-9, atol=KERNEL_ATOL)
    np.testing.assert_allclose(sgd.alpha_, alpha, rtol=1e-9, atol=1e-15)
    assert sgd.n_capped_ == n_capped and sgd.n_iter_ == 360
    if eps is not None:
        assert n_capped > 0
        # the constraint of eq. (3) holds for every teacher at the end
        m = X.shape[0]
        for s in np.unique(t):
            own = t == s
            assert sgd.alpha_[own].mean() - sgd.alpha_.mean() <= eps / (m * np.sqrt(own.sum())) + 1e-15


def test_teacher_sgd_kernel_on_csr_equals_dense():
    X, y, y_bad, t, _, _, _ = planted(m=200, d=30, sparse_density=0.2, n_teachers=5, n_evil=1, seed=9)
    a = TeacherSGD(lam=1e-2, n_epochs=2).fit(X, y_bad, teachers=t)
    b = TeacherSGD(lam=1e-2, n_epochs=2).fit(X.toarray(), y_bad, teachers=t)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)


def test_certificate_and_margin_kernels_equal_their_twins():
    from noisyfeedback.kernels.teachers import certificate_terms, row_sq_norms, signed_margins

    rng = np.random.default_rng(16)
    for sparse in (False, True):
        X = sp.random(50, 7, density=0.4, format="csr", random_state=1) if sparse else rng.normal(size=(50, 7))
        Xk = kernel_view(nf._validation.check_X(X))
        y = rng.choice([-1.0, 1.0], size=50)
        w = rng.normal(size=7)
        tid = rng.integers(0, 4, size=50).astype(np.int64)
        beta = rng.random(50) * (rng.random(50) < 0.7)
        shift = rng.normal(size=4) * 0.3
        z = np.empty(50)
        signed_margins(*Xk, w, y, z)
        np.testing.assert_allclose(z, reference.signed_margins(X, w, y), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
        out = np.empty(50)
        row_sq_norms(*Xk, out)
        np.testing.assert_allclose(out, reference.row_sq_norms(X), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
        Bt = np.zeros(4)
        hinge = certificate_terms(z, beta, tid, shift, Bt)
        h_ref, Bt_ref = reference.certificate_terms(z, beta, tid, shift, 4)
        assert hinge == pytest.approx(h_ref, rel=KERNEL_RTOL)
        np.testing.assert_allclose(Bt, Bt_ref, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


# ------------------------------------------------ the coordinate step twin
def test_coordinate_step_is_the_exact_one_dimensional_maximiser():
    """dcd_epoch on a single coordinate returns argmax of the augmented Lagrangian along it."""
    rng = np.random.default_rng(10)
    m, d, T = 60, 4, 3
    X = rng.normal(size=(m, d))
    y = rng.choice([-1.0, 1.0], size=m)
    tid = rng.integers(0, T, size=m).astype(np.int64)
    sizes = np.bincount(tid, minlength=T).astype(float)
    lam, eps = 0.05, 0.3
    inv_n, eps_t = 1 / sizes, eps / np.sqrt(sizes)
    qd = (X * X).sum(1) / (lam * m)

    def J(beta, nu, rho):
        w = (beta * y) @ X / (lam * m)
        g = np.bincount(tid, beta, minlength=T) / sizes - beta.mean() - eps_t
        pen = (np.maximum(nu + rho * g, 0) ** 2 - nu**2) / rho
        return beta.sum() - 0.5 * lam * m * (w @ w) - 0.5 * m * pen.sum()

    grid = np.linspace(0, 1, 200_001)
    for trial in range(12):
        beta = rng.random(m) * (rng.random(m) < 0.7)
        nu = rng.random(T) * 0.05 * (rng.random(T) < 0.6)
        rho = rng.random(T) * 5 + 0.1
        i = int(rng.integers(m))
        w = (beta * y) @ X / (lam * m)
        Bt = np.bincount(tid, beta, minlength=T)
        b2 = beta.copy()
        out = np.zeros(2)
        dcd_epoch(np.array([i], np.int64), 1, np.inf, -np.inf, *kernel_view(X), y, tid, qd, 1 / (lam * m),
                  b2, w, Bt, np.array([beta.sum()]), inv_n, nu, rho, eps_t, np.zeros(T), True, out)
        vals = [J(np.where(np.arange(m) == i, v, beta), nu, rho) for v in grid[::1000]]
        coarse = grid[::1000][int(np.argmax(vals))]
        fine = grid[(grid >= coarse - 0.005) & (grid <= coarse + 0.005)]
        best = fine[int(np.argmax([J(np.where(np.arange(m) == i, v, beta), nu, rho) for v in fine]))]
        assert b2[i] == pytest.approx(best, abs=2e-5), trial
        assert np.all(np.delete(b2, i) == np.delete(beta, i))


# --------------------------------------------------------- generic checks
def fit(learner, seed=0):
    X, y, y_bad, t, _, _, _ = planted(m=200, d=6, n_teachers=8, n_evil=2, seed=seed)
    return learner.fit(X, y_bad, teachers=t), X, y_bad, t


def make(cls, **override):
    params = dict(cls._test_params)
    params.update(override)
    return cls(**params)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_clone_params_repr(cls):
    from sklearn.base import clone

    learner, X, y, t = fit(make(cls))
    assert learner.is_fitted
    for twin in (learner.clone(), clone(learner)):
        assert twin.get_params() == learner.get_params() and not twin.is_fitted
        assert repr(twin) == repr(learner)
    assert eval(repr(learner), NAMESPACE).get_params() == learner.get_params()
    assert learner.clone(lam=0.5).lam == 0.5
    with pytest.raises(ValueError, match="Invalid parameter"):
        learner.set_params(not_a_parameter=1)
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.default is not inspect.Parameter.empty:
            assert p.default is None or isinstance(p.default, (bool, int, float, str))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_check_estimator_passes(cls):
    """The scikit-learn contract (binary-only classifiers: the multiclass checks expect the
    'Only binary classification is supported' error)."""
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(make(cls), on_fail=None)
    failed = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
    assert not failed, failed


def test_exported_at_top_level():
    assert nf.LinearSVM is LinearSVM and nf.EvilTeacherSVM is EvilTeacherSVM and nf.TeacherSGD is TeacherSGD
    assert {"LinearSVM", "EvilTeacherSVM", "TeacherSGD"} <= set(nf.__all__)
    assert nf.metrics.damage_ratio is damage_ratio


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_same_seed_same_bits(cls):
    a, X, y, t = fit(make(cls))
    b, *_ = fit(make(cls))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    c = make(cls).fit(X, y, teachers=t)  # refitting is a fresh start
    np.testing.assert_array_equal(a.coef_, c.coef_)
    e, *_ = fit(make(cls, seed=12345))
    if cls is TeacherSGD:
        assert not np.array_equal(a.alpha_, e.alpha_)  # the seed matters
    else:  # the seed only orders the coordinate visits: the optimum is the same
        assert e.objective_ == pytest.approx(a.objective_, rel=2 * a.tol)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_save_load_round_trip(cls, tmp_path):
    learner, X, y, t = fit(make(cls))
    learner.classes_ = np.array(["neg", "pos"])  # string classes survive too (no pickle)
    path = learner.save(tmp_path / "model.npz")
    loaded = nf.load(path)
    assert type(loaded) is cls and repr(loaded) == repr(learner)
    assert loaded._learned_attributes() == learner._learned_attributes()
    for name in learner._learned_attributes():
        a, b = getattr(learner, name), getattr(loaded, name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b or (a != a and b != b), name
    np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))
    np.testing.assert_array_equal(loaded.decision_function(X), learner.decision_function(X))
    assert cls.load(path).get_params() == learner.get_params()
    with np.load(path, allow_pickle=False) as data:
        assert "__metadata__" in data.files


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_bad_inputs(cls):
    X, y, y_bad, t, _, _, _ = planted(m=100, d=4, n_teachers=5, n_evil=1, seed=12)
    learner = make(cls)
    with pytest.raises(NotFittedError):
        learner.predict(X)
    Xn = X.copy()
    Xn[7, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity .*row 7"):
        learner.fit(Xn, y, teachers=t)
    with pytest.raises(ValueError, match="NaN or infinity .*row 7"):
        learner.fit(sp.csr_matrix(np.where(np.isnan(Xn), np.inf, Xn)), y, teachers=t)
    with pytest.raises(ValueError, match="2D"):
        learner.fit(X[:, 0], y, teachers=t)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        learner.fit(X, y[:-1], teachers=t)
    with pytest.raises(ValueError, match="exactly two classes; got 3.*Only binary"):
        learner.fit(X, np.arange(100) % 3, teachers=t)
    with pytest.raises(ValueError, match="exactly two classes; got 1"):
        learner.fit(X, np.ones(100, dtype=int), teachers=t)
    with pytest.raises(ValueError, match="y contains NaN"):
        learner.fit(X, np.where(y > 0, 1.0, np.nan), teachers=t)
    with pytest.raises(ValueError, match="Unknown label type"):
        learner.fit(X, np.linspace(0, 1, 100), teachers=t)
    if cls is not LinearSVM:  # LinearSVM ignores teachers
        with pytest.raises(ValueError, match="teachers .*99 entries but X has 100 rows"):
            learner.fit(X, y, teachers=t[:-1])
        bad = t.copy()
        bad[3] = -2
        with pytest.raises(ValueError, match="ids >= 0; row 3 has -2"):
            learner.fit(X, y, teachers=bad)
        with pytest.raises(TypeError, match="integer teacher ids"):
            learner.fit(X, y, teachers=t.astype(float))
        with pytest.raises(ValueError, match="1-D"):
            learner.fit(X, y, teachers=t[:, None])
    learner.fit(X, y, teachers=t)
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 4"):
        learner.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN or infinity .*row 7"):
        learner.decision_function(Xn)


def test_no_teachers_means_one_teacher_the_plain_svm():
    X, y, y_bad, t, _, _, _ = planted(m=300, d=6, seed=15)
    plain = LinearSVM(lam=1e-2, tol=1e-9).fit(X, y_bad)
    one = EvilTeacherSVM(lam=1e-2, tol=1e-9).fit(X, y_bad)
    assert one.nu_.tolist() == [0.0] and one.teacher_sizes_.tolist() == [300]
    assert one.objective_ == pytest.approx(plain.objective_, rel=1e-8)
    np.testing.assert_allclose(one.coef_, plain.coef_, atol=1e-6 * np.abs(plain.coef_).max())
    # TeacherSGD: the cap of a single teacher never binds
    a = TeacherSGD(lam=1e-2, n_epochs=2).fit(X, y_bad)
    b = TeacherSGD(lam=1e-2, eps=None, n_epochs=2).fit(X, y_bad)
    assert a.n_capped_ == 0
    np.testing.assert_array_equal(a.coef_, b.coef_)


def invalid_values(constraint):
    if isinstance(constraint, OneOf):
        return [v for c in constraint.constraints for v in invalid_values(c) if not constraint.accepts(v)]
    if isinstance(constraint, Interval):
        out = [float("nan"), "0.5", -1, 0.0]
        if constraint.high is not None:
            out.append(constraint.high + 1.0)
        return [v for v in out if not constraint.accepts(v)]
    if isinstance(constraint, Integer):
        return [1.5, "3", (constraint.low or 0) - 1]
    if isinstance(constraint, AnySeed):
        return [-1, 1.5, "0"]
    if isinstance(constraint, Options):
        return ["__not_an_option__", 1]
    return []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_out_of_range_parameters_are_rejected_naming_the_parameter(cls):
    X, y, y_bad, t, _, _, _ = planted(m=50, d=3, n_teachers=5, n_evil=1, seed=13)
    for name, constraint in cls._parameter_constraints.items():
        values = invalid_values(constraint)
        assert values, name
        for value in values:
            learner = make(cls, **{name: value})
            with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter of {cls.__name__}"):
                learner.fit(X, y, teachers=t)
    with pytest.raises(ValueError) as info:
        make(cls, lam=-1).fit(X, y, teachers=t)
    assert str(info.value) == f"The 'lam' parameter of {cls.__name__} must be in (0, inf). Got -1 instead."


def test_not_converged_warns_and_reports_the_gap():
    X, y, y_bad, t, _, _, _ = planted(m=300, d=8, seed=14)
    with pytest.warns(Warning, match="relative duality gap"):
        svm = EvilTeacherSVM(lam=1e-4, max_iter=2).fit(X, y_bad, teachers=t)
    assert not svm.converged_ and svm.n_iter_ == 2
    assert svm.duality_gap_ > svm.tol * svm.objective_ and svm.dual_objective_ <= svm.objective_


# ------------------------------------------------------------- datasets
def test_random_teachers():
    t = random_teachers(1003, 10, seed=3)
    assert t.dtype == np.int64 and t.shape == (1003,)
    assert sorted(np.bincount(t).tolist()) == [100] * 7 + [101] * 3
    np.testing.assert_array_equal(t, random_teachers(1003, 10, seed=3))
    assert not np.array_equal(t, random_teachers(1003, 10, seed=4))
    with pytest.raises(ValueError, match="'n_teachers' parameter of random_teachers"):
        random_teachers(10, 11)
    with pytest.raises(ValueError, match="'n_teachers'"):
        random_teachers(10, 0)


def test_topic_teachers():
    np.testing.assert_array_equal(topic_teachers(labels=np.array([5, 2, 5, 9])), [1, 0, 1, 2])
    # multi-label rows go to one of their topics, at random (seeded)
    L = np.zeros((400, 4), dtype=int)
    L[:, 0] = 1
    L[::2, 3] = 1
    t = topic_teachers(labels=L, seed=0)
    assert set(t[1::2].tolist()) == {0} and set(t[::2].tolist()) == {0, 1}
    np.testing.assert_array_equal(t, topic_teachers(labels=sp.csr_matrix(L), seed=0))
    with pytest.raises(ValueError, match="row 1 has no topic"):
        topic_teachers(labels=np.array([[1, 0], [0, 0]]))
    # k-means topics: unequal sizes follow the clusters
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(300, 2)), rng.normal(size=(60, 2)) + 20])
    t = topic_teachers(X, 2, seed=0)
    assert sorted(np.bincount(t).tolist()) == [60, 300]
    with pytest.raises(TypeError, match="needs labels="):
        topic_teachers()


def test_flip_evil():
    t = np.repeat(np.arange(5), 4)
    y = np.tile([1, -1], 10)
    y2, evil = flip_evil(y, t, n_evil=2, seed=0)
    assert evil.shape == (2,) and evil.dtype == np.int64
    bad = np.isin(t, evil)
    np.testing.assert_array_equal(y2[bad], -y[bad])
    np.testing.assert_array_equal(y2[~bad], y[~bad])
    np.testing.assert_array_equal(flip_evil(y, t, n_evil=2, seed=0)[0], y2)
    y01, _ = flip_evil((y + 1) // 2, t, evil_ids=evil)
    np.testing.assert_array_equal(y01, (y2 + 1) // 2)
    ys, evil_s = flip_evil(np.where(y > 0, "a", "b"), t, evil_ids=evil[::-1])
    np.testing.assert_array_equal(ys == "a", y2 > 0)
    np.testing.assert_array_equal(evil_s, evil)
    assert flip_evil(y, t, n_evil=0)[1].size == 0
    with pytest.raises(TypeError, match="exactly one of"):
        flip_evil(y, t)
    with pytest.raises(ValueError, match=r"evil_ids \[7\]"):
        flip_evil(y, t, evil_ids=[7])
    with pytest.raises(ValueError, match="'n_evil'"):
        flip_evil(y, t, n_evil=6)
    with pytest.raises(ValueError, match="binary labels"):
        flip_evil(np.arange(20) % 3, t, n_evil=1)
