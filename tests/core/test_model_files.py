"""nf.load refuses a model file of a fitted learner that lacks a declared learned attribute, naming it
(a missing array would otherwise load and silently reset part of the state at its first use)."""

import json

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from test_learner_checks import problem

import noisyfeedback as nf
from noisyfeedback import registry


def fitted(name, params):
    cls = registry.resolve_learner(name)
    est = cls(**params)
    if issubclass(cls, nf.Learner):
        X, y, ch = problem(est)
        nf.simulate(est, X, y, ch, n_rounds=200, seed=1)
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X, y = X[:150] / X.max(axis=0), y[:150]
        est.fit(X, 2 * y - 1 if cls.__module__.endswith(("svm", "teachers", "teacher_sgd")) else y)
    return est


# the catalogue learners (rounds of candidates, no n_classes) have their own file checks in test_catalogue_checks
CASES = [(n, dict(registry.resolve_learner(n)._test_params)) for n in registry.LEARNERS
         if registry.learner_tags(registry.resolve_learner(n)).family != "catalogue"] + [
    ("SquareCB", {**registry.resolve_learner("SquareCB")._test_params, "oracle": "ridge", "m": 1}),
    ("RCINE", {**registry.resolve_learner("RCINE")._test_params, "warm_start": True}),
    ("CorrectedLogisticRegression", {"Cs": (0.1, 1.0)}),
]


def rewrite(src, dst, drop_array=None, drop_scalar=None, unlisted=False):
    """A copy of a model file without one array or scalar (``unlisted``: and without the list of arrays
    that files carry since it was added, as an older file or an edited one)."""
    with np.load(src, allow_pickle=False) as data:
        payload = {k: data[k] for k in data.files}
    meta = json.loads(str(payload["__metadata__"]))
    if drop_array is not None:
        del payload[f"arr__{drop_array}"]
    if drop_scalar is not None:
        del meta["scalars"][drop_scalar]
    if unlisted:
        del meta["arrays"]
    payload["__metadata__"] = np.array(json.dumps(meta))
    with open(dst, "wb") as fh:
        np.savez(fh, **payload)
    return dst


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_every_saved_attribute_is_required(name, params, tmp_path):
    est = fitted(name, params)
    path = est.save(tmp_path / "m.npz")
    nf.load(path)  # the whole file loads
    with np.load(path, allow_pickle=False) as data:
        arrays = [k[len("arr__"):] for k in data.files if k.startswith("arr__")]
        scalars = list(json.loads(str(data["__metadata__"]))["scalars"])
    optional = type(est)._optional_state
    optional = optional(est.get_params()) if callable(optional) else optional
    checked = 0
    for a in arrays:
        with pytest.raises(ValueError, match=rf"learned array '{a}' is missing"):  # the file lists it
            nf.load(rewrite(path, tmp_path / "bad.npz", drop_array=a))
        checked += 1
        bad = rewrite(path, tmp_path / "bad.npz", drop_array=a, unlisted=True)
        if a in optional or len(arrays) + len(scalars) == 1:  # optional; or nothing left: an unfitted model
            nf.load(bad)
            continue
        with pytest.raises(ValueError, match=rf"learned array '{a}' is missing"):  # declared, not optional
            nf.load(bad)
        checked += 1
    for s in scalars:
        bad = rewrite(path, tmp_path / "bad.npz", drop_scalar=s)
        if s in optional:
            nf.load(bad)
            continue
        with pytest.raises(ValueError, match=rf"learned attribute '{s}' is missing"):
            nf.load(bad)
        checked += 1
    assert checked >= 1


def test_squarecb_ridge_state_missing_is_refused(tmp_path):
    """The hostile report: without ridge_inverse_ the ridge oracle restarted from I/λ and 23 of 50
    predictions changed after the next rounds. Now the file is refused, naming the array."""
    est = fitted("SquareCB", {**nf.SquareCB._test_params, "oracle": "ridge", "m": 1})
    path = est.save(tmp_path / "m.npz")
    for unlisted in (False, True):
        bad = rewrite(path, tmp_path / "bad.npz", drop_array="ridge_inverse_", unlisted=unlisted)
        with pytest.raises(ValueError, match=r"bad\.npz is not a valid noisyfeedback model file: .*'ridge_inverse_'"):
            nf.load(bad)


def test_an_unfitted_learner_file_still_loads(tmp_path):
    for name in ("SquareCB", "WeightedRLS", "UMA"):
        cls = registry.resolve_learner(name)
        est = cls(**cls._test_params)
        loaded = nf.load(est.save(tmp_path / f"{name}.npz"))
        assert type(loaded) is cls
