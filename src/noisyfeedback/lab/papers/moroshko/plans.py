"""moroshko: the plans (quick, full) and the parts they run, in order, through the engine: the tuning of r, β
and a on separate sequences, then the reported runs with the chosen values."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...engine import make_task
from .tables import budget_frame, single_frame, summary_budget, summary_single, tuning_frame
from .tasks import (
    BUDGET_RULES,
    NOISE_SEED_OFFSET,
    SCHEDULES,
    STRATEGIES,
    TUNE_DATA_SEED,
    TUNE_NOISE_SEED,
    TUNE_SIM_SEED,
    VARIANTS,
    _best,
    _with,
)


def _grid(lo: float, hi: float, step: float) -> list[float]:
    return [float(round(10.0 ** e, 6)) for e in np.arange(lo, hi + 1e-9, step)]


#: quick mode (generated data only; part of ``noisyfeedback demo``; a test may shrink it)
QUICK_PLAN: dict[str, Any] = {
    "r_grid": _grid(-1, 4, 0.5),
    "beta_grid": _grid(-1, 3, 1.0),
    "seeds": 3,
    "n_checkpoints": 30,
    "synthetic": {"n_samples": 10_000, "M": 5.0},
    "channel": {"n_samples": 10_000, "Ms": [0.5, 1.0, 5.0]},
    "speech": {"n_samples": 8_000, "n_taps": 256, "room_length": 256, "tune_fraction": 0.2,
               "peak": 5.0, "floor": 0.05},
    "budget": {"n_samples": 4_000, "M": 5.0, "budgets": [1.5, 2.5], "seeds": 5, "a_steps": 10},
    "self_tuned_budget": 1.5,
    # values tried past a binding edge of the r (and β) grid, at most, per axis (the grid's own best is kept too)
    "extend_grid": 4,
    # "What we recommend instead": WeightedRLS (defaults) and the peers on the report sequences of
    # Figures 2, 4 and 5; the peers (pure-Python loops) on the first ``recommend_peer_seeds`` seeds only
    "recommend": True,
    "recommend_peer_seeds": 3,
    "recommend_speech_seeds": 3,
}

#: full mode: the paper's sizes (50,000 rounds, 20 repetitions; budgets on 10,000 rounds)
FULL_PLAN: dict[str, Any] = {
    "r_grid": _grid(-2, 4, 0.25),
    "beta_grid": _grid(-2, 3, 0.5),
    "seeds": 20,
    "n_checkpoints": 60,
    "synthetic": {"n_samples": 50_000, "M": 5.0},
    "channel": {"n_samples": 50_000, "Ms": [0.5, 1.0, 5.0]},
    "speech": {"n_samples": 20_000, "n_taps": 1024, "room_length": 1024, "tune_fraction": 0.2,
               "peak": 5.0, "floor": 0.05},
    "budget": {"n_samples": 10_000, "M": 5.0, "budgets": [1.2, 1.5, 1.8, 2.2, 2.5, 2.8, 3.5], "seeds": 20,
               "a_steps": 14},
    "self_tuned_budget": 1.5,
    "extend_grid": 4,
    "recommend": True,
    "recommend_peer_seeds": 5,
    # WeightedRLS costs O(d²) a round: with 1,024 taps only the first seeds of the speech substitute
    "recommend_speech_seeds": 3,
}


# ================================================================ planning
def _variant_learner(name: str) -> dict:
    v = VARIANTS[name]
    return {"cls": v["cls"], "params": dict(v["params"])}


def _single_settings(plan: dict) -> list[dict]:
    """The Section 4.1 settings: (figure, setting label, tuning data/noise, report data/noise per seed)."""
    seeds = range(plan["seeds"])
    out = []
    syn = plan["synthetic"]
    n = syn["n_samples"]
    out.append({
        "figure": "Figure 2", "setting": f"synthetic, M = {syn['M']:g}", "n_rounds": n,
        "tune": ({"kind": "synthetic", "n_samples": n, "seed": TUNE_DATA_SEED},
                 {"kind": "uniform", "M": syn["M"], "seed": TUNE_NOISE_SEED}),
        "report": [({"kind": "synthetic", "n_samples": n, "seed": s},
                    {"kind": "uniform", "M": syn["M"], "seed": NOISE_SEED_OFFSET + s}) for s in seeds],
    })
    ch = plan["channel"]
    n = ch["n_samples"]
    for M in ch["Ms"]:
        out.append({
            "figure": "Figure 4", "setting": f"channel equalization, M = {M:g}", "n_rounds": n,
            "tune": ({"kind": "channel", "n_samples": n, "seed": TUNE_DATA_SEED},
                     {"kind": "uniform", "M": M, "seed": TUNE_NOISE_SEED}),
            "report": [({"kind": "channel", "n_samples": n, "seed": s},
                        {"kind": "uniform", "M": M, "seed": NOISE_SEED_OFFSET + s}) for s in seeds],
        })
    sp = plan["speech"]
    n = sp["n_samples"]
    n0 = int(round(sp["tune_fraction"] * n))
    base = {"kind": "speech", "n_samples": n, "n_taps": sp["n_taps"], "room_length": sp["room_length"], "seed": 0}
    hammer = {"kind": "hammer", "peak": sp["peak"], "floor": sp["floor"]}
    out.append({
        "figure": "Figure 5", "setting": "speech substitute", "n_rounds": n - n0,
        "tune": ({**base, "rows": [0, n0]}, {**hammer, "seed": TUNE_NOISE_SEED}),
        "report": [({**base, "rows": [n0, n]}, {**hammer, "seed": NOISE_SEED_OFFSET + s}) for s in seeds],
    })
    return out


def _budget_learner(rule: str, strategy: str, B: float, n: int) -> dict:
    return {"cls": "ORS", "params": {"scaling": BUDGET_RULES[rule], "variance": "unknown", "budget": B,
                                     "strategy": strategy, "horizon": n}}


def _budget_noise(schedule: str, M: float, seed: int) -> dict:
    return {"kind": schedule, "M": M, **({"seed": seed} if schedule == "uniform" else {})}


def _map(engine, tasks: list[dict], label: str) -> dict:
    """Run ``tasks`` through the engine; their results by key, in task order."""
    tasks = [make_task("moroshko.work", **t) for t in tasks]
    results = engine.run(tasks, label)
    return {task["key"]: rows[0] for task, rows in zip(tasks, results)}


def run_all(engine, plan: dict) -> dict[str, Any]:
    """Run every experiment of ``plan`` through ``engine``; return the raw results (tuning grids, runs, traces)."""
    settings = _single_settings(plan)
    bud = plan["budget"]
    nb = bud["n_samples"]
    budgets = list(bud["budgets"])
    B7 = plan["self_tuned_budget"]
    if B7 not in budgets:
        budgets.append(B7)
    # values past a binding edge (tasks.tune_grid); a plan without it keeps its tasks (and their ids) as they were
    ext = {"extend": int(plan["extend_grid"])} if plan.get("extend_grid") else {}
    tune_tasks = []
    for st in settings:
        for name in VARIANTS:
            data, noise = st["tune"]
            if VARIANTS[name].get("clean"):
                noise = {"kind": "clean"}
            tune_tasks.append({"op": "tune", "key": ("single", st["setting"], name), "data": data, "noise": noise,
                               "learner": _variant_learner(name), "r_grid": plan["r_grid"],
                               "beta_grid": plan["beta_grid"], "tune_beta": VARIANTS[name].get("tune_beta", False),
                               **ext})
    for sched in SCHEDULES:
        for B in budgets:
            for rule in BUDGET_RULES:
                for strategy in STRATEGIES:
                    tune_tasks.append({
                        "op": "tune", "key": ("budget", sched, B, rule, strategy),
                        "data": {"kind": "synthetic", "n_samples": nb, "seed": TUNE_DATA_SEED},
                        "noise": _budget_noise(sched, bud["M"], TUNE_NOISE_SEED),
                        "learner": _with(_budget_learner(rule, strategy, B, nb), seed=TUNE_SIM_SEED),
                        "r_grid": plan["r_grid"], "budget": B, "a_steps": bud["a_steps"], **ext})
    if True:  # the engine's parts: tuning, then the runs with the chosen values
        t0 = time.perf_counter()
        tuned = _map(engine, tune_tasks, "tuning r, β, a")
        t_tune = time.perf_counter() - t0
        report_tasks = []
        for st in settings:
            for name in VARIANTS:
                best = _best(tuned[("single", st["setting"], name)]["grid"])
                learner = _with(_variant_learner(name), **{k: best[k] for k in ("r", "beta") if k in best})
                runs = [{"seed": s, "data": data, "noise": {"kind": "clean"} if VARIANTS[name].get("clean") else noise,
                         "learner": learner, "sim_seed": s} for s, (data, noise) in enumerate(st["report"])]
                report_tasks.append({"op": "report", "key": ("single", st["setting"], name), "runs": runs,
                                     "n_checkpoints": plan["n_checkpoints"]})
        for sched in SCHEDULES:
            for B in budgets:
                for rule in BUDGET_RULES:
                    for strategy in STRATEGIES:
                        key = ("budget", sched, B, rule, strategy)
                        best = _best(tuned[key]["grid"])
                        base = _budget_learner(rule, strategy, B, nb)
                        extra = {k: best[k] for k in ("r", "a") if k in best}
                        runs = [{"seed": s, "data": {"kind": "synthetic", "n_samples": nb, "seed": s},
                                 "noise": _budget_noise(sched, bud["M"], NOISE_SEED_OFFSET + s),
                                 "learner": _with(base, **extra, seed=s), "sim_seed": s}
                                for s in range(bud["seeds"])]
                        report_tasks.append({"op": "report", "key": key, "runs": runs,
                                             "n_checkpoints": plan["n_checkpoints"]})
        for sched in SCHEDULES:
            best = _best(tuned[("budget", sched, B7, "scaling", "auto_self_tuned")]["grid"])
            report_tasks.append({
                "op": "trace", "key": ("trace", sched),
                "data": {"kind": "synthetic", "n_samples": nb, "seed": 0},
                "noise": _budget_noise(sched, bud["M"], NOISE_SEED_OFFSET),
                "learner": _with(_budget_learner("scaling", "auto_self_tuned", B7, nb), r=best["r"], seed=0),
                "sim_seed": 0})
        t0 = time.perf_counter()
        reported = _map(engine, report_tasks, "report runs")
        t_report = time.perf_counter() - t0
    return {"settings": settings, "tuned": tuned, "reported": reported, "budgets": budgets,
            "seconds": {"tuning": t_tune, "report": t_report}}


#: ours, default parameters, by the names of ``recommend_supervised.regression_plan``
RECOMMENDED = {
    "WeightedRLS (known variance)": {"cls": "WeightedRLS", "params": {"lam": 1.0}},
    "WeightedRLS (unknown, one label)": {"cls": "WeightedRLS", "params": {"lam": 1.0, "variance": "unknown"}},
    "WeightedRLS (unknown, two labels)": {"cls": "WeightedRLS", "params": {"lam": 1.0, "variance": "unknown",
                                                                           "n_labels": 2}},
}


#: padasip's FilterRLS multiplies d×d matrices every round (R·xxᵀ·R, O(d³)): at the speech substitute's
#: 1,024 taps that is 2 GFLOP a round, hours a seed, so it runs only where d is at most this
PADASIP_RLS_MAX_D = 256


def _peer_runs(peer: str, setting: dict) -> bool:
    """Whether ``peer`` runs on ``setting`` (see PADASIP_RLS_MAX_D)."""
    d = setting["report"][0][0].get("n_taps", 0) if setting["report"] else 0
    return not ("FilterRLS" in peer and d > PADASIP_RLS_MAX_D)


def run_recommend(engine, plan: dict, settings: list[dict]) -> dict:
    """Ours (untuned) and the installed peers on the report sequences of every Section 4.1 setting: the same
    data, noise and simulation seeds as the paper's variants. {(kind, setting, name): result}."""
    from .tasks import peers_available

    tasks = []
    for st in settings:
        report = st["report"]
        if st["figure"] == "Figure 5":
            report = report[:int(plan.get("recommend_speech_seeds", len(report)))]
        for name, learner in RECOMMENDED.items():
            runs = [{"seed": s, "data": data, "noise": noise, "learner": learner, "sim_seed": s}
                    for s, (data, noise) in enumerate(report)]
            tasks.append({"op": "report", "key": ("recommend", st["setting"], name), "runs": runs,
                          "n_checkpoints": plan["n_checkpoints"]})
        for peer in (p for p in peers_available() if _peer_runs(p, st)):
            runs = [{"seed": s, "data": data, "noise": noise, "sim_seed": s}
                    for s, (data, noise) in enumerate(report[:int(plan.get("recommend_peer_seeds", len(report)))])]
            tasks.append({"op": "peer", "key": ("peer", st["setting"], peer), "peer": peer, "runs": runs,
                          "n_checkpoints": plan["n_checkpoints"]})
    return _map(engine, tasks, "what we recommend instead") if tasks else {}


def plan(quick: bool, data_dir=None) -> dict:
    return dict(QUICK_PLAN if quick else FULL_PLAN)


def run(engine, plan: dict, data_dir=None) -> dict[str, Any]:
    """Every part of ``plan`` through the engine, and the tables the report and the claims read."""
    paper_plan = {k: v for k, v in plan.items() if not k.startswith("recommend")}
    raw = run_all(engine, paper_plan)
    ours = run_recommend(engine, plan, raw["settings"]) if plan.get("recommend") else {}
    tun = tuning_frame(raw)
    single = single_frame(raw)
    budget = budget_frame(raw)
    s_budget = summary_budget(budget)
    frames = {"tuning": tun, "single_label": single.drop(columns=["checkpoints", "curve"]), "budget": budget}
    for name, df in frames.items():
        engine.write_table(name, df)
    return {"raw": raw, "tun": tun, "single": single, "budget": budget, "s_single": summary_single(single),
            "s_budget": s_budget, "traces": {k[1]: v for k, v in raw["reported"].items() if k[0] == "trace"},
            "fig6": s_budget[s_budget["B"].isin(plan["budget"]["budgets"])].reset_index(drop=True),
            "files": [f"results/{name}.parquet" for name in frames], "ours": ours}
