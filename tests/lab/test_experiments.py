"""Experiments: configs, grid expansion, resumable runs, backends, selection, plots, reports, recipes."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from noisyfeedback.lab import (
    ConfigError,
    build_plan,
    figures,
    parse_config,
    plot_results,
    read_results,
    recipe_names,
    reproduce,
    run_config,
    run_experiment,
    validate_config,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: columns that depend on the machine and the moment
VOLATILE = ["wall_time", "loop_time", "finished_at"]


def tiny(**over) -> dict:
    """A small valid config: synsep × NoisyBandit × (Banditron, RCNBF) × γ × seeds."""
    cfg = {
        "name": "tiny",
        "n_rounds": 2_000,
        "checkpoints": 10,
        "seeds": [0, 1],
        "datasets": [{"name": "synsep", "n_samples": 300}],
        "channels": [{"name": "NoisyBandit", "params": {"rho0": 0.2, "rho1": 0.4}}],
        "learners": [
            {"name": "Banditron", "params": {"gamma": [0.05, 0.1]}},
            {"name": "RCNBF", "params": {"gamma": 0.1}, "match_channel": True},
        ],
    }
    cfg.update(over)
    return cfg


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=VOLATILE).sort_values("task_id").reset_index(drop=True)


def write_toml(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


# ------------------------------------------------------------------ configs
def test_grid_product_zip_and_channel_references():
    cfg = tiny(
        channels=[
            {"name": "FullLabel"},
            {"name": "noisy-bandit", "params": {"rho0": [0, 0.2], "rho1": [0, 0.4]}, "zip": [["rho0", "rho1"]]},
        ],
        learners=[
            {"name": "perceptron"},
            {"name": "Banditron", "params": {"gamma": [0.05, 0.1]}},
            {"name": "RCNBF", "params": {"gamma": 0.1, "rho0": "$channel.rho0", "rho1": "$channel.rho1"}},
            {"name": "RCNBF", "label": "RCNBF-matched", "params": {"gamma": 0.05}, "match_channel": True,
             "channels": ["NoisyBandit(0.2,0.4)"]},
        ],
    )
    plan = build_plan(parse_config(cfg))
    units = [(u.channel.label, u.learner.name, u.params) for u in plan.units]
    assert units == [
        ("FullLabel", "Perceptron", {}),
        ("NoisyBandit(0,0)", "Banditron", {"gamma": 0.05}),
        ("NoisyBandit(0,0)", "Banditron", {"gamma": 0.1}),
        ("NoisyBandit(0,0)", "RCNBF", {"gamma": 0.1, "rho0": 0.0, "rho1": 0.0}),
        ("NoisyBandit(0.2,0.4)", "Banditron", {"gamma": 0.05}),
        ("NoisyBandit(0.2,0.4)", "Banditron", {"gamma": 0.1}),
        ("NoisyBandit(0.2,0.4)", "RCNBF", {"gamma": 0.1, "rho0": 0.2, "rho1": 0.4}),
        ("NoisyBandit(0.2,0.4)", "RCNBF-matched", {"gamma": 0.05, "rho0": 0.2, "rho1": 0.4}),
    ]
    assert plan.n_tasks == len(units) * 2 == len(plan.tasks())
    # identities are stable hashes of what a task computes: 0 and 0.0 are the same task
    ids = [t["task_id"] for t, _ in plan.tasks()]
    assert len(set(ids)) == len(ids)
    plan2 = build_plan(parse_config(json.loads(json.dumps(cfg).replace('"rho0": [0,', '"rho0": [0.0,'))))
    assert [t["task_id"] for t, _ in plan2.tasks()] == ids


def test_dataset_options_may_be_lists():
    cfg = tiny(datasets=[{"name": "synsep", "n_samples": [200, 300], "seed": [0, 1], "zip": [["n_samples", "seed"]]},
                         {"name": "iris", "n_samples": 100}],
               learners=[{"name": "Banditron", "params": {"gamma": 0.1}}], seeds=[0])
    plan = build_plan(parse_config(cfg))
    assert [u.dataset.label for u in plan.units] == ["synsep [n_samples=200, seed=0]",
                                                     "synsep [n_samples=300, seed=1]", "iris"]


BAD = [
    # (change to the tiny config, key path named, words the message must contain)
    (lambda c: c["learners"][0]["params"].update(gamma=[0.1, 1.5]), "learners[0].params.gamma[1]", "(0, 1)"),
    (lambda c: c["learners"][1]["params"].update(gama=0.1), "learners[1].params.gama", "allowed: gamma, rho0, rho1"),
    (lambda c: c["learners"][1].update(parms={}), "learners[1].parms", "allowed keys here: name"),
    (lambda c: c.update(n_round=3), "n_round", "allowed keys here"),
    (lambda c: c.pop("n_rounds"), "n_rounds", "missing"),
    (lambda c: c.update(n_rounds=0), "n_rounds", "an int >= 1"),
    (lambda c: c["learners"][0].update(name="Bandittron"), "learners[0].name", "allowed: Perceptron, Banditron"),
    (lambda c: c["channels"][0].update(name="Noisy"), "channels[0].name", "NoisyBandit"),
    (lambda c: c["channels"][0]["params"].update(rho0=0.7), "channels[0].params", "rho0 + rho1 < 1"),
    (lambda c: c["channels"][0]["params"].update(rho2=0.1), "channels[0].params.rho2", "allowed: rho0, rho1"),
    (lambda c: c["datasets"][0].update(name="nosuchdata"), "datasets[0].name", "allowed: synsep"),
    (lambda c: c["datasets"][0].update(split="valid"), "datasets[0].split", "'train', 'test', 'all'"),
    (lambda c: c["datasets"][0].update(n_samples=[100, -3]), "datasets[0].n_samples", "item [1]"),
    (lambda c: c["learners"].append({"name": "Perceptron"}), "learners[2]", "FullLabel"),
    (lambda c: c["learners"][1]["params"].update(rho0="$channel.rho3"), "learners[1].params.rho0",
     "has no parameter 'rho3'"),
    (lambda c: c["learners"][1]["params"].update(seed=3), "learners[1].params.seed", "seeds"),
    (lambda c: c["learners"][0].update(kind="batch"), "learners[0].kind", "allowed kinds: online"),
    (lambda c: c["channels"][0].update(zip=[["rho0", "rho1"]]), "channels[0].zip[0]", "must be a list"),
    (lambda c: c.update(checkpoints=[10, 5]), "checkpoints", "increasing"),
    (lambda c: c.update(checkpoints=[10, 5000]), "checkpoints", "beyond n_rounds"),
    (lambda c: (c.pop("seeds"), c.update(selection={"param": "gamma", "mode": "best", "tuning_seeds": [1],
                                                    "report_seeds": [2]})), "selection.mode", "'min' or 'max'"),
    (lambda c: (c.pop("seeds"), c.update(selection={"param": "gamma", "tuning_seeds": [1], "report_seeds": [1]})),
     "selection.report_seeds", "disjoint"),
    (lambda c: (c.pop("seeds"), c.update(selection={"param": "gama", "tuning_seeds": [1], "report_seeds": [2]})),
     "selection.param", "parameters: gamma"),
    (lambda c: (c.pop("seeds"), c.update(selection={"param": "gamma", "metric": "acc", "tuning_seeds": [1],
                                                    "report_seeds": [2]})), "selection.metric",
     "allowed: error_rate"),
    (lambda c: c.update(selection={"param": "gamma", "tuning_seeds": [1], "report_seeds": [2]}), "seeds",
     "report_seeds"),
    (lambda c: c["learners"].append({"name": "RCNBF", "label": "again", "params": {"gamma": 0.1},
                                     "match_channel": True}), "learners[2]", "same tasks as learners[1]"),
]


@pytest.mark.parametrize("change,path,words", BAD, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD)])
def test_acceptance_bad_config_fails_before_any_task_naming_the_key(change, path, words, tmp_path):
    cfg = copy.deepcopy(tiny())
    change(cfg)
    with pytest.raises(ConfigError) as info:
        run_experiment(cfg, tmp_path / "out", progress=False)
    msg = str(info.value)
    assert f"{path}:" in msg, msg
    assert words in msg, msg
    assert not (tmp_path / "out").exists()  # nothing ran, nothing was written


def test_toml_errors_name_the_line_and_the_file(tmp_path):
    bad = write_toml(tmp_path / "bad.toml", """\
        n_rounds = 100
        [[datasets]
        name = "synsep"
        """)
    with pytest.raises(ConfigError, match=r"bad\.toml.*line 2"):
        run_config(bad, out=tmp_path / "out", progress=False)
    typo = write_toml(tmp_path / "typo.toml", """\
        n_rounds = 100
        [[datasets]]
        name = "synsep"
        [[channels]]
        name = "FullLabel"
        [[learners]]
        name = "Perceptron"
        params = { gamma = 0.1 }
        """)
    with pytest.raises(ConfigError, match=r"learners\[0\]\.params\.gamma: unknown parameter of Perceptron"):
        validate_config(typo)


# ---------------------------------------------------------------- running
def test_results_table_rows_and_columns(tmp_path):
    path = run_experiment(tiny(), tmp_path / "out", progress=False)
    df = read_results(path)
    assert len(df) == 6 and df["task_id"].is_unique
    for col in ["task_id", "phase", "dataset", "channel", "learner", "seed", "learner.gamma", "channel.rho0",
                "error_rate", "mistakes", "checkpoints", "curve", "config_hash", "library_version", "wall_time"]:
        assert col in df.columns, col
    assert set(df["phase"]) == {"report"}
    assert df["config_hash"].nunique() == 1
    row = df.iloc[0]
    assert len(row["curve"]) == len(row["checkpoints"]) and row["checkpoints"][-1] == 2_000
    assert row["curve"][-1] == pytest.approx(row["error_rate"])
    rc = df[df["learner"] == "RCNBF"]
    assert (rc["learner.rho0"] == 0.2).all() and (rc["learner.rho1"] == 0.4).all()
    # one atomic file per task, no temp files left
    files = sorted(p.name for p in (tmp_path / "out" / "tasks").iterdir())
    assert files == sorted(f"{t}.parquet" for t in df["task_id"])


def test_results_summary_reads_at_80_columns(tmp_path):
    """The summary `noisyfeedback run` prints: every line within 80 columns, one setting per row with its
    grid values, no column narrower than its numbers."""
    from rich.console import Console

    from noisyfeedback.lab.commands import results_table

    path = run_experiment(tiny(), tmp_path / "out", progress=False)
    console = Console(width=80, record=True, color_system=None)
    console.print(results_table(path))
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    flat = " ".join(text.split())
    assert "RCNBF(gamma=" in flat.replace("│", "").replace("  ", " ")
    # a number is never broken over lines: each row's mean ± std stays on its line
    assert sum(bool(re.search(r"\d ± \d", line)) for line in text.splitlines()) == read_results(path).groupby(
        ["dataset", "channel", "learner", "learner.gamma"], dropna=False).ngroups


def test_rerun_skips_finished_tasks_and_another_config_is_refused(tmp_path):
    out = tmp_path / "out"
    run_experiment(tiny(), out, progress=False)
    tasks = out / "tasks"
    before = {p.name: p.stat().st_mtime_ns for p in tasks.iterdir()}
    # a stale temporary file of a dead process is removed; a finished task is never redone
    (tasks / ".deadbeef.999999999.abc.tmp").write_bytes(b"partial")
    df = read_results(run_experiment(tiny(), out, progress=False))
    after = {p.name: p.stat().st_mtime_ns for p in tasks.iterdir()}
    assert len(df) == len(before) and after == before
    # an edited config would mix its results with another config's: refused, saying how to start fresh
    with pytest.raises(ValueError, match="different config.*To start fresh"):
        run_experiment(tiny(seeds=[0, 1, 2]), out, progress=False)


def test_same_seed_same_data_gives_common_random_numbers(tmp_path):
    cfg = tiny(channels=[{"name": "NoisyBandit", "params": {"rho0": 0.0, "rho1": 0.0}}], seeds=[3],
               learners=[{"name": "Banditron", "params": {"gamma": 0.1}},
                         {"name": "RCNBF", "params": {"gamma": 0.1}, "match_channel": True}])
    df = read_results(run_experiment(cfg, tmp_path / "out", progress=False))
    a, b = df[df["learner"] == "Banditron"].iloc[0], df[df["learner"] == "RCNBF"].iloc[0]
    assert a["task_id"] != b["task_id"]
    np.testing.assert_array_equal(a["curve"], b["curve"])  # RCNBF(ρ=0) is Banditron, same draws


SIGKILL_CONFIG = """\
    name = "killme"
    n_rounds = 40_000
    checkpoints = 20
    seeds = 6
    [[datasets]]
    name = "synsep"
    n_samples = 2_000
    [[channels]]
    name = "NoisyBandit"
    params = { rho0 = [0.0, 0.2], rho1 = [0.0, 0.4] }
    zip = [["rho0", "rho1"]]
    [[learners]]
    name = "Banditron"
    params = { gamma = [0.05, 0.1] }
    [[learners]]
    name = "RCNBF"
    params = { gamma = 0.1 }
    match_channel = true
    """


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_acceptance_sigkill_halfway_then_resume_equals_uninterrupted_run(tmp_path):
    cfg = write_toml(tmp_path / "killme.toml", SIGKILL_CONFIG)
    total = 2 * 3 * 6
    killed = tmp_path / "killed"
    code = f"from noisyfeedback.lab import run_config; run_config({str(cfg)!r}, out={str(killed)!r}, progress=False)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tasks = killed / "tasks"
    deadline = time.monotonic() + 120
    n_done = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if tasks.is_dir():
                n_done = sum(1 for p in tasks.iterdir() if p.suffix == ".parquet")
                if n_done >= total // 4:
                    break
            time.sleep(0.005)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read().decode()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    finished = {p.name: p.stat().st_mtime_ns for p in tasks.iterdir() if p.suffix == ".parquet"}
    assert 0 < len(finished) < total, len(finished)
    assert not (killed / "results.parquet").exists()

    resumed = read_results(run_config(cfg, out=killed, progress=False))
    # finished tasks were skipped, not redone
    assert all((tasks / n).stat().st_mtime_ns == m for n, m in finished.items())
    whole = read_results(run_config(cfg, out=tmp_path / "whole", progress=False))
    assert len(resumed) == total
    pd.testing.assert_frame_equal(comparable(resumed), comparable(whole))


def test_acceptance_serial_joblib_and_dask_give_identical_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg = tiny()
    serial = read_results(run_experiment(cfg, tmp_path / "serial", progress=False))
    procs = read_results(run_experiment(cfg, tmp_path / "j2", jobs=2, progress=False))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask = read_results(run_experiment(cfg, tmp_path / "dask", scheduler=cluster.scheduler_address,
                                           progress=False))
    pd.testing.assert_frame_equal(comparable(serial), comparable(procs))
    pd.testing.assert_frame_equal(comparable(serial), comparable(dask))
    # the table's order is the plan's, whatever order tasks finished in
    assert list(serial["task_id"]) == list(procs["task_id"]) == list(dask["task_id"])


def test_selection_tunes_on_tuning_seeds_and_reports_the_chosen_value(tmp_path):
    cfg = tiny(learners=[{"name": "Banditron", "params": {"gamma": [0.01, 0.1, 0.3]}},
                         {"name": "Perceptron"}],
               channels=[{"name": "NoisyBandit", "params": {"rho0": 0.1, "rho1": 0.1}}, {"name": "FullLabel"}])
    cfg.pop("seeds")
    cfg["selection"] = {"param": "gamma", "tuning_seeds": [100, 101], "report_seeds": [0, 1, 2]}
    out = tmp_path / "out"
    df = read_results(run_experiment(cfg, out, progress=False))
    tuning, report = df[df["phase"] == "tuning"], df[df["phase"] == "report"]
    assert set(tuning["seed"]) == {100, 101} and set(report["seed"]) == {0, 1, 2}
    assert len(tuning) == 3 * 2 and len(report) == 2 * 3  # Banditron (chosen γ) and Perceptron (untuned)
    means = tuning.groupby("learner.gamma")["error_rate"].mean()
    best = float(means.idxmin())
    ban = report[report["learner"] == "Banditron"]
    assert (ban["learner.gamma"] == best).all()
    assert (ban["chosen"] == json.dumps({"gamma": best}, separators=(",", ":"))).all()
    assert set(tuning.loc[tuning["is_chosen"].astype(bool), "learner.gamma"]) == {best}
    assert (report.loc[report["learner"] == "Perceptron", "chosen"] == "").all()
    sel = pd.read_csv(out / "selection.csv")
    assert sel["chosen"].sum() == 1
    table = figures.selection_table(df)
    assert table["chosen"].tolist() == [f"γ={best:g}"]


# ----------------------------------------------------------- plots, reports
def test_plot_results_writes_learning_curves_and_sweeps(tmp_path):
    path = run_experiment(tiny(), tmp_path / "out", progress=False)
    paths = plot_results(path)
    names = sorted(p.name for p in paths)
    assert names == ["curves-synsep-noisybandit-0.2-0.4.png", "sweep-gamma-synsep-noisybandit-0.2-0.4.png"]
    assert all(p.stat().st_size > 1000 and p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    df = read_results(path)
    fig = figures.learning_curve_figures(df)[("synsep", "NoisyBandit(0.2,0.4)")]
    labels = sorted(line.get_label() for line in fig.axes[0].get_lines())
    assert labels == ["Banditron γ=0.05 (mean of 2)", "Banditron γ=0.1 (mean of 2)", "RCNBF (mean of 2)"]
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    assert figures.bar_figure(df).axes
    summary = figures.summary_table(df)
    assert list(summary["seeds"]) == [2, 2, 2]


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("src", "href") and v:
                self.refs.append(v)


def _check_links(index: Path) -> list[str]:
    parser = _Links()
    parser.feed(index.read_text(encoding="utf-8"))
    local = [r for r in parser.refs if not r.startswith(("http://", "https://", "#", "mailto:", "data:"))]
    missing = [r for r in local if not (index.parent / r.split("#")[0]).is_file()]
    assert not missing, f"{index}: unresolved {missing}"
    return local


def test_acceptance_reproduce_example_quick_report_links_resolve(tmp_path):
    assert "example" in recipe_names()
    index = reproduce("example", quick=True, out=tmp_path / "rep", progress=False)
    assert index == tmp_path / "rep" / "index.html"
    local = _check_links(index)
    assert sum(r.endswith(".png") for r in local) >= 2
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "| RCNBF's final online error" in md and "RCNBF < Banditron" in md
    assert (tmp_path / "rep" / "results" / "sweep" / "results.parquet").is_file()
    assert "claims hold" in md and "[The paper](https://arxiv.org/abs/2103.06079)" in md


def test_reproduce_all_writes_an_index_linking_every_recipe(tmp_path, monkeypatch):
    """'all' runs every registered recipe (here: the example and a second, tiny one; the paper
    recipes have tests of their own) and links each report from one index."""
    from noisyfeedback.lab import recipes as rec
    from noisyfeedback.lab.report import Section

    rec._load_builtin()
    monkeypatch.setattr(rec, "_load_builtin", lambda: None)
    monkeypatch.setattr(rec, "RECIPES", {"example": rec.RECIPES["example"]})
    rec.register_paper(rec.Paper(
        name="tiny", title="A tiny recipe", url="https://example.org/tiny", plan=lambda quick, data_dir: {},
        run=lambda engine, plan, data_dir: None, claims=lambda results, ctx: [],
        sections=lambda results, claims, ctx: [Section("Only", text=["quick" if ctx.quick else "full"])]))

    index = reproduce("all", quick=True, out=tmp_path / "all", progress=False)
    local = _check_links(index)
    assert "example/index.html" in local and "tiny/index.html" in local
    md = (tmp_path / "all" / "index.md").read_text(encoding="utf-8")
    assert "Quick mode checks the pipeline" in md and "not the papers' results" in md
    assert re.search(r"\| `example` \| \d of 1 claims hold \|", md) and "| `tiny` | 0 of 0 claims hold |" in md
    assert re.search(r"In all, \d of 1 claims hold", md)
    assert "[All reports](../index.html)" in (tmp_path / "all" / "example" / "index.md").read_text(encoding="utf-8")
    for ref in local:
        _check_links(index.parent / ref)
    with pytest.raises(ValueError, match="allowed: .*example.*all"):
        reproduce("nosuchpaper", quick=True, out=tmp_path / "x")


# ----------------------------------------------------------- the examples
def test_acceptance_example_sweep_with_progress_bar_readable_by_pandas_and_polars(tmp_path, capsys):
    polars = pytest.importorskip("polars")
    plan = validate_config(EXAMPLES / "sweep.toml")
    assert plan.n_tasks >= 40
    path = run_config(EXAMPLES / "sweep.toml", out=tmp_path / "sweep", progress=True)
    err = capsys.readouterr().err
    assert f"{plan.n_tasks}/{plan.n_tasks}" in err and "tasks/s" in err
    pdf = pd.read_parquet(path)
    pldf = polars.read_parquet(path)
    assert len(pdf) == pldf.height == plan.n_tasks
    assert pldf.schema["curve"] == polars.List(polars.Float64)
    assert pldf.schema["checkpoints"] == polars.List(polars.Int64)
    np.testing.assert_array_equal(pldf["error_rate"].to_numpy(), pdf["error_rate"].to_numpy())


def test_example_selection_config_is_valid():
    plan = validate_config(EXAMPLES / "selection.toml")
    assert plan.selection is not None and plan.selection.param == ["gamma"]
    assert plan.n_tasks > 40


def test_schema_example_in_the_docs_is_valid():
    import tomllib

    import noisyfeedback.lab.config as config

    doc = config.__doc__
    text = textwrap.dedent(doc[doc.index('    name = "noisy-bandit-sweep"'):doc.index("Any dataset option")])
    data = tomllib.loads(text)
    data.pop("data_dir")
    plan = validate_config(data)
    assert plan.selection.param == ["gamma"] and plan.n_tasks == 27


def test_literal_matrices_symmetric_noise_and_required_parameters(tmp_path):
    C = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]
    cfg = tiny(datasets=[{"name": "iris"}], seeds=[0],
               channels=[{"name": "ConfusionNoise", "params": {"C": {"value": C}}},
                         {"name": "confusion", "params": {"noise": [0.1, 0.2]}}],
               learners=[{"name": "Perceptron"}])
    df = read_results(run_experiment(cfg, tmp_path / "out", progress=False))
    assert list(df["channel"]) == ["ConfusionNoise", "ConfusionNoise(0.1)", "ConfusionNoise(0.2)"]
    assert json.loads(df["channel_params"].iloc[0]) == {"C": C}
    bad = tiny(datasets=[{"name": "iris"}], channels=[{"name": "ConfusionNoise", "params": {"C": {"value": C[:2]}}}],
               learners=[{"name": "Perceptron"}])
    with pytest.raises(ConfigError, match=r"channels\[0\]\.params"):
        validate_config(bad)
    # every learner builds from its defaults now (MCSLP's m = 2): nothing is required beyond the data's K
    plan = validate_config(tiny(channels=["full"], learners=[{"name": "MCSLP"}]))
    assert plan.units and all(u.learner.cls.__name__ == "MCSLP" for u in plan.units)
