"""The engine runs a plan that is a plain list of tasks: registered kinds, rows in task order, resume."""

from __future__ import annotations

import pandas as pd
import pytest

from noisyfeedback.lab import Engine, make_task, run_experiment, task_kind


@task_kind("test.square")
def _square(task: dict) -> list[dict]:
    return [{"x": task["x"], "power": p, "value": task["x"] ** p} for p in (1, 2)]


def test_a_plain_list_of_tasks_runs_in_order_and_resumes(tmp_path):
    tasks = [make_task("test.square", x=x) for x in (3, 1, 2)]
    path = run_experiment(tasks, tmp_path / "out", progress=False)
    df = pd.read_parquet(path)
    assert df["x"].tolist() == [3, 3, 1, 1, 2, 2] and df["value"].tolist() == [3, 9, 1, 1, 2, 4]
    assert df["task_id"].nunique() == 3
    with Engine(tmp_path / "out", progress=False) as eng:
        again = eng.rows(tasks + [make_task("test.square", x=5)], "again")
    assert eng.resumed == 3 and eng.ran == 1
    assert [r["value"] for r in again] == [3, 9, 1, 1, 2, 4, 5, 25]


def test_task_identity_ignores_where_things_are_and_unknown_kinds_fail(tmp_path):
    assert make_task("test.square", x=1, _data_dir="/a")["task_id"] == make_task("test.square", x=1)["task_id"]
    assert make_task("test.square", x=1)["task_id"] != make_task("test.square", x=2)["task_id"]
    with pytest.raises(ValueError, match="unknown task kind 'test.nosuch'"):
        run_experiment([make_task("test.nosuch", x=1)], tmp_path / "bad", progress=False)


@task_kind("test.papers_loaded")
def _papers_loaded(task: dict) -> list[dict]:
    import sys

    return [{"loaded": sorted(m for m in sys.modules if m.startswith("noisyfeedback.lab.papers"))}]


def test_a_task_names_its_function_and_a_fresh_worker_imports_only_that_module(tmp_path):
    """No worker imports every paper: the task carries its function's import path."""
    import json
    import os
    import subprocess
    import sys

    task = make_task("test.papers_loaded")
    assert task["_func"] == f"{__name__}:_papers_loaded"
    assert task["task_id"] == make_task("test.papers_loaded", _func="elsewhere:f")["task_id"]  # not its identity
    code = ("import json, sys; from noisyfeedback.lab.engine import execute; "
            "row = execute(json.loads(sys.argv[1])); print(row['rows'])")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(task)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == [{"loaded": []}]


def test_a_sweep_runs_on_the_recipe_engine_not_a_second_one(tmp_path, monkeypatch):
    from noisyfeedback.lab import engine as engine_module
    from noisyfeedback.lab import sweep

    made = []
    original = engine_module.make_backend
    monkeypatch.setattr(engine_module, "make_backend", lambda *a, **k: made.append(1) or original(*a, **k))
    cfg = {"n_rounds": 200, "checkpoints": 4, "seeds": [0, 1], "datasets": [{"name": "synsep", "n_samples": 100}],
           "channels": [{"name": "bandit", "params": {"rho0": 0.1, "rho1": 0.1}}],
           "learners": [{"name": "Banditron", "params": {"gamma": [0.1, 0.2]}}]}
    with Engine(tmp_path / "results", name="paper", progress=False) as eng:
        df = sweep(eng, cfg, "part")
        assert made == [1] and eng.ran == 4 and len(df) == 4 and set(df["kind"]) == {"online"}
        again = sweep(eng, cfg, "part")
    assert eng.resumed == 4 and eng.ran == 4
    pd.testing.assert_frame_equal(df.drop(columns=["wall_time", "loop_time", "finished_at"]),
                                  again.drop(columns=["wall_time", "loop_time", "finished_at"]))
    assert (tmp_path / "results" / "part" / "results.parquet").is_file()
