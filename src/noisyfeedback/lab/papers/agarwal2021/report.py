"""agarwal2021's report: tables and sections (results, claims -> sections)."""

from __future__ import annotations

import pandas as pd

from ...recipes import Claim, claims_table
from .claims import PAPER_TABLE1, _paper_rates


def _table1_tables(table1: dict, n_s: int) -> dict:
    from ....noise import DEFAULT_METHOD

    t1_tables = {}
    for ds, tab in table1.items():
        t = pd.DataFrame({"ρ0": tab["rho0"], "ρ1": tab["rho1"],
                          f"ours ({DEFAULT_METHOD}) ρ̂0": tab["ours_rho0"], "ours ρ̂1": tab["ours_rho1"],
                          "NREst ρ̂0": tab["nrest_rho0"], "NREst ρ̂1": tab["nrest_rho1"]})
        if ds in PAPER_TABLE1:
            paper = _paper_rates(ds, tab)
            t["paper ρ̂0"], t["paper ρ̂1"] = paper[:, 0], paper[:, 1]
        t["ours s"] = tab["ours_seconds"].round(2)
        t["NREst s"] = tab["nrest_seconds"].round(2)
        t1_tables[f"Table 1, {ds}: estimated flip rates (n_s = {n_s:,} tuples)"] = t.round(3)
    return t1_tables


def _setup(plan: dict, quick: bool, soba_variants: dict, sweep_seconds: float, jobs: int) -> list[str]:
    from ....noise import DEFAULT_METHOD

    mode = "quick" if quick else "full"
    not_run = [] if quick else [n for n in ("USPS",) if n not in {d["label"] for d in plan["datasets"]}]
    text = [
        f"Mode: **{mode}**. Datasets: {', '.join(d['label'] for d in plan['datasets'])}"
        + " (rows of the real data sets scaled to unit L2 norm, as the paper assumes ‖x‖ ≤ 1). "
        f"{plan['n_rounds']:,} rounds per run; γ from {plan['gammas']} chosen per (dataset, noise setting, "
        f"algorithm) on tuning seed(s) {plan['tuning_seeds']}, then reported over seeds {plan['report_seeds']}"
        + (f"; where the best γ sat on an edge of its grid, up to {plan['extend_grid']} more values were tried "
           "past that edge (geometrically, γ < 1) until the best was interior, and the ratios of 'What we "
           "recommend instead' are computed against that extended-grid best." if plan.get("extend_grid") else ".")
        + "",
        (f"RCINE's γ grid is {plan['rcine_gammas']}"
         + (f" and it is reported over seeds {plan['rcine_report_seeds']}" if "rcine_report_seeds" in plan else "")
         + " (each of its runs costs an estimate of seconds every n_s rounds). "
         if "rcine_gammas" in plan else "") +
        f"RCINE re-estimates (ρ̂0, ρ̂1) every {plan.get('estimate_every', plan['n_s']):,} rounds on its last "
        f"n_s = {plan['n_s']:,} tuples with our estimator "
        f"(`{DEFAULT_METHOD}`). SOBA ran as: "
        + ", ".join(f"{k}: {v}" for k, v in soba_variants.items())
        + " (the full second-order matrix costs O((Kd)²) per update; docs/algorithms.md §4.7).",
        f"Sweep wall time {sweep_seconds:.0f} s with {jobs} job(s).",
    ]
    if not_run:
        text.append("Not run: " + ", ".join(not_run) + " (its file `usps.h5` was not found in the data directory; "
                    "put it there to include it).")
    if quick:
        text.append("Quick mode runs Figure 2 on SynSep and Table 1 on scikit-learn's digits instead of "
                    "MNIST/USPS/Fashion-MNIST, with fewer rounds and seeds: its numbers show the method works, "
                    "not the paper's values.")
    return text


def sections(results: dict, claims: list[Claim], ctx) -> list:
    """The report's sections (results, claims -> sections)."""
    from ... import figures
    from ...report import Section

    df, plan = results["df"], ctx.plan
    text = _setup(plan, ctx.quick, results["soba_variants"], results["sweep_seconds"], ctx.jobs)
    curves = figures.learning_curve_figures(df)
    rcine_sweeps = figures.sweep_figures(df)
    summary = figures.summary_table(df)
    t1_tables = _table1_tables(results["table1"], plan["table1_n_s"])
    claims = claims_table(claims)
    sections = [
        Section("Set-up", text=text),
        Section("Paper's claims vs our measurements", tables={"Claims": claims}),
        Section("Figure 2: average online error (log-log)",
                figures={f"{ds}, {ch}": fig for (ds, ch), fig in curves.items()},
                tables={"Final online error (mean over report seeds)": summary}),
        Section("Figure 3: error against γ (tuning seeds)",
                figures={f"{ds}, {ch}: final error vs γ": fig for (ds, ch, p), fig in rcine_sweeps.items()},
                tables={"Chosen γ": figures.selection_table(df)}),
        Section("Table 1: estimated flip rates", tables=t1_tables,
                text=["Protocol: RCINE runs 2·n_s rounds; on its last n_s tuples (x, ỹ, f̃) both estimators "
                      "are fitted (the paper: 'at an intermediate instance of RCINE'). NREst is our "
                      "implementation of the paper's Algorithm 3 (MLP on [x, one-hot(ỹ)], 89th percentile)."]),
    ]
    rec = recommend_section(results, ctx)
    if rec is not None:
        sections.append(rec)
    sections.append(Section("Data", text=["Results tables (Parquet, one row per run) are under `results/`."]))
    return sections


def recommend_section(results: dict, ctx):
    """"What we recommend instead": SquareCB and EpsilonGreedy (defaults) next to the paper's best of the
    same run, on the same streams and report seeds; None when they did not run."""
    from ...report import Section
    from .. import _recommend as rec
    from .claims import RECOMMEND_NOISY_RATIO, recommend_bottom_line, recommend_claims

    bottom = recommend_bottom_line(results)
    text_pa, tables_pa = per_action_part(results.get("per_action"))
    if bottom.empty:
        return Section("What we recommend instead", text=[rec.NOT_THE_PAPER, *text_pa],
                       tables=tables_pa) if tables_pa else None
    both = pd.concat([results["df"], results["ours"]], ignore_index=True)
    text = [rec.NOT_THE_PAPER,
            "SquareCB (inverse-gap-weighted exploration) and EpsilonGreedy over a per-class linear least-squares "
            "oracle of the raw flipped feedback (docs/algorithms.md §4.13), with their **default parameters** — "
            "nothing is tuned, they have no γ grid — on the same data sets, noise settings, rounds, checkpoints "
            "and report seeds as Figure 2. The paper's best is the lowest mean final error among RCNBF, RCINE, "
            "Banditron, BPA and SOBA in this run, each with its γ tuned on the tuning seeds. Why a regression "
            "oracle needs no ρ0, ρ1: under class-independent flips E[f̃ | x, a] = ρ0 + (1 − ρ0 − ρ1)·P(y = a | x), "
            "an increasing map of the clean value, so the noise costs variance only.",
            f"Our claims: SquareCB ≤ {RECOMMEND_NOISY_RATIO:g}× RCNBF (γ tuned) at each noisy setting, and no "
            "more than the best of Banditron, BPA and SOBA at (0, 0)."]
    tables = {"Ours vs the paper's (not counted in the paper's claims)":
              claims_table(recommend_claims(bottom)), **rec.bandit_tables(bottom)}
    return Section("What we recommend instead", text=text + text_pa, tables={**tables, **tables_pa},
                   figures=rec.bandit_figures(both, bottom))


def per_action_part(per_action) -> tuple[list[str], dict]:
    """Beyond the paper: SquareCB under flips that depend on the action, without rates, told them and
    estimating them online (text, tables); nothing when it did not run."""
    from ...recommend_bandit import PER_ACTION_RATIOS
    from .claims import per_action_claims, per_action_table

    table = per_action_table(per_action)
    if table.empty:
        return [], {}
    text = ["**Flips that depend on the action** (beyond the paper, which assumes the same ρ0, ρ1 for every "
            "class). Channel: ρ0 = 0.3 for the first half of the labels (a wrong play of those is reported a hit "
            "30 % of the time), ρ1 = 0.5 for the second half (a right play of those is reported a miss half of the "
            "time); then E[f̃ | x, a] = ρ0(a) + (1 − ρ0(a) − ρ1(a))·P(y = a | x) is no longer the same increasing map "
            "for every action and the raw oracle ranks wrongly. Told the per-action rates, SquareCB explores and "
            "exploits on the values inverted per action; with rho0 = rho1 = \"estimate\" it estimates them online "
            "from the feedback of its own anchors (its confident right plays give 1 − ρ1(a), its plays of a label "
            "well below the greedy one give ρ0(a); from 2,500 rounds on, every 2,500) and uses them only when "
            "they differ between the actions. The uniform flips (0.15, 0.25) check that estimating costs nothing "
            "where the papers' assumption holds. Online error over the run (mean ± standard error over the "
            f"seeds); targets: known ≤ {PER_ACTION_RATIOS['known']:g}×, estimated ≤ "
            f"{PER_ACTION_RATIOS['estimated']:g}× SquareCB() (action-dependent), estimated ≤ "
            f"{PER_ACTION_RATIOS['uniform']:g}× (uniform)."]
    tables = {"Flips that depend on the action: ours (not counted in the paper's claims)":
              claims_table(per_action_claims(table)),
              "Flips that depend on the action: online error of SquareCB (defaults) without rates, told them, "
              "estimating them": table[[c for c in table.columns if not c.startswith("_")]]}
    return text, tables
