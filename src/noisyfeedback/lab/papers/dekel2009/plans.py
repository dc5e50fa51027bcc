"""dekel2009: the plans (quick, full, RCV1) and the parts they run, in order, through the engine."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

#: the paper's statements, as judged here
PAPER_K = (5, 10, 15, 20, 25, 30, 35, 40)

#: full mode: MNIST (the paper: RCV1, not available here)
FULL_PLAN: dict[str, Any] = {
    "dataset": {"name": "mnist", "label": "MNIST", "classes": [3, 5, 8, 9], "normalize": True},
    "n_train": None,
    "n_splits": 40,
    "n_teachers": 100,
    "evil": list(PAPER_K),
    "n_topics": 100,
    "lams": [1e-3, 1e-4, 1e-5],
    "eps": 1.0,
    "tol": 1e-5,
    "sgd_epochs": 10,
    "seed": 2009,
    # on the first problem: the slack per teacher (a training subsample of n_small; smaller ε) at the
    # largest k, and plain Pegasos against the exact SVM on clean labels (every problem)
    "sensitivity": {"n_splits": 5, "k": [30, 40], "n_small": 2_000},
}

#: quick mode (bundled data; a test may shrink it further)
QUICK_PLAN: dict[str, Any] = {
    "dataset": {"name": "digits", "label": "digits", "classes": [1, 3, 7, 8], "normalize": True},
    "n_train": None,
    "n_splits": 3,
    "n_teachers": 20,
    "evil": [2, 4, 6, 8],
    "n_topics": 20,
    "lams": [1e-2, 1e-3],
    "eps": 1.0,
    "tol": 1e-5,
    "sgd_epochs": 10,
    "seed": 2009,
    "sensitivity": {"n_splits": 2, "k": [6, 8], "n_small": 100},
}

#: for users with LIBSVM's rcv1.binary (one binary problem: CCAT+ECAT vs GCAT+MCAT; no
#: low-level categories in that file, so the topic teachers are k-means clusters too)
RCV1_PLAN: dict[str, Any] = {**FULL_PLAN, "dataset": {"name": "rcv1", "label": "RCV1", "classes": [0, 1]},
                             "n_train": 10_000, "lams": [1e-4, 1e-5, 1e-6]}


def plan(quick: bool, data_dir=None) -> dict:
    """A fresh copy of the quick or the full plan."""
    return json.loads(json.dumps(QUICK_PLAN if quick else FULL_PLAN))


def _main(plan: dict) -> dict:
    """What the main tasks depend on (not the sensitivity runs' settings)."""
    return {k: v for k, v in plan.items() if k != "sensitivity"}


def problem_tasks(plan: dict, data_dir) -> list[dict]:
    """One task per binary problem: λ on a validation split, and the topic teachers."""
    from ...engine import make_task
    from .tasks import problems

    return [make_task("dekel2009.problem", dataset=plan["dataset"], seed=plan["seed"], problem_index=p,
                      pair=list(pair), lams=plan["lams"], n_train=plan["n_train"], n_topics=plan["n_topics"],
                      _data_dir=data_dir)
            for p, pair in enumerate(problems(plan["dataset"]["classes"]))]


def split_tasks(plan: dict, data_dir, chosen: list[dict]) -> list[dict]:
    """One task per (problem, split), split-major (a stopped run has whole splits of every problem)."""
    from ...engine import make_task
    from .tasks import problems

    pairs = problems(plan["dataset"]["classes"])
    return [make_task("dekel2009.split", plan=_main(plan), pair=list(pairs[p]), problem_index=p, split=s,
                      lam=chosen[p]["lam"], topics=chosen[p]["topics"], _data_dir=data_dir)
            for s in range(plan["n_splits"]) for p in range(len(pairs))]


def sensitivity_tasks(plan: dict, data_dir, lams: list[float]) -> list[dict]:
    from ...engine import make_task

    sens = plan.get("sensitivity")
    if not sens:
        return []
    return [make_task("dekel2009.sensitivity", plan=plan, split=s, lams=lams, _data_dir=data_dir)
            for s in range(sens["n_splits"])]


def run(engine, plan: dict, data_dir) -> dict[str, Any]:
    """Every part of ``plan`` through ``engine``: {"df": one row per noisy run, "lam_tab", "sens"}."""
    ddir = None if data_dir is None else str(data_dir)
    chosen = [rows[0] for rows in engine.run(problem_tasks(plan, ddir), "choosing λ per problem")]
    lam_rows = []
    for pair, meta in zip((t["pair"] for t in problem_tasks(plan, ddir)), chosen):
        sizes = np.bincount(meta["topics"])
        lam_rows.append({"problem": f"{pair[0]} vs {pair[1]}", "examples": meta["examples"],
                         **{f"val. error λ={k}": v for k, v in meta["errs"].items()}, "chosen λ": meta["lam"],
                         "topics": int(sizes.size), "topic sizes (min–max)": f"{sizes.min()}–{sizes.max()}"})
    tasks = split_tasks(plan, ddir, chosen)
    results = engine.run(tasks, f"splits ({plan['dataset']['label']})")
    by_id = {t["task_id"]: r for t, r in zip(tasks, results)}
    ordered = sorted(tasks, key=lambda t: (t["problem_index"], t["split"]))
    df = pd.DataFrame([r for t in ordered for r in by_id[t["task_id"]]])
    engine.write_table("results", df)
    lams = [float(m["lam"]) for m in chosen]
    sens_rows = engine.rows(sensitivity_tasks(plan, ddir, lams), "sensitivity")
    sens_rows.sort(key=lambda r: (r["kind"], r["problem"], r["split"]))  # stable: settings keep their order
    return {"df": df, "lam_tab": pd.DataFrame(lam_rows), "sens": pd.DataFrame(sens_rows)}
