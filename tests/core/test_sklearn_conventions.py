"""scikit-learn conventions: every exported learner builds from its defaults (the multiclass learners need only
``n_classes``) and survives ``sklearn.base.clone``; the scikit-learn-style estimators pass ``check_estimator``."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import noisyfeedback as nf

EXPORTED = [getattr(nf, n) for n in nf.__all__ if inspect.isclass(getattr(nf, n))
            and hasattr(getattr(nf, n), "get_params") and getattr(nf, n) is not nf.Learner]


def required(cls):
    return [p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.default is inspect.Parameter.empty]


@pytest.mark.parametrize("cls", EXPORTED, ids=lambda c: c.__name__)
def test_builds_from_defaults_and_survives_clone(cls):
    # n_classes is the problem's number of labels, not a setting (every multiclass learner takes it)
    assert set(required(cls)) <= {"n_classes"}, f"{cls.__name__} requires {required(cls)}"
    est = cls(n_classes=5) if required(cls) else cls()
    twin = clone(est)
    assert type(twin) is cls and twin is not est
    assert repr(twin) == repr(est)
    for k, v in est.get_params().items():
        w = twin.get_params()[k]
        assert np.array_equal(v, w) if isinstance(v, np.ndarray) else v == w


def test_the_regressors_defaults_learn():
    """NLMS(), ORS() and WeightedRLS() untuned: far better than predicting 0 on a noisy linear stream."""
    from noisyfeedback.datasets.regression import ors_synthetic

    X, y = ors_synthetic(n_samples=5000, seed=0)
    noise = nf.feedback.GaussianNoise.uniform(5.0, n_rounds=5000, seed=1)
    for est in (nf.NLMS(), nf.ORS(), nf.WeightedRLS()):
        t = nf.simulate(est, X, y, noise, n_rounds=5000, seed=2)
        assert t.mse < 0.5 * np.mean(y ** 2), est


def test_regressor_predict_before_fit_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    for est in (nf.NLMS(), nf.ORS(), nf.WeightedRLS()):
        with pytest.raises(NotFittedError):
            est.predict(np.ones((2, 3)))
        est.fit(np.eye(3), np.ones(3), **({"variance": 1.0} if isinstance(est, nf.ORS) else {}))
        assert est.n_features_in_ == 3 and est.predict(np.ones((2, 3))).shape == (2,)
        assert est.score(np.eye(3), np.ones(3)) <= 1.0


# scikit-learn's own suite, on instances sized so that the whole file runs in well under a minute
ESTIMATORS = [
    nf.WeightedRLS(),
    nf.NLMS(),
    nf.ORS(variance="unknown"),  # the default reads the known variance, which fit(X, y) does not have
    nf.CorrectedLogisticRegression(max_iter=100, n_folds=2),
    nf.UMA(max_iter=50),
    nf.LinearSVM(),
    nf.EvilTeacherSVM(),
    nf.TeacherSGD(),
]


@parametrize_with_checks(ESTIMATORS)
def test_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
