"""The worker side: load a data set (once per worker process), run one task, return its row.

`run_task` takes a task dict (see `.plan`) and returns one results
row (a dict of plain values). It is what every backend ships to its workers; it
only needs ``noisyfeedback`` importable there.

Data sets are loaded through an ``lru_cache`` keyed by the data set's loading
spec, so each worker process loads each data set once and every task on that
worker reuses the same arrays (never a copy per task). Tasks are planned
dataset-major, so a worker rarely holds more than one or two data sets.

Seeding. A task's random streams come from
``SeedSequence(entropy=seed, spawn_key=words of a hash of the data set's identity)``,
spawned into (simulation, learner): they depend on the task's identity only —
never on the worker, the backend or the order tasks run in. Every task with the
same seed on the same data set shares its round order, its feedback draws and
its exploration draws (common random numbers: learners and channels are
compared on the same randomness; e.g. RCNBF with ρ0 = ρ1 = 0 under clean
bandit feedback equals Banditron with the same γ bit for bit).

Task kinds. A sweep's task is of the engine's kind ``"sweep"`` (`run_task`), which runs the
learner's kind on the loaded data set: ``"online"`` tasks run `noisyfeedback.simulate`. Other kinds
(e.g. batch learners with ``fit``/``predict`` on a test split) plug in with
`.engine.register_task_kind` (one registry of task kinds, the engine's); a learner's kind is its config ``kind`` or, by
default, "online" when the class has a compiled simulation loop, else "batch".
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import time
from typing import Any

import numpy as np

from ..build import BuildError, build_learner, n_classes_of
from .config import canonical_json, stable_hash
from .engine import KINDS, register_task_kind, task_kind
from .plan import make_channel, resolve_learner, takes_n_classes

__all__ = ["run_task", "register_task_kind", "load_dataset", "task_seeds", "clear_cache"]

#: columns whose values depend on the machine and the moment, not on the task
NONDETERMINISTIC_COLUMNS = ("wall_time", "loop_time", "finished_at")


# ---------------------------------------------------------------- data
@functools.lru_cache(maxsize=4)
def _load_cached(key: str):
    spec = json.loads(key)
    from .. import datasets as ds

    name = spec["path"] or spec["name"]
    kwargs = dict(spec["params"])
    if spec["kind"] == "generated":
        if spec["n_samples"] is not None:
            kwargs["n_samples"] = spec["n_samples"]
        kwargs["seed"] = spec["seed"]
    X, y = ds.load(name, split=spec["split"], data_dir=spec["data_dir"], normalize=spec["normalize"], **kwargs)
    n = spec["n_samples"]
    if spec["kind"] != "generated" and n is not None and n < X.shape[0]:
        X, y = X[:n], y[:n]
        if hasattr(X, "tocsr"):
            X = X.tocsr()
        else:
            X = np.ascontiguousarray(X)
        y = np.ascontiguousarray(y)
    K = int(spec["n_classes"]) if spec.get("n_classes") else n_classes_of(y)
    return X, y, K


def load_dataset(load_spec: dict[str, Any]):
    """(X, y, n_classes) of a task's data set, loaded once per process (cached)."""
    return _load_cached(canonical_json(load_spec))


def clear_cache() -> None:
    _load_cached.cache_clear()


# ---------------------------------------------------------------- seeds
def task_seeds(task: dict[str, Any]) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """(simulation seed, learner seed) SeedSequences of a task, from its seed and its data set's identity."""
    h = stable_hash(task["dataset"], n=16)
    words = (int(h[:8], 16), int(h[8:], 16))
    root = np.random.SeedSequence(entropy=int(task["seed"]), spawn_key=words)
    sim, learner = root.spawn(2)
    return sim, learner


# ---------------------------------------------------------------- kinds
def _checkpoints(task) -> Any:
    cps = task["checkpoints"]
    return np.asarray(cps, dtype=np.int64) if isinstance(cps, list) else int(cps)


def _build_learner(task, n_classes: int | None, learner_seed):
    cls = resolve_learner(task["learner"]["name"])
    params = dict(task["learner"]["params"])
    if takes_n_classes(cls) and n_classes is None:
        raise ValueError(f"{cls.__name__} needs class labels 0..K-1, but data set "
                         f"{task['labels']['dataset']} has none (real-valued targets?)")
    shown = build_learner(cls, n_classes, **params)
    if "seed" in cls._get_param_names():
        params["seed"] = learner_seed
    return build_learner(cls, n_classes, **params), repr(shown)


@register_task_kind("online")
def run_online(task: dict[str, Any], X, y, n_classes: int, seeds) -> dict[str, Any]:
    """Run ``nf.simulate`` for the task; return the result columns."""
    from .._rows import simulation_rows
    from ..simulate import simulate

    sim_seed, learner_seed = seeds
    learner, learner_repr = _build_learner(task, n_classes, learner_seed)
    channel = make_channel(task["channel"]["name"], task["channel"]["params"], n_classes)
    if (isinstance(X, np.ndarray) and X.dtype == np.float64 and X.flags.c_contiguous
            and getattr(learner, "feedback_kind", None) != "target"):
        # the data set is cached for the process and never modified: read it as CSR, converted once
        X = simulation_rows(X, cache=True)
    trace = simulate(learner, X, y, feedback=channel, n_rounds=int(task["n_rounds"]), seed=sim_seed,
                     checkpoints=_checkpoints(task))
    out = {
        "learner_repr": learner_repr,
        "channel_repr": repr(channel),
        "error_rate": float(trace.error_rate),
        "mistakes": int(trace.mistakes),
        "checkpoints": [int(c) for c in trace.checkpoints],
        "curve": [float(v) for v in trace.curve],
        "loop_time": float(trace.wall_time),
    }
    if getattr(trace, "mse", None) is not None:
        out["mse"] = float(trace.mse)
    for k, v in trace.metrics.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


# ---------------------------------------------------------------- task
@task_kind("sweep", row=True)
def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task of a sweep (the task kind "sweep": its learner's kind on its loaded data set) and return
    its results row (plain values, one row of the results table)."""
    from .._version import __version__

    t0 = time.perf_counter()
    try:
        X, y, K = load_dataset(task["load"])
        runner = KINDS[task["learner"]["kind"]].func
        result = runner(task, X, y, K, task_seeds(task))
    except (ValueError, TypeError, KeyError, FileNotFoundError) as exc:
        raise _annotate(exc, task) from exc
    row: dict[str, Any] = {
        "task_id": task["task_id"],
        "task": task["labels"]["task"],
        "dataset": task["labels"]["dataset"],
        "channel": task["labels"]["channel"],
        "learner": task["labels"]["learner"],
        "kind": task["learner"]["kind"],
        "seed": int(task["seed"]),
        "n_rounds": int(task["n_rounds"]),
        "dataset_name": task["dataset"]["name"],
        "channel_class": task["channel"]["name"],
        "learner_class": task["learner"]["name"],
        "dataset_params": canonical_json({k: v for k, v in task["dataset"].items() if k != "name"}),
        "channel_params": canonical_json(task["channel"]["params"]),
        "learner_params": canonical_json(task["learner"]["params"]),
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_classes": None if K is None else int(K),
    }
    row.update(result)
    row["library_version"] = __version__
    row["wall_time"] = time.perf_counter() - t0
    row["finished_at"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    row.setdefault("loop_time", row["wall_time"])
    return row


def _annotate(exc: BaseException, task) -> BaseException:
    msg = f"task {task['labels']['task']} ({task['task_id']}): {exc.args[0] if exc.args else exc}"
    if isinstance(exc, BuildError):
        return exc.with_message(msg)
    try:
        return type(exc)(msg)
    except Exception:  # exotic constructors
        return RuntimeError(msg)
