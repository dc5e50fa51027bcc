"""Run an experiment: plan it, run the unfinished tasks on a backend, consolidate the results table.

Resuming. Each finished task is one file ``tasks/<task_id>.parquet`` in the
results directory, written atomically; a run first lists those files and skips
their tasks. Kill a sweep at any moment (Ctrl-C, SIGKILL, a lost cluster) and
run the same command again: it picks up where it stopped, and the final
``results.parquet`` is the same as an uninterrupted run's (apart from the
wall-time and timestamp columns). Task ids are hashes of what a task computes,
so editing a config (adding seeds, learners, values) reuses every task it still
contains.

Selection. With a ``[selection]`` section the learners' grids over the selected
parameter(s) run on the tuning seeds first; per (dataset, channel, learner and
its other parameters) the value with the best mean ``metric`` is chosen (ties:
the first in grid order), and only it runs on the report seeds. The table keeps
both: ``phase`` is "tuning" or "report", ``chosen`` holds the chosen values as
JSON (on tuning and report rows of a tuned group) and ``is_chosen`` marks the
tuning rows of the chosen value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .config import ConfigError, ExperimentConfig, canonical_json, load_config, parse_config
from .engine import Engine, new_progress, run_tasks
from .plan import Plan, build_plan, describe_plan, param_text
from .store import ResultsStore, read_results

__all__ = ["run_experiment", "run_config", "validate_config", "read_results", "choose", "new_progress", "ConfigError",
           "sweep"]


# ------------------------------------------------------------------ running
def _run_phase(entries, engine: Engine, part: str, store: ResultsStore) -> int:
    """Run the unfinished tasks of ``entries`` ((task, annotations) pairs) on the engine, into ``store``."""
    return engine.run_missing([t for t, _ in entries], part, store=store)


def choose(plan: Plan, tuning: list[tuple[dict, dict]], store: ResultsStore) -> tuple[dict[str, dict], pd.DataFrame]:
    """The chosen values per selection group, and a table of every candidate's mean metric."""
    sel = plan.selection
    metric = sel.metric
    table = store.read_rows([t["task_id"] for t, _ in tuning])
    if metric not in table.column_names:
        raise ValueError(f"selection.metric {metric!r} is not a column of the tuning results; columns: "
                         f"{', '.join(table.column_names)}")
    values = dict(zip(table.column("task_id").to_pylist(), table.column(metric).to_pylist()))
    by_unit: dict[int, list[float]] = {}
    units: dict[int, Any] = {}
    for task, meta in tuning:
        u = meta["unit"]
        units[id(u)] = u
        v = values[task["task_id"]]
        by_unit.setdefault(id(u), []).append(np.nan if v is None else float(v))
    chosen: dict[str, dict] = {}
    best: dict[str, float] = {}
    rows = []
    for key, u in units.items():
        mean = float(np.mean(by_unit[key]))
        score = np.inf if not np.isfinite(mean) else (mean if sel.mode == "min" else -mean)
        if u.group not in best or score < best[u.group]:
            best[u.group], chosen[u.group] = score, dict(u.selected)
        rows.append({"group": u.group, "dataset": u.dataset.label, "channel": u.channel.label,
                     "learner": u.learner.name,
                     "fixed": param_text({k: v for k, v in u.params.items() if k not in u.selected}),
                     "candidate": param_text(u.selected), "values": canonical_json(u.selected),
                     f"mean {metric}": mean, "seeds": len(by_unit[key])})
    df = pd.DataFrame(rows)
    if len(df):
        df["chosen"] = [canonical_json(chosen[g]) == v for g, v in zip(df["group"], df["values"])]
        df = df.drop(columns=["group"])
    return chosen, df


def _coerce(config: Any, base_dir) -> tuple[ExperimentConfig, Path, str | None, str | None]:
    """(config, base directory, TOML text or None, a name for the default output folder)."""
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        cfg = load_config(path)
        return cfg, Path(base_dir) if base_dir else path.resolve().parent, path.read_text(encoding="utf-8"), path.stem
    if isinstance(config, ExperimentConfig):
        return config, Path(base_dir) if base_dir else Path.cwd(), None, None
    if isinstance(config, dict):
        return parse_config(config), Path(base_dir) if base_dir else Path.cwd(), None, None
    raise TypeError("config must be a path to a TOML file, a dict or an ExperimentConfig; "
                    f"got {type(config).__name__}.")


def validate_config(config: Any, data_dir: str | os.PathLike | None = None) -> Plan:
    """Check a config completely (structure, names, parameters, values, data files) without running it.

    Returns the `Plan`; ``describe_plan(plan)``
    summarises it. Raises `ConfigError` naming every bad key path.
    """
    cfg, base, _, _ = _coerce(config, None)
    return build_plan(cfg, base, data_dir)


def run_experiment(
    config: Any,
    out: str | os.PathLike | None = None,
    *,
    jobs: int = 1,
    scheduler: Any = None,
    progress: Any = True,
    data_dir: str | os.PathLike | None = None,
    base_dir: str | os.PathLike | None = None,
) -> Path:
    """Run (or resume) an experiment and return the path of its ``results.parquet``.

    ``config``: a TOML path, a dict with the same structure, an ExperimentConfig, or a
    plan that is a plain list of tasks (dicts naming a registered ``kind``; see
    `.engine`; the table then holds every task's rows).
    ``out``: the results directory (default: the config's ``output``, relative to
    the config file, else ``./results/<config name>``). ``jobs``: 1 = serial here,
    N > 1 = N local worker processes, -1 = one per core. ``scheduler``: a Dask
    scheduler address ("tcp://host:8786"), Cluster or Client (overrides ``jobs``).
    ``progress``: True for a progress bar on stderr, False for none, or a
    ``rich.progress.Progress`` to add the bars to. ``data_dir`` overrides the
    config's ``data_dir``. The whole config is checked before any task runs.
    """
    if isinstance(config, (list, tuple)):
        name = "experiment" if out is None else Path(out).name
        return run_tasks(list(config), out if out is not None else Path("results") / "experiment", name=name,
                         jobs=jobs, scheduler=scheduler, progress=progress)
    cfg, base, text, stem = _coerce(config, base_dir)
    plan = build_plan(cfg, base, data_dir)
    if out is None:
        if cfg.output:
            out = base / cfg.output
        else:
            out = Path("results") / (cfg.name or stem or "experiment")
    name = cfg.name or stem or "experiment"
    with Engine(out, name=name, jobs=jobs, scheduler=scheduler, progress=progress,
                config_hash=plan.config_hash) as eng:  # locked; config hash checked; task files verified
        return _sweep_into(eng, eng.store, cfg, plan, text)


def _sweep_into(eng: Engine, store: ResultsStore, cfg: ExperimentConfig, plan: Plan, text: str | None,
                prefix: str = "") -> Path:
    """Run (or resume) a planned sweep on ``eng`` with its results in ``store``; ``results.parquet``'s path."""
    store.write_json("config.json", cfg.model_dump(mode="json"))
    if text is not None:
        store.write_text("config.toml", text)
    eng.log(f"{prefix}{describe_plan(plan)}; running on {eng.backend.describe()}; results in {store.root}")
    if plan.selection is None:
        entries = plan.tasks()
        _run_phase(entries, eng, prefix + "running", store)
    else:
        tuning = plan.tuning_tasks()
        _run_phase(tuning, eng, prefix + "tuning", store)
        chosen, cand = choose(plan, tuning, store)
        grid_chosen = chosen
        while True:  # past a binding edge of the grid, while selection.extend allows (grids.py)
            added = plan.extension_units(chosen)
            if not added:
                break
            extra = plan._tasks(added, plan.selection.tuning_seeds, "tuning")
            _run_phase(extra, eng, prefix + "tuning past the grid", store)
            tuning = tuning + extra
            chosen, cand = choose(plan, tuning, store)
        report = plan.report_tasks(chosen)
        # the grid's own best, where the extension moved it, is reported too (phase "report (grid)")
        moved = {g: v for g, v in grid_chosen.items() if canonical_json(v) != canonical_json(chosen[g])}
        if moved:
            units = [u for u in plan.tuned_units() if u.group in moved
                     and canonical_json(u.selected) == canonical_json(moved[u.group])]
            report = report + plan._tasks(units, plan.selection.report_seeds, "report (grid)")
        for _, meta in tuning:
            u = meta["unit"]
            meta["chosen"] = canonical_json(chosen[u.group])
            meta["is_chosen"] = canonical_json(u.selected) == meta["chosen"]
        for _, meta in report:
            u = meta["unit"]
            if u.selected is not None:
                meta["chosen"] = canonical_json(chosen[u.group])
        store.write_text("selection.csv", cand.to_csv(index=False))
        _run_phase(report, eng, prefix + "report", store)
        entries = tuning + report
    return store.consolidate(entries, plan.config_hash)


def sweep(engine: Engine, config: Any, folder: str, data_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Run (or resume) a config sweep (a TOML path, dict or ExperimentConfig) on ``engine`` — its backend,
    progress display and counts — with its results in ``<engine's results>/<folder>``; its results table.
    A recipe's sweeps are parts of the recipe's run, not runs of their own."""
    cfg, base, text, _ = _coerce(config, None)
    plan = build_plan(cfg, base, data_dir)
    store = ResultsStore(engine.store.root / folder, plan.config_hash)
    store.acquire()  # locked; config hash checked
    try:
        store.prepare()  # task files verified
        path = _sweep_into(engine, store, cfg, plan, text, prefix=f"{folder}: ")
    finally:
        store.release()
    return read_results(path)


def run_config(
    path: str | os.PathLike,
    jobs: int = 1,
    scheduler: Any = None,
    out: str | os.PathLike | None = None,
    progress: Any = True,
    data_dir: str | os.PathLike | None = None,
) -> Path:
    """``noisyfeedback run CONFIG.toml``: run or resume the experiment; return ``results.parquet``'s path."""
    return run_experiment(Path(path), out, jobs=jobs, scheduler=scheduler, progress=progress, data_dir=data_dir)

