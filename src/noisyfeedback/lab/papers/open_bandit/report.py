"""open-bandit's report: tables and sections (results, claims -> sections)."""

from __future__ import annotations

from typing import Any

import pandas as pd

INTRO = ("The dataset authors' standard check, with every estimator of `nf.ope`, then the same with clicks "
         "flipped at known rates: plain vs noise-corrected.")


def _fmt_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if out[c].dtype.kind == "f":
            out[c] = out[c].map(lambda v: f"{v:.4g}")
        elif out[c].dtype.kind == "b":
            out[c] = out[c].map({True: "yes", False: "**no**"})
    return out


def truth_table(problems: list[dict[str, Any]]) -> pd.DataFrame:
    """The ground truth per campaign: both logs' rows and clicks, BTS's on-policy rate and its interval."""
    return pd.DataFrame([{"campaign": p["campaign"], "random: rows": p["random_rows"],
                          "random: clicks": p["random_clicks"], "BTS: rows": p["bts_rows"], "BTS: clicks": p["bts_clicks"],
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


def sections(results: dict, claims: list, ctx) -> list:
    """The report's sections (the summary line and the links come from the engine's :func:`run_paper`)."""
    from ...report import Section
    from ...recipes import claims_table

    plan, quick = ctx.plan, ctx.quick
    problems, est, boot, flips = results["problems"], results["est"], results["boot"], results["flips"]
    p0 = problems[0]  # the first campaign: the text is about it
    pf = next(p for p in problems if p["campaign"] == plan["flip_campaign"])
    data = ("a small generated log in the Open Bandit layout (10 items, 3 slots, known click model; "
            "`--quick`)" if quick else "the authors' 10,000-row sample of the Open Bandit Dataset "
            "(`open-bandit/` in the data directory; obp 0.4.1, CC BY 4.0)")
    return [
        Section("Set-up", text=[
            f"Data: {data}. Contexts: the four hashed user features one-hot, then the item affinities.",
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
        Section("Flipped clicks: plain vs noise-corrected", text=_flip_text(pf, plan),
                tables={f"Campaign '{plan['flip_campaign']}'": _fmt_frame(flips.drop(columns=["draws"]))}),
        Section("References and how to rerun", text=[
            "[1] Saito, Y., Aihara, S., Matsutani, M. & Narita, Y. (2021). Open Bandit Dataset and Pipeline: "
            "towards realistic and reproducible off-policy evaluation. NeurIPS Datasets and Benchmarks.",
            "Rerun: `noisyfeedback reproduce open-bandit --data-dir DATA --out DIR` "
            "(`--quick`: a generated log). A rerun into the same folder resumes: the engine's per-task files "
            "in `results/tasks/` are reused, and `results/*.parquet` hold the tables. Code: "
            "`noisyfeedback.lab.papers.open_bandit` (plans, tasks, claims, report) over "
            "`noisyfeedback.ope.replication`.",
        ]),
    ]
