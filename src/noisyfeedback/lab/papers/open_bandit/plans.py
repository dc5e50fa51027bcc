"""open-bandit: the plans (quick, full) and the parts they run, in order, through the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

#: quick mode: a generated log in the Open Bandit layout (``quick_data``: its size and seed), small sizes
QUICK_PLAN: dict[str, Any] = {
    "campaigns": ["all"], "n_boot": 40, "n_flip_draws": 40, "n_sim": 20_000, "seed": 0,
    "flips": [[0.02, 0.1], [0.2, 0.1]], "flip_campaign": "all", "quick_data": {"n": 20_000, "seed": 0},
    "train_fraction": 0.5,
}

#: full mode: the authors' 10,000-row sample (``open-bandit/`` in the data directory), three campaigns
FULL_PLAN: dict[str, Any] = {
    "campaigns": ["all", "men", "women"], "n_boot": 200, "n_flip_draws": 100, "n_sim": 100_000, "seed": 0,
    "flips": [[0.002, 0.1], [0.005, 0.2], [0.2, 0.1]], "flip_campaign": "all", "quick_data": None,
    "train_fraction": 0.5,
}


def plan(quick: bool, data_dir=None) -> dict:
    """A fresh copy of the quick or the full plan."""
    return json.loads(json.dumps(QUICK_PLAN if quick else FULL_PLAN))


def _data(plan: dict) -> dict:
    """What every task's numbers depend on besides its own part (so a task is its own identity)."""
    return {"n_sim": plan["n_sim"], "quick_data": plan.get("quick_data")}


def campaign_tasks(plan: dict, data_dir, kind: str, **extra: Any) -> list[dict]:
    """One task of ``kind`` per campaign of the plan."""
    from ...engine import make_task

    return [make_task(kind, campaign=c, data=_data(plan), seed=plan["seed"], **extra, _data_dir=data_dir)
            for c in plan["campaigns"]]


def flip_tasks(plan: dict, data_dir) -> list[dict]:
    """One task per flip setting (its index seeds its draws, as in `flip_table`)."""
    from ...engine import make_task

    return [make_task("open_bandit.flips", campaign=plan["flip_campaign"], data=_data(plan), seed=plan["seed"],
                      rho0=float(r0), rho1=float(r1), index=j, n_draws=plan["n_flip_draws"], _data_dir=data_dir)
            for j, (r0, r1) in enumerate(plan["flips"])]


def quick_data_dir(engine, plan: dict) -> str:
    """Generate the quick plan's log (deterministic) next to the results; its data directory."""
    from ....ope.replication import make_quick_data

    spec = plan["quick_data"]
    root = Path(engine.store.root).parent / "quick-data"
    make_quick_data(root, n=int(spec["n"]), seed=int(spec["seed"]))
    return str(root)


def run(engine, plan: dict, data_dir) -> dict[str, Any]:
    """Every part of ``plan`` through ``engine``: {"problems": one summary per campaign, "est", "boot", "flips",
    "learning": the learners trained on part of the random log, per campaign}."""
    ddir = quick_data_dir(engine, plan) if plan.get("quick_data") else (None if data_dir is None else str(data_dir))
    problems = engine.rows(campaign_tasks(plan, ddir, "open_bandit.problem"), "ground truth (BTS's logs)")
    est = pd.DataFrame(engine.rows(campaign_tasks(plan, ddir, "open_bandit.estimates"), "estimates"))
    boot = pd.DataFrame(engine.rows(campaign_tasks(plan, ddir, "open_bandit.bootstrap", n_boot=plan["n_boot"]),
                                    "bootstrap of the relative error"))
    flips = pd.DataFrame(engine.rows(flip_tasks(plan, ddir), "flipped clicks"))
    learning = pd.DataFrame(engine.rows(campaign_tasks(plan, ddir, "open_bandit.learning",
                                                       train_fraction=float(plan["train_fraction"])),
                                        "learners trained on half the random log"))
    for name, df in (("problems", pd.DataFrame(problems)), ("estimates", est), ("bootstrap", boot), ("flips", flips),
                     ("learning", learning)):
        engine.write_table(name, df)
    return {"problems": problems, "est": est, "boot": boot, "flips": flips, "learning": learning}
