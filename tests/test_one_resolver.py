"""One resolver: every learner, channel, dataset and stream name, in every spelling (case, '-', '_',
spaces) and the catalogue's aliases, means the same class at every front door — the command line, a TOML
config, the VW commands, the service and ``nf.load`` — or is refused there with the same words."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback import build, cli, registry
from noisyfeedback.cli import vw as cli_vw
from noisyfeedback.datasets import registry as dataset_registry
from noisyfeedback.lab import ConfigError, plan, validate_config
from noisyfeedback.service.catalogue_models import catalogue_class as _catalogue_class
from noisyfeedback.service.learner import make_learner, servable_learners

runner = CliRunner()
UNKNOWN = ["nope", "banditorn", "Perceptrons", ""]


def spellings(name: str) -> list[str]:
    """A name as users write it: lower and upper case, '-', '_' and a space inside, padded with spaces."""
    mid = max(1, len(name) // 2)
    return [name, name.lower(), name.upper(), f"{name[:mid]}-{name[mid:]}", f"{name[:mid]}_{name[mid:]}",
            f"{name[:mid]} {name[mid:]}", f" {name} "]


def invoke(*args):
    width = cli.console.width
    cli.console.width = 400
    try:
        return runner.invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "400"})
    finally:
        cli.console.width = width


LEARNER_SPELLINGS = [(n, s) for n in registry.LEARNERS for s in spellings(n)]


@pytest.mark.parametrize("name, spelling", LEARNER_SPELLINGS)
def test_a_learner_name_means_one_class_everywhere(name, spelling):
    cls = build.learner_class(spelling)
    assert cls.__name__ == name
    assert plan.resolve_learner(spelling) is cls  # TOML configs
    # the command line: the learner is accepted (the run stops at the dataset, which does not exist)
    res = invoke("simulate", "-l", spelling, "--dataset", "no-such-data")
    assert res.exit_code == 2 and "unknown learner" not in res.output, res.output
    assert "Unknown dataset 'no-such-data'" in res.output or (  # a catalogue learner runs on candidate streams
        registry.learner_tags(cls).family == "catalogue" and f"feedback channel for {name}" in res.output), res.output
    # the service: a servable learner is built as that class, any other refused by its class name
    if name in servable_learners():
        assert type(make_learner(spelling, 3, 4, {})) is cls
    else:
        with pytest.raises(ValueError, match=f"--learner {cls.__name__} "):
            make_learner(spelling, 3, 4, {})
    # the VW commands and the service's action-feature form: one catalogue twin, or one refusal
    try:
        twin = build.catalogue_learner_class(spelling)
    except build.UnknownName:
        with pytest.raises(ValueError, match="must be a catalogue learner"):
            cli_vw._learner(spelling, {}, 0.0, 0.0)
        with pytest.raises(ValueError, match="no action-feature form"):
            _catalogue_class(spelling)
    else:
        assert type(cli_vw._learner(spelling, {}, 0.0, 0.0)) is twin and _catalogue_class(spelling) is twin


@pytest.mark.parametrize("name", list(registry.LEARNERS))
def test_nf_load_reads_the_class_the_catalogue_names(name, tmp_path):
    from noisyfeedback.checks import interact, make, problem

    learner = make(registry.resolve_learner(name))
    interact(learner, *problem(learner, n=20))
    assert type(nf.load(learner.save(tmp_path / "m.npz"))) is type(learner)


@pytest.mark.parametrize("spelling", UNKNOWN)
def test_an_unknown_learner_is_refused_with_the_same_words_everywhere(spelling):
    with pytest.raises(build.UnknownName) as info:
        build.learner_class(spelling)
    words = str(info.value)
    assert words.startswith(f"unknown learner {spelling!r}")
    if spelling == "banditorn":
        assert info.value.suggestions == ("Banditron",) and "did you mean 'Banditron'?" in words
    res = invoke("simulate", "-l", spelling, "--dataset", "iris")
    assert res.exit_code == 2 and " ".join(words.split()) in " ".join(res.output.split()), res.output
    with pytest.raises(ConfigError) as cfg_err:
        validate_config({"n_rounds": 10, "datasets": ["iris"], "channels": ["full"], "learners": [spelling]})
    assert words in str(cfg_err.value)
    with pytest.raises(ValueError, match="not a registered learner"):
        make_learner(spelling, 3, 4, {})
    with pytest.raises(ValueError, match="must be a catalogue learner"):
        cli_vw._learner(spelling, {}, 0.0, 0.0)


CHANNEL_SPELLINGS = [(n, s) for n in registry.channel_names() for s in spellings(n)]


@pytest.mark.parametrize("name, spelling", CHANNEL_SPELLINGS)
def test_a_channel_name_means_one_class_everywhere(name, spelling):
    cls = build.channel_class(spelling)
    assert cls.__name__ == registry.channel_names()[name]
    assert plan.resolve_channel(spelling).cls is cls  # TOML configs
    res = invoke("simulate", "-l", "perceptron", "-f", spelling, "--dataset", "no-such-data")
    assert res.exit_code == 2 and "no-such-data" in res.output and "unknown feedback channel" not in res.output


@pytest.mark.parametrize("spelling", UNKNOWN)
def test_an_unknown_channel_is_refused_with_the_same_words_everywhere(spelling):
    with pytest.raises(build.UnknownName) as info:
        build.channel_class(spelling)
    words = " ".join(str(info.value).split())
    res = invoke("simulate", "-l", "perceptron", "-f", spelling, "--dataset", "iris")
    assert res.exit_code == 2 and words in " ".join(res.output.split()), res.output
    with pytest.raises(ConfigError) as cfg_err:
        validate_config({"n_rounds": 10, "datasets": ["iris"], "channels": [spelling], "learners": ["Perceptron"]})
    assert str(info.value) in str(cfg_err.value)


DATASET_SPELLINGS = [(row["name"], s) for row in nf.datasets.catalog()
                     for n in (row["name"], *row["aliases"]) for s in spellings(n)]


@pytest.mark.parametrize("name, spelling", DATASET_SPELLINGS)
def test_a_dataset_name_means_one_dataset_everywhere(name, spelling):
    assert registry.dataset_info(spelling)["name"] == name  # the catalogue (command line, service)
    assert dataset_registry._spec(spelling).name == name  # nf.datasets.load
    assert plan._catalog()[build.key(spelling)]["name"] == name  # TOML configs
    if not registry.dataset_info(name)["needs_data_dir"] and registry.dataset_info(name)["kind"] == "bundled":
        X, y = nf.datasets.load(spelling)
        X2, y2 = nf.datasets.load(name)
        assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_breast_cancer_as_a_person_writes_it():
    assert registry.dataset_info("Breast Cancer")["name"] == "breast_cancer"
    assert nf.datasets.load("Breast Cancer")[0].shape == (569, 30)


@pytest.mark.parametrize("spelling", ["nope", "brest cancer"])
def test_an_unknown_dataset_is_refused_everywhere(spelling):
    with pytest.raises(build.UnknownName) as lib:
        nf.datasets.load(spelling)
    with pytest.raises(build.UnknownName) as cat:
        registry.dataset_info(spelling)
    assert lib.value.suggestions == cat.value.suggestions
    if spelling == "brest cancer":
        assert lib.value.suggestions == ("breast_cancer",)
    res = invoke("simulate", "-l", "perceptron", "--dataset", spelling)
    assert res.exit_code == 2 and f"Unknown dataset {spelling!r}" in res.output
    with pytest.raises(ConfigError, match="unknown dataset"):
        validate_config({"n_rounds": 10, "datasets": [spelling], "channels": ["full"], "learners": ["Perceptron"]})


@pytest.mark.parametrize("name, spelling", [(n, s) for n in registry.STREAMS for s in spellings(n)])
def test_a_stream_name_means_one_function(name, spelling):
    assert build.stream_function(spelling) is registry.resolve_stream(name)
    with pytest.raises(build.UnknownName):
        build.stream_function(spelling + "x")
