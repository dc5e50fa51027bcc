"""The "What we recommend instead" sections shared by the reproductions.

Tables and claims that put the learners we recommend (run with their defaults, untuned) next to the
paper's best algorithm of the **same run** (its tuned value), on the same streams and seeds. These are
not the paper's algorithms: the paper's tables, figures and claims never see these rows, and the claims
here are reported in their own group, outside the paper's "N of M claims hold".
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ..recipes import Claim
from ..recommend_bandit import RECOMMENDED

__all__ = ["RECOMMENDED", "NOT_THE_PAPER", "split_ours", "bandit_bottom_line", "bandit_tables",
           "bandit_figures", "ratio_claims", "supervised_bottom_line"]

#: the sentence every "What we recommend instead" section starts with
NOT_THE_PAPER = ("**These are not the paper's algorithms.** The paper's tables, figures and claims above are "
                 "computed without them; the claims below are ours (\"ours vs the paper's\"), with their "
                 "thresholds beside them, and are not counted in the paper's \"N of M claims hold\".")


def split_ours(df: pd.DataFrame, ours: Iterable[str] = RECOMMENDED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the paper's rows, our rows) of a results table, by learner name."""
    mine = df["learner"].isin(list(ours))
    return df[~mine].reset_index(drop=True), df[mine].reset_index(drop=True)


def _fmt_err(v: np.ndarray) -> str:
    sd = float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
    m = float(np.mean(v))
    if abs(m) >= 1e3 or not np.isfinite(m):  # a diverged run
        return f"{m:.3g} ± {sd:.2g}"
    return f"{m:.4f} ± {sd:.4f}"


def _name(r, algo_col: str | None) -> str:
    name = str(r[algo_col]) if algo_col and algo_col in r and pd.notna(r[algo_col]) else str(r["learner"])
    g = r.get("learner.gamma") if hasattr(r, "get") else None
    return name + (f" (γ = {float(g):g})" if g is not None and pd.notna(g) else "")


def bandit_bottom_line(rep: pd.DataFrame, ours: Iterable[str] = RECOMMENDED, algo_col: str | None = None,
                       channels: Iterable[str] | None = None) -> pd.DataFrame:
    """Per (dataset, channel): each of our learners' mean final error, the paper's best algorithm of the same
    run (lowest mean final error over the report seeds, its tuned γ) and the ratio ours / paper's best.

    ``rep``: report rows of the paper's algorithms and ours; ``algo_col``: the column naming the paper's
    algorithm (e.g. batra2021's ``algo``: "MC-DBF m=2"), else ``learner``."""
    ours = list(ours)
    rep = rep[rep["phase"] == "report"] if "phase" in rep.columns else rep
    out = []
    for (ds, ch), g in rep.groupby(["dataset", "channel"], sort=False):
        if channels is not None and ch not in set(channels):
            continue
        mine, paper = g[g["learner"].isin(ours)], g[~g["learner"].isin(ours)]
        if mine.empty or paper.empty:
            continue
        key = algo_col if algo_col and algo_col in paper.columns else "learner"
        means = paper.groupby(key, sort=False)["error_rate"].mean()
        best = str(means.idxmin())
        brow = paper[paper[key] == best].iloc[0]
        best_err = float(means.min())
        row = {"dataset": ds, "setting": ch, "seeds": int(g["seed"].nunique()),
               "paper's best": _name(brow, algo_col), "paper's best error": _fmt_err(paper.loc[paper[key] == best,
                                                                                               "error_rate"].to_numpy(float)),
               "_best": best_err, "_best_name": best}
        for name in ours:
            v = mine.loc[mine["learner"] == name, "error_rate"].to_numpy(float)
            if len(v) == 0:
                continue
            row[name] = _fmt_err(v)
            row[f"_{name}"] = float(v.mean())
            row[f"{name} / best"] = round(float(v.mean()) / best_err, 3) if best_err > 0 else np.nan
        out.append(row)
    return pd.DataFrame(out)


def _public(t: pd.DataFrame) -> pd.DataFrame:
    return t[[c for c in t.columns if not c.startswith("_")]]


def bandit_tables(bottom: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """One table per data set (one row per setting): ours, the paper's best (tuned γ), the ratios."""
    return {f"{ds}: final online error, ours (defaults) vs the paper's best (γ tuned), same streams and seeds":
            _public(g).drop(columns=["dataset"]).reset_index(drop=True)
            for ds, g in bottom.groupby("dataset", sort=False)}


def bandit_figures(rep: pd.DataFrame, bottom: pd.DataFrame, ours: Iterable[str] = RECOMMENDED,
                   algo_col: str | None = None) -> dict[str, object]:
    """One figure per data set, one panel per setting: the learning curves of ours and of the paper's best
    algorithm (mean, min–max over the report seeds)."""
    from .. import figures as plots
    from ..figures import color_picker, new_figure

    ours = list(ours)
    figs = {}
    rep = rep[rep["phase"] == "report"] if "phase" in rep.columns else rep
    for ds, bd in bottom.groupby("dataset", sort=False):
        fig, axes = new_figure(len(bd), ncols=min(3, len(bd)), width=4.6, height=3.6)
        for ax, (_, b) in zip(axes, bd.iterrows()):
            g = rep[(rep["dataset"] == ds) & (rep["channel"] == b["setting"])]
            key = algo_col if algo_col and algo_col in g.columns else "learner"
            g = g[g["learner"].isin(ours) | (g[key] == b["_best_name"])]
            labels = [str(r["learner"]) + " (ours)" if r["learner"] in ours
                      else f"{_name(r, algo_col)} (paper's best)" for _, r in g.iterrows()]
            frame = pd.DataFrame({"label": labels, "checkpoints": g["checkpoints"].to_numpy(),
                                  "curve": g["curve"].to_numpy(), "seed": g["seed"].to_numpy()})
            plots.learning_curves(frame, ax=ax, title=str(b["setting"]), band="minmax", colors=color_picker())
            ax.legend(fontsize="x-small")
        n = rep.loc[rep["dataset"] == ds, "seed"].nunique()
        figs[f"{ds}: cumulative online error, ours (defaults) vs the paper's best (γ tuned), mean and min–max "
             f"over {n} seeds, log-log"] = fig
    return figs


def ratio_claims(bottom: pd.DataFrame, learner: str, threshold: float, select=None, what: str = "",
                 against: str = "the paper's best", against_name: str | None = None) -> list[Claim]:
    """One claim per row of ``bottom`` (selected by ``select(row)``): ``learner``'s error ≤ threshold × the
    paper's best (or × the hidden column ``against`` of a baseline, named ``against_name``)."""
    claims = []
    for _, r in bottom.iterrows():
        if select is not None and not select(r):
            continue
        if f"_{learner}" not in r or pd.isna(r.get(f"_{learner}")):
            continue
        base = float(r["_best"]) if against == "the paper's best" else float(r[against])
        base_name = r["_best_name"] if against == "the paper's best" else (against_name or against.lstrip("_"))
        ours = float(r[f"_{learner}"])
        claims.append(Claim(
            f"{r['dataset']}, {r['setting']}: {learner} (defaults) {what or f'≤ {threshold:g}× {base_name}'}",
            f"≤ {threshold:g}× {base_name}", f"{learner} {ours:.4f} vs {base_name} {base:.4f} "
            f"(ratio {ours / base if base > 0 else np.inf:.3f})", bool(ours <= threshold * base),
            "ours vs the paper's (not a claim of the paper)"))
    return claims


def supervised_bottom_line(rows: pd.DataFrame, keys: list[str], metric: str, paper_best: Iterable[str],
                           ours: Iterable[str], peers: Iterable[str]) -> pd.DataFrame:
    """Per ``keys`` group of a (learner, ``metric``) table over seeds: mean ± std of each learner (ours,
    the paper's best among ``paper_best``, the peers), the ratio ours / the paper's best."""
    ours, peers, paper_best = list(ours), list(peers), list(paper_best)
    out = []
    for key, g in rows.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        means = g.groupby("learner", sort=False)[metric].mean()
        pb = [p for p in paper_best if p in means.index]
        if not pb:
            continue
        best = min(pb, key=lambda p: means[p])
        row = dict(zip(keys, key))
        row["seeds"] = int(g["seed"].nunique()) if "seed" in g.columns else 1
        row["_best"], row["_best_name"] = float(means[best]), best
        for name in pb:
            row[f"_{name}"] = float(means[name])
        row["paper's best"] = best
        row["paper's best " + metric] = _fmt_err(g.loc[g["learner"] == best, metric].to_numpy(float))
        for name in ours + peers:
            if name not in means.index:
                continue
            row[name] = _fmt_err(g.loc[g["learner"] == name, metric].to_numpy(float))
            row[f"_{name}"] = float(means[name])
        for name in ours:
            if name in means.index:
                row[f"{name} / best"] = round(float(means[name]) / float(means[best]), 3) if means[best] > 0 \
                    else np.nan
        out.append(row)
    return pd.DataFrame(out)


def public(t: pd.DataFrame) -> pd.DataFrame:
    """A table without its hidden ("_"-prefixed) numeric columns."""
    return _public(t)
