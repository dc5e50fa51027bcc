"""The command line: help, datasets, simulate (errors are one readable line), demo report."""

import json

import matplotlib

matplotlib.use("Agg")

import pytest
from typer.testing import CliRunner

import noisyfeedback as nf
from noisyfeedback import cli
from noisyfeedback.cli import app

runner = CliRunner()

SMALL = ["--dataset", "synsep", "--n-samples", "1000", "--rounds", "5000"]


def invoke(*args):
    # the console is made at import, before COLUMNS is set: give it the width here (under pytest-xdist the
    # temporary paths are long and a narrow console folds the table headers)
    width = cli.console.width
    cli.console.width = 200
    try:
        return runner.invoke(app, list(args), env={"COLUMNS": "200"})
    finally:
        cli.console.width = width


def assert_clean_error(result, *words):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, (ValueError, TypeError)), result.exception
    for w in words:
        assert w in result.output, result.output


def test_help_lists_commands():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("datasets", "simulate", "demo"):
        assert command in result.output
    assert invoke().exit_code in (0, 2)  # no arguments: help


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and nf.__version__ in result.output


def test_simulate_prints_error_rate(tmp_path):
    out = tmp_path / "trace.json"
    result = invoke("simulate", "--learner", "banditron", "--feedback", "noisy-bandit", "--rho0", "0.1",
                    "--rho1", "0.2", *SMALL, "--save-trace", str(out))
    assert result.exit_code == 0, result.output
    assert "error rate" in result.output and "rounds/s" in result.output
    record = json.loads(out.read_text())
    assert record["n_rounds"] == 5000 and record["dataset"] == "synsep"
    assert record["feedback"] == "NoisyBandit(rho0=0.1, rho1=0.2)"
    assert f"{record['error_rate']:.4f}" in result.output


def test_simulate_defaults_and_generic_params():
    result = invoke("simulate", "-l", "perceptron", *SMALL)  # feedback follows the learner: full labels
    assert result.exit_code == 0, result.output
    assert "FullLabel()" in result.output
    result = invoke("simulate", "-l", "banditron", "-f", "noisy-bandit", "--rho0", "0", "--rho1", "0",
                    "-p", "gamma=0.05", "-p", "seed=3", *SMALL)
    assert result.exit_code == 0, result.output
    assert "gamma=0.05" in result.output and "seed=3" in result.output
    assert "NoisyBandit(rho0=0.0, rho1=0.0)" in result.output


def test_bad_rho0_is_one_clean_line():
    result = invoke("simulate", "--learner", "banditron", "--feedback", "noisy-bandit", "--rho0", "1.5", *SMALL)
    assert_clean_error(result, "rho0", "Error")


def test_unknown_learner_and_feedback_list_choices():
    result = invoke("simulate", "--learner", "nope", *SMALL)
    assert_clean_error(result, "unknown learner 'nope'", "Perceptron", "Banditron", "UMA", "NLMS", "TeacherSGD")
    result = invoke("simulate", "--learner", "banditron", "--feedback", "smoke-signals", *SMALL)
    assert_clean_error(result, "unknown feedback channel 'smoke-signals'", "NoisyBandit", "FullLabel",
                       "ConfusionNoise", "GaussianNoise")


def test_parameter_and_compatibility_errors():
    assert_clean_error(invoke("simulate", "-l", "banditron", "-p", "gamma=2", *SMALL), "gamma")
    assert_clean_error(invoke("simulate", "-l", "banditron", "-p", "colour=red", *SMALL),
                       "no parameter 'colour'", "gamma")
    assert_clean_error(invoke("simulate", "-l", "banditron", "-p", "gamma", *SMALL), "NAME=VALUE")
    assert_clean_error(invoke("simulate", "-l", "perceptron", "-f", "noisy-bandit", *SMALL),
                       "--feedback FullLabel or ConfusionNoise")
    assert_clean_error(invoke("simulate", "-l", "perceptron", "--dataset", "ors-synthetic"), "integers")
    assert_clean_error(invoke("simulate", "-l", "teacher-sgd", "--dataset", "iris"), "binary", "3 classes")
    assert_clean_error(invoke("simulate", "-l", "perceptron", "--dataset", "no-such-set"), "no-such-set")


def test_cli_uses_the_one_registry(monkeypatch):
    """A learner added to noisyfeedback.registry is a learner of the CLI (no second list in the CLI)."""
    from noisyfeedback import registry

    assert not hasattr(cli, "LEARNERS") and not hasattr(cli, "FEEDBACKS")
    monkeypatch.setitem(registry.LEARNERS, "MyBanditron", "noisyfeedback.learners.bandit.banditron:Banditron")
    result = invoke("simulate", "-l", "my-banditron", "--gamma", "0.2", *SMALL)
    assert result.exit_code == 0, result.output
    assert "Banditron(n_classes=9, gamma=0.2)" in result.output


def test_simulate_regression_learners_and_gaussian_noise(tmp_path):
    out = tmp_path / "t.json"
    args = ["--dataset", "ors-synthetic", "--n-samples", "2000", "-n", "4000", "-F", "variance=0.5"]
    result = invoke("simulate", "-l", "nlms", "-p", "r=1", *args, "--save-trace", str(out))
    assert result.exit_code == 0, result.output
    assert "GaussianNoise(variance=0.5)" in result.output and "mse" in result.output
    nlms = json.loads(out.read_text())
    assert nlms["mse"] > 0 and f"{nlms['mse']:.6g}" in result.output
    result = invoke("simulate", "-l", "ors", "-p", "r=1", "-p", "scaling=beta", "-p", "beta=4", *args,
                    "--save-trace", str(out))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["mse"] < nlms["mse"]  # ORS shrinks the noisy steps


def test_simulate_uma_under_confusion_noise(tmp_path):
    out = tmp_path / "u.json"
    result = invoke("simulate", "-l", "uma", "--dataset", "iris", "-F", "C=0.3", "--save-trace", str(out))
    assert result.exit_code == 0, result.output
    assert "test error" in result.output and "ConfusionNoise" in result.output
    record = json.loads(out.read_text())
    assert record["n_test"] == 38 and 0.15 < record["label_noise"] < 0.45  # C = 0.3 off the diagonal
    assert record["error_rate"] < 0.3  # far better than the 2/3 of a guess
    # the Perceptron (online) under the same channel
    result = invoke("simulate", "-l", "perceptron", "--dataset", "iris", "-f", "confusion-noise", "-F", "C=0.3",
                    "-n", "2000")
    assert result.exit_code == 0, result.output and "error rate" in result.output


def test_simulate_teacher_learners(tmp_path):
    out = tmp_path / "s.json"
    result = invoke("simulate", "-l", "EvilTeacherSVM", "--dataset", "breast_cancer", "--normalize",
                    "--teachers", "5", "--evil", "0.4", "--save-trace", str(out))
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text())
    assert record["feedback"] == "5 random teachers, 2 evil" and len(record["evil_teachers"]) == 2
    assert 0.2 < record["label_noise"] < 0.6 and record["error_rate"] < 0.3
    assert_clean_error(invoke("simulate", "-l", "LinearSVM", "--dataset", "breast_cancer", "-f", "full-label"),
                       "--teachers")


def test_run_prints_a_summary_table(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'n_rounds = 1000\nseeds = 2\n[[datasets]]\nname = "synsep"\nn_samples = 300\n'
        '[[channels]]\nname = "NoisyBandit"\nparams = { rho0 = 0.2, rho1 = 0.4 }\n'
        '[[learners]]\nname = "Banditron"\nparams = { gamma = [0.05, 0.2] }\n'
    )
    result = invoke("run", str(cfg), "--out", str(tmp_path / "res"))
    assert result.exit_code == 0, result.output
    import pandas as pd

    frame = pd.read_parquet(tmp_path / "res" / "results.parquet")
    for gamma, g in frame.groupby("learner.gamma"):
        e = g["error_rate"]
        assert f"{e.mean():.4g} ± {e.std(ddof=1):.2g}" in result.output, (gamma, result.output)
    assert "Banditron(gamma=0.05)" in result.output and "mean ± std" in result.output


def test_datasets_command_with_fake_catalog(monkeypatch):
    entries = [
        {"name": "synsep", "kind": "generated", "n_samples": 100000, "n_features": 400, "n_classes": 9,
         "available": True, "path": None},
        {"name": "mnist", "kind": "file", "n_samples": 70000, "n_features": 784, "n_classes": 10,
         "available": False, "path": None},
    ]
    seen = []
    monkeypatch.setattr(nf.datasets, "catalog", lambda data_dir=None: seen.append(data_dir) or entries,
                        raising=False)
    result = invoke("datasets", "--data-dir", "/somewhere")
    assert result.exit_code == 0, result.output
    assert "synsep" in result.output and "mnist" in result.output and "70,000" in result.output
    assert str(seen[0]) == "/somewhere"


def test_datasets_command_real_catalog(tmp_path):
    result = invoke("datasets", "--data-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "synsep" in result.output
    if hasattr(nf.datasets, "load"):
        assert "digits" in result.output


def test_demo_writes_report(tmp_path):
    out = tmp_path / "report"
    result = invoke("demo", "--out", str(out), "--rounds", "3000", "--seeds", "2", "--part", "bandit-baselines")
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and (out / "index.md").is_file()
    assert len(list(out.glob("*.png"))) >= 1
    md = (out / "index.md").read_text()
    assert "Perceptron" in md and "± " in md and "NoisyBandit(0.2,0.4)" in md
    assert "index.html" in result.output


def test_demo_parts_are_extensible(tmp_path, monkeypatch):
    from noisyfeedback.lab.report import Section

    def extra(ctx):
        return [Section("Extra part", text=[f"{ctx.rounds} rounds, seeds {ctx.seeds}"])]

    from noisyfeedback.lab import commands

    monkeypatch.setattr(commands, "DEMO_PARTS", [("extra", extra)])
    result = invoke("demo", "--out", str(tmp_path), "--rounds", "10", "--seeds", "2")
    assert result.exit_code == 0, result.output
    assert "10 rounds, seeds [0, 1]" in (tmp_path / "index.md").read_text()


@pytest.mark.parametrize("items, expected", [
    (["gamma=0.05"], {"gamma": 0.05}),
    (["m=3", "diagonal=true", "scaling=opt", "seed=none"], {"m": 3, "diagonal": True, "scaling": "opt", "seed": None}),
])
def test_parse_params(items, expected):
    assert cli.parse_params(items) == expected


def test_run_plot_and_reproduce_commands(tmp_path):
    """`run` a small config, `plot` its results, `reproduce example --quick`: every link of the report resolves."""
    import re

    from typer.testing import CliRunner

    from noisyfeedback.cli import app

    runner = CliRunner()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'n_rounds = 2000\nseeds = 2\n[[datasets]]\nname = "synsep"\nn_samples = 500\n'
        '[[channels]]\nname = "NoisyBandit"\nparams = { rho0 = 0.2, rho1 = 0.4 }\n'
        '[[learners]]\nname = "RCNBF"\nparams = { gamma = [0.05, 0.1] }\nmatch_channel = true\n'
    )
    res = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "res")])
    assert res.exit_code == 0, res.output
    results = tmp_path / "res" / "results.parquet"
    assert results.is_file()
    res = runner.invoke(app, ["plot", str(results), "--out", str(tmp_path / "figs")])
    assert res.exit_code == 0, res.output
    assert list((tmp_path / "figs").rglob("*.png"))
    bad = tmp_path / "bad.toml"
    bad.write_text(cfg.read_text().replace("gamma", "gama"))
    res = runner.invoke(app, ["run", str(bad), "--out", str(tmp_path / "res2")])
    assert res.exit_code == 2 and "learners[0].params" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["reproduce", "example", "--quick", "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "rep" / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"#]+)"', page)
    assert refs and all((tmp_path / "rep" / r).exists() for r in refs if "://" not in r)
    res = runner.invoke(app, ["reproduce", "nosuchpaper", "--quick", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "unknown recipe" in res.output


def test_demo_links_the_quick_reproductions(tmp_path, monkeypatch):
    """The reproductions part runs every recipe but 'example' in quick mode and links each report."""
    import re

    from noisyfeedback.lab import commands as ex  # where the demo's parts look the recipes up

    calls = []

    def fake_reproduce(name, quick, data_dir, out, jobs, progress):
        calls.append((name, quick))
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("<html></html>")
        return out / "index.html"

    monkeypatch.setattr(ex, "recipe_names", lambda: ["example", "paper_a", "paper_b"])
    monkeypatch.setattr(ex, "reproduce", fake_reproduce)
    result = invoke("demo", "--out", str(tmp_path), "--rounds", "10", "--seeds", "1", "--part", "reproductions")
    assert result.exit_code == 0, result.output
    assert calls == [("paper_a", True), ("paper_b", True)]
    page = (tmp_path / "index.html").read_text()
    links = re.findall(r'href="([^"]+)"', page)
    assert "reproduce/paper_a/index.html" in links
    assert all((tmp_path / link).exists() for link in links)
    result = invoke("demo", "--out", str(tmp_path), "--part", "nope")
    assert result.exit_code == 2 and "unknown demo part" in result.output
