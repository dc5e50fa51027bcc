"""Defaults that mean something: the CLI's regression channel is noisy enough for NLMS and ORS to differ as
the paper says (ORS's scaling pays under label noise), and TeacherSGD() learns untuned."""

import re

import numpy as np
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback.cli import app


def cli_mse(learner: str) -> float:
    res = CliRunner().invoke(app, ["simulate", "-l", learner, "--dataset", "ors_synthetic", "--rounds", "5000"],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return float(re.search(r"mse\s+([0-9.]+)", res.output).group(1))


def test_cli_nlms_and_ors_differ_as_the_paper_says():
    nlms, ors = cli_mse("NLMS"), cli_mse("ORS")
    assert ors < 0.9 * nlms, (nlms, ors)


def test_cli_default_noise_is_used_only_when_not_given():
    from noisyfeedback.cli import DEFAULT_FEEDBACK_PARAMS, build_feedback

    ch = build_feedback(None, nf.NLMS, {}, {}, {})
    assert ch.variance == DEFAULT_FEEDBACK_PARAMS["GaussianNoise"]["variance"] > 0
    assert build_feedback(None, nf.NLMS, {}, {}, {"variance": 0.0}).variance == 0.0


def test_teacher_sgd_defaults_learn_breast_cancer():
    """6 of 20 teachers flip all their labels (30 % of the rows): the former defaults (lam=1e-4, eps=1.0) erred on
    0.241 of the test rows (mean of 5 splits), the tuned ones on 0.138."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    from noisyfeedback.datasets.teachers import flip_evil, random_teachers

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = np.where(y == 1, 1, -1)
    rng = np.random.default_rng(0)
    errs = []
    for split in range(5):
        perm = rng.permutation(len(y))
        tr, te = perm[: len(y) // 2], perm[len(y) // 2:]
        t = random_teachers(len(tr), 20, seed=split)
        y_bad, _ = flip_evil(y[tr], t, n_evil=6, seed=split)
        errs.append(np.mean(nf.TeacherSGD().fit(X[tr], y_bad, teachers=t).predict(X[te]) != y[te]))
    assert np.mean(errs) < 0.18, errs


# ------------------------------------------------------------------ r="auto", the default of NLMS and ORS
def test_auto_r_follows_the_stream_large_when_long_and_noisy_small_when_short_and_clean():
    """The best fixed r grows with the horizon and the noise: the leader after 20,000 rounds of channel
    equalization with noise variance up to 5 is a large r (the best fixed r there is about 10^3), after 300
    noise-free rounds of a 5-feature linear stream a small one (r = 10^-2, the smallest member, is best)."""
    from noisyfeedback.datasets.regression import channel_equalization

    X, y = channel_equalization(n_samples=20_000, seed=3)
    for learner in (nf.NLMS(), nf.ORS()):
        nf.simulate(learner, X, y, nf.feedback.GaussianNoise.uniform(5.0, 20_000, seed=4), n_rounds=20_000,
                    seed=0, shuffle=False)
        assert learner.r_ >= 300, learner.r_
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = X @ rng.normal(size=5)
    for learner in (nf.NLMS(), nf.ORS()):
        nf.simulate(learner, X, y, nf.feedback.GaussianNoise(0.0), n_rounds=300, seed=0, shuffle=False)
        assert learner.r_ <= 0.1, learner.r_


def test_auto_with_one_member_is_the_fixed_r_learner_bit_for_bit(monkeypatch):
    from noisyfeedback.datasets.regression import ors_synthetic
    from noisyfeedback.learners.regression import _base

    monkeypatch.setattr(_base, "AUTO_R_GRID", np.array([0.7]))
    X, y = ors_synthetic(n_samples=3_000, seed=1)
    ch = nf.feedback.GaussianNoise.uniform(5.0, 3_000, seed=2)
    for auto, fixed in ((nf.NLMS(), nf.NLMS(r=0.7)),
                        (nf.ORS(), nf.ORS(r=0.7)),
                        (nf.ORS(variance="unknown", budget=1.5, seed=3), nf.ORS(r=0.7, variance="unknown", budget=1.5,
                                                                              seed=3))):
        ta = nf.simulate(auto, X, y, ch, n_rounds=3_000, seed=5)
        tf = nf.simulate(fixed, X, y, ch, n_rounds=3_000, seed=5)
        np.testing.assert_array_equal(ta.curve, tf.curve)
        assert ta.mse == tf.mse and auto.labels_ == fixed.labels_ and auto.r_ == fixed.r_ == 0.7
        np.testing.assert_array_equal(auto.w_, fixed.w_)
        np.testing.assert_array_equal(auto.predict(X[:50]), fixed.predict(X[:50]))


def test_auto_save_load_round_trip(tmp_path):
    from noisyfeedback.datasets.regression import ors_synthetic

    X, y = ors_synthetic(n_samples=2_000, seed=1)
    ch = nf.feedback.GaussianNoise.uniform(5.0, 4_000, seed=2)
    for learner in (nf.NLMS(), nf.ORS(variance="unknown", budget=1.5, seed=3)):
        nf.simulate(learner, X, y, ch, n_rounds=2_000, seed=5)
        loaded = nf.load(learner.save(tmp_path / "m.npz"))
        assert loaded.r == "auto" and loaded.r_ == learner.r_
        np.testing.assert_array_equal(loaded.member_w_, learner.member_w_)
        np.testing.assert_array_equal(loaded.member_loss_, learner.member_loss_)
        np.testing.assert_array_equal(loaded.predict(X), learner.predict(X))
        # learning goes on identically
        ta = nf.simulate(learner, X, y, ch, n_rounds=2_000, seed=6)
        tb = nf.simulate(loaded, X, y, ch, n_rounds=2_000, seed=6)
        assert ta == tb and loaded.r_ == learner.r_
        np.testing.assert_array_equal(loaded.w_, learner.w_)


def test_fixed_r_model_files_hold_no_members_and_switching_r_keeps_the_weights(tmp_path):
    from noisyfeedback.datasets.regression import ors_synthetic

    X, y = ors_synthetic(n_samples=500, seed=1)
    fixed = nf.NLMS(r=10.0).fit(X, y)
    assert not hasattr(fixed, "member_w_") and fixed.r_ == 10.0
    loaded = nf.load(fixed.save(tmp_path / "f.npz"))
    np.testing.assert_array_equal(loaded.w_, fixed.w_)
    w = fixed.w_.copy()
    fixed.r = "auto"  # set on the fitted learner (set_params would discard the state)
    fixed.learn(X[:0], y[:0])  # members start from the weights learned so far
    np.testing.assert_array_equal(fixed.member_w_, np.tile(w, (len(fixed.r_grid_), 1)))
    fixed.r = 3.0
    fixed.learn(X[:1], y[:1])
    assert not hasattr(fixed, "member_w_") and fixed.r_ == 3.0
