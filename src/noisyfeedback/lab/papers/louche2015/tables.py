"""louche2015's tables from the results (read by the claims and the report)."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Table 1's learners, in the paper's column order, then our diagnostics
T1_LEARNERS = {
    "UMA": "UMA (Ĉ, pseudo-labels)",
    "P_noisy": "Perceptron, pseudo-labels",
    "P_labelled": "Perceptron, S_l only",
    "P_full": "Perceptron, all clean labels",
    "SSL": "label spreading (K-PCA features)",
    "SSL_raw": "label spreading (no K-PCA)",
}

T1_DIAGNOSTICS = {
    "UMA_actual_C": "UMA (actual confusion of the pseudo-labels)",
    "UMA_cc": "UMA (Ĉ), labels drawn from Ĉ (class-conditional)",
    "P_cc": "Perceptron, labels drawn from Ĉ (class-conditional)",
}


# ---------------------------------------------------------------- tables
def _ms(v) -> str:
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "—"
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if v.size > 1 else f"{v.mean():.3f}"


def fig1a_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per noise level λ: mean noise level, label noise, and both learners' confusion rates."""
    g = df[df["part"] == "fig1a"]
    if g.empty:
        return pd.DataFrame()
    rows = []
    for lam, h in g.groupby("lam", sort=True):
        u, p = h[h["learner"] == "UMA"], h[h["learner"] == "Perceptron"]
        wins = int(np.sum(u.sort_values("run")["confusion_rate"].to_numpy()
                          < p.sort_values("run")["confusion_rate"].to_numpy()))
        rows.append({"λ": lam, "‖C − diag C‖_F": h["noise_level"].mean(), "cond(C)": h["cond"].mean(),
                     "wrong labels": h["label_noise"].mean(),
                     "UMA confusion rate": _ms(u["confusion_rate"]),
                     "Perceptron confusion rate": _ms(p["confusion_rate"]),
                     "UMA error": _ms(u["error"]), "Perceptron error": _ms(p["error"]),
                     "runs UMA < Perceptron": f"{wins} of {len(u)}",
                     "_u": u["confusion_rate"].mean(), "_p": p["confusion_rate"].mean()})
    return pd.DataFrame(rows)


def fig1b_table(df: pd.DataFrame) -> pd.DataFrame:
    g = df[df["part"] == "fig1b"]
    if g.empty:
        return pd.DataFrame()
    rows = []
    for alpha, h in g.groupby("alpha", sort=False):
        rows.append({"α": alpha, "λ' fed": h["lam_fed"].iloc[0], "cond(C(λ'))": h["cond"].mean(),
                     "UMA confusion rate": _ms(h["confusion_rate"]), "UMA error": _ms(h["error"]),
                     "_u": h["confusion_rate"].mean()})
    return pd.DataFrame(rows).sort_values("α", ascending=False).reset_index(drop=True)


def sample_size_table(df: pd.DataFrame) -> pd.DataFrame:
    g = df[df["part"] == "sample_size"]
    if g.empty:
        return pd.DataFrame()
    rows = []
    for (lam, n), h in g.groupby(["lam", "n_train"], sort=True):
        u, p = h[h["learner"] == "UMA"], h[h["learner"] == "Perceptron"]
        rows.append({"λ": lam, "n train": int(n), "UMA confusion rate": _ms(u["confusion_rate"]),
                     "Perceptron confusion rate": _ms(p["confusion_rate"]),
                     "_u": u["confusion_rate"].mean(), "_p": p["confusion_rate"].mean()})
    return pd.DataFrame(rows)


def table1(df: pd.DataFrame, metric: str = "error") -> pd.DataFrame:
    """Table 1: mean ± std over runs of ``metric`` per data set, the paper's columns then our diagnostics."""
    g = df[df["part"] == "table1"]
    rows = []
    for ds, h in g.groupby("dataset", sort=False):
        row = {"dataset": ds, "runs": int(h["run"].nunique())}
        for key, name in {**T1_LEARNERS, **T1_DIAGNOSTICS}.items():
            row[name] = _ms(h.loc[h["learner"] == key, metric])
        rows.append(row)
    return pd.DataFrame(rows)


def table1_setup(df: pd.DataFrame) -> pd.DataFrame:
    g = df[df["part"] == "table1"]
    rows = []
    for ds, h in g.groupby("dataset", sort=False):
        r0 = h.drop_duplicates("run")
        failed = h[h["error"].isna()]
        rows.append({"dataset": ds, "K": int(r0["K"].iloc[0]), "|S_l|": int(r0["n_labelled"].iloc[0]),
                     "|S_u|": int(r0["n_unlabelled"].iloc[0]), "test": int(r0["n_test"].iloc[0]),
                     "wrong pseudo-labels": _ms(r0["pseudo_label_noise"]), "cond(Ĉ)": _ms(r0["cond_C_hat"]),
                     "max |Ĉ − actual confusion|": _ms(r0["C_hat_vs_actual"]),
                     "kernel γ (median heuristic)": _ms(r0["kpca_gamma"]),
                     "fits rejected": "; ".join(sorted({f"{r.learner}: {r.note[:80]}" for r in failed.itertuples()}))
                     or "none"})
    return pd.DataFrame(rows)


def _t1_means(df: pd.DataFrame, metric: str = "error") -> dict[str, dict[str, float]]:
    g = df[df["part"] == "table1"]
    if g.empty:
        return {}
    return {ds: h.groupby("learner")[metric].mean().to_dict() for ds, h in g.groupby("dataset", sort=False)}


def _fig5_summary(df: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """dataset -> strategy -> {error, cr, error_late, cr_late, error_half}: final values, means over the
    second half of the iterations, and the error at half-way (mean over runs)."""
    g = df[df["part"] == "fig5"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    if g.empty:
        return out
    for (ds, strat), h in g.groupby(["dataset", "strategy"], sort=False):
        its = np.asarray(h["iterations"].iloc[0])
        E = np.vstack(h["error_curve"].to_numpy())
        R = np.vstack(h["cr_curve"].to_numpy())
        late = its > its[-1] / 2
        half = int(np.searchsorted(its, its[-1] / 2))
        out.setdefault(ds, {})[strat] = {
            "error": float(E[:, -1].mean()), "cr": float(R[:, -1].mean()),
            "error_late": float(E[:, late].mean()), "cr_late": float(R[:, late].mean()),
            "error_half": float(E[:, half].mean()), "runs": len(h)}
    return out


def fig5_table(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for ds, by in _fig5_summary(df).items():
        for strat, v in by.items():
            rows.append({"data": ds, "strategy": strat, "runs": v["runs"], "final error": v["error"],
                         "final confusion rate": v["cr"], "error, 2nd half (mean)": v["error_late"],
                         "confusion rate, 2nd half (mean)": v["cr_late"]})
    return pd.DataFrame(rows)
