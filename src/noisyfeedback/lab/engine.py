"""The experiment engine: every task of every sweep and recipe runs here.

A *task* is a small plain dict (JSON-able); its ``task_id`` is a hash of its
content, so a task is its own identity. A *task kind* is a pure function
registered under a name, and a task names its function by import path
(``task["_func"] = "package.module:function"``, filled in by `make_task`):
a worker process imports that one module and nothing else (never every paper).
Keys starting with "_" say where to find things, not what to compute: they are
not part of the task's identity.

- ``@task_kind("dekel2009.split")``: ``func(task) -> rows`` (a list of dicts, or
  one dict); the engine stores the rows as JSON (`Engine.run` reads them back).
- ``@task_kind("sweep", row=True)`` (`.tasks.run_task`): the task of a TOML
  sweep, one more kind: ``func(task) -> row``, the row of the sweep's results
  table, stored as its columns.
- ``register_task_kind("online")`` (``data=True``): what a sweep task runs on its
  loaded data set, picked by the config's learner ``kind``:
  ``func(task, X, y, n_classes, seeds) -> result columns`` (see `.tasks`).

The engine alone owns the rest: the results store (one file per finished task,
`.store`), resuming (finished tasks are skipped, and the run says how many),
the backends (serial, ``jobs=N`` local processes, a Dask scheduler) and the
progress bars (named "<paper>: <part>", counting tasks). A recipe whose tasks
depend on earlier results runs its parts in order in one `Engine`::

    with Engine(out_dir / "results", name="dekel2009", jobs=jobs, progress=progress) as eng:
        problems = eng.run(problem_tasks, "choosing λ")       # one result (list of rows) per task
        rows = eng.rows(split_tasks(problems), "splits")      # the rows of every task, in task order
        df = sweep(eng, config, "sweep")                      # a TOML sweep on this engine (.runner.sweep)

Results never depend on the backend or on the order tasks finish: the engine
returns results in task order, and every task is seeded from its own content.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from .backends import Backend, make_backend
from .config import _json_default, stable_hash
from .store import ResultsStore, atomic_path

__all__ = ["Engine", "TaskKind", "KINDS", "register_task_kind", "task_kind", "make_task", "task_id",
           "func_path", "resolve_func", "execute", "run_tasks", "new_progress"]


@dataclass(frozen=True)
class TaskKind:
    """A registered task kind: ``func``, whether it runs on a config task's loaded data set (``data``)
    and whether it returns the store's row itself (``row``) rather than a list of rows."""

    name: str
    func: Callable[..., Any]
    data: bool = True
    row: bool = False

    @property
    def path(self) -> str:
        """Where a worker finds the function: ``"module:qualname"``."""
        return func_path(self.func)


#: name -> TaskKind (the sweep's learner kinds "online", ..., the "sweep" kind and every recipe's kinds)
KINDS: dict[str, TaskKind] = {}


def func_path(func: Callable[..., Any]) -> str:
    """``"module:qualname"`` of a module-level function (what a task names to be run by)."""
    path = f"{func.__module__}:{func.__qualname__}"
    if "<" in path:
        raise ValueError(f"a task kind must be a module-level function (a worker imports it by path); got {path}.")
    return path


def resolve_func(path: str) -> Callable[..., Any]:
    """The function at ``"module:qualname"`` (importing that module only)."""
    module, sep, qualname = str(path).partition(":")
    if not sep:
        raise ValueError(f"a task function is named 'module:qualname'; got {path!r}.")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def register_task_kind(kind: str, *, data: bool = True, row: bool = False):
    """Decorator registering a task kind (see the module docstring)."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        KINDS[kind] = TaskKind(kind, func, data, row)
        func._task_row = row  # what a worker that imported the function by path needs to know
        return func

    return deco


def task_kind(kind: str, *, row: bool = False):
    """Decorator: ``@task_kind("paper.part") def run(task) -> rows`` (a pure function of the task)."""
    return register_task_kind(kind, data=False, row=row)


def task_id(task: dict[str, Any]) -> str:
    """The task's identity: a hash of its content. Keys starting with "_" (where the data files are, say)
    are not part of it: they say where to find things, not what to compute."""
    if "task_id" in task:
        return str(task["task_id"])
    return stable_hash({k: v for k, v in task.items() if not k.startswith("_")})


def make_task(kind: str, **payload: Any) -> dict[str, Any]:
    """A task of ``kind`` with ``payload`` (JSON-able values), its ``task_id`` and ``_func`` (where its
    function is) filled in."""
    task = {"kind": kind, **payload}
    json.dumps(task, default=_json_default)  # fail here, not on a worker, if it is not plain data
    task["task_id"] = task_id(task)
    task.setdefault("_func", _kind(kind).path)
    return task


def _kind(name: str) -> TaskKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown task kind {name!r}; known: {', '.join(sorted(KINDS))}") from None


def _task_func(task: dict[str, Any]) -> Callable[..., Any]:
    """The task's function: by its ``_func`` path (a worker imports that module only), else its kind."""
    path = task.get("_func")
    if path is not None:
        return resolve_func(path)
    if "kind" not in task:
        raise ValueError(f"task {task.get('task_id')} names neither a 'kind' nor a '_func'.")
    return _kind(task["kind"]).func


def execute(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task; return its row for the store (what every backend maps over).

    BLAS runs on one thread inside a task: a multi-threaded BLAS sums in an order that depends on the
    thread count, which flipped a teacher-flagging decision of dekel2009 between a resumed and an
    uninterrupted ``reproduce all`` (tests/lab/test_reproduce_all.py). Parallelism is across tasks."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _execute(task)


def _execute(task: dict[str, Any]) -> dict[str, Any]:
    func = _task_func(task)
    if getattr(func, "_task_row", False):  # the task returns its store row itself (a sweep's task)
        return func(task)
    t0 = time.perf_counter()
    result = func(task)
    kind = task.get("kind")
    rows = result if isinstance(result, list) else [result]
    return {"task_id": task["task_id"], "kind": kind,
            "rows": json.dumps(rows, default=_json_default),
            "wall_time": time.perf_counter() - t0,
            "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")}


# ---------------------------------------------------------------- progress
class _Bars:
    """A rich progress display (tasks done, rate, ETA), or nothing."""

    def __init__(self, progress: Any):
        self.p = None
        self.own = False
        if progress is True:
            from rich.console import Console

            self.p = new_progress(Console(stderr=True))
            self.own = True
        elif progress not in (False, None):
            self.p = progress  # a rich.progress.Progress to add our bars to

    def __enter__(self):
        if self.own:
            self.p.start()
        return self

    def __exit__(self, *exc):
        if self.own:
            self.p.stop()

    def add(self, description: str, total: int, completed: int):
        if self.p is None:
            return None
        return self.p.add_task(description, total=total, completed=completed)

    def advance(self, bar) -> None:
        if self.p is not None and bar is not None:
            self.p.advance(bar)

    def log(self, text: str) -> None:
        if self.p is not None:
            from rich.markup import escape

            self.p.console.print(escape(text), highlight=False)


def new_progress(console=None):
    """The progress display the engine uses (pass it as ``progress=`` to share one display)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task):
            speed = task.finished_speed or task.speed
            return Text("– tasks/s" if not speed else f"{speed:.1f} tasks/s", style="progress.data.speed")

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tasks"),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


# ------------------------------------------------------------------ engine
class Engine:
    """One results directory, one backend and one progress display for the parts of a run.

    ``out``: the results directory (its ``tasks/`` folder holds one file per
    finished task); ``name``: what the progress bars and messages are prefixed
    with (a paper); ``jobs``/``scheduler``: the backend (see `.backends.make_backend`);
    ``progress``: True, False or a ``rich.progress.Progress``.
    """

    def __init__(self, out: str | os.PathLike, *, name: str = "experiment", jobs: int = 1, scheduler: Any = None,
                 progress: Any = True, backend: Backend | None = None, config_hash: str | None = None):
        # config_hash: task files are stamped with it and checked on read; a directory holding
        # another config's results is refused (see .store)
        self.store = ResultsStore(out, config_hash)
        self.name = name
        self._jobs, self._scheduler, self._progress = jobs, scheduler, progress
        self.backend = backend
        self._own_backend = backend is None
        self.resumed = 0  #: how many tasks were found already done, over every part
        self.ran = 0  #: how many tasks ran

    def __enter__(self) -> "Engine":
        self.store.acquire()  # a lock on the directory: a second concurrent run is refused
        try:
            self.store.prepare()
        except BaseException:
            self.store.release()
            raise
        if self.backend is None:
            self.backend = make_backend(self._jobs, self._scheduler)
        self.bars = _Bars(self._progress).__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.bars.__exit__(*exc)
            if self._own_backend:
                self.backend.close()
        finally:
            self.store.release()

    def log(self, text: str) -> None:
        self.bars.log(f"{self.name}: {text}")

    def run_missing(self, tasks: Iterable[dict[str, Any]], part: str, store: ResultsStore | None = None) -> int:
        """Run the tasks without a result file yet; return how many ran. ``store``: where their
        results go (default: the engine's; a sweep run on this engine has its own folder)."""
        store = self.store if store is None else store
        tasks = list(tasks)
        done = store.finished()
        todo, seen = [], set()
        for t in tasks:
            tid = t["task_id"]
            if tid not in done and tid not in seen:
                todo.append(t)
                seen.add(tid)
        total = len({t["task_id"] for t in tasks})
        already = total - len(todo)
        if already:
            self.log(f"{part}: {already} of {total} tasks already done (resuming)")
        self.resumed += already
        bar = self.bars.add(f"{self.name}: {part}", total=total, completed=already)
        for row in self.backend.imap_unordered(execute, todo):
            store.write_row(row)
            self.bars.advance(bar)
        self.ran += len(todo)
        return len(todo)

    def run(self, tasks: Iterable[dict[str, Any]], part: str) -> list[list[dict[str, Any]]]:
        """Run (or resume) plain tasks; return each task's rows, in task order."""
        tasks = list(tasks)
        self.run_missing(tasks, part)
        if not tasks:
            return []
        table = self.store.read_rows([t["task_id"] for t in tasks])
        return [json.loads(s) for s in table.column("rows").to_pylist()]

    def rows(self, tasks: Iterable[dict[str, Any]], part: str) -> list[dict[str, Any]]:
        """The rows of every task, concatenated in task order."""
        return [r for rows in self.run(tasks, part) for r in rows]

    def write_table(self, name: str, df: pd.DataFrame) -> Path:
        """Write ``df`` as ``<out>/<name>.parquet`` (atomically)."""
        path = self.store.root / f"{name}.parquet"
        with atomic_path(path) as tmp:
            df.to_parquet(tmp, index=False, engine="pyarrow")
        return path


def run_tasks(tasks: list[dict[str, Any]], out: str | os.PathLike, *, name: str = "experiment", jobs: int = 1,
              scheduler: Any = None, progress: Any = True) -> Path:
    """Run (or resume) a plan that is a plain list of tasks; write and return ``<out>/results.parquet``
    (the rows of every task in task order, each with its ``task_id``)."""
    tasks = [t if "task_id" in t else {**t, "task_id": task_id(t)} for t in tasks]
    for k, t in enumerate(tasks):
        if "kind" not in t:
            raise ValueError(f"task {k} has no 'kind'; known kinds: {', '.join(sorted(KINDS))}")
    # where a worker finds each task's function (it imports that module only)
    tasks = [t if "_func" in t else {**t, "_func": _kind(t["kind"]).path} for t in tasks]
    with Engine(out, name=name, jobs=jobs, scheduler=scheduler, progress=progress) as eng:
        results = eng.run(tasks, "running")
        rows = [{"task_id": t["task_id"], **r} for t, rs in zip(tasks, results) for r in rs]
        return eng.write_table("results", pd.DataFrame(rows))
