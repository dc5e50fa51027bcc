"""agarwal2021: the plans (quick, full) and the parts they run, in order, through the engine."""

from __future__ import annotations

import time

import pandas as pd

from ... import recommend_bandit
from ...engine import make_task
from ...runner import sweep

SETTINGS_FIG2 = [(0.0, 0.0), (0.15, 0.15), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2)]

SETTINGS_TABLE1 = [(0.0, 0.0), (0.15, 0.15), (0.25, 0.25), (0.2, 0.4), (0.4, 0.2), (0.4, 0.4)]

PAPER_NAMES = {"mnist": "MNIST", "usps": "USPS", "fashion-mnist": "Fashion-MNIST"}

LEARNERS = ["RCNBF", "RCINE", "Banditron", "BPA", "SOBA"]

#: quick mode: generated and bundled data, minutes (tests shrink it further)
QUICK_PLAN = {
    "datasets": [{"name": "synsep", "n_samples": 5_000, "seed": 0, "label": "SynSep"}],
    "n_rounds": 20_000, "gammas": [0.02, 0.1, 0.3], "tuning_seeds": [100], "report_seeds": [0, 1],
    "n_s": 8_000, "rcine_gammas": [0.1], "table1": [{"name": "digits", "normalize": True, "label": "digits"}],
    "table1_n_s": 5_000, "soba_full_below": 10,
    # beyond the paper: flips that depend on the action (digits: anchors exist; past the estimate's warm-up)
    "per_action": {"datasets": [{"name": "digits", "normalize": True, "label": "digits"}], "n_rounds": 100_000,
                   "seeds": [0, 1]},
}


def plan(quick: bool, data_dir=None) -> dict:
    """Datasets and sizes: quick runs on generated/bundled data, full on the paper's data."""
    import noisyfeedback as nf

    if quick:
        return dict(QUICK_PLAN)
    datasets = [
        {"name": "mnist", "normalize": True, "label": "MNIST"},
        {"name": "fashion-mnist", "normalize": True, "label": "Fashion-MNIST"},
    ]
    available = {e["name"]: e["available"] for e in nf.datasets.catalog(data_dir)}
    if available.get("usps"):
        datasets.insert(1, {"name": "usps", "normalize": True, "label": "USPS"})
    datasets += [  # the supplement's data sets, after the paper's
        {"name": "synsep", "n_samples": 100_000, "seed": 0, "label": "SynSep"},
        {"name": "iris", "normalize": True, "label": "Iris"},
    ]
    return {
        "datasets": datasets, "n_rounds": 1_000_000, "gammas": [0.005, 0.01, 0.02, 0.05, 0.1, 0.2],
        "tuning_seeds": [100], "report_seeds": list(range(10)),
        # RCINE costs one estimate (seconds) every n_s rounds: it keeps the window n_s = 50 000 (Table 1's)
        # but estimates every 200 000 rounds, on a shorter γ grid and fewer report seeds
        "n_s": 50_000, "estimate_every": 200_000, "rcine_gammas": [0.02, 0.05, 0.1], "rcine_report_seeds": [0, 1, 2],
        "table1": [d for d in datasets if d["name"] in PAPER_NAMES], "table1_n_s": 50_000,
        "soba_full_below": 50,
        # values tried past a binding edge of each γ grid, at most (the grid's own best is reported too)
        "extend_grid": 4,
        # beyond the paper: flips that depend on the action, on the paper's data sets (seconds a run)
        "per_action": {"datasets": [d for d in datasets if d["name"] in PAPER_NAMES], "n_rounds": 1_000_000,
                       "seeds": list(range(5))},
    }


def _config(ds: dict, plan: dict, soba_diagonal: bool, part: str = "all") -> dict:
    """The sweep of one data set; ``part`` "others" leaves RCINE out, "rcine" is RCINE alone (its own seeds)."""
    gammas = plan["gammas"]
    learners = [
        {"name": "RCNBF", "params": {"gamma": gammas}, "match_channel": True},
        {"name": "RCINE", "params": {"gamma": plan.get("rcine_gammas", gammas), "n_s": plan["n_s"],
                                     **({"estimate_every": plan["estimate_every"]} if "estimate_every" in plan
                                        else {})}},
        {"name": "Banditron", "params": {"gamma": gammas}},
        {"name": "BPA", "params": {"gamma": gammas}},
        {"name": "SOBA", "params": {"gamma": gammas, "diagonal": soba_diagonal}},
    ]
    if part in ("all", "others"):  # ours: defaults, untuned, on the same streams and report seeds
        learners += recommend_bandit.learner_entries()
    report_seeds = plan["report_seeds"]
    if part == "others":
        learners = [lr for lr in learners if lr["name"] != "RCINE"]
    elif part == "rcine":
        learners = [lr for lr in learners if lr["name"] == "RCINE"]
        report_seeds = plan.get("rcine_report_seeds", report_seeds)
    return {
        "name": f"agarwal2021-{ds['label']}" + ("" if part == "all" else f"-{part}"),
        "n_rounds": plan["n_rounds"],
        "checkpoints": 60,
        "datasets": [ds],
        "channels": [{"name": "NoisyBandit", "params": {"rho0": [s[0] for s in SETTINGS_FIG2],
                                                        "rho1": [s[1] for s in SETTINGS_FIG2]},
                      "zip": [["rho0", "rho1"]]}],
        "learners": learners,
        "selection": {"param": "gamma", "metric": "error_rate", "tuning_seeds": plan["tuning_seeds"],
                      "report_seeds": report_seeds, "extend": plan.get("extend_grid", 0)},
    }


def run(engine, plan: dict, data_dir) -> dict:
    """Table 1 first (it decides the estimator claims and is cheaper than the sweeps), then one sweep per data set
    (and RCINE's own, where it has its own seeds): every task through the engine."""
    import noisyfeedback as nf

    table1 = {}
    for ds in plan["table1"]:
        tasks = [make_task("agarwal2021.table1", dataset=ds, setting=list(st), setting_index=k, n_s=plan["table1_n_s"],
                           _data_dir=data_dir) for k, st in enumerate(SETTINGS_TABLE1)]
        table1[PAPER_NAMES.get(ds["name"], ds["label"])] = pd.DataFrame(engine.rows(tasks, f"Table 1 ({ds['label']})"))
    t0 = time.perf_counter()
    frames, soba_variants = [], {}
    parts = ("others", "rcine") if "rcine_report_seeds" in plan else ("all",)
    for ds in plan["datasets"]:
        X, _ = nf.datasets.load(ds["name"], data_dir=data_dir,
                                **{k: v for k, v in ds.items() if k in ("n_samples", "seed", "normalize")})
        diagonal = X.shape[1] >= plan["soba_full_below"]  # full A⁻¹ only for small d
        soba_variants[ds["label"]] = "diagonal" if diagonal else "full"
        for part in parts:
            folder = ds["label"] if part in ("all", "others") else f"{ds['label']}-RCINE"
            frames.append(sweep(engine, _config(ds, plan, diagonal, part), folder, data_dir))
    df = pd.concat(frames, ignore_index=True)
    per_action = pd.DataFrame()
    if plan.get("per_action"):  # beyond the paper (What we recommend instead): flips that depend on the action
        pa = plan["per_action"]
        tasks = [make_task("agarwal2021.per_action", **t, _data_dir=data_dir)
                 for t in recommend_bandit.per_action_tasks(pa["datasets"], pa["n_rounds"], pa["seeds"])]
        per_action = pd.DataFrame(engine.rows(tasks, "Flips that depend on the action"))
    # the paper's rows (its figures, tables and claims) apart from ours ("What we recommend instead")
    ours = df["learner"].isin(recommend_bandit.RECOMMENDED)
    return {"df": df[~ours].reset_index(drop=True), "ours": df[ours].reset_index(drop=True), "table1": table1,
            "soba_variants": soba_variants, "sweep_seconds": time.perf_counter() - t0, "per_action": per_action}
