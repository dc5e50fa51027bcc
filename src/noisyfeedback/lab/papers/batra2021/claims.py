"""batra2021's claims: results -> claims, each with its threshold beside it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...recipes import Claim
from .tables import NOT_AVAILABLE, PLATEAU_TOL

#: "comparable": ours ≤ COMPARABLE_REL · other + COMPARABLE_ABS (the paper gives no threshold)
COMPARABLE_REL, COMPARABLE_ABS = 1.25, 0.01

#: "converges to MC-SLP": error gap over the second half of the rounds at most this
CONVERGED_GAP = 0.02

#: "error increases with m": no step down larger than this
MONOTONE_TOL = 0.005


# ---------------------------------------------------------------- claims
def _comparable(a: float, b: float) -> bool:
    return bool(a <= COMPARABLE_REL * b + COMPARABLE_ABS)


def make_claims(fin: pd.DataFrame, gaps: pd.DataFrame, gtab: pd.DataFrame, msw: pd.DataFrame,
                levels_by_ds: dict[str, dict[str, int]], quick: bool, real: list[str],
                synthetic: list[str]) -> list[Claim]:
    err = {(r["dataset"], r["algorithm"]): r["_err"] for _, r in fin.iterrows()}
    claims: list[Claim] = []
    rule = f"'comparable' judged as ours ≤ {COMPARABLE_REL:g}·other + {COMPARABLE_ABS:g} (final online error)"

    # Table 1 / Fig. 2: the best γ grows (does not shrink) with m
    for ds, g in gtab[~gtab["dataset"].isin(NOT_AVAILABLE)].groupby("dataset", sort=False):
        dbf = g[g["algorithm"].str.startswith("MC-DBF")]
        ours = [float(str(v).split()[0]) for v in dbf["our γ"]]
        plat = [float(v) for v in dbf[f"smallest γ within {PLATEAU_TOL:g} of the best"]]
        paper = [v for v in dbf["paper γ"] if v != "—"]
        def mono(v):
            return all(b >= a for a, b in zip(v, v[1:]))

        claims.append(Claim(
            f"{ds}: the best γ does not decrease from low to medium to high m (Table 1)",
            " ≤ ".join(paper) if paper else "non-decreasing (all four data sets of Table 1)",
            ", ".join(f"{v:g}" for v in ours), bool(mono(ours)),
            "judged on the γ chosen on the tuning seeds (lowest error on the grid); where the error is flat "
            f"in γ that choice is noisy: the smallest γ within {PLATEAU_TOL:g} of the best is "
            + ", ".join(f"{v:g}" for v in plat) + (" (non-decreasing)" if mono(plat) else " (not monotone either)")))

    # Fig. 3: MC-DBF (low and medium m) comparable to the bandit baseline (SOBA)
    for ds in real + synthetic:
        lv = levels_by_ds[ds]
        soba = err.get((ds, "SOBA"), np.nan)
        for level in ("low", "medium"):
            a = err.get((ds, f"MC-DBF m={lv[level]}"), np.nan)
            fig = "Fig. 6 (SynSep)" if ds in synthetic else "Fig. 3"
            slp = err.get((ds, f"MC-SLP m={lv[level]}"), np.nan)
            claims.append(Claim(
                f"{ds}: MC-DBF with {level} m (m = {lv[level]}) performs comparably to the bandit-feedback "
                f"baseline SOBA ({fig})", "comparable", f"MC-DBF {a:.4f} vs SOBA {soba:.4f}", _comparable(a, soba),
                rule + f"; the paper says 'comparable to the Banditron', its figure shows SOBA; MC-SLP with the "
                f"same m (full information) has {slp:.4f}"))
        hi, lo = err.get((ds, f"MC-DBF m={lv['high']}"), np.nan), err.get((ds, f"MC-DBF m={lv['low']}"), np.nan)
        claims.append(Claim(
            f"{ds}: high m (m = {lv['high']}) does worse than low m (m = {lv['low']}): the feedback is more diluted",
            "high m worse", f"m={lv['high']}: {hi:.4f} vs m={lv['low']}: {lo:.4f}", bool(hi > lo),
            ("Fig. 6" if ds in synthetic else "Fig. 3") + "; each m with its own tuned γ"))
    # "... even comparable to the Perceptron on Fashion-MNIST (and SVHN) for low m"
    if "Fashion-MNIST" in real:
        lv = levels_by_ds["Fashion-MNIST"]
        a = err.get(("Fashion-MNIST", f"MC-DBF m={lv['low']}"), np.nan)
        p = err.get(("Fashion-MNIST", "Perceptron"), np.nan)
        claims.append(Claim("Fashion-MNIST: MC-DBF with low m comparable even to the Perceptron (full information)",
                            "comparable", f"MC-DBF {a:.4f} vs Perceptron {p:.4f}", _comparable(a, p), rule))
    else:
        claims.append(Claim("Fashion-MNIST: MC-DBF with low m comparable even to the Perceptron (full information)",
                            "comparable", "not run" + (" (quick mode)" if quick else ""), None,
                            "needs Fashion-MNIST (full mode)"))

    # Fig. 4: MC-DBF converges to MC-SLP (docs/algorithms.md §8)
    for _, r in gaps.iterrows():
        shrinks = abs(r["gap at T"]) < abs(r["gap at T/10"])
        ok = bool(abs(r["gap, 2nd half"]) <= CONVERGED_GAP)
        claims.append(Claim(
            f"{r['dataset']}, m = {r['m']}: MC-DBF's error approaches MC-SLP's as rounds grow (Fig. 4)",
            "converges",
            f"gap {r['gap at T/10']:+.4f} at T/10 → {r['gap at T']:+.4f} at T = {r['rounds T']:,}; "
            f"2nd-half gap {r['gap, 2nd half']:+.4f}",
            ok, f"judged as: |MC-DBF − MC-SLP| in the error over the second half of the rounds ≤ {CONVERGED_GAP:g} "
                "(gap = MC-DBF − MC-SLP, mean over report seeds); the cumulative gap "
                + ("shrinks" if shrinks else "does not shrink") + " from T/10 to T"))

    # Fig. 5: error increases with m (judged over the diluted range 1 < m < K, the paper's Case 2;
    # m = 1 is the Banditron and is shown, and named in the note, but not judged)
    for ds, g in msw.groupby("dataset", sort=False):
        st = g.groupby("learner.m")["error_rate"].mean().sort_index()
        dil = st[st.index >= 2]
        steps = np.diff(dil.to_numpy())
        downs = int((steps < -MONOTONE_TOL).sum())
        note = (f"judged over m = 2…{int(dil.index.max())}: {downs} of {len(steps)} steps go down by more than "
                f"{MONOTONE_TOL:g}; γ = {float(g['learner.gamma'].iloc[0]):g} (our γ for medium m)")
        if 1 in st.index and 2 in st.index:
            note += (f"; m = 1 (the Banditron at this γ) has {st.loc[1]:.3f}, "
                     + ("above" if st.loc[1] > st.loc[2] else "below") + f" m = 2's {st.loc[2]:.3f}")
        claims.append(Claim(
            f"{ds}: MC-DBF's error increases with m at constant γ (Fig. 5)", "increasing",
            "; ".join(f"m={int(m)}: {v:.3f}" for m, v in st.items()), bool(downs == 0), note))
    return claims


def claims(results: dict, ctx) -> list[Claim]:
    r = results
    return make_claims(r["fin"], r["gaps"], r["gtab"], r["msw"], r["levels_by_ds"], ctx.quick, r["real"],
                       r["synthetic"])


# ------------------------------------------------ ours vs the paper's (not the paper's claims)
#: our claim: SquareCB (defaults) at most this × MC-DBF (γ tuned) under Diluted(m)
RECOMMEND_DILUTED_RATIO = 0.8


def recommend_bottom_line(results: dict) -> pd.DataFrame:
    """Per (dataset, channel): ours (defaults) vs the paper's best of the same run (γ tuned)."""
    from .._recommend import bandit_bottom_line

    ours = results.get("ours")
    if ours is None or len(ours) == 0:
        return pd.DataFrame()
    both = pd.concat([results["rep"], ours[ours["phase"] == "report"]], ignore_index=True)
    return bandit_bottom_line(both, algo_col="algo")


def recommend_claims(bottom: pd.DataFrame) -> list[Claim]:
    """Ours vs the paper's: SquareCB ≤ 0.8× MC-DBF (γ tuned) under every Diluted(m) channel."""
    from .._recommend import ratio_claims

    if bottom.empty:
        return []
    return ratio_claims(bottom, "SquareCB", RECOMMEND_DILUTED_RATIO,
                        select=lambda r: str(r["_best_name"]).startswith("MC-DBF"))
