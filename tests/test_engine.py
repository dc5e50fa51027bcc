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
