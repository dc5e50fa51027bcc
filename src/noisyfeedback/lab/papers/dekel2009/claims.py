"""dekel2009's claims: results -> claims, each with its threshold beside it."""

from __future__ import annotations

import pandas as pd

from ...recipes import Claim

#: a fraction of runs "most of the time"
MAJORITY = 0.5


def _medians(df: pd.DataFrame, col: str, assignment: str = "random") -> pd.DataFrame:
    """problem × k table of median damage ratios."""
    d = df[df["assignment"] == assignment]
    return d.groupby(["problem", "k"])[col].median().unstack("k")


def make_claims(df: pd.DataFrame, plan: dict, quick: bool) -> list[Claim]:
    """The paper's statements on Figures 1–3, judged. Long on purpose: one flat block per claim, each with
    its threshold beside it, read top to bottom like the paper."""
    ks = sorted(int(k) for k in df.loc[df["assignment"] == "random", "k"].unique())
    n_t = plan["n_teachers"]
    lo_k = [k for k in ks if 0.2 <= k / n_t <= 0.4]
    k_low = min(ks, key=lambda k: abs(k / n_t - 0.10))
    k_high = max(ks)
    ets, sgd = _medians(df, "ratio_ets"), _medians(df, "ratio_sgd")
    probs = list(ets.index)
    n = len(probs)
    claims = []

    # the target: median ratio of EvilTeacherSVM below 1 for 20-40 % evil teachers
    worst = ets[lo_k].max(axis=1)
    ok = bool((worst < 1).all())
    claims.append(Claim(
        f"Fig. 1: EvilTeacherSVM's median damage ratio is below 1 on every binary problem for 20–40 % evil "
        f"teachers (k = {lo_k[0]}…{lo_k[-1]} of {n_t})",
        "< 1 (\"consistently performs no worse than SVM\")",
        "; ".join(f"{p}: " + "/".join(f"{ets.loc[p, k]:.2f}" for k in lo_k) for p in probs), ok,
        f"median per problem at k = {'/'.join(str(k) for k in lo_k)}; holds if every one is < 1"))
    allk = ets.max(axis=1)
    claims.append(Claim(
        "Fig. 1: EvilTeacherSVM performs no worse than SVM at every k (median damage ratio ≤ 1)", "≤ 1",
        f"{int((allk <= 1).sum())} of {n} problems; largest median {allk.max():.2f}", bool((allk <= 1).all()),
        f"k ∈ {ks}"))
    better = ets[k_high] < ets[k_low]
    claims.append(Claim(
        f"Fig. 1: EvilTeacherSVM's advantage grows with the noise (median ratio at k = {k_high} below that at "
        f"k = {k_low})", "decreasing in k",
        f"{int(better.sum())} of {n} problems; medians k={k_low} → k={k_high}: "
        + ", ".join(f"{ets.loc[p, k_low]:.2f}→{ets.loc[p, k_high]:.2f}" for p in probs),
        bool(better.sum() > n * MAJORITY), "judged: on more than half of the problems"))
    tiny = ets[k_high] <= 0.2
    claims.append(Claim(
        "Fig. 1: at the highest k, EvilTeacherSVM's excess error is ~20 % of SVM's on three of the 6 problems",
        "median ratio ≤ 0.2 on 3 of 6", f"{int(tiny.sum())} of {n} (k = {k_high}: "
        + ", ".join(f"{ets.loc[p, k_high]:.2f}" for p in probs) + ")",
        bool(tiny.sum() >= min(3, n)), "judged: at least 3 problems (all, with fewer than 3) at ≤ 0.2"))
    # Fig. 2 (TeacherSGD)
    at10 = sgd[k_low]
    claims.append(Claim(
        f"Fig. 2: TeacherSGD with k = {k_low} evil teachers: excess error 60–70 % of SVM's",
        "0.6–0.7", ", ".join(f"{p}: {at10[p]:.2f}" for p in probs),
        bool(((at10 >= 0.5) & (at10 <= 0.8)).all()),
        "median damage ratio per problem; judged: every problem within [0.5, 0.8]"))
    worse = sgd[k_high] > sgd[k_low]
    claims.append(Claim(
        "Fig. 2: TeacherSGD's advantage deteriorates as the number of evil teachers grows",
        "increasing in k", f"{int(worse.sum())} of {n} problems; medians k={k_low} → k={k_high}: "
        + ", ".join(f"{sgd.loc[p, k_low]:.2f}→{sgd.loc[p, k_high]:.2f}" for p in probs),
        bool(worse.sum() > n * MAJORITY), "judged: on more than half of the problems"))
    claims.append(Claim(
        "Sec. 6: the two algorithms behave differently — EvilTeacherSVM improves with more noise, TeacherSGD "
        "is better at low noise", "opposite trends",
        f"EvilTeacherSVM better at k={k_high} than k={k_low} on {int(better.sum())}/{n}; TeacherSGD worse at "
        f"k={k_high} on {int(worse.sum())}/{n}", bool(better.sum() > n * MAJORITY and worse.sum() > n * MAJORITY),
        "both trends above on more than half of the problems"))
    # Fig. 3 (topic teachers, TeacherSGD as in the paper)
    top = df[df["assignment"] == "topic"].dropna(subset=["ratio_sgd"])
    if not top.empty:
        wins = top.assign(win=top["ratio_sgd"] < 1).groupby("problem")["win"].mean()
        claims.append(Claim(
            "Fig. 3 (topic teachers): TeacherSGD beats SVM (ratio < 1) a majority of the time on all but one "
            "problem", "≥ 5 of 6 problems", f"{int((wins > MAJORITY).sum())} of {len(wins)} problems ("
            + ", ".join(f"{p}: {w:.0%}" for p, w in wins.items()) + ")",
            bool((wins > MAJORITY).sum() >= len(wins) - 1), "fraction of runs with ratio < 1, per problem"))
        low = top[top["flipped"] <= 0.2]
        if len(low):
            frac = float((low["ratio_sgd"] <= 0.4).mean())
            claims.append(Claim(
                "Fig. 3: at low to moderate noise TeacherSGD often reaches 40 % of SVM's excess error or better",
                "often ≤ 0.4", f"{frac:.0%} of {len(low)} runs with ≤ 20 % flipped labels have ratio ≤ 0.4",
                bool(frac >= 1 / 3), "judged: 'often' = at least a third of those runs"))
        high = top[top["flipped"] > 0.35]
        if len(high):
            med = float(high["ratio_sgd"].median())
            claims.append(Claim(
                "Fig. 3: beyond 35 % flipped labels TeacherSGD's advantage is no longer noticeable",
                "median ratio ≈ 1 or more", f"median {med:.2f} over {len(high)} runs", bool(med >= 0.9),
                "judged: median ratio ≥ 0.9"))
        else:
            claims.append(Claim("Fig. 3: beyond 35 % flipped labels TeacherSGD's advantage is no longer noticeable",
                                "median ratio ≈ 1 or more", "no run flipped more than 35 %", None, ""))
    return claims




def claims(results: dict, ctx) -> list[Claim]:
    return make_claims(results["df"], ctx.plan, ctx.quick)
