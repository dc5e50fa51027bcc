"""batra2021: the plans (quick, full) and the parts they run, in order, through the engine (config sweeps)."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pandas as pd

from ... import recommend_bandit
from ...runner import sweep
from .tables import _with_algo, final_table, gamma_table, gap_table

#: SOBA keeps its full (Kd)×(Kd) matrix A⁻¹ only when K·d is at most this (docs/algorithms.md §4.7); else the diagonal
#: variant
SOBA_FULL_MAX_KD = 1000

#: quick mode (generated and bundled data; a test may shrink it)
QUICK_PLAN: dict[str, Any] = {
    "datasets": [
        {"name": "synsep", "n_samples": 5_000, "seed": 0, "label": "SynSep"},
        {"name": "digits", "normalize": True, "label": "digits"},
    ],
    "n_rounds": 30_000,
    "dbf_gammas": [0.05, 0.12, 0.2, 0.25, 0.3, 0.5, 0.8],
    "soba_gammas": [0.01, 0.02, 0.1, 0.3],
    "tuning_seeds": [100],
    "report_seeds": [0, 1],
    "m_sweep_seeds": [0, 1],
    "n_checkpoints": 40,
    # "What we recommend instead" beyond the paper: Diluted(m) with flips (ρ0, ρ1), MC-DBF's γ tuned again
    "recommend_flips": [(0.1, 0.2)],
    "recommend_flips_gammas": [0.12, 0.25, 0.5],
}

#: full mode (the paper's protocol: 1e6 rounds; 5 report seeds instead of the paper's 10, to keep the time down)
FULL_PLAN: dict[str, Any] = {
    "datasets": [
        {"name": "mnist", "normalize": True, "label": "MNIST"},
        {"name": "fashion-mnist", "normalize": True, "label": "Fashion-MNIST"},
        {"name": "synsep", "n_samples": 100_000, "seed": 0, "label": "SynSep"},
    ],
    "n_rounds": 1_000_000,
    "dbf_gammas": [0.02, 0.05, 0.1, 0.12, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 0.9],
    "soba_gammas": [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3],
    "tuning_seeds": [100],
    "report_seeds": [0, 1, 2, 3, 4],
    # values tried past a binding edge of each γ grid, at most (the grid's own best is reported too)
    "extend_grid": 4,
    "m_sweep_seeds": [0, 1, 2],
    "n_checkpoints": 60,
    "recommend_flips": [(0.1, 0.2)],
    "recommend_flips_gammas": [0.05, 0.12, 0.2, 0.3, 0.5, 0.9],
}


def m_levels(n_classes: int) -> dict[str, int]:
    """Low, medium and high set sizes for K classes: 2, K // 2, K − 2 (K = 10: 2, 5, 8)."""
    K = int(n_classes)
    return {"low": 2, "medium": max(2, K // 2), "high": max(2, K - 2)}


def _checkpoints(n_rounds: int, n: int) -> list[int]:
    """Log-spaced checkpoints that include T/10, T/2 and T exactly (for the gap table)."""
    pts = np.geomspace(10, n_rounds, n).astype(np.int64)
    pts = np.concatenate([pts, [max(1, n_rounds // 10), max(1, n_rounds // 2), n_rounds]])
    return [int(v) for v in np.unique(pts[(pts >= 1) & (pts <= n_rounds)])]


def _catalog_entry(ds: dict, data_dir) -> dict | None:
    import noisyfeedback as nf

    for e in nf.datasets.catalog(data_dir):
        if e["name"] == ds["name"] or ds["name"] in (e.get("aliases") or []):
            return e
    return None


def _shape(ds: dict, data_dir) -> tuple[int, int]:
    """(n_classes, n_features) of a dataset entry, from the catalog (no loading)."""
    import noisyfeedback as nf

    e = _catalog_entry(ds, data_dir)
    if e is not None and e.get("n_classes") and e.get("n_features"):
        return int(e["n_classes"]), int(e["n_features"])
    X, y = nf.datasets.load(ds["name"], data_dir=data_dir)
    return int(y.max()) + 1, int(X.shape[1])


def _main_config(ds: dict, plan: dict, K: int, soba_diagonal: bool) -> dict:
    levels = m_levels(K)
    ms = sorted(set(levels.values()))
    return {
        "name": f"batra2021-{ds['label']}",
        "description": "MC-DBF (three m) vs MC-SLP, Perceptron and SOBA; γ chosen on tuning seeds",
        "n_rounds": plan["n_rounds"],
        "checkpoints": _checkpoints(plan["n_rounds"], plan["n_checkpoints"]),
        "datasets": [ds],
        "channels": [
            {"name": "FullLabel", "label": "full"},
            {"name": "Diluted", "params": {"m": ms}},
            {"name": "NoisyBandit", "params": {"rho0": 0.0, "rho1": 0.0}, "label": "bandit"},
        ],
        "learners": [
            {"name": "Perceptron"},
            {"name": "MCSLP", "params": {"m": ms}},
            # m (and ρ0 = ρ1 = 0) taken from the Diluted channel
            {"name": "MCDBF", "params": {"gamma": list(plan["dbf_gammas"])}, "match_channel": True},
            {"name": "SOBA", "params": {"gamma": list(plan["soba_gammas"]), "diagonal": soba_diagonal}},
            # ours, defaults, untuned: m from each Diluted channel, m = 1 under the bandit channel
            *recommend_bandit.learner_entries(),
        ],
        "selection": {"param": "gamma", "metric": "error_rate", "tuning_seeds": list(plan["tuning_seeds"]),
                      "report_seeds": list(plan["report_seeds"]),
                      "extend": plan.get("extend_grid", 0)},
    }


def _flips_config(ds: dict, plan: dict, K: int) -> dict | None:
    """Beyond the paper: Diluted(m) with flips, MC-DBF (knowing ρ0, ρ1; γ tuned) and ours, same m, rounds,
    checkpoints and report seeds as the main figure."""
    flips = [tuple(f) for f in plan.get("recommend_flips") or []]
    if not flips:
        return None
    ms = sorted(set(m_levels(K).values()))
    return {
        "name": f"batra2021-{ds['label']}-flips",
        "description": "Diluted(m) with flips: MC-DBF (γ tuned) vs SquareCB and EpsilonGreedy (defaults)",
        "n_rounds": plan["n_rounds"],
        "checkpoints": _checkpoints(plan["n_rounds"], plan["n_checkpoints"]),
        "datasets": [ds],
        "channels": [{"name": "Diluted", "params": {"m": ms, "rho0": [f[0] for f in flips],
                                                    "rho1": [f[1] for f in flips]}, "zip": [["rho0", "rho1"]]}],
        "learners": [{"name": "MCDBF", "params": {"gamma": list(plan.get("recommend_flips_gammas",
                                                                             plan["dbf_gammas"]))},
                      "match_channel": True}, *recommend_bandit.learner_entries()],
        "selection": {"param": "gamma", "metric": "error_rate", "tuning_seeds": list(plan["tuning_seeds"]),
                      "report_seeds": list(plan["report_seeds"]),
                      "extend": plan.get("extend_grid", 0)},
    }


def _m_config(ds: dict, plan: dict, K: int, gamma: float) -> dict:
    return {
        "name": f"batra2021-{ds['label']}-m",
        "description": f"MC-DBF for m = 1..{K - 1} at constant γ = {gamma:g}",
        "n_rounds": plan["n_rounds"],
        "checkpoints": _checkpoints(plan["n_rounds"], plan["n_checkpoints"]),
        "seeds": list(plan["m_sweep_seeds"]),
        "datasets": [ds],
        "channels": [{"name": "Diluted", "params": {"m": list(range(1, K))}}],
        "learners": [{"name": "MCDBF", "params": {"gamma": float(gamma)}, "match_channel": True}],
    }


# ---------------------------------------------------------------- the recipe
def plan(quick: bool, data_dir=None) -> dict:
    return dict(QUICK_PLAN if quick else FULL_PLAN)


def run(engine, plan: dict, data_dir) -> dict[str, Any]:
    """Per available data set, the main sweep and then the m sweep (at the γ chosen for medium m), through
    the engine; the tables the claims and the report read."""
    t0 = time.perf_counter()
    frames, mframes, ours = [], [], []
    soba_variant, levels_by_ds, m_gamma, shapes = {}, {}, {}, {}
    missing = []
    datasets = []
    for ds in plan["datasets"]:
        e = _catalog_entry(ds, data_dir)
        if e is not None and not e.get("available", True):
            missing.append(f"{ds['label']} (files {', '.join(e.get('files') or [])} not found"
                           + (f"; source: {e['source']}" if e.get("source") else "") + ")")
        else:
            datasets.append(ds)
    if not datasets:
        raise FileNotFoundError("batra2021: none of the data sets is available: " + "; ".join(missing)
                                + ". Pass --data-dir with the folder holding them.")
    plan = {**plan, "datasets": datasets}
    for ds in plan["datasets"]:
        K, d = _shape(ds, data_dir)
        shapes[ds["label"]] = (K, d)
        levels_by_ds[ds["label"]] = m_levels(K)
        diagonal = K * d > SOBA_FULL_MAX_KD
        soba_variant[ds["label"]] = (f"diagonal A (K·d = {K * d:,})" if diagonal
                                     else f"full A⁻¹ (K·d = {K * d:,})")
        df = sweep(engine, _main_config(ds, plan, K, diagonal), ds["label"], data_dir)
        mine = df["learner"].isin(recommend_bandit.RECOMMENDED)
        ours.append(df[mine])
        df = df[~mine].reset_index(drop=True)  # the paper's rows: its tables, figures and claims
        frames.append(df)
        # Figure 5 at a constant γ: the one our selection chose for medium m on this data set
        med = levels_by_ds[ds["label"]]["medium"]
        h = df[(df["phase"] == "tuning") & (df["learner"] == "MCDBF") & (df["learner.m"] == med)]
        m_gamma[ds["label"]] = float(json.loads(h["chosen"].iloc[0])["gamma"])
        mframes.append(sweep(engine, _m_config(ds, plan, K, m_gamma[ds["label"]]), f"{ds['label']}-m", data_dir))
        fc = _flips_config(ds, plan, K)
        if fc is not None:
            ours.append(sweep(engine, fc, f"{ds['label']}-flips", data_dir))
    elapsed = time.perf_counter() - t0
    # "What we recommend instead": ours and, on the flipped channels (beyond the paper), MC-DBF re-tuned
    ours_df = _with_algo(pd.concat(ours, ignore_index=True)) if ours else pd.DataFrame()

    df = _with_algo(pd.concat(frames, ignore_index=True))
    msw = pd.concat(mframes, ignore_index=True)
    rep, tun = df[df["phase"] == "report"], df[df["phase"] == "tuning"]
    labels = [ds["label"] for ds in plan["datasets"]]
    synthetic = [ds["label"] for ds in plan["datasets"] if ds["name"] in ("synsep", "synnonsep")]
    real = [lb for lb in labels if lb not in synthetic]
    paper_name = {lb: lb for lb in labels}

    fin = final_table(rep)
    gaps = gap_table(rep)
    gtab = gamma_table(tun, paper_name, levels_by_ds)
    return {"df": df, "msw": msw, "rep": rep, "tun": tun, "labels": labels, "synthetic": synthetic, "real": real,
            "paper_name": paper_name, "fin": fin, "gaps": gaps, "gtab": gtab, "datasets": plan["datasets"],
            "soba_variant": soba_variant, "levels_by_ds": levels_by_ds, "m_gamma": m_gamma, "shapes": shapes,
            "missing": missing, "elapsed": elapsed, "ours": ours_df}
