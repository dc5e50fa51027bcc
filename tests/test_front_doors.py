"""One catalogue (noisyfeedback.registry) behind every front door: the command line, the TOML configs,
the service and ``nf.load`` build the same learners, channels and datasets from the same names.

The walk covers every name of the catalogue; datasets whose files come from a data directory are left
out by the catalogue's own ``needs_data_dir`` trait (tests never read real data files)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback import build, cli, registry
from noisyfeedback.base import Tags

runner = CliRunner()

#: datasets that need no data directory (generated and bundled), by the catalogue's trait
LOCAL = [n for n in registry.dataset_names() if not registry.dataset_info(n)["needs_data_dir"]]
FILES = [n for n in registry.dataset_names() if registry.dataset_info(n)["needs_data_dir"]]


def invoke(*args):
    width = cli.console.width
    cli.console.width = 200
    try:
        return runner.invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "200"})
    finally:
        cli.console.width = width


def _size(name: str) -> list[str]:
    """CLI flags for a small copy of a generated set (bundled sets are small already)."""
    return ["--n-samples", "300"] if registry.dataset_info(name)["kind"] == "generated" else []


#: the learners of (X, y) data (the catalogue learners take candidate rounds: tests/learners/test_catalogue_checks.py)
XY_LEARNERS = [n for n in registry.LEARNERS if registry.learner_tags(registry.resolve_learner(n)).family != "catalogue"]


def _required(cls) -> dict:
    """The parameters a learner cannot be built without (taken from its check-suite values)."""
    import inspect

    sig = inspect.signature(cls.__init__)
    return {k: v for k, v in getattr(cls, "_test_params", {}).items()
            if k in sig.parameters and sig.parameters[k].default is inspect.Parameter.empty and k != "n_classes"}


def _dataset_for(cls) -> str:
    tags = registry.learner_tags(cls)
    by_family = {"regression": "ors_synthetic", "teachers": "breast_cancer", "label_noise": "iris"}
    return by_family.get(tags.family, "synsep")


# ---------------------------------------------------------------- the catalogue
def test_the_catalogue_knows_the_generated_bundled_and_file_sets():
    assert {"synsep", "digits", "uma_toy", "ors_synthetic", "channel_equalization", "speech_substitute"} <= set(LOCAL)
    assert {"mnist", "letter", "rcv1"} <= set(FILES)
    assert registry.dataset_info("ors-synthetic")["target"] == "regression"
    assert registry.dataset_info("digits")["target"] == "classification"


def test_every_learner_declares_its_tags():
    for name, cls in registry.learner_classes().items():
        tags = registry.learner_tags(cls)
        assert isinstance(tags, Tags), name
        assert tags.family in ("bandit", "diluted", "label_noise", "regression", "teachers", "catalogue"), name
        assert tags.online != tags.batch, name  # each runs one way
        assert tags.online == (hasattr(cls, "_simulate_chunk") or hasattr(cls, "_simulate_targets")), name
        if tags.servable:
            assert tags.online and hasattr(cls, "act") and cls.feedback_kind in ("bandit", "set"), name
    assert registry.learners_where(family="teachers") == ["LinearSVM", "EvilTeacherSVM", "TeacherSGD"]


def test_a_learner_without_tags_is_named():
    class Bare:
        pass

    with pytest.raises(TypeError, match="Bare declares no tags"):
        registry.learner_tags(Bare)


def test_one_symmetric_confusion():
    C = nf.feedback.symmetric_confusion(4, 0.3)
    np.testing.assert_allclose(C.sum(axis=0), 1.0)
    assert C[0, 0] == 0.7 and C[1, 0] == 0.3 / 3
    np.testing.assert_array_equal(build.build_channel("confusion", 4, noise=0.3).C, C)
    np.testing.assert_array_equal(build.build_channel("ConfusionNoise", 4, C=0.3).C, C)
    with pytest.raises(ValueError, match="'rate' parameter of symmetric_confusion"):
        nf.feedback.symmetric_confusion(4, 1.5)


# ---------------------------------------------------------------- datasets
@pytest.mark.parametrize("name", LOCAL)
def test_every_dataset_through_the_library_the_cli_and_a_toml_config(name, tmp_path):
    from noisyfeedback.lab import read_results, run_experiment

    info = registry.dataset_info(name)
    kwargs = {"n_samples": 300} if info["kind"] == "generated" else {}
    X, y = nf.datasets.load(name, **kwargs)
    X2, y2 = build.load_dataset(name, **kwargs)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    regression = info["target"] == "regression"
    assert np.issubdtype(y.dtype, np.floating if regression else np.integer)
    learner = "NLMS" if regression else "Perceptron"
    extra = _required(registry.resolve_learner(learner))
    # the command line
    res = invoke("simulate", "-l", learner, "--dataset", name, *_size(name), "--rounds", 200,
                 *[a for k, v in extra.items() for a in ("-p", f"{k}={v}")], "--save-trace", tmp_path / "t.json")
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "t.json").read_text())
    assert record["dataset"] == name and record["n_samples"] == X.shape[0]
    # a TOML config (a dict with its structure)
    cfg = {"n_rounds": 200, "checkpoints": 4, "seeds": [0],
           "datasets": [{"name": name, **({"n_samples": 300} if kwargs else {})}],
           "channels": [{"name": "gaussian" if regression else "full"}],
           "learners": [{"name": learner, "params": extra}]}
    df = read_results(run_experiment(cfg, tmp_path / "run", progress=False))
    assert len(df) == 1 and df["n_samples"].iloc[0] == X.shape[0]
    if not regression:
        assert df["error_rate"].iloc[0] == pytest.approx(record["error_rate"], abs=1)  # both ran
    assert df["dataset_name"].iloc[0] == name


def test_file_datasets_are_refused_with_the_same_words_at_every_door(tmp_path, monkeypatch):
    """A file set that is not there: the library, the CLI and a config name the missing files."""
    from noisyfeedback.lab import ConfigError, validate_config

    monkeypatch.setenv("NOISYFEEDBACK_DATA", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    name = FILES[0]
    with pytest.raises(FileNotFoundError):
        build.load_dataset(name, data_dir=tmp_path)
    res = invoke("simulate", "-l", "perceptron", "--dataset", name, "--data-dir", tmp_path)
    assert res.exit_code == 2 and "Traceback" not in res.output
    with pytest.raises(ConfigError, match=name):
        validate_config({"n_rounds": 10, "datasets": [{"name": name}], "channels": [{"name": "full"}],
                         "learners": [{"name": "Perceptron"}], "data_dir": str(tmp_path)})


# ---------------------------------------------------------------- learners
@pytest.mark.parametrize("name", XY_LEARNERS)
def test_every_learner_through_the_cli_the_service_and_nf_load(name, tmp_path):
    from noisyfeedback.service.engine import ServiceConfig, build_learner

    cls = registry.resolve_learner(name)
    tags = registry.learner_tags(cls)
    extra = _required(cls)
    # the command line
    params = [a for k, v in extra.items() for a in ("-p", f"{k}={v}")]
    if tags.family == "label_noise":
        params += ["-F", "noise=0.2"]  # the default channel, ConfusionNoise, needs its rate (or C)
    dataset = _dataset_for(cls)
    args = ["simulate", "-l", name, "--dataset", dataset, *_size(dataset), *params]
    res = invoke(*args, *(["--rounds", 300] if tags.online else []))
    assert res.exit_code == 0, res.output
    # the service: the servable learners are built, the others refused by name
    cfg = ServiceConfig(db=str(tmp_path / "db.sqlite"), learner=name, n_classes=4, n_features=5,
                        params={**extra, **({"m": 2} if "m" in extra else {})})
    if tags.servable:
        learner = build_learner(cfg)
        assert type(learner) is cls and learner.n_features_ == 5  # of X (W_ may be over a feature map)
    else:
        with pytest.raises(ValueError, match="the service serves: "):
            build_learner(cfg)
    # nf.load: a saved learner is read back through the catalogue
    K = 2 if tags.family == "teachers" else 3
    test_params = {k: v for k, v in getattr(cls, "_test_params", {}).items() if k != "n_classes"}
    model = build.build_learner(cls, K, **{**test_params, **extra})
    X, y = (nf.datasets.ors_synthetic(n_samples=60, n_features=5) if tags.family == "regression"
            else (np.random.default_rng(0).normal(size=(60, 5)), np.arange(60) % K))
    if tags.online:
        fb = nf.feedback.GaussianNoise(0.1) if tags.family == "regression" else (
            nf.feedback.Diluted(model.m) if model.feedback_kind == "set" else
            nf.feedback.NoisyBandit(0, 0) if model.feedback_kind == "bandit" else nf.feedback.FullLabel())
        nf.simulate(model, X, y, feedback=fb, n_rounds=60, seed=0)
    elif tags.family == "teachers":
        model.fit(X, np.where(y == 1, 1, -1), teachers=np.arange(60) % 3)
    else:
        model.fit(X, y)
    back = nf.load(model.save(tmp_path / "m.npz"))
    assert type(back) is cls and back.get_params().keys() == model.get_params().keys()


@pytest.mark.parametrize("name", XY_LEARNERS)
def test_every_learner_in_a_toml_config(name):
    """The online learners plan as sweep tasks; the batch ones are refused by name (the runner's sweep
    simulates; a batch learner's study is a recipe's task kind)."""
    from noisyfeedback.lab import ConfigError, validate_config

    cls = registry.resolve_learner(name)
    tags = registry.learner_tags(cls)
    channel = {"regression": "gaussian", "teachers": "full", "label_noise": "confusion"}.get(
        tags.family, "bandit" if cls.feedback_kind == "bandit" else "dilute" if cls.feedback_kind == "set" else "full")
    extra = _required(cls)
    dataset = _dataset_for(cls)
    cfg = {"n_rounds": 100,
           "datasets": [{"name": dataset, **({} if dataset in ("iris", "breast_cancer") else {"n_samples": 200})}],
           "channels": [{"name": channel, "params": {"m": 2} if channel == "dilute" else
                         {"noise": 0.2} if channel == "confusion" else {}}],
           "learners": [{"name": name, "params": extra}]}
    if tags.online:
        assert validate_config(cfg).n_tasks == 1
    else:
        with pytest.raises(ConfigError, match=f"{cls.__name__} is not an online learner|not supported"):
            validate_config({**cfg, "learners": [{"name": name, "params": extra, "kind": "online"}]})


# ---------------------------------------------------------------- channels
@pytest.mark.parametrize("name", list(registry.channel_names()))
def test_every_channel_name_and_alias_through_the_cli_and_a_toml_config(name, tmp_path):
    from noisyfeedback.lab import validate_config

    cls = registry.resolve_channel(name)
    learner, dataset, fparams, lparams = {
        "FullLabel": ("perceptron", "synsep", [], {}),
        "NoisyBandit": ("banditron", "synsep", [], {}),
        "Diluted": ("mcdbf", "synsep", [], {"m": 2}),
        "ConfusionNoise": ("perceptron", "iris", ["-F", "noise=0.2"], {}),
        "GaussianNoise": ("nlms", "ors_synthetic", [], _required(registry.resolve_learner("NLMS"))),
    }[cls.__name__]
    res = invoke("simulate", "-l", learner, "-f", name, "--dataset", dataset, *_size(dataset), *fparams,
                 *[a for k, v in lparams.items() for a in ("-p", f"{k}={v}")], "--rounds", 200)
    assert res.exit_code == 0, res.output
    assert cls.__name__ in res.output
    cparams = {"noise": 0.2} if cls.__name__ == "ConfusionNoise" else {"m": 2} if cls.__name__ == "Diluted" else {}
    plan = validate_config({"n_rounds": 100,
                            "datasets": [{"name": dataset, **({"n_samples": 200} if dataset != "iris" else {})}],
                            "channels": [{"name": name, "params": cparams}],
                            "learners": [{"name": learner, "params": lparams}]})
    assert plan.n_tasks == 1


# ---------------------------------------------------------------- refused flags
@pytest.mark.parametrize("args, words", [
    (["-l", "squarecb", "--gamma", "0.2"], ["--gamma does not apply to SquareCB"]),
    (["-l", "perceptron", "--rho0", "0.1"], ["--rho0 does not apply to Perceptron nor FullLabel"]),
    (["-l", "banditron", "--teachers", "3"], ["--teachers does not apply to Banditron"]),
    (["-l", "banditron", "--test-fraction", "0.3"], ["--test-fraction does not apply to Banditron"]),
    (["-l", "squarecb", "-p", "gamma=0.2"], ["SquareCB has no parameter 'gamma'"]),
    (["-l", "banditron", "-F", "colour=red"], ["NoisyBandit has no parameter 'colour'"]),
])
def test_cli_refuses_flags_a_learner_does_not_take(args, words):
    res = invoke("simulate", *args, "--dataset", "synsep", "--n-samples", "200", "--rounds", "100")
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    for w in words:
        assert w in res.output, res.output


def test_cli_refuses_rounds_for_a_batch_learner_and_feedback_params_for_teachers():
    res = invoke("simulate", "-l", "uma", "--dataset", "iris", "--rounds", "100")
    assert res.exit_code == 2 and "--rounds does not apply to UMA" in res.output, res.output
    res = invoke("simulate", "-l", "LinearSVM", "--dataset", "breast_cancer", "-F", "noise=0.1")
    assert res.exit_code == 2 and "--feedback-param" in res.output, res.output


def test_the_common_flags_still_default_where_they_apply(tmp_path):
    """Not given, --gamma is 0.1 for the learners that take γ, as before (SquareCB keeps its own), and the
    flip rates are the library's (0: noise-free), the same default at every front door."""
    res = invoke("simulate", "-l", "banditron", "--dataset", "synsep", "--n-samples", "300", "--rounds", "300",
                 "--save-trace", tmp_path / "t.json")
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "t.json").read_text())
    assert record["learner"] == "Banditron(n_classes=9)"  # γ = 0.1: the class default, so repr leaves it out
    assert "NoisyBandit(rho0=0.0, rho1=0.0)" in record["feedback"]  # the flip rates: the library's default, 0
    res = invoke("simulate", "-l", "banditron", "--dataset", "synsep", "--n-samples", "300", "--rounds", "300",
                 "--gamma", "0.3", "--save-trace", tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text())["learner"] == "Banditron(n_classes=9, gamma=0.3)"
    res = invoke("simulate", "-l", "squarecb", "--dataset", "synsep", "--n-samples", "300", "--rounds", "300")
    assert res.exit_code == 0, res.output
