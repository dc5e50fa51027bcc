"""louche2015's claims: results -> claims, each with its threshold beside it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...recipes import Claim
from .tables import T1_LEARNERS, _fig5_summary, _t1_means, fig1a_table, fig1b_table, sample_size_table
from .tasks import STRATEGIES

#: "drastic" increase of the Perceptron's error on S_l over all clean labels: at least this factor
DRASTIC_FACTOR = 1.5

#: "close" error rates (UMA vs the semi-supervised baseline): within this absolute difference
CLOSE_ABS = 0.02

#: "stable state" along the iterations: error moves by at most this over the second half
STABLE_TOL = 0.02


# ---------------------------------------------------------------- claims
def make_claims(df: pd.DataFrame) -> list[Claim]:
    """The paper's Section 4 statements, judged. Long on purpose: one flat block per claim, each with its
    threshold (the module constants) beside it, in the paper's order."""
    claims: list[Claim] = []
    a = fig1a_table(df)
    if not a.empty:
        below = a["_u"] < a["_p"]
        lams_fail = [f"{v:g}" for v in a.loc[~below, "λ"]]
        claims.append(Claim(
            "Fig. 1(a): UMA's confusion rate is below the Perceptron's at every tested noise level "
            "(also docs/algorithms.md §8)",
            "below at every level", f"below at {int(below.sum())} of {len(a)} levels"
            + (f"; not at λ = {', '.join(lams_fail)}" if lams_fail else "")
            + "; runs won per level: " + ", ".join(w.split(" of ")[0] + "/" + w.split(" of ")[1]
                                                   for w in a["runs UMA < Perceptron"]),
            bool(below.all()), "judged on the mean over runs per level; the table below gives each level"))
        claims.append(Claim(
            "Fig. 1(a): UMA's confusion rate degrades as the noise level increases",
            "increases with the noise", f"{a['_u'].iloc[0]:.3f} at the weakest level, {a['_u'].iloc[-1]:.3f} at "
            f"the strongest", bool(a["_u"].iloc[-1] > a["_u"].iloc[0]), "weakest vs strongest tested level"))
        claims.append(Claim(
            "Fig. 1(a): the Perceptron follows the same trend (its confusion rate grows with the noise)",
            "increases with the noise", f"{a['_p'].iloc[0]:.3f} at the weakest level, {a['_p'].iloc[-1]:.3f} at the "
            "strongest", bool(a["_p"].iloc[-1] > a["_p"].iloc[0]),
            "whether it stays above UMA is the first claim"))
    b = fig1b_table(df)
    if not b.empty:
        best = float(b.loc[b["_u"].idxmin(), "α"])
        claims.append(Claim(
            "Fig. 1(b): the best confusion rate is at approximation factor 0 (UMA given the true C)",
            "minimum at α = 0", f"minimum at α = {best:g} ({b['_u'].min():.3f}; at α = 0: "
            f"{b.loc[b['α'] == 0, '_u'].iloc[0]:.3f})" if (b["α"] == 0).any() else f"minimum at α = {best:g}",
            bool(best == 0.0), "mean over runs"))
        under = b[(b["α"] > 0) & (b["α"] < 1)]["_u"]
        over = b[b["α"] < 0]["_u"]
        ident = b.loc[b["α"] == 1, "_u"]
        if len(under) and len(over) and len(ident):
            ok = bool(under.mean() < over.mean() and (under < ident.iloc[0]).all())
            claims.append(Claim(
                "Fig. 1(b): UMA is robust to underestimated noise (α > 0) but not to overestimated noise (α < 0)",
                "robust for α > 0, not for α < 0",
                f"mean confusion rate {under.mean():.3f} for 0 < α < 1, {over.mean():.3f} for α < 0, "
                f"{ident.iloc[0]:.3f} at α = 1 (C = I)", ok,
                "judged: every 0 < α < 1 beats C = I and their mean is below the mean over α < 0. The paper's "
                "sentence comparing the two sides lost its numbers and reads ambiguously"))
    s = sample_size_table(df)
    if not s.empty:
        for lam, h in s.groupby("λ"):
            claims.append(Claim(
                f"Propositions 3–4: the sample UMA needs grows with the noise; at λ = {lam:g} more data helps",
                "(theory: no number)", "; ".join(f"n = {r['n train']:,}: {r['_u']:.3f} (Perceptron {r['_p']:.3f})"
                                                  for _, r in h.iterrows()),
                bool(h["_u"].iloc[-1] < h["_u"].iloc[0]), "our panel, not in the paper: UMA's confusion rate at "
                                                          "the largest vs the smallest n"))
    for ds, m in _t1_means(df).items():
        g = lambda k: m.get(k, np.nan)  # noqa: E731
        claims.append(Claim(f"Table 1, {ds}: UMA improves slightly on the Perceptron trained on the pseudo-labels",
                            "UMA < P(pseudo-labels)", f"UMA {g('UMA'):.3f} vs {g('P_noisy'):.3f}",
                            bool(g("UMA") < g("P_noisy")), "test error, mean over runs"))
        claims.append(Claim(f"Table 1, {ds}: the Perceptron on S_l alone errs drastically more than on all clean "
                            "labels", "P(S_l) ≫ P(all)", f"{g('P_labelled'):.3f} vs {g('P_full'):.3f}",
                            bool(g("P_labelled") >= DRASTIC_FACTOR * g("P_full")),
                            f"'drastic' judged as at least {DRASTIC_FACTOR:g}×"))
        claims.append(Claim(f"Table 1, {ds}: UMA beats the Perceptron on S_l (same labelled data)",
                            "UMA < P(S_l)", f"UMA {g('UMA'):.3f} vs {g('P_labelled'):.3f}",
                            bool(g("UMA") < g("P_labelled")), "the paper: lower on Digits and Letter"))
        if ds.startswith("Letter"):
            claims.append(Claim(f"Table 1, {ds}: UMA has a clear advantage over the semi-supervised baseline",
                                "UMA < S3VM", f"UMA {g('UMA'):.3f} vs label spreading {g('SSL'):.3f}",
                                bool(g("UMA") < g("SSL")), "our baseline is label spreading, not S3VM"))
        else:
            claims.append(Claim(f"Table 1, {ds}: UMA and the semi-supervised baseline are close",
                                "UMA ≈ S3VM", f"UMA {g('UMA'):.3f} vs label spreading {g('SSL'):.3f}",
                                bool(abs(g("UMA") - g("SSL")) <= CLOSE_ABS),
                                f"'close' judged as within {CLOSE_ABS:g}; our baseline is label spreading, not S3VM"))
        others = [g(k) for k in T1_LEARNERS if k != "P_full"]
        claims.append(Claim(f"Table 1, {ds}: the Perceptron on all clean labels tops every other classifier",
                            "P(all) lowest", f"{g('P_full'):.3f}; best other {np.nanmin(others):.3f}",
                            bool(g("P_full") <= np.nanmin(others)), ""))
        claims.append(Claim(f"Table 1, {ds}: the kernel-PCA projection increases the semi-supervised "
                            "baseline's error", "no-K-PCA column lower", f"{g('SSL'):.3f} with K-PCA, "
                            f"{g('SSL_raw'):.3f} without", bool(g("SSL_raw") < g("SSL")),
                            "label spreading on the K-PCA features vs on the raw features"))
    for ds, by in _fig5_summary(df).items():
        if set(by) != set(STRATEGIES):
            continue
        rnd_best_err = min(by, key=lambda k: by[k]["error_late"]) == "random"
        rnd_best_cr = min(by, key=lambda k: by[k]["cr_late"]) == "random"
        claims.append(Claim(f"Fig. 5, {ds}: random selection is never the best strategy (some curve lies below)",
                            "random not best", "best on error: " + min(by, key=lambda k: by[k]["error_late"])
                            + ", on confusion rate: " + min(by, key=lambda k: by[k]["cr_late"]),
                            bool(not rnd_best_err and not rnd_best_cr), "means over the second half of the "
                                                                         "iterations"))
        ok = (by["confusion"]["cr_late"] < by["error"]["cr_late"]
              and by["error"]["error_late"] < by["confusion"]["error_late"])
        claims.append(Claim(f"Fig. 5, {ds}: the confusion strategy is better on the confusion rate, the error "
                            "strategy on the error rate", "each best on its own measure",
                            f"confusion rate: confusion {by['confusion']['cr_late']:.3f} vs error "
                            f"{by['error']['cr_late']:.3f}; error: error {by['error']['error_late']:.3f} vs "
                            f"confusion {by['confusion']['error_late']:.3f}", bool(ok),
                            "means over the second half of the iterations"))
        moves = {k: abs(v["error"] - v["error_half"]) for k, v in by.items()}
        claims.append(Claim(f"Fig. 5, {ds}: the curves reach a stable state", "plateau",
                            "error change over the second half: " + ", ".join(f"{k} {v:.3f}" for k, v in moves.items()),
                            bool(max(moves.values()) <= STABLE_TOL), f"stable: moves by at most {STABLE_TOL:g}"))
    return claims


def claims(results: dict, ctx) -> list[Claim]:
    """The claims of a run (``results`` from `.plans.run`)."""
    return make_claims(results["df"])


# ------------------------------------------------ ours vs the paper's (not the paper's claims)
#: our learners and the peers, by the names of ``recommend_supervised.label_noise_plan``
RECOMMEND_OURS = ("CorrectedLogisticRegression (known C)", "CorrectedLogisticRegression (estimated C)")
RECOMMEND_PEERS = ("LogisticRegression (noisy labels)", "cleanlab CleanLearning(LogisticRegression())")
#: our claim: CorrectedLogisticRegression (told C) below UMA (told the same C): ratio < this
RECOMMEND_RATIO = 1.0


def recommend_bottom_lines(df: pd.DataFrame, metric: str = "error") -> dict[str, pd.DataFrame]:
    """"toy" (per λ of Figure 1(a) that ours ran at) and "table1" (per data set): ours, the paper's best of
    the same runs (UMA or the Perceptron on the same noisy labels) and the peers."""
    from .._recommend import supervised_bottom_line

    out = {}
    ours = df[df["part"] == "recommend_toy"] if "part" in df.columns else df.iloc[0:0]
    if len(ours):
        paper = df[(df["part"] == "fig1a") & df["lam"].isin(ours["lam"].unique())]
        rows = pd.concat([paper, ours], ignore_index=True).rename(columns={"run": "seed"})
        out["toy"] = supervised_bottom_line(rows, ["lam"], metric, ("UMA", "Perceptron"), RECOMMEND_OURS,
                                            RECOMMEND_PEERS)
    ours = df[df["part"] == "recommend_table1"] if "part" in df.columns else df.iloc[0:0]
    if len(ours):
        paper = df[(df["part"] == "table1") & df["learner"].isin(["UMA", "P_noisy"])].copy()
        paper["learner"] = paper["learner"].map({"UMA": "UMA", "P_noisy": "Perceptron"})
        rows = pd.concat([paper, ours], ignore_index=True).rename(columns={"run": "seed"})
        out["table1"] = supervised_bottom_line(rows, ["dataset"], metric, ("UMA", "Perceptron"),
                                               RECOMMEND_OURS, RECOMMEND_PEERS)
    return out


def recommend_claims(lines: dict[str, pd.DataFrame]) -> list[Claim]:
    """Ours vs the paper's, per setting: CorrectedLogisticRegression told C (Ĉ on Table 1) below UMA told
    the same; and CorrectedLogisticRegression estimating C itself from the noisy labels below UMA told C
    (the case a user without C is in), with cleanlab (which does not need C either) in the note."""
    claims = []
    known, estimated = RECOMMEND_OURS
    cleanlab = RECOMMEND_PEERS[1]
    for part, t in lines.items():
        for _, r in t.iterrows():
            where = f"toy, λ = {r['lam']:g}" if part == "toy" else f"Table 1, {r['dataset']} (pseudo-labels, Ĉ)"
            uma = float(r["_UMA"])
            for name, what in ((known, "(both told the same C)"),
                               (estimated, "(ours estimating C itself from the noisy labels)")):
                if pd.isna(r.get(f"_{name}", np.nan)):
                    continue
                ours = float(r[f"_{name}"])
                note = "ours vs the paper's (not a claim of the paper)"
                if name == estimated and not pd.isna(r.get(f"_{cleanlab}", np.nan)):
                    note += f"; cleanlab, which needs no C either: {float(r[f'_{cleanlab}']):.4f}"
                claims.append(Claim(f"{where}: {name} test error below UMA's {what}",
                                    f"< {RECOMMEND_RATIO:g}× UMA", f"{ours:.4f} vs UMA {uma:.4f} (ratio "
                                    f"{ours / uma if uma > 0 else np.inf:.3f})",
                                    bool(ours < RECOMMEND_RATIO * uma), note))
    return claims
