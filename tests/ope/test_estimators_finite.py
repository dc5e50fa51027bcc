"""The batch estimators under hostile input: an X whose row norms overflow is refused naming the row; a fit
never leaves non-finite weights behind."""

import warnings

import numpy as np
import pytest

import noisyfeedback as nf


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    return X, np.where(X[:, 0] > 0, 1, -1)


@pytest.mark.parametrize("cls", [nf.LinearSVM, nf.EvilTeacherSVM, nf.TeacherSGD])
def test_overflowing_row_norm_is_refused_naming_the_row(cls):
    X, y = data()
    X[5] = 1.7e308
    with pytest.raises(ValueError, match="squared norm of row 5 overflows"):
        cls().fit(X, y)


@pytest.mark.parametrize("cls", [nf.UMA, nf.CorrectedLogisticRegression, nf.LinearSVM, nf.EvilTeacherSVM,
                                 nf.TeacherSGD])
def test_large_but_finite_rows_give_finite_weights(cls):
    X, y = data()
    X[5] = 1e150
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls().fit(X, (y > 0).astype(int) if cls in (nf.UMA, nf.CorrectedLogisticRegression) else y)
    assert np.isfinite(est.decision_function(X)).all()


def test_corrected_logistic_partial_fit_refuses_a_diverging_step():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4)) * 1e3
    y = (X[:, 0] > 0).astype(int)
    est = nf.CorrectedLogisticRegression(learning_rate=1e300)
    with pytest.raises(ValueError, match=r"rows (\d+)\.\.\d+ would make the weights non-finite") as info:
        est.partial_fit(X, y, classes=[0, 1])
    first = int(str(info.value).split("rows ")[1].split("..")[0])
    assert np.isfinite(est.coef_).all() and est.n_iter_ == first // 64  # the batches before it, learned
    ok = nf.CorrectedLogisticRegression().partial_fit(X / 1e3, y, classes=[0, 1])
    assert np.isfinite(ok.coef_).all() and ok.n_iter_ == 4
