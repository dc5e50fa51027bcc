"""UMA (Louche & Ralaivola 2015): unbiasedness, batch-Perceptron equivalence, validation,
noise robustness, scikit-learn compatibility, persistence; C estimation; the toy data."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from tolerances import EXACT_ATOL, EXACT_RTOL, KERNEL_ATOL, KERNEL_RTOL

import noisyfeedback as nf
from noisyfeedback._validation import AnySeed, Integer, Interval, OneOf, Options
from noisyfeedback.base import make_rng
from noisyfeedback.datasets.uma_toy import uma_toy
from noisyfeedback.feedback import ConfusionNoise
from noisyfeedback.learners.label_noise.rough import estimate_confusion_from_clean, pseudo_label
from noisyfeedback.learners.label_noise.uma import (
    UMA,
    make_kernel_uma,
    standard_errors,
    uma_statistics,
    update_vectors,
)
from noisyfeedback.metrics import confusion_rate, error_rate
from noisyfeedback.noise.confusion import (
    confident_joint_noise_matrix,
    confusion_counts,
    estimate_confusion_from_noisy,
    random_confusion,
)

C3 = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.1], [0.1, 0.2, 0.8]])


def toy(n=400, K=3, d=4, margin=0.1, seed=0):
    return uma_toy(n, n_classes=K, n_features=d, margin=margin, seed=seed)


def noisy(y, C, seed=0):
    return ConfusionNoise(C).respond(y, rng=np.random.default_rng(seed))


# --------------------------------------------------------------- references
def ref_statistics(W, X, y, K, theta=0.0):
    """μ by an explicit loop over rows, margins from their definition."""
    n, d = X.shape
    mu = np.zeros((K, K, d))
    for i in range(n):
        s = W @ X[i]
        p = int(np.argmax(s))
        m = np.inf
        for r in range(K):
            dist = np.linalg.norm(W[p] - W[r])
            if r != p and dist > 0:
                m = min(m, (s[p] - s[r]) / dist)
        if m >= theta:
            mu[p, y[i]] += X[i]
    return mu / n


def ref_batch_perceptron(X, y, K, max_iter, strategy="error", tol=0.0, seed=None):
    """The batch Perceptron in plain numpy: μ[p, q] = mean over all rows of 1[y=q]1[h=p] x,
    one pair per iteration (largest ‖μ[p, q]‖, or / class proportion, or uniform), w_q += μ, w_p −= μ."""
    n, d = X.shape
    W = np.zeros((K, d))
    rng = make_rng(seed)
    pi = np.bincount(y, minlength=K) / n
    for _ in range(max_iter):
        pred = np.argmax(X @ W.T, axis=1)
        mu = np.zeros((K, K, d))
        for p in range(K):
            for q in range(K):
                mu[p, q] = X[(pred == p) & (y == q)].sum(axis=0) / n
        norms = np.linalg.norm(mu, axis=2)
        cand = (norms > tol) & ~np.eye(K, dtype=bool)
        if not cand.any():
            break
        if strategy == "random":
            flat = np.flatnonzero(cand)
            f = flat[rng.integers(flat.shape[0])]
        elif strategy == "confusion":
            f = np.argmax(np.where(cand, norms / pi[None, :], -np.inf))
        else:
            f = np.argmax(np.where(cand, norms, -np.inf))
        p, q = divmod(int(f), K)
        W[q] += mu[p, q]
        W[p] -= mu[p, q]
    return W


def integer_problem(n=128, K=4, d=6, seed=0):
    """Integer features and n a power of two: every sum and mean is exact in float64."""
    rng = np.random.default_rng(seed)
    protos = rng.integers(-3, 4, size=(K, d))
    y = rng.integers(0, K, size=n)
    X = (protos[y] + rng.integers(-2, 3, size=(n, d))).astype(np.float64)
    return X, y.astype(np.int64)


# ---------------------------------------------------- (1) E[Z] = clean statistic
@pytest.mark.parametrize("theta", [0.0, 0.05])
def test_expected_update_is_the_clean_statistic_exactly(theta):
    X, y = toy(n=300, K=3, d=4)
    K = 3
    W = np.random.default_rng(1).normal(size=(K, 4))  # a fixed classifier h
    clean = uma_statistics(W, X, y, K, theta)  # Σ_i 1[y_i=q] 1[h(x_i)=p] x_i / n
    np.testing.assert_allclose(clean, ref_statistics(W, X, y, K, theta), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    # E[μ[p, r]] by linearity: E[1[ỹ_i = r]] = C[r, y_i]
    S = X @ W.T
    pred = np.argmax(S, axis=1)
    used = np.ones(len(y), bool) if theta == 0 else (_margins_ref(W, X) >= theta)
    P = (np.arange(K)[:, None] == pred[None, :]) & used[None, :]  # (K, n)
    E_mu = np.einsum("ri,pi,id->prd", C3[:, y], P.astype(float), X) / len(y)
    Z = update_vectors(E_mu, np.linalg.inv(C3))
    np.testing.assert_allclose(Z, clean, rtol=EXACT_RTOL, atol=EXACT_ATOL)
    assert np.abs(clean).max() > 0.01  # the statistic is not trivially zero


def _margins_ref(W, X):
    return np.array([_one_margin(W, x) for x in X])


def _one_margin(W, x):
    s = W @ x
    p = int(np.argmax(s))
    dists = [(s[p] - s[r]) / np.linalg.norm(W[p] - W[r]) for r in range(len(s))
             if r != p and np.linalg.norm(W[p] - W[r]) > 0]
    return min(dists) if dists else np.inf


def test_expected_update_monte_carlo():
    """Average of Z over label draws → clean statistic; tolerance 5 standard errors per coordinate."""
    X, y = toy(n=200, K=3, d=3, seed=2)
    K, M = 3, 2000
    W = np.random.default_rng(3).normal(size=(K, 3))
    clean = uma_statistics(W, X, y, K)
    Cinv = np.linalg.inv(C3)
    rng = np.random.default_rng(4)
    draws = np.empty((M,) + clean.shape)
    sigma2 = np.empty((M, K, K))
    channel = ConfusionNoise(C3)
    for m in range(M):
        mu, A = uma_statistics(W, X, channel.respond(y, rng=rng), K, return_second_moments=True)
        draws[m] = update_vectors(mu, Cinv)
        sigma2[m] = standard_errors(A, Cinv) ** 2
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(M)
    assert np.all(np.abs(mean - clean) <= 5 * se + 1e-12)
    # σ̂² (used by `significance`) bounds the spread of Z: E‖Z − E Z‖² <= E σ̂², within 20 %
    spread = ((draws - clean) ** 2).sum(axis=3).mean(axis=0)
    assert np.all(spread <= 1.2 * sigma2.mean(axis=0) + 1e-15)
    assert np.all(spread >= 0.2 * sigma2.mean(axis=0))
    # and the uncorrected μ is biased: the correction matters
    raw = np.mean([uma_statistics(W, X, channel.respond(y, rng=rng), K) for _ in range(200)], axis=0)
    assert np.abs(raw - clean).max() > 0.05


def test_statistics_are_one_vectorised_pass_dense_equals_sparse():
    X, y = toy(n=150, K=4, d=5, seed=3)
    X[X < 0.2] = 0.0
    W = np.random.default_rng(0).normal(size=(4, 5))
    for theta in (0.0, 0.1):
        dense = uma_statistics(W, X, y, 4, theta)
        sparse = uma_statistics(W, sp.csr_matrix(X), y, 4, theta)
        np.testing.assert_allclose(sparse, dense, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
        np.testing.assert_allclose(dense, ref_statistics(W, X, y, 4, theta), rtol=KERNEL_RTOL, atol=KERNEL_ATOL)


def test_margin_definition():
    X, y = toy(n=100, K=3, d=3, seed=5)
    # W = 0: no boundary yet, every point counts whatever θ
    mu0 = uma_statistics(np.zeros((3, 3)), X, y, 3, theta=5.0)
    np.testing.assert_allclose(mu0[0].sum(axis=0), X.sum(axis=0) / 100, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    # the margin is scale-free (a geometric distance)
    W = np.random.default_rng(0).normal(size=(3, 3))
    np.testing.assert_allclose(uma_statistics(W, X, y, 3, 0.1), uma_statistics(1000 * W, X, y, 3, 0.1))
    # a huge θ excludes every point once there are boundaries
    assert not uma_statistics(W, X, y, 3, theta=10.0).any()


# ------------------------------------------- (2) C = I is the batch Perceptron
@pytest.mark.parametrize("strategy", ["error", "confusion", "random"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_identity_confusion_is_the_batch_perceptron_exactly(strategy, fmt):
    X, y = integer_problem()
    ref = ref_batch_perceptron(X, y, 4, 60, strategy=strategy, seed=7)
    Xin = X if fmt == "dense" else sp.csr_matrix(X)
    for C in (None, np.eye(4)):
        uma = UMA(confusion=C, strategy=strategy, max_iter=60, seed=7).fit(Xin, y)
        np.testing.assert_array_equal(uma.W_, ref)
    assert np.abs(ref).sum() > 0


def test_identity_confusion_matches_batch_perceptron_on_float_data():
    X, y = toy(n=300, K=4, d=5, margin=0.05, seed=8)
    ref = ref_batch_perceptron(X, y, 4, 80)
    uma = UMA(max_iter=80).fit(X, y)
    np.testing.assert_allclose(uma.W_, ref, rtol=KERNEL_RTOL, atol=KERNEL_ATOL)
    # separable data, clean labels: the batch Perceptron stops when no mistake is left
    done = UMA(max_iter=5000).fit(X, y)
    assert done.converged_ and error_rate(y, done.predict(X)) == 0.0
    assert done.n_iter_ == done.n_updates_ + 1


# --------------------------------------------------- (3) validation of C
def test_singular_and_ill_conditioned_confusion_rejected_with_condition_number():
    X, y = toy(n=60, K=2, d=3)
    singular = np.array([[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"'confusion' parameter of UMA.*condition number"):
        UMA(confusion=singular).fit(X, y)
    eps = 1e-10
    ill = np.array([[0.5 + eps, 0.5 - eps], [0.5 - eps, 0.5 + eps]])  # cond = 1 / (2 eps) = 5e9
    with pytest.raises(ValueError, match=r"condition number 5e\+09 exceeds 1e\+08"):
        UMA(confusion=ill).fit(X, y)
    UMA(confusion=ill, max_condition=1e10, max_iter=5).fit(X, y)  # the threshold is a parameter


def test_non_stochastic_or_malformed_confusion_rejected():
    X, y = toy(n=60, K=3, d=3)
    bad = C3.copy()
    bad[0, 1] += 0.1
    with pytest.raises(ValueError, match=r"'confusion' parameter of UMA must have columns summing to 1.*column 1"):
        UMA(confusion=bad).fit(X, y)
    with pytest.raises(ValueError, match="square"):
        UMA(confusion=np.ones((3, 2)) / 3).fit(X, y)
    with pytest.raises(ValueError, match=">= 0"):
        UMA(confusion=np.array([[1.2, 0.0, 0.0], [-0.2, 1.0, 0.0], [0.0, 0.0, 1.0]])).fit(X, y)
    with pytest.raises(ValueError, match="'confusion' parameter of UMA is 2 x 2, but there are 3 classes"):
        UMA(confusion=np.eye(2)).fit(X, y.astype(str))
    with pytest.raises(TypeError, match="'confusion' parameter of UMA"):
        UMA(confusion=[["a", "b"], ["c", "d"]]).fit(X, y)


# ------------------------------------------- (4) robustness on the toy data
def test_uma_confusion_rate_below_perceptron_at_several_noise_levels():
    K = 5
    X, y = uma_toy(5000, n_classes=K, n_features=5, margin=0.1, seed=11)
    Xtr, ytr, Xte, yte = X[:3000], y[:3000], X[3000:], y[3000:]
    for lam in (0.3, 0.45, 0.6):
        C = random_confusion(K, lam, seed=3)
        y_noisy = noisy(ytr, C, seed=int(lam * 10))
        uma = UMA(confusion=C, max_iter=150).fit(Xtr, y_noisy)
        perceptron = UMA(max_iter=150).fit(Xtr, y_noisy)  # the batch Perceptron, same iterations
        cr_uma = confusion_rate(yte, uma.predict(Xte), K)
        cr_perc = confusion_rate(yte, perceptron.predict(Xte), K)
        assert cr_uma < 0.6 * cr_perc, (lam, cr_uma, cr_perc)
        assert cr_uma < 0.12, (lam, cr_uma)


def test_significance_stops_once_updates_are_noise():
    X, y = toy(n=2000, K=3, d=4, margin=0.1, seed=21)
    y_noisy = noisy(y, C3, seed=4)
    plain = UMA(confusion=C3, max_iter=400).fit(X, y_noisy)
    sig = UMA(confusion=C3, max_iter=400, significance=3.0).fit(X, y_noisy)
    assert not plain.converged_ and plain.n_iter_ == 400
    assert sig.converged_ and sig.n_iter_ < 400
    assert error_rate(y, sig.predict(X)) < 0.1


def test_strategies_and_margin_all_learn():
    X, y = toy(n=1500, K=3, d=4, margin=0.1, seed=12)
    y_noisy = noisy(y, C3, seed=1)
    for params in ({"strategy": "confusion"}, {"strategy": "random", "seed": 0}, {"theta": 0.02}):
        uma = UMA(confusion=C3, max_iter=200, **params).fit(X, y_noisy)
        assert error_rate(y, uma.predict(X)) < 0.1, params


# -------------------------------------------------------------- online mode
def test_batch_size_fit_equals_partial_fit_over_chunks():
    X, y = toy(n=1000, K=3, d=4, seed=13)
    y_noisy = noisy(y, C3, seed=2)
    a = UMA(confusion=C3, batch_size=250, max_iter=12, strategy="random", seed=4).fit(X, y_noisy)
    b = UMA(confusion=C3, strategy="random", seed=4)
    for it in range(12):
        s = 250 * (it % 4)
        b.partial_fit(X[s:s + 250], y_noisy[s:s + 250])
    np.testing.assert_array_equal(a.W_, b.W_)
    assert a.n_iter_ == b.n_iter_ == 12
    # one pass of fresh chunks learns the problem too (Section 3.4)
    Xs, ys = toy(n=20000, K=3, d=4, seed=14)
    online = UMA(confusion=C3)
    ys_noisy = noisy(ys, C3, seed=3)
    for s in range(0, 20000, 500):
        online.partial_fit(Xs[s:s + 500], ys_noisy[s:s + 500])
    assert error_rate(ys, online.predict(Xs)) < 0.1


def test_partial_fit_needs_classes_without_confusion():
    X, y = toy(n=60, K=3, d=3)
    with pytest.raises(ValueError, match="classes="):
        UMA().partial_fit(X, y)
    m = UMA().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="row 4"):
        m.partial_fit(X, np.where(np.arange(60) == 4, 7, y))
    with pytest.raises(ValueError, match="differs"):
        m.partial_fit(X, y, classes=[0, 1])


# -------------------------------------------------- (5) scikit-learn contract
def test_check_estimator_passes():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (UMA(**UMA._test_params),
                UMA(max_iter=200, strategy="random", seed=0, theta=0.01, batch_size=50),
                UMA(max_iter=200, strategy="confusion", significance=1.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, on_fail=None)
        failed = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
        assert not failed, failed


def test_string_labels_classes_and_binary_decision_function():
    X, y = toy(n=300, K=2, d=3, seed=15)
    names = np.array(["cat", "dog"])[y]
    C = np.array([[0.8, 0.3], [0.2, 0.7]])
    m = UMA(confusion=C, max_iter=100).fit(X, names)
    assert list(m.classes_) == ["cat", "dog"]
    dec = m.decision_function(X)
    assert dec.shape == (300,)
    np.testing.assert_array_equal(m.predict(X), np.where(dec > 0, "dog", "cat"))
    # integer labels within 0..K-1 keep their meaning even if a class is absent from y
    m3 = UMA(confusion=C3, max_iter=10).fit(X, y)  # only 0 and 1 occur
    np.testing.assert_array_equal(m3.classes_, [0, 1, 2])
    assert m3.decision_function(X).shape == (300, 3)


def test_clone_get_set_params():
    m = UMA(confusion=C3, strategy="confusion", theta=0.1, max_iter=7, seed=3)
    X, y = toy(n=100)
    m.fit(X, noisy(y, C3))
    for twin in (clone(m), m.clone()):
        assert twin is not m and not hasattr(twin, "W_")
        p, q = twin.get_params(), m.get_params()
        assert p.keys() == q.keys()
        assert all(np.array_equal(p[k], q[k]) if isinstance(p[k], np.ndarray) else p[k] == q[k] for k in p)
    assert m.clone(max_iter=9).max_iter == 9
    again = eval(repr(UMA(strategy="random", seed=2)), {"UMA": UMA})
    assert again.get_params() == UMA(strategy="random", seed=2).get_params()
    with pytest.raises(ValueError, match="Invalid parameter"):
        m.set_params(not_a_parameter=1)


def test_defaults_are_immutable_and_params_untouched_by_fit():
    import inspect

    for p in inspect.signature(UMA.__init__).parameters.values():
        if p.default is not inspect.Parameter.empty:
            assert p.default is None or isinstance(p.default, (bool, int, float, str)), p.name
    C = C3.copy()
    m = UMA(confusion=C, strategy="confusion", max_iter=20)
    X, y = toy(n=200)
    m.fit(X, noisy(y, C3)).partial_fit(X, noisy(y, C3, seed=1))
    assert m.confusion is C and np.array_equal(C, C3)
    assert m.get_params()["strategy"] == "confusion" and m.max_iter == 20


def test_unfitted_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        UMA().predict(np.zeros((2, 3)))


# ------------------------------------------------ persistence and determinism
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_save_load_round_trip_exactly(tmp_path, fmt):
    X, y = toy(n=400, K=3, d=4, seed=16)
    y_noisy = noisy(y, C3)
    Xin = X if fmt == "dense" else sp.csr_matrix(X)
    m = UMA(confusion=C3, strategy="random", max_iter=30, seed=5).fit(Xin, y_noisy)
    path = m.save(tmp_path / "uma")
    assert path.suffix == ".npz"
    for loaded in (nf.load(path), UMA.load(path)):
        assert type(loaded) is UMA
        assert loaded._learned_attributes() == m._learned_attributes()
        np.testing.assert_array_equal(loaded.W_, m.W_)
        np.testing.assert_array_equal(loaded.predict(Xin), m.predict(Xin))
        np.testing.assert_array_equal(loaded.confusion, m.confusion)
        assert (loaded.n_iter_, loaded.n_updates_, loaded.converged_) == (m.n_iter_, m.n_updates_, m.converged_)
    # the random stream continues identically
    loaded = nf.load(path)
    for model in (m, loaded):
        model.partial_fit(Xin[:200], y_noisy[:200])
        model.partial_fit(Xin[200:], y_noisy[200:])
    np.testing.assert_array_equal(loaded.W_, m.W_)
    with np.load(path, allow_pickle=False) as data:
        assert "__metadata__" in data.files


def test_save_load_string_classes(tmp_path):
    X, y = toy(n=200, K=3, d=3)
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    m = UMA(max_iter=20).fit(X, labels)
    loaded = nf.load(m.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(loaded.predict(X), m.predict(X))


def test_determinism_per_seed():
    X, y = toy(n=500, K=3, d=4, seed=17)
    y_noisy = noisy(y, C3)
    a = UMA(confusion=C3, strategy="random", max_iter=40, seed=1).fit(X, y_noisy)
    b = UMA(confusion=C3, strategy="random", max_iter=40, seed=1).fit(X, y_noisy)
    c = UMA(confusion=C3, strategy="random", max_iter=40, seed=2).fit(X, y_noisy)
    np.testing.assert_array_equal(a.W_, b.W_)
    assert not np.array_equal(a.W_, c.W_)
    np.testing.assert_array_equal(a.fit(X, y_noisy).W_, b.W_)  # refit = same result
    ss = np.random.SeedSequence(9)
    d1 = UMA(strategy="random", max_iter=20, seed=ss).fit(X, y_noisy)
    d2 = UMA(strategy="random", max_iter=20, seed=np.random.SeedSequence(9)).fit(X, y_noisy)
    np.testing.assert_array_equal(d1.W_, d2.W_)


# ---------------------------------------------------------------- bad inputs
def _invalid(constraint):
    if isinstance(constraint, Interval):
        out = [float("nan"), "0.5"]
        if constraint.low is not None:
            out.append(constraint.low - 1.0)
        return out
    if isinstance(constraint, Integer):
        return [1.5, "3", constraint.low - 1]
    if isinstance(constraint, AnySeed):
        return [-1, 1.5, "0"]
    if isinstance(constraint, Options):
        return ["__not_an_option__"]
    if isinstance(constraint, OneOf):
        return [0, 2.5]
    return []


@pytest.mark.parametrize("name", [n for n in UMA._parameter_constraints if n != "confusion"])
def test_bad_parameters_rejected_naming_the_parameter(name):
    X, y = toy(n=50)
    values = _invalid(UMA._parameter_constraints[name])
    assert values
    for value in values:
        with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter of UMA"):
            UMA(**{name: value}).fit(X, y)
        with pytest.raises((ValueError, TypeError), match=f"'{name}' parameter of UMA"):
            UMA(**{name: value}).partial_fit(X, y, classes=[0, 1, 2])


def test_bad_input_rejected_naming_the_row():
    X, y = toy(n=50)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3"):
        UMA().fit(bad, y)
    with pytest.raises(ValueError, match="row 3"):
        UMA().fit(sp.csr_matrix(np.where(np.isnan(bad), np.inf, bad)), y)
    m = UMA(max_iter=5).fit(X, y)
    for call in (m.predict, m.decision_function):
        with pytest.raises(ValueError, match="row 3"):
            call(bad)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.zeros((2, X.shape[1] + 1)))
    with pytest.raises(ValueError, match="2D"):
        m.predict(X[0])
    with pytest.raises(ValueError, match="row 5"):
        UMA(confusion=C3).fit(X, np.where(np.arange(50) == 5, 3, y))
    with pytest.raises(ValueError, match="Unknown label type"):
        UMA().fit(X, np.linspace(0, 1, 50))
    with pytest.raises(ValueError, match="1 class"):
        UMA().fit(X, np.zeros(50, dtype=int))
    with pytest.raises(ValueError):
        UMA().fit(X, y[:-1])


# ------------------------------------------------------------- kernel front end
@pytest.mark.parametrize("method", ["nystroem", "kpca"])
def test_kernel_pipeline_fits_a_nonlinear_problem(method):
    from sklearn.datasets import make_circles

    X, y = make_circles(n_samples=400, factor=0.4, noise=0.05, random_state=0)
    C = np.array([[0.85, 0.1], [0.15, 0.9]])
    y_noisy = noisy(y, C, seed=1)
    linear = UMA(confusion=C, max_iter=200).fit(X, y_noisy)
    model = make_kernel_uma(C, n_components=40, gamma=2.0, method=method, max_iter=200, seed=0).fit(X, y_noisy)
    assert model.named_steps["uma"].confusion is C
    assert error_rate(y, model.predict(X)) < 0.1 < error_rate(y, linear.predict(X))
    with pytest.raises(ValueError, match="'method' parameter of make_kernel_uma"):
        make_kernel_uma(C, method="svd")


# ------------------------------------------------------------- C estimation
class _ReadsCode(ClassifierMixin, BaseEstimator):
    """Predicts the integer stored in feature 0 (a classifier whose confusion we choose)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0].astype(np.int64)


def test_confusion_from_clean_orientation_is_pred_given_true():
    K, per = 3, 20
    y = np.repeat(np.arange(K), per)
    # class 0 predicted 0 (15x), 1 (5x); class 1 always 1; class 2: 2 (10x), 0 (10x)
    code = np.concatenate([[0] * 15 + [1] * 5, [1] * 20, [2] * 10 + [0] * 10])
    X = np.column_stack([code, np.zeros(K * per)]).astype(float)
    C = estimate_confusion_from_clean(X, y, classifier=_ReadsCode(), cv=5, seed=0)
    expected = np.array([[0.75, 0.0, 0.5], [0.25, 1.0, 0.0], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(C, expected, rtol=EXACT_RTOL, atol=EXACT_ATOL)
    np.testing.assert_allclose(confusion_counts(y, code, K) / per, expected, atol=EXACT_ATOL)
    with pytest.raises(ValueError, match="class 2 has no examples"):
        estimate_confusion_from_clean(X[:40], y[:40], classifier=_ReadsCode(), cv=2, n_classes=3)


def test_pseudo_label_protocol_and_default_rough_classifier():
    X, y = toy(n=900, K=3, d=4, margin=0.05, seed=19)
    y_noisy, C, clf = pseudo_label(X[:150], y[:150], X[150:], seed=0)
    assert isinstance(clf, UMA) and y_noisy.shape == (750,)
    np.testing.assert_allclose(C.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    # the estimated C describes the noisy labels' actual confusion roughly
    actual = confusion_counts(y[150:], y_noisy, 3)
    actual /= actual.sum(axis=0)
    assert np.abs(C - actual).max() < 0.15
    UMA(confusion=C, max_iter=50).fit(X[150:], y_noisy)  # usable by UMA as it is


def test_confident_joint_with_perfect_probabilities_is_the_empirical_noise_matrix():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=3000)
    y_noisy = noisy(y, C3, seed=5)
    probs = np.eye(3)[y]  # an oracle: out-of-sample P(true class) = 1
    est = confident_joint_noise_matrix(y_noisy, probs)
    empirical = confusion_counts(y, y_noisy, 3)
    empirical /= empirical.sum(axis=0)
    np.testing.assert_allclose(est, empirical, rtol=EXACT_RTOL, atol=EXACT_ATOL)


def test_confusion_from_noisy_recovers_c_on_separable_data():
    X, y = toy(n=3000, K=3, d=3, margin=0.1, seed=20)
    y_noisy = noisy(y, C3, seed=6)
    C_hat = estimate_confusion_from_noisy(X, y_noisy, seed=0)
    np.testing.assert_allclose(C_hat.sum(axis=0), 1.0, atol=1e-12)
    assert np.abs(C_hat - C3).max() < 0.1


def test_random_confusion_family():
    assert np.array_equal(random_confusion(4, 0.0, seed=0), np.eye(4))
    C, R = random_confusion(4, 1.0, seed=0, return_reference=True)
    np.testing.assert_allclose(C, R, rtol=1e-12)
    offdiag = [np.linalg.norm(c - np.diag(np.diag(c)))
               for c in (random_confusion(4, lam, seed=0) for lam in (0.2, 0.5, 0.9))]
    assert offdiag == sorted(offdiag)


# ----------------------------------------------------------------- toy data
def test_uma_toy_data():
    X, y, W = uma_toy(2000, n_classes=6, n_features=4, margin=0.1, seed=0, return_prototypes=True)
    assert X.shape == (2000, 4) and X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(W, axis=1), 1.0)
    S = X @ W.T
    np.testing.assert_array_equal(y, np.argmax(S, axis=1))
    top2 = np.sort(S, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] >= 0.1).all()
    X2, y2 = uma_toy(2000, n_classes=6, n_features=4, margin=0.1, seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(uma_toy(50, seed=1)[0], uma_toy(50, seed=2)[0])
    # uniform directions: the mean of many points is near the origin
    Xb, _ = uma_toy(20000, n_classes=3, n_features=3, margin=0.0, seed=3)
    assert np.abs(Xb.mean(axis=0)).max() < 0.03
    with pytest.raises(ValueError, match="'margin' parameter of uma_toy"):
        uma_toy(10, margin=2.5)
    with pytest.raises(ValueError, match="too large"):
        uma_toy(10, n_classes=12, n_features=2, margin=1.5, seed=0)
