"""Shared by the recipes' tests: compare two reports' numbers, and kill ``reproduce all --quick`` with
SIGKILL mid-run, rerun it, and compare its numbers with the stored ones.

:func:`numbers` is what two reports must share: every results table (without the wall-time columns),
the claims (``claims.json``) and the Markdown without its timing lines. :func:`all_killed_then_resumed`
runs every recipe in a subprocess whose results store SIGKILLs the process right after its
``kill_after``-th task file, then reruns it here into the same folder (one engine runs and resumes every
recipe's tasks, so one interrupted run covers them all).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd

NONDETERMINISTIC = {"seconds", "wall_time", "loop_time", "finished_at", "ours_seconds", "nrest_seconds"}
_TIMING = re.compile(r"wall time|Wall time|CPU-s| s wall| s with \d+ job")


def numbers(report: Path) -> tuple[dict, dict, list[str]]:
    """(results tables, claims, Markdown lines without timings) of a report folder."""
    root = Path(report).parent
    tables = {}
    for path in sorted((root / "results").rglob("*.parquet")):
        if "tasks" in path.relative_to(root).parts:
            continue
        df = pd.read_parquet(path)
        tables[str(path.relative_to(root))] = df.drop(columns=[c for c in df.columns if c in NONDETERMINISTIC
                                                               or c.endswith("_seconds")])
    claims = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    md = [ln for ln in (root / "index.md").read_text(encoding="utf-8").splitlines() if not _TIMING.search(ln)]
    return tables, claims, md


def assert_same_numbers(a: Path, b: Path, compare_markdown: bool = True) -> None:
    ta, ca, ma = numbers(a)
    tb, cb, mb = numbers(b)
    assert list(ta) == list(tb) and ta
    for k in ta:
        pd.testing.assert_frame_equal(ta[k], tb[k], check_exact=True, obj=k)
    assert ca == cb
    if compare_markdown:
        assert ma == mb


# ------------------------------------------------------------- reproduce("all")
_CHILD_ALL = r"""
import json, os, signal, sys
from noisyfeedback.lab import reproduce, store
from recipe_resume import small_recipes, skip_rendering
skip_rendering()
plans, patches, kill_after, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
small_recipes(plans, patches)
written = [0]
original = store.ResultsStore.write_row
def write_row(self, row):
    path = original(self, row)
    written[0] += 1
    if written[0] >= kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
    return path
store.ResultsStore.write_row = write_row
reproduce("all", quick=True, out=out, progress=False)
"""


def skip_rendering():
    """Reports write empty PNG files instead of drawing their figures: the resume test compares numbers, and
    drawing the recipes' figures was half of its time (the recipes' own tests draw and check them);
    returns the function it replaced."""
    from noisyfeedback.lab import report

    original = report._save_figure
    report._save_figure = lambda fig, path, dpi: path.write_bytes(b"")
    return original


def small_recipes(plans: dict[str, dict], patches: dict[str, dict] | None = None) -> dict:
    """Make every declared paper's registered recipe run ``plans[name]`` (and set ``patches[name]``'s
    attributes on its run module); returns what to pass to :func:`restore_recipes`."""
    from noisyfeedback.lab import recipes as rec

    rec._load_builtin()
    saved = {"recipes": dict(rec.RECIPES), "attrs": []}
    for name in list(rec.RECIPES):
        paper = rec.PAPERS[name]
        module = sys.modules[paper.run.__module__]
        for attr, value in (patches or {}).get(name, {}).items():
            saved["attrs"].append((module, attr, getattr(module, attr)))
            setattr(module, attr, value)

        def plan(quick, data_dir, _plan=plans[name]):
            return json.loads(json.dumps(_plan))

        rec.RECIPES[name] = dataclasses.replace(paper, plan=plan)
    return saved


def restore_recipes(saved: dict) -> None:
    from noisyfeedback.lab import recipes as rec

    rec.RECIPES.clear()
    rec.RECIPES.update(saved["recipes"])
    for module, attr, value in reversed(saved["attrs"]):
        setattr(module, attr, value)


def all_killed_then_resumed(plans: dict, patches: dict, out: Path, kill_after: int):
    """(index path, log text) of ``reproduce("all", quick=True)`` rerun after a first run SIGKILLed right
    after its ``kill_after``-th task file (every recipe running its plan of ``plans``)."""
    from rich.console import Console

    from noisyfeedback.lab import reproduce
    from noisyfeedback.lab.engine import new_progress

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", _CHILD_ALL, json.dumps(plans), json.dumps(patches),
                           str(kill_after), str(out)], env=env, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr[-2000:])
    assert not (Path(out) / "index.html").exists()  # it died mid-run
    console = Console(file=io.StringIO(), width=200)
    from noisyfeedback.lab import report

    saved = small_recipes(plans, patches)
    save_figure = skip_rendering()
    try:
        with new_progress(console) as progress:
            index = reproduce("all", quick=True, out=out, progress=progress)
    finally:
        report._save_figure = save_figure
        restore_recipes(saved)
    return index, console.file.getvalue()


# ------------------------------------------------------------- numbers against a stored copy
#: the numbers of tests/lab/test_reproduce_all.py's uninterrupted ``reproduce all --quick`` (its shrunk plans),
#: as written by the code before the lab moved out of the library (tests/data/reproduce_all_numbers.json)
STORED_NUMBERS = Path(__file__).parent / "data" / "reproduce_all_numbers.json"


def _column_digest(values: pd.Series) -> str:
    """A column in a few characters: the sum of its numbers (8 significant digits, lists flattened) and
    its NaN count, or a hash of its sorted text values."""
    import hashlib

    import numpy as np

    flat: list = []
    for v in values:
        if isinstance(v, (list, tuple, np.ndarray)):
            flat.extend(np.ravel(np.asarray(v, dtype=object)).tolist())
        else:
            flat.append(v)
    nums = [v for v in flat if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)]
    if nums and len(nums) == len([v for v in flat if v is not None]):
        arr = np.asarray(nums, dtype=float)
        return f"sum {np.nansum(arr):.8g}, nan {int(np.isnan(arr).sum())}, n {arr.size}"
    text = "\n".join(sorted(str(v) for v in flat))
    return "text " + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def numbers_digest(index: Path) -> dict:
    """Per report of a ``reproduce all`` folder: its claims (what, ours, holds) and a digest of every
    results table (rows, columns, each column's :func:`_column_digest`; timing and repr columns left out)."""
    out = {}
    for claims_path in sorted(Path(index).parent.glob("*/claims.json")):
        tables, claims, _ = numbers(claims_path.parent / "index.html")
        out[claims_path.parent.name] = {
            "summary": claims["summary"],
            "claims": [[c["claim"], c["ours"], c["holds"]] for c in claims["claims"]],
            # the reprs of learners and channels are labels (a changed default shortens them), not numbers
            "tables": {name: {"rows": len(df), **{col: _column_digest(df[col]) for col in sorted(df.columns)
                                                  if not col.endswith("_repr")}}
                       for name, df in tables.items()},
        }
    return out


def assert_numbers_as_stored(index: Path) -> None:
    """The numbers of a ``reproduce all`` run equal the stored ones, report by report and table by table.
    After a change that means to change them, rewrite the copy:
    ``python tests/recipe_resume.py OUT/index.html`` (OUT: a run of test_reproduce_all's plans)."""
    stored = json.loads(STORED_NUMBERS.read_text(encoding="utf-8"))
    ours = json.loads(json.dumps(numbers_digest(index)))
    assert sorted(ours) == sorted(stored)
    for name in stored:
        assert ours[name]["claims"] == stored[name]["claims"], name
        assert sorted(ours[name]["tables"]) == sorted(stored[name]["tables"]), name
        for table, cols in stored[name]["tables"].items():
            diff = {c: (v, ours[name]["tables"][table].get(c)) for c, v in cols.items()
                    if ours[name]["tables"][table].get(c) != v}
            assert not diff, f"{name}: {table}: {diff}"
            assert set(ours[name]["tables"][table]) == set(cols), f"{name}: {table}: columns"


if __name__ == "__main__":  # write the stored copy from a run
    STORED_NUMBERS.parent.mkdir(exist_ok=True)
    STORED_NUMBERS.write_text(json.dumps(numbers_digest(Path(sys.argv[1])), indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    print(STORED_NUMBERS)
