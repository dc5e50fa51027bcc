"""CorrectedLogisticRegression (Patrini et al. 2017): loss/gradient, C = I, validation, estimation."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

import noisyfeedback as nf
from noisyfeedback.learners.label_noise.corrected_logistic import corrected_loss_grad
from noisyfeedback.noise.confusion import estimate_confusion


def _sym(K, rho):
    C = np.full((K, K), rho / (K - 1))
    np.fill_diagonal(C, 1 - rho)
    return C


def _pair(K, rho):
    C = (1 - rho) * np.eye(K)
    for q in range(K):
        C[(q + 1) % K, q] = rho
    return C


@pytest.mark.parametrize("correction", ["forward", "backward", "none"])
def test_loss_and_gradient_match_finite_differences(correction):
    rng = np.random.default_rng(0)
    n, d, K = 30, 4, 3
    X = rng.normal(size=(n, d))
    yi = rng.integers(0, K, n)
    C = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.1], [0.1, 0.2, 0.8]])
    logC = np.log(C)[yi] if correction == "forward" else None
    A = np.linalg.inv(C)[:, yi].T.copy() if correction == "backward" else None
    sw = rng.uniform(0.5, 2, n)
    theta = rng.normal(size=K * d + K)
    f, g = corrected_loss_grad(theta, X, yi, K, logC, A, sw, 0.7, True)
    # the loss by its definition
    W, b = theta[:K * d].reshape(K, d), theta[K * d:]
    Z = X @ W.T + b
    P = np.exp(Z) / np.exp(Z).sum(1, keepdims=True)
    if correction == "forward":
        li = -np.log((P @ C.T)[np.arange(n), yi])
    elif correction == "backward":
        li = -(np.log(P) * np.linalg.inv(C)[:, yi].T).sum(1)
    else:
        li = -np.log(P[np.arange(n), yi])
    f_def = (sw @ li + 0.5 * (W * W).sum() / 0.7) / sw.sum()
    assert f == pytest.approx(f_def, rel=1e-12)
    eps = 1e-6
    num = np.array([(corrected_loss_grad(theta + eps * e, X, yi, K, logC, A, sw, 0.7, True)[0]
                     - corrected_loss_grad(theta - eps * e, X, yi, K, logC, A, sw, 0.7, True)[0]) / (2 * eps)
                    for e in np.eye(theta.size)])
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("correction", ["forward", "backward", "none"])
def test_centred_loss_is_the_same_objective_with_matching_gradient(correction):
    """fit() minimises in the centred variables (W, b' = b + Wμ): the same objective value, and the
    gradient of that reparametrisation against finite differences (dense and CSR)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    n, d, K = 40, 5, 3
    X = rng.normal(loc=3.0, size=(n, d)) * (rng.uniform(size=(n, d)) < 0.6)
    yi = rng.integers(0, K, n)
    C = np.array([[0.7, 0.2, 0.1], [0.2, 0.6, 0.1], [0.1, 0.2, 0.8]])
    logC = np.log(C)[yi] if correction == "forward" else None
    A = np.linalg.inv(C)[:, yi].T.copy() if correction == "backward" else None
    sw = rng.uniform(0.5, 2, n)
    mu = X.T @ sw / sw.sum()
    theta = rng.normal(size=K * d + K)
    shifted = theta.copy()
    shifted[K * d:] += theta[:K * d].reshape(K, d) @ mu  # b' = b + Wμ: the same model
    f0, _ = corrected_loss_grad(theta, X, yi, K, logC, A, sw, 0.7, True)
    for Xa in (X, sp.csr_matrix(X)):
        f, g = corrected_loss_grad(shifted, Xa, yi, K, logC, A, sw, 0.7, True, mu)
        assert f == pytest.approx(f0, rel=1e-12)
        eps = 1e-6
        num = np.array([(corrected_loss_grad(shifted + eps * e, Xa, yi, K, logC, A, sw, 0.7, True, mu)[0]
                         - corrected_loss_grad(shifted - eps * e, Xa, yi, K, logC, A, sw, 0.7, True, mu)[0])
                        / (2 * eps) for e in np.eye(theta.size)])
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)


def test_identity_equals_plain_multinomial_logistic_regression():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:400])
    y = y[:400]
    ours = nf.CorrectedLogisticRegression(confusion=np.eye(10), C=0.5, tol=1e-10, max_iter=2000).fit(X, y)
    ref = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=2e-4)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=2e-4)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    # the forward code path with C = I (not short-cut) gives the same model
    none = nf.CorrectedLogisticRegression(confusion=None, C=0.5, tol=1e-10, max_iter=2000).fit(X, y)
    np.testing.assert_allclose(none.coef_, ours.coef_, atol=1e-6)


def test_uncentred_features_give_scikit_learns_model():
    """Raw digits (pixels 0..16, far from centred): the implicit centring of fit() must hand back the
    intercept of the ORIGINAL features, and the warm starts of the Cs path must start where they say."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:400] / 4.0 + 1.0, y[:400]
    ours = nf.CorrectedLogisticRegression(confusion=np.eye(10), C=0.05, tol=1e-10, max_iter=3000).fit(X, y)
    ref = LogisticRegression(C=0.05, tol=1e-10, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    np.testing.assert_allclose(ours.intercept_ - ours.intercept_.mean(), ref.intercept_ - ref.intercept_.mean(),
                               atol=1e-3)
    path = nf.CorrectedLogisticRegression(confusion=np.eye(10), Cs=[0.05], tol=1e-10, max_iter=3000).fit(X, y)
    np.testing.assert_allclose(path.predict_proba(X), ref.predict_proba(X), atol=1e-5)


def _noisy_digits(C, seed=0):
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.default_rng(seed)
    p = rng.permutation(len(y))
    tr, te = p[:1200], p[1200:]
    yn = nf.feedback.ConfusionNoise(C).respond(y[tr], rng=np.random.default_rng(seed + 1))
    return X[tr], yn, X[te], y[te]


def test_forward_correction_beats_plain_under_pair_flips():
    C = _pair(10, 0.4)
    Xtr, yn, Xte, yte = _noisy_digits(C)
    fwd = nf.CorrectedLogisticRegression(confusion=C, C=0.1, max_iter=200).fit(Xtr, yn)
    plain = nf.CorrectedLogisticRegression(confusion=None, C=0.1, max_iter=200).fit(Xtr, yn)
    e_f, e_p = np.mean(fwd.predict(Xte) != yte), np.mean(plain.predict(Xte) != yte)
    assert e_f < 0.1 and e_p > 0.3, (e_f, e_p)
    assert fwd.condition_number_ == pytest.approx(np.linalg.cond(C))
    # clean-class probabilities: rows sum to 1, argmax is predict
    P = fwd.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(1), 1.0)
    np.testing.assert_array_equal(fwd.classes_[P.argmax(1)], fwd.predict(Xte))


def test_cs_selection_and_estimate():
    C = _sym(10, 0.2)
    Xtr, yn, Xte, yte = _noisy_digits(C, seed=3)
    Xtr, yn = Xtr[:600], yn[:600]
    m = nf.CorrectedLogisticRegression(confusion=C, Cs=[0.03, 30.0], n_folds=2, max_iter=100, seed=0).fit(Xtr, yn)
    assert m.C_ == 0.03 and m.cv_losses_.shape == (2,)
    assert m.C_ != 30.0  # barely regularised overfits the noise
    est = nf.CorrectedLogisticRegression(confusion="estimate", C=0.1, n_folds=2, max_iter=100, seed=0).fit(Xtr, yn)
    np.testing.assert_allclose(est.confusion_.sum(0), 1.0)
    assert np.abs(est.confusion_ - C).max() < 0.25
    assert np.mean(est.predict(Xte) != yte) < 0.15


def test_em_refinement_brings_the_estimate_near_the_realised_noise():
    """UMA toy (separable), pair flips 0.2: the confident joint alone is off by > 0.1 on some entry; one EM
    step of ``refine`` brings C within 0.07 of the truth (the realised labels' own confusion is 0.02 off)."""
    from noisyfeedback.datasets.uma_toy import uma_toy

    X, y = uma_toy(3000, n_classes=6, n_features=8, margin=0.05, seed=5)
    C = _pair(6, 0.2)
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng(6))
    kw = dict(confusion="estimate", C=1.0, n_folds=3, proba_model="linear", seed=0)
    raw = nf.CorrectedLogisticRegression(refine=0, **kw).fit(X, yn)
    em = nf.CorrectedLogisticRegression(refine=1, **kw).fit(X, yn)
    err_raw, err_em = np.abs(raw.confusion_ - C).max(), np.abs(em.confusion_ - C).max()
    assert err_em < 0.07 and err_em < err_raw
    np.testing.assert_allclose(em.confusion_.sum(0), 1.0)
    assert em.estimate_C_ == 1.0


def _sectors(n, seed):
    """Three classes on six angular sectors of the plane (class = sector mod 3): no linear model fits them."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (np.floor((np.arctan2(X[:, 1], X[:, 0]) + np.pi) / (np.pi / 3)).astype(int) % 6) % 3
    return X, y


def test_knn_estimate_where_the_linear_model_cannot_fit():
    """Sectors, symmetric noise 0.2: the linear model reads its own errors as noise (C off by > 0.15); the
    neighbours' shares give C within 0.06 (the realised labels' own confusion is about 0.02 off). On the
    separable toy it is the other way round (why proba_model is the user's choice)."""
    from noisyfeedback.datasets.uma_toy import uma_toy

    kw = dict(confusion="estimate", n_folds=3, seed=0)

    def errors(X, yn, C):
        return {pm: np.abs(nf.CorrectedLogisticRegression(proba_model=pm, **kw).fit(X, yn).confusion_ - C).max()
                for pm in ("linear", "knn")}

    X, y = _sectors(3000, 1)
    C = np.full((3, 3), 0.1)
    np.fill_diagonal(C, 0.8)
    errs = errors(X, nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng(2)), C)
    assert errs["linear"] > 0.15 and errs["knn"] < 0.06, errs
    X, y = uma_toy(3000, n_classes=6, n_features=8, margin=0.05, seed=5)
    C = _pair(6, 0.2)
    errs = errors(X, nf.feedback.ConfusionNoise(C).respond(y, rng=np.random.default_rng(6)), C)
    assert errs["linear"] < 0.05 < errs["knn"], errs


def test_estimate_confusion_recovers_a_known_matrix_from_exact_probabilities():
    rng = np.random.default_rng(0)
    K, n = 4, 4000
    C = _pair(K, 0.3)
    y = rng.integers(0, K, n)
    clean = np.eye(K)[y] * 0.98 + 0.02 / K  # nearly certain clean posteriors
    noisy_post = clean @ C.T
    yn = nf.feedback.ConfusionNoise(C).respond(y, rng=rng)
    for method in ("confident_joint", "anchor"):
        Ch = estimate_confusion(noisy_post, yn, method)
        assert np.abs(Ch - C).max() < 0.06, (method, Ch)


def test_any_labels_and_binary_decision_function():
    X, y = load_digits(n_class=2, return_X_y=True)
    labels = np.where(y == 0, "cat", "dog")
    m = nf.CorrectedLogisticRegression(confusion=np.array([[0.9, 0.2], [0.1, 0.8]]), C=0.1).fit(X, labels)
    assert list(m.classes_) == ["cat", "dog"]
    assert m.decision_function(X).shape == (len(y),)
    assert m.score(X, labels) > 0.95


def test_refuses_bad_confusion():
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20) % 2
    with pytest.raises(ValueError, match="columns summing to 1"):
        nf.CorrectedLogisticRegression(confusion=[[0.9, 0.2], [0.2, 0.8]]).fit(X, y)
    with pytest.raises(ValueError, match="condition number"):
        nf.CorrectedLogisticRegression(confusion=[[0.5, 0.5], [0.5, 0.5]]).fit(X, y)
    with pytest.raises(ValueError, match="3 x 3"):
        nf.CorrectedLogisticRegression(confusion=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="'C' parameter"):
        nf.CorrectedLogisticRegression(C=-1).fit(X, y)


def test_save_load_clone_and_partial_fit(tmp_path):
    C = _sym(10, 0.2)
    Xtr, yn, Xte, yte = _noisy_digits(C)
    m = nf.CorrectedLogisticRegression(confusion=C, C=0.1).fit(Xtr, yn)
    p = m.save(tmp_path / "m.npz")
    m2 = nf.load(p)
    np.testing.assert_array_equal(m2.predict_proba(Xte), m.predict_proba(Xte))
    assert m.clone().get_params()["C"] == 0.1 and not hasattr(m.clone(), "coef_")
    s = nf.CorrectedLogisticRegression(confusion=C, C=0.1)
    for _ in range(3):
        for a in range(0, 1200, 300):
            s.partial_fit(Xtr[a:a + 300], yn[a:a + 300], classes=np.arange(10))
    assert np.mean(s.predict(Xte) != yte) < 0.2


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    res = check_estimator(nf.CorrectedLogisticRegression(max_iter=50), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in res if r["status"] == "failed"]
    assert not failed, failed
