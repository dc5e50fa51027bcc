"""open-bandit's report: tables and sections (results, claims -> sections)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

INTRO = ("The dataset authors' standard check, with every estimator of `nf.ope`; then the action-feature "
         "learner trained on half the random log (user features, affinities, item features, slot) and "
         "estimated off-policy on the other half; then clicks flipped at known rates: plain vs noise-corrected.")


def _fmt_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(lambda v: f"{v:.4g}")
        elif out[c].dtype.kind == "b" or (out[c].dtype.kind == "O" and out[c].map(
                lambda v: v is None or isinstance(v, (bool, np.bool_))).all()):  # yes / no / not judged
            out[c] = out[c].map(lambda v: "—" if v is None else ("yes" if v else "**no**"))
    return out


def truth_table(problems: list[dict[str, Any]]) -> pd.DataFrame:
    """The ground truth per campaign: both logs' rows and clicks, BTS's on-policy rate and its interval."""
    return pd.DataFrame([{"campaign": p["campaign"], "random: rows": p["random_rows"],
                          "random: clicks": p["random_clicks"], "BTS: rows": p["bts_rows"],
                          "BTS: clicks": p["bts_clicks"],
                          "on-policy click rate": f"{p['truth']:.5f}",
                          "95 % Wilson interval": f"[{p['truth_lower']:.5f}, {p['truth_upper']:.5f}]",
                          "corr(logged BTS propensity, prior's π)": f"{p['logged_vs_prior']:.2f}"}
                         for p in problems])


def _honest(p0: dict[str, Any]) -> list[str]:
    """What the first campaign's log can and cannot show."""
    n, clicks = p0["random_rows"], p0["random_clicks"]
    t, lo, hi = p0["truth"], p0["truth_lower"], p0["truth_upper"]
    return [
        f"**What {n:,} rows and {clicks} clicks can show.** The ground truth itself is uncertain: BTS's "
        f"on-policy rate {t:.5f} rests on {p0['bts_clicks']} clicks, so its own 95 % interval "
        f"[{lo:.5f}, {hi:.5f}] is ±{(hi - lo) / 2 / t:.0%} of it. The estimates rest on the random log's "
        f"{clicks} clicks, and importance weighting shrinks the log further: the effective sample size "
        f"(Σw)²/Σw² is {p0['ess']:,.0f} of {n:,} rows. A relative error below about "
        f"{(hi - lo) / 2 / t:.0%} therefore cannot be told from luck, and a difference between estimators "
        "of a few tens of percent is within the bootstrap spread below. What the run can show: the "
        "estimators are in the right range and their intervals are honest about their width; it cannot "
        "rank IPS, SNIPS, DM and DR, nor say how they would compare on the full (about 26-million-row) "
        "data set.",
        "DM's interval resamples its linearised terms, so it carries the ridge model's own sampling error "
        "(not with the fitted model held fixed); it leaves out the model's bias (DM is biased "
        f"whenever the per-item ridge model is wrong, and with {clicks} clicks over {p0['n_actions']} items "
        "it is mostly each item's mean click rate).",
        f"The logged BTS propensities correlate only {p0['logged_vs_prior']:.2f} with the prior's "
        "action distribution: the production BTS updated its posterior while logging, so the "
        "evaluation policy (the prior, as the authors evaluate it) is not exactly the policy that "
        "produced the BTS log. This is the authors' protocol; it adds an error no estimator can remove.",
    ]


def _flip_text(p: dict[str, Any], plan: dict) -> list[str]:
    n, clicks = p["random_rows"], p["random_clicks"]
    return [
        f"Clicks of the random log flipped by us, {plan['n_flip_draws']} independent draws per setting "
        "(ρ0 = P(a click is reported where there was none), ρ1 = P(a click is lost)); 'corrected' "
        "replaces each reward by h(r̃) = (r̃ − ρ0)/(1 − ρ0 − ρ1) with the known rates. 'bias vs clean' "
        "compares with the same estimator on the unflipped rows — the corrected estimators are "
        "unbiased for it — and 'SEs' divides by the standard error of the mean over draws.",
        f"The price of the correction is variance. The random log's click rate is {clicks / n:.4f}; a "
        f"false-click rate ρ0 adds about ρ0·{n:,} false clicks to its {clicks} true ones "
        f"({', '.join(f'ρ0 = {r0}: ~{r0 * n:,.0f}' for r0, _ in plan['flips'])}), and the "
        "corrected estimate's spread over draws ('sd over draws') grows with them; where that sd is "
        "comparable to the value itself, a single corrected estimate is unbiased but uninformative.",
    ]


#: the columns of the learners' value table, and of the table of what the held-out half can show
_VALUE_COLUMNS = ["campaign", "policy", "estimator", "estimate", "lower", "upper", "interval", "rows", "clicks",
                  "ratio to random", "min. detectable ratio"]


def learning_value_table(learning: pd.DataFrame) -> pd.DataFrame:
    """Every policy's value on the held-out half (and BTS's on its own log), with its interval ("—" where a
    column does not apply)."""
    return _fmt_frame(learning[_VALUE_COLUMNS].reset_index(drop=True)).replace("nan", "—")


def learning_power_table(learning: pd.DataFrame) -> pd.DataFrame:
    """Per policy (IPS rows): the paired ratio to the random policy, the weights' effective sample size,
    the largest click's share and the minimum detectable ratios (interval width, design)."""
    ips = learning[learning["estimator"] == "IPS"].reset_index(drop=True)
    return pd.DataFrame({
        "campaign": ips["campaign"], "policy": ips["policy"],
        "IPS / random": ips["ratio to random"].map("{:.2f}".format),
        "paired 95 % interval": [f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(ips["paired ratio lower"],
                                                                          ips["paired ratio upper"])],
        "ESS of the weights": ips["ESS"].map("{:,.0f}".format),
        "largest click's share": ips["top click's share"].map("{:.0%}".format),
        "min. detectable ratio (interval width)": ips["min. detectable ratio"].map("{:.2f}".format),
        "min. detectable ratio (design)": ips["min. detectable ratio (design)"].map("{:.2f}".format)})


def _verdict(cat: pd.Series, idx: pd.Series, bts: pd.Series) -> str:
    """What the held-out half can and cannot tell, each statement from the numbers: a 1.5× policy from
    the random one, the two learners apart, the learner from BTS."""
    design = cat["min. detectable ratio (design)"]
    mdr = min(cat["min. detectable ratio"], design)
    out = [(f"This sample cannot tell a policy with 1.5× the random policy's click rate from the random policy (by "
            f"the design it takes about {design:.1f}×)" if mdr > 1.5 else
            f"A policy with {max(cat['min. detectable ratio'], design):.1f}× the random policy's click rate would be "
            "told apart from it")]
    overlap = (cat["paired ratio lower"] <= idx["paired ratio upper"]
               and idx["paired ratio lower"] <= cat["paired ratio upper"])
    out.append("cannot say whether the item features help (the two learners' paired intervals overlap)" if overlap
               else "the two learners' paired intervals do not overlap")
    inside = cat["lower"] <= bts["estimate"] <= cat["upper"]
    out.append("cannot rank the learner against BTS (BTS's on-policy rate lies inside its IPS interval)" if inside
               else "BTS's on-policy rate lies outside the learner's IPS interval")
    return (", ".join(out[:2]) + " and " + out[2] + ". What it can show: the pipeline from the raw files (user "
            "features, affinities, item features, slots) through `fit_logged` to off-policy estimates runs end to "
            "end, and how wide the intervals are at this size; a comparison of learners needs far more clicks "
            "(the full data set has about 26 million rows).")


def _across(ips: pd.DataFrame) -> str:
    """One sentence on CatalogueSquareCB over the campaigns (empty with one campaign)."""
    cat = ips[ips["policy"] == "CatalogueSquareCB (item features)"]
    if cat["campaign"].nunique() < 2:
        return ""
    return (f" Over the {cat['campaign'].nunique()} campaigns, CatalogueSquareCB's IPS / random runs from "
            f"{cat['ratio to random'].min():.2f} to {cat['ratio to random'].max():.2f}, and its smallest "
            f"minimum detectable ratio from the design is {cat['min. detectable ratio (design)'].min():.1f}×.")


def _learning_text(learning: pd.DataFrame, campaign: str, n_items: int, plan: dict) -> list[str]:
    """The set-up of the learners' section and what its first campaign's held-out half can and cannot show."""
    g = learning[learning["campaign"] == campaign].set_index(["policy", "estimator"])
    rnd = g.loc[("random (uniform)", "mean click")]
    bts = g.loc[("BTS, on-policy (its own log)", "mean click")]
    cat = g.loc[("CatalogueSquareCB (item features)", "IPS")]
    idx = g.loc[("SquareCB (item index only)", "IPS")]
    n, clicks, v0 = int(rnd["rows"]), int(rnd["clicks"]), rnd["estimate"]
    half = (rnd["upper"] - rnd["lower"]) / 2 / v0
    ips = learning[learning["estimator"] == "IPS"]
    narrow = ips[ips["min. detectable ratio"] < 0.75 * ips["min. detectable ratio (design)"]]
    narrow_text = (
        "The interval's width only sees the clicks that happened. Where a policy puts much of its mass on "
        "a few candidates and no held-out click fell on them, its interval is narrower than the design "
        "supports (minimum detectable ratio from the width well below the design's): here "
        + ", ".join(f"{p} on '{c}' ({w:.2f}× from the width, {d:.2f}× from the design)" for c, p, w, d in
                    zip(narrow["campaign"], narrow["policy"], narrow["min. detectable ratio"],
                        narrow["min. detectable ratio (design)"]))
        + ". Such an interval says where these clicks fell, not that the policy is better or worse than random."
        if len(narrow) else
        "The interval's width only sees the clicks that happened; the design's minimum detectable ratio "
        "uses every candidate's weight and is the safer reading.")
    pct = int(round(plan["train_fraction"] * 100))
    share = cat["top click's share"]
    return [
        f"The random log is split at random (seed {plan['seed']}): {pct} % to train, the rest held out. "
        "`nf.CatalogueSquareCB()` (default parameters: dense features, `oracle=\"auto\"`) is trained on the "
        "training part with `fit_logged`, each row a round: the shared context is the user features "
        "one-hot and the slot the row was shown in, one-hot; the candidates are the "
        f"{n_items} items of `item_context.csv` (`nf.datasets.load_item_context`: item_feature_0 as a "
        "number, the hashed ones one-hot), each with the user's affinity to that item as one more "
        "feature (`nf.datasets.open_bandit.candidate_log`). The slot is conditioned on, not modelled: "
        "the policy picks an item for the slot the row was shown in, π(item | user, slot), which is what "
        "the logged propensity (the random policy's probability of that item at that slot) weighs; in "
        "the random logs item and slot are drawn independently, so every (item, slot) pair is covered, "
        "and the file has one row per slot without a page id, which the learner's multi-slot model would "
        "need. The baseline that cannot use item features is `nf.SquareCB` (default parameters): one "
        "weight vector per item over the user features, the affinities and the slot.",
        "On the held-out part each policy's action distribution is evaluated with "
        "`nf.ope.evaluate_candidates`: IPS, SNIPS, DM and DR with 95 % percentile bootstrap intervals "
        "(1,000 resamples of the rounds; the normal intervals reach below zero with this few clicks). "
        "DM and DR use the per-item ridge model (α = 1) over user features, affinities and slot, "
        "cross-fitted on 2 folds of the held-out part, the same for every policy. **DM has no interval**: "
        "with the model held fixed, the spread of its terms measures the contexts, not the model's error, "
        "so the module returns none. Next to them: the random policy's mean click on the same held-out "
        "rows and BTS's on-policy click rate on its own log (95 % Wilson intervals), and BTS with the "
        "production prior estimated off-policy on the same rows.",
        f"**What {n:,} held-out rows and {clicks} clicks can and cannot show** (campaign '{campaign}'). The "
        f"random policy's click rate there is {v0:.4f} [{rnd['lower']:.4f}, {rnd['upper']:.4f}], ±{half:.0%} "
        f"of itself. CatalogueSquareCB's IPS estimate is {cat['ratio to random']:.2f}× that, paired 95 % "
        f"interval of the ratio [{cat['paired ratio lower']:.2f}, {cat['paired ratio upper']:.2f}]; the "
        f"index SquareCB's {idx['ratio to random']:.2f}× [{idx['paired ratio lower']:.2f}, "
        f"{idx['paired ratio upper']:.2f}]; BTS's on-policy rate is {bts['estimate']:.4f} "
        f"({bts['ratio to random']:.2f}×, from {int(bts['clicks']):,} clicks). The minimum detectable ratio "
        "is the true click rate, as a multiple of the random policy's, that a policy would need for this "
        "estimate to tell it from the random policy at 5 % (two-sided) with 80 % power: "
        "1 + 2.80·√(se² + se₀²)/v₀, se from the estimate's interval width (width/3.92) or from the design "
        "(every candidate's weight, as if each were clicked at the random rate), se₀ from the random "
        f"policy's Wilson interval. For CatalogueSquareCB it is {cat['min. detectable ratio']:.1f}× "
        f"(interval width) and {cat['min. detectable ratio (design)']:.1f}× (design). " + _verdict(cat, idx, bts)
        + _across(ips),
        f"CatalogueSquareCB's largest single click carries {share:.0%} of its IPS estimate"
        + (" (the estimate rests on a handful of clicks)" if share >= 0.25 else "") + "; its weights' effective "
        f"sample size is "
        f"{cat['ESS']:,.0f} of {n:,} rows. " + narrow_text,
    ]


def sections(results: dict, claims: list, ctx) -> list:
    """The report's sections (the summary line and the links come from the engine's `run_paper`)."""
    from ...recipes import claims_table
    from ...report import Section

    plan, quick = ctx.plan, ctx.quick
    problems, est, boot, flips = results["problems"], results["est"], results["boot"], results["flips"]
    learning = results["learning"]
    p0 = problems[0]  # the first campaign: the text is about it
    pf = next(p for p in problems if p["campaign"] == plan["flip_campaign"])
    data = ("a small generated log in the Open Bandit layout (10 items, 3 slots, known click model; "
            "`--quick`)" if quick else "the authors' 10,000-row sample of the Open Bandit Dataset "
            "(`open-bandit/` in the data directory; obp 0.4.1, CC BY 4.0)")
    return [
        Section("Set-up", text=[
            f"Data: {data}. Contexts: the four hashed user features one-hot, then the item affinities; "
            "the learners' section adds the item features of `item_context.csv` and the slot.",
            "Evaluation policy: Bernoulli Thompson Sampling with the production Beta prior "
            f"(`prior_bts.yaml`); its action distribution by {plan['n_sim']:,} Monte Carlo draws (seed "
            "12345), as obp's `compute_batch_action_dist`. Position handling as obp: row i is weighted by "
            "π(item_i | slot_i)/p_i, so the target is the click rate per impression over the logged slots.",
            "Estimators (`nf.ope.evaluate`): IPS, SNIPS, DM and DR with a per-item ridge reward model "
            "(α = 1, cross-fitted on 2 folds). Intervals: 95 % percentile bootstrap over rows (1,000 "
            "resamples; DM's over its linearised terms, the model's error included) in the first table; "
            "normal intervals in the flip table.",
            f"Wall time {ctx.seconds:.1f} s" + (" (quick mode)" if quick else "")
            + (f"; {ctx.resumed} of {ctx.resumed + ctx.ran} tasks reused from an earlier run" if ctx.resumed else "")
            + ".",
        ], tables={"Ground truth: BTS's own logs": truth_table(problems)}),
        Section("Claims", tables={"What the run supports": claims_table(claims)}),
        Section("Estimates from the random policy's logs", text=_honest(p0),
                tables={"Every estimator on the whole log (95 % bootstrap intervals)": _fmt_frame(est),
                        f"Relative error over {plan['n_boot']} bootstrap resamples of the log": _fmt_frame(boot)}),
        Section("Learners trained on half the random log", text=_learning_text(learning, p0["campaign"],
                                                                                p0["n_actions"], plan),
                tables={"Each policy's click rate on the held-out half (95 % intervals; BTS on-policy: its "
                        "own log)": learning_value_table(learning),
                        "What the held-out half can show (IPS)": learning_power_table(learning)}),
        Section("Flipped clicks: plain vs noise-corrected", text=_flip_text(pf, plan),
                tables={f"Campaign '{plan['flip_campaign']}'": _fmt_frame(flips.drop(columns=["draws"]))}),
        Section("References and how to rerun", text=[
            "[1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline: "
            "towards realistic and reproducible off-policy evaluation. NeurIPS Datasets and Benchmarks.",
            "Rerun: `noisyfeedback reproduce open-bandit --data-dir DATA --out DIR` "
            "(`--quick`: a generated log). A rerun into the same folder resumes: the engine's per-task files "
            "in `results/tasks/` are reused, and `results/*.parquet` hold the tables. Code: "
            "`noisyfeedback.lab.papers.open_bandit` (plans, tasks, claims, report) over "
            "`noisyfeedback.ope.replication` and `noisyfeedback.datasets.open_bandit` (`load_item_context`, "
            "`candidate_log`).",
        ]),
    ]
