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

Trust (`open_results`): each task file carries its task id and the config's hash in its
Parquet metadata and is checked when read; a file that cannot be read or does not match (a
copy under another task's name, a truncated file, another config's result) is moved aside to
``tasks/rejected/`` (kept, never deleted) with a warning naming it, and its task is rerun. A
lock on ``<out>/.lock`` refuses a second concurrent run into the same directory (the kernel
releases it when the process dies, kill -9 included), and ``store.json`` records the config
hash, so a different config is refused instead of mixing its results into the same table.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .._io import atomic_path, atomic_write_bytes  # the package's one atomic-write helper

__all__ = ["ResultsStore", "StoreError", "open_results", "atomic_path", "atomic_write_bytes", "read_results"]

#: Parquet metadata key of a task file: JSON {"task_id": ..., "config_hash": ...}
_META_KEY = b"noisyfeedback.task"


class StoreError(ValueError):
    """A results directory that cannot be used for this run (busy, or another config's)."""

_TMP = re.compile(r"^\.(?P<id>[^.]+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


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

    def __init__(self, root: str | os.PathLike, config_hash: str | None = None):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"
        self.results_path = self.root / "results.parquet"
        #: with a hash, task files are stamped with it and checked against it when read
        self.config_hash = config_hash
        self._lock_fd: int | None = None

    # ---------------------------------------------------------- trust
    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> None:
        """Lock the directory for this run (refuse if another live run holds it), then check and
        record the config hash in ``store.json`` (refuse another config's directory)."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock_path = self.root / ".lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:  # no advisory locks on this platform: run unlocked
            fcntl = None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                try:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                finally:
                    os.close(fd)
                raise StoreError(
                    f"another run{f' (pid {holder})' if holder else ''} is writing to {self.root}; "
                    "wait for it to finish or pass another --out."
                ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd
        try:
            self._check_config()
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the lock
            self._lock_fd = None

    def _check_config(self) -> None:
        if self.config_hash is None:
            return
        path = self.root / "store.json"
        recorded = None
        if path.exists():
            try:
                recorded = json.loads(path.read_text()).get("config_hash")
            except (ValueError, OSError, AttributeError):
                recorded = None
        if recorded is not None and recorded != self.config_hash:
            raise StoreError(
                f"{self.root} holds the results of a different config (hash {recorded[:12]}, this one "
                f"{self.config_hash[:12]}). To start fresh, remove that directory or pass another --out."
            )
        if recorded is None:
            self.write_json("store.json", {"config_hash": self.config_hash, "store_format": 1})

    def _task_ok(self, path: Path, task_id: str) -> str | None:
        """None if ``path`` is a readable task file of ``task_id`` (and of this config); else why not."""
        try:
            meta = pq.read_schema(path).metadata or {}
        except Exception as e:  # truncated, not Parquet, unreadable
            return f"is unreadable ({type(e).__name__}: {e})"
        raw = meta.get(_META_KEY)
        if raw is None:
            return "carries no task id"
        try:
            stamp = json.loads(raw)
        except ValueError:
            return "has a damaged task stamp"
        if not isinstance(stamp, dict) or stamp.get("task_id") != task_id:
            return f"holds task {stamp.get('task_id') if isinstance(stamp, dict) else stamp}, not {task_id}"
        if self.config_hash is not None and stamp.get("config_hash") != self.config_hash:
            return "was written by a different config"
        return None

    def _reject(self, path: Path, why: str) -> None:
        """Move a task file aside (kept, never deleted) and warn, naming it."""
        rejected = self.tasks_dir / "rejected"
        rejected.mkdir(exist_ok=True)
        target = rejected / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
        os.replace(path, target)
        warnings.warn(f"task file {path} {why}; moved to {target} and its task will be rerun.",
                      RuntimeWarning, stacklevel=3)

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
        """The task ids with a complete result file (with a config hash: checked, bad ones moved aside)."""
        if not self.tasks_dir.is_dir():
            return set()
        ids = {e.name[:-8] for e in os.scandir(self.tasks_dir)
               if e.name.endswith(".parquet") and not e.name.startswith(".") and e.is_file()}
        if self.config_hash is None:
            return ids
        good = set()
        for task_id in sorted(ids):
            why = self._task_ok(self.task_path(task_id), task_id)
            if why is None:
                good.add(task_id)
            else:
                self._reject(self.task_path(task_id), why)
        return good

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.parquet"

    def write_row(self, row: dict[str, Any]) -> Path:
        """Write one task's row atomically (temp file + os.replace)."""
        task_id = row["task_id"]
        table = pa.Table.from_pylist([row])
        stamp = json.dumps({"task_id": task_id, "config_hash": self.config_hash}).encode()
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: stamp})
        final = self.task_path(task_id)
        with atomic_path(final, prefix=f".{task_id}.{os.getpid()}.") as tmp:
            pq.write_table(table, tmp)
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


def open_results(out_dir: str | os.PathLike, config_hash: str) -> ResultsStore:
    """The results store of a run: directory prepared, locked for this run, config hash checked
    (see the module docstring). Use it as a context manager (``with store: ...``) to release the
    lock at the end; raises `StoreError` when another run holds the directory or it holds
    another config's results."""
    store = ResultsStore(out_dir, config_hash)
    store.acquire()
    try:
        store.prepare()
    except BaseException:
        store.release()
        raise
    return store


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
