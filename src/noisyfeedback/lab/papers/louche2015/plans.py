"""louche2015: the plans (quick, full) and the tasks they run through the engine."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...engine import make_task

#: quick mode (generated and bundled data; a test may shrink it)
QUICK_PLAN: dict[str, Any] = {
    "toy": {"n_classes": 10, "n_features": 10, "margin": 0.05, "n_train": 4_000, "n_test": 4_000},
    "lams": [0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.05, 1.2],
    "toy_runs": 2,
    "max_iter": 500,
    "fig1b_lam": 0.5,
    "alphas": [1.0, 0.75, 0.5, 0.25, 0.0, -0.25, -0.5, -0.75, -1.0],
    "sample_sizes": [],  # the sample-size panel runs in full mode only
    "sample_size_lams": [0.9, 1.2],
    "sample_size_runs": 1,
    "table1": [
        {"name": "digits", "label": "Handwritten Digits", "n_train": 1_200, "n_labelled": 10,
         "n_components": 100, "kpca_fit": 2_000},
    ],
    "table1_runs": 2,
    "fig5_runs": 1,
    "fig5_toy_lam": 0.6,
    "fig5_every": 10,
    # "What we recommend instead": ours and the peers at these λ of Figure 1(a) (the same runs),
    # and on Table 1's pseudo-labels; CorrectedLogisticRegression with C estimated only in full mode
    "recommend_lams": [0.6, 1.2],
    "recommend_estimate": False,
    "recommend_table1": True,
}

#: full mode (a few minutes on one core)
FULL_PLAN: dict[str, Any] = {
    **QUICK_PLAN,
    "toy": {"n_classes": 10, "n_features": 10, "margin": 0.05, "n_train": 20_000, "n_test": 10_000},
    "toy_runs": 5,
    "sample_sizes": [5_000, 20_000, 80_000],
    "sample_size_runs": 2,
    "table1": [
        {"name": "digits", "label": "Handwritten Digits", "n_train": 1_200, "n_labelled": 10,
         "n_components": 100, "kpca_fit": 2_000},
        {"name": "letter", "label": "Letter Recognition", "n_train": None, "n_labelled": 20,
         "n_components": 100, "kpca_fit": 2_000},
    ],
    "table1_runs": 5,
    "fig5_runs": 2,
    "recommend_lams": [0.3, 0.6, 0.9, 1.2],
    "recommend_estimate": True,
}


def _available(ds: dict, data_dir) -> tuple[bool, str]:
    import noisyfeedback as nf

    for e in nf.datasets.catalog(data_dir):
        if e["name"] == ds["name"]:
            if e.get("available", True):
                return True, ""
            return False, (f"{ds['label']}: files {', '.join(e.get('files') or [])} not found"
                           + (f" (source: {e['source']})" if e.get("source") else ""))
    return True, ""


def plan_tasks(plan: dict, data_dir) -> tuple[list[dict], list[str]]:
    """Every task of ``plan`` (toy, sample size, Figure 5 toy, Table 1 per available data set, and ours: the
    "What we recommend instead" toy runs), and the data sets skipped for want of their files."""
    recommend = {k: v for k, v in plan.items() if k.startswith("recommend")}
    ours = bool(recommend.get("recommend_lams")) or bool(recommend.get("recommend_table1"))
    plan = {k: v for k, v in plan.items() if k not in recommend}  # the paper's tasks as before (same ids)
    tasks = [make_task("louche2015.toy", plan=plan, run=r) for r in range(int(plan["toy_runs"]))]
    tasks += [make_task("louche2015.sample_size", plan=plan, lam=float(lam), n_train=int(n), run=r)
              for lam in plan["sample_size_lams"] for n in plan["sample_sizes"]
              for r in range(int(plan["sample_size_runs"]))]
    tasks += [make_task("louche2015.fig5_toy", plan=plan, run=r) for r in range(int(plan["fig5_runs"]))]
    skipped = []
    for ds in plan["table1"]:
        ok, why = _available(ds, data_dir)
        if not ok:
            skipped.append(why)
            continue
        tasks += [make_task("louche2015.table1", dataset=ds, plan=plan if not recommend.get("recommend_table1")
                            else {**plan, "recommend_estimate": recommend.get("recommend_estimate", True)},
                            run=r, with_curves=r < int(plan["fig5_runs"]), _data_dir=data_dir,
                            **({"recommend": True} if recommend.get("recommend_table1") else {}))
                  for r in range(int(plan["table1_runs"]))]
    if ours and recommend.get("recommend_lams"):
        tasks += [make_task("louche2015.recommend_toy", plan={**plan, **recommend}, run=r)
                  for r in range(int(plan["toy_runs"]))]
    return tasks, skipped


def run(engine, plan: dict, data_dir) -> dict[str, Any]:
    """Every experiment of ``plan`` through the engine: {"df": one row per fitted model or curve, "skipped"}."""
    tasks, skipped = plan_tasks(plan, data_dir)
    df = pd.DataFrame(engine.rows(tasks, "UMA experiments"))
    engine.write_table("louche2015", df)
    return {"df": df, "skipped": skipped}


def plan(quick: bool, data_dir=None) -> dict:
    return dict(QUICK_PLAN if quick else FULL_PLAN)
