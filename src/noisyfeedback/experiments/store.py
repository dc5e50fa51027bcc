"""The results store: one small Parquet file per finished task, consolidated into ``results.parquet``.

Layout of a results directory::

    results.parquet        # every task of the last run, one row each (consolidated at the end)
    config.json            # the validated config that produced it (+ config.toml, a copy, when run from a file)
    selection.csv          # with a [selection] section: the chosen values per (dataset, channel, learner)
    tasks/<task_id>.parquet

A finished task is written to a temporary name in ``tasks/`` and then
``os.replace``'d to ``<task_id>.parquet``: a rename is atomic, so a process
killed at any instant (SIGKILL included) leaves either no file or a complete one,
never a partial one. On the next run the existing files are the finished tasks;
they are skipped. Temporary files of dead processes are removed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["ResultsStore", "atomic_path", "atomic_write_bytes", "read_results"]

_TMP = re.compile(r"^\.(?P<id>[^.]+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)
    return Path(path)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ResultsStore:
    """A results directory (see the module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"
        self.results_path = self.root / "results.parquet"

    def prepare(self) -> None:
        """Create the directories and remove temporary files left by dead processes."""
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        for entry in os.scandir(self.tasks_dir):
            m = _TMP.match(entry.name)
            if m and not _pid_alive(int(m.group("pid"))):
                try:
                    os.remove(entry.path)
                except FileNotFoundError:
                    pass

    def finished(self) -> set[str]:
        """The task ids with a complete result file."""
        if not self.tasks_dir.is_dir():
            return set()
        return {e.name[:-8] for e in os.scandir(self.tasks_dir)
                if e.name.endswith(".parquet") and not e.name.startswith(".")}

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.parquet"

    def write_row(self, row: dict[str, Any]) -> Path:
        """Write one task's row atomically (temp file + os.replace)."""
        task_id = row["task_id"]
        table = pa.Table.from_pylist([row])
        final = self.task_path(task_id)
        fd, tmp = tempfile.mkstemp(dir=self.tasks_dir, prefix=f".{task_id}.{os.getpid()}.", suffix=".tmp")
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, final)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return final

    def read_rows(self, task_ids: Iterable[str]) -> pa.Table:
        """The rows of these tasks, in the order given."""
        tables = [pq.read_table(self.task_path(t)) for t in task_ids]
        if not tables:
            return pa.table({})
        return pa.concat_tables(tables, promote_options="permissive")

    def write_json(self, name: str, obj: Any) -> Path:
        return atomic_write_bytes(self.root / name, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())

    def write_text(self, name: str, text: str) -> Path:
        return atomic_write_bytes(self.root / name, text.encode("utf-8"))

    def consolidate(self, entries: list[tuple[dict, dict]], config_hash: str) -> Path:
        """Write ``results.parquet``: the rows of ``entries`` ((task, annotations)) in plan order, annotated."""
        ids = [t["task_id"] for t, _ in entries]
        table = self.read_rows(ids)
        df = table.to_pandas() if table.num_columns else pd.DataFrame({"task_id": []})
        df = annotate(df, entries, config_hash)
        with atomic_path(self.results_path) as tmp:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        return self.results_path


# --------------------------------------------------------------- tables
_FRONT = ["task_id", "phase", "dataset", "channel", "learner", "seed"]
_BACK = ["chosen", "is_chosen", "task", "kind", "dataset_name", "channel_class", "learner_class",
         "dataset_params", "channel_params", "learner_params", "channel_repr", "learner_repr",
         "n_samples", "n_features", "n_classes", "config_hash", "library_version",
         "wall_time", "loop_time", "finished_at"]


def _column(values: list[Any]) -> pd.Series | list:
    """A typed column from parameter values of several tasks (missing -> null)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.array([np.nan if v is None else float(v) for v in values])
    return [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values]


def annotate(df: pd.DataFrame, entries: list[tuple[dict, dict]], config_hash: str) -> pd.DataFrame:
    """Add phase/chosen/is_chosen/config_hash and flattened parameter columns (``learner.gamma`` ...)."""
    meta = {t["task_id"]: m for t, m in entries}
    n = len(df)
    df = df.copy()
    df["phase"] = [meta[i]["phase"] for i in df["task_id"]] if n else []
    df["chosen"] = [meta[i].get("chosen", "") for i in df["task_id"]] if n else []
    df["is_chosen"] = pd.array([meta[i].get("is_chosen") for i in df["task_id"]] if n else [], dtype="boolean")
    df["config_hash"] = config_hash
    flat: dict[str, list] = {}
    for prefix, col in (("dataset", "dataset_params"), ("channel", "channel_params"), ("learner", "learner_params")):
        if col not in df.columns:
            continue
        parsed = [json.loads(s) for s in df[col]]
        if prefix == "dataset":
            parsed = [{**{k: v for k, v in p.items() if k != "params"}, **p.get("params", {})} for p in parsed]
        keys: list[str] = []
        for p in parsed:
            keys += [k for k in p if k not in keys]
        for k in keys:
            flat[f"{prefix}.{k}"] = [p.get(k) for p in parsed]
    for name, values in flat.items():
        if any(v is not None for v in values):
            df[name] = _column(values)
    front = [c for c in _FRONT if c in df.columns]
    params = [c for c in df.columns if c.startswith("learner.")] + [c for c in df.columns if c.startswith("channel.")] \
        + [c for c in df.columns if c.startswith("dataset.")]
    back = [c for c in _BACK if c in df.columns]
    middle = [c for c in df.columns if c not in front and c not in params and c not in back]
    return df[front + params + middle + back].reset_index(drop=True)


def read_results(path: str | os.PathLike) -> pd.DataFrame:
    """A results table (``results.parquet``, or a results directory holding one) as a pandas DataFrame."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"no results table at {str(path)!r}; run the experiment first "
                                "(noisyfeedback run CONFIG.toml).")
    return pd.read_parquet(path)
