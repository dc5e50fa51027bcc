"""moroshko's tables from the raw results (read by the claims and the report)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .tasks import BUDGET_RULES, SCHEDULES, STRATEGIES, _best, _paper_best, binding_side


# ================================================================ tables
def tuning_frame(raw: dict) -> pd.DataFrame:
    """Every tuning run: kind, setting / schedule, variant, r, β, a, MSE on the tuning sequence, spend."""
    rows = []
    for key, res in raw["tuned"].items():
        for g in res["grid"]:
            if key[0] == "single":
                rows.append({"kind": "single", "setting": key[1], "variant": key[2], **g})
            else:
                rows.append({"kind": "budget", "setting": key[1], "B": key[2], "variant": f"{key[3]}, {key[4]}", **g})
    return pd.DataFrame(rows)


def chosen_frame(raw: dict) -> pd.DataFrame:
    """Per Section 4.1 (setting, variant): the chosen r / β over every value tried (the paper's grid and its
    extension), the paper's grid's own best, the values added past each edge, and whether the chosen value
    still sits on an edge of the values tried."""
    rows = []
    for key, res in raw["tuned"].items():
        if key[0] != "single":
            continue
        grid = res["grid"]
        best, paper = _best(grid), _paper_best(grid)
        row = {"setting": key[1], "variant": key[2]}
        for name in ("r", "beta"):
            if name not in best:
                row.update({name: np.nan, f"paper {name}": np.nan, f"{name} added": 0, f"{name} at edge": False})
                continue
            values = sorted({g[name] for g in grid})
            row.update({name: best[name], f"paper {name}": paper[name],
                        f"{name} added": len({g[name] for g in grid if not g.get("paper_grid", True)} - {
                            g[name] for g in grid if g.get("paper_grid", True)}),
                        f"{name} at edge": binding_side(values, best[name]) is not None})
        rows.append(row)
    return pd.DataFrame(rows)


def single_frame(raw: dict) -> pd.DataFrame:
    """One row per (Section 4.1 setting, variant, report seed): MSE, late MSE, curve, the chosen r / β."""
    fig_of = {st["setting"]: st["figure"] for st in raw["settings"]}
    rows = []
    for key, res in raw["reported"].items():
        if key[0] != "single":
            continue
        best = _best(raw["tuned"][key]["grid"])
        for run in res["runs"]:
            rows.append({"figure": fig_of[key[1]], "setting": key[1], "variant": key[2], "r": best["r"],
                         "beta": best.get("beta", np.nan), **{k: run[k] for k in
                                                               ("seed", "mse", "late_mse", "checkpoints", "curve")}})
    return pd.DataFrame(rows)


def budget_frame(raw: dict) -> pd.DataFrame:
    """One row per (schedule, B, rule, strategy, report seed): MSE, spend, the chosen r (and a)."""
    rows = []
    for key, res in raw["reported"].items():
        if key[0] != "budget":
            continue
        best = _best(raw["tuned"][key]["grid"])
        for run in res["runs"]:
            rows.append({"schedule": key[1], "B": key[2], "rule": key[3], "strategy": key[4], "r": best["r"],
                         "a": best.get("a", np.nan), "seed": run["seed"], "mse": run["mse"],
                         "labels_rate": run["labels_rate"], "max_labels_per_round": run["max_labels_per_round"]})
    return pd.DataFrame(rows)


def summary_single(df: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, variant): mean final and late MSE, ratio to noisy-feedback NLMS (mean, worst seed),
    seeds below it, chosen r and β."""
    out = []
    for setting, g in df.groupby("setting", sort=False):
        ref = g[g["variant"] == "noisy feedback"].set_index("seed")
        for variant, h in g.groupby("variant", sort=False):
            h = h.set_index("seed")
            ratio = (h["mse"] / ref["mse"].reindex(h.index)).to_numpy()
            late_ratio = (h["late_mse"] / ref["late_mse"].reindex(h.index)).to_numpy()
            out.append({
                "figure": h["figure"].iloc[0], "setting": setting, "variant": variant,
                "r": h["r"].iloc[0], "β": h["beta"].iloc[0], "seeds": len(h),
                "MSE": h["mse"].mean(), "MSE sd": h["mse"].std(ddof=1) if len(h) > 1 else 0.0,
                "late MSE": h["late_mse"].mean(),
                "ratio to noisy NLMS": float(np.mean(ratio)), "worst seed ratio": float(np.max(ratio)),
                "late ratio": float(np.mean(late_ratio)),
                "seeds below noisy NLMS": int((ratio < 1).sum()),
            })
    return pd.DataFrame(out)


def t_interval(values) -> float:
    """Half-width of the 95 % t-interval of the mean.

    >>> round(t_interval([1.0, 2.0, 3.0]), 4)
    2.4841
    """
    from scipy.stats import t

    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 0.0
    return float(t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def budget_pivot(summary: pd.DataFrame) -> pd.DataFrame:
    """Figure 6 as a table: one row per (schedule, B), 'MSE ± interval' per (strategy, rule)."""
    rows = []
    for (sched, B), g in summary.groupby(["schedule", "B"], sort=False):
        row = {"schedule": sched, "B": f"{B:g}"}
        for rule in BUDGET_RULES:
            for s in STRATEGIES:
                h = g[(g["rule"] == rule) & (g["strategy"] == s)]
                if len(h):
                    row[f"{s} ({rule})"] = f"{h['MSE'].iloc[0]:.4f} ± {h['95% CI ±'].iloc[0]:.4f}"
        st = g[(g["rule"] == "scaling") & (g["strategy"] == "auto_self_tuned")]
        au = g[(g["rule"] == "scaling") & (g["strategy"] == "auto")]
        if len(st) and len(au):
            row["labels/round: auto, self tuned (scaling)"] = (f"{au['labels/round'].iloc[0]:.3f}, "
                                                               f"{st['labels/round'].iloc[0]:.3f}")
        rows.append(row)
    return pd.DataFrame(rows)


def summary_budget(df: pd.DataFrame) -> pd.DataFrame:
    """Per (schedule, B, rule, strategy): mean MSE ± 95 % t-interval, spend (mean, max), r, a."""
    rows = []
    df = df.assign(_s=df["schedule"].map(SCHEDULES.index), _r=df["rule"].map(list(BUDGET_RULES).index),
                   _t=df["strategy"].map(STRATEGIES.index)).sort_values(["_s", "B", "_r", "_t", "seed"])
    for (sched, B, rule, strategy), g in df.groupby(["schedule", "B", "rule", "strategy"], sort=False):
        rows.append({"schedule": sched, "B": B, "rule": rule, "strategy": strategy, "r": g["r"].iloc[0],
                     "a": g["a"].iloc[0], "seeds": len(g), "MSE": g["mse"].mean(), "95% CI ±": t_interval(g["mse"]),
                     "labels/round": g["labels_rate"].mean(), "max labels/round (any seed)": g["labels_rate"].max(),
                     "max of labels so far / rounds so far": g["max_labels_per_round"].max()})
    return pd.DataFrame(rows)
