"""moroshko's report: figures, tables and sections (results, claims -> sections)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...figures import new_figure
from ...recipes import Claim, claims_table
from .tables import budget_pivot, chosen_frame
from .tasks import (
    KNOWN_PANEL,
    NOISE_SEED_OFFSET,
    SCHEDULES,
    STRATEGIES,
    TUNE_DATA_SEED,
    TUNE_NOISE_SEED,
    UNKNOWN_PANEL,
    VARIANTS,
)

#: one colour per variant in every figure (known and unknown-variance versions share one)
COLORS = {"clean feedback": "k", "noisy feedback": "C1", "beta": "C2", "opt": "C3", "one sample": "C4",
          "one sample and pred": "C0", "two samples": "C6", "one sample and pred (unknown v)": "C0",
          "two samples (unknown v)": "C6"}


def _panel(ax, df: pd.DataFrame, setting: str, variants: list[str], title: str) -> None:
    g = df[df["setting"] == setting]
    for v in variants:
        h = g[g["variant"] == v]
        if h.empty:
            continue
        cps = np.asarray(h["checkpoints"].iloc[0], dtype=float)
        cur = np.vstack([np.asarray(c, dtype=float) for c in h["curve"]])
        ls = "--" if v == "clean feedback" else (":" if v == "opt" else "-")
        ax.plot(cps, cur.mean(axis=0), ls, lw=1.6, color=COLORS[v], label=v.replace(" (unknown v)", ""))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round")
    ax.set_ylabel("cumulative MSE vs the clean target")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="x-small")


def fig_single(df: pd.DataFrame, settings: list[str], name: str):
    """Figures 2, 4 and 5: known variance (top) and unknown variance (bottom), one column per setting."""
    fig, flat = new_figure(2 * len(settings), ncols=len(settings), width=5.2, height=4.0)
    axes = [flat[:len(settings)], flat[len(settings):]]
    n = df["seed"].nunique()
    for j, st in enumerate(settings):
        _panel(axes[0][j], df, st, KNOWN_PANEL, f"{name} {st}".strip() + f": known variance, mean of {n}")
        _panel(axes[1][j], df, st, UNKNOWN_PANEL, f"{name} {st}".strip() + ": unknown variance")
    return fig


def fig_sensitivity(tun: pd.DataFrame, setting: str):
    """MSE on the tuning sequence against r, every variant (β at its best for each r); ★ the chosen r."""
    fig, (ax,) = new_figure(width=7.0, height=4.6)
    g = tun[(tun["kind"] == "single") & (tun["setting"] == setting)]
    for v in VARIANTS:
        h = g[g["variant"] == v].groupby("r")["mse"].min().sort_index()
        if h.empty:
            continue
        (line,) = ax.plot(h.index, h.to_numpy(), lw=1.4, marker=".", label=v, color=COLORS[v],
                          ls="--" if "unknown" in v or v == "clean feedback" else "-")
        i = int(np.argmin(h.to_numpy()))
        ax.plot([h.index[i]], [h.iloc[i]], "*", ms=12, color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("r (log scale)")
    ax.set_ylabel("final cumulative MSE on the tuning sequence")
    ax.set_title(f"{setting}: sensitivity to r (★ the chosen r)", fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="x-small", ncol=2)
    return fig


def fig_budget(summary: pd.DataFrame):
    """Figure 6: MSE against B for every strategy, with and without scaling, 95 % intervals; one panel a schedule."""
    fig, row = new_figure(len(SCHEDULES), width=5.0, height=4.4)
    axes = [row]
    colors = dict(zip(STRATEGIES, ["C0", "C1", "C2", "C3"]))
    Bs = np.sort(summary["B"].unique())
    step = 0.012 * (Bs[-1] - Bs[0] if len(Bs) > 1 else 1.0)  # side by side, so the intervals can be told apart
    for ax, sched in zip(axes[0], SCHEDULES):
        g = summary[summary["schedule"] == sched]
        for i, (rule, ls) in enumerate((("scaling", "-"), ("no scaling", "--"))):
            for j, s in enumerate(STRATEGIES):
                h = g[(g["rule"] == rule) & (g["strategy"] == s)].sort_values("B")
                ax.errorbar(h["B"] + step * (4 * i + j - 3.5), h["MSE"], yerr=h["95% CI ±"], ls=ls, marker="o",
                            ms=3, capsize=2, color=colors[s], alpha=1.0 if rule == "scaling" else 0.7,
                            label=f"{s} ({rule})")
        ax.set_xlabel("budget B (labels per round)")
        ax.set_ylabel("final cumulative MSE")
        ax.set_title(f"{sched} noise variance (0 … 5)", fontsize="medium")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize="x-small")
    return fig


def fig_trace(traces: dict, B: float):
    """Figure 7: instantaneous budget (top) and a (bottom) during auto_self_tuned runs."""
    fig, flat = new_figure(2, ncols=1, width=7.0, height=3.2)
    axes = [[ax] for ax in flat]
    for sched, tr in traces.items():
        axes[0][0].plot(tr["rounds"], tr["budget"], lw=1.2, label=f"{sched} noise")
        axes[1][0].plot(tr["rounds"], tr["a"], lw=1.2, label=f"{sched} noise")
    axes[0][0].axhline(B, color="k", lw=1, label=f"budget B = {B:g}")
    axes[0][0].axhline(0.95 * B, color="k", lw=1, ls="--", label=f"limited budget 0.95·B = {0.95 * B:g}")
    axes[0][0].set_ylabel("labels so far / rounds")
    axes[0][0].set_title(f"auto self tuned, B = {B:g}: instantaneous budget", fontsize="medium")
    axes[1][0].set_yscale("log")
    axes[1][0].set_ylabel("a (log scale)")
    axes[1][0].set_xlabel("round")
    axes[1][0].set_title("the parameter a (doubled / halved every 100 rounds)", fontsize="medium")
    for row in axes:
        row[0].grid(True, which="both", alpha=0.3)
        row[0].legend(fontsize="x-small")
    return fig


# ================================================================ the recipe
def _fmt_table(s: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """Rounded for the report; a chosen r or β still on an edge of the values tried is marked with ◂, and
    where the paper's grid alone chose other values they are shown in a column "paper grid best"."""
    s = s.reset_index(drop=True).copy()
    for c in ("MSE", "MSE sd", "late MSE"):
        s[c] = s[c].map(lambda v: f"{v:.4g}")
    for c in ("ratio to noisy NLMS", "worst seed ratio", "late ratio"):
        s[c] = s[c].map(lambda v: f"{v:.3f}")
    ch = chosen.set_index(["setting", "variant"]).reindex(list(zip(s["setting"], s["variant"])))
    edge = {name: ch[f"{name} at edge"].fillna(False).astype(bool).to_numpy() for name in ("r", "beta")}
    s["r"] = [f"{v:g}" + (" ◂" if e else "") for v, e in zip(s["r"], edge["r"])]
    s["β"] = ["" if pd.isna(v) else f"{v:g}" + (" ◂" if e else "") for v, e in zip(s["β"], edge["beta"])]
    paper = [_paper_text(row) for _, row in ch.iterrows()]
    if any(paper):
        s.insert(int(s.columns.get_loc("β")) + 1, "paper grid best", paper)
    return s.drop(columns=["figure"])


def _paper_text(row: pd.Series) -> str:
    """"r=…, β=…" of the paper's grid's best where it differs from the chosen (extended) values, else ""."""
    moved = [name for name in ("r", "beta") if not pd.isna(row.get(name)) and row[f"paper {name}"] != row[name]]
    if not moved:
        return ""
    return ", ".join(f"{'β' if name == 'beta' else 'r'}={row[f'paper {name}']:g}" for name in ("r", "beta")
                     if not pd.isna(row.get(name)))


def _extension_text(plan: dict, chosen: pd.DataFrame) -> str:
    """What the tuning did past a binding edge of its grid (empty when the plan does not extend)."""
    if not plan.get("extend_grid"):
        return ""
    moved = int(sum(_paper_text(row) != "" for _, row in chosen.iterrows()))
    return (f" Where the best r (or β) sat on an edge of its grid, up to {plan['extend_grid']} more values per "
            "parameter were tried past that edge (geometrically, by the grid's own step; for 'beta' each new r is "
            "tried with every β tried so far and each new β with every r, so the values tried stay a full grid) "
            "until the best was interior; the reported runs, every ratio and the ratios of 'What we recommend "
            f"instead' use that extended-grid best ({moved} of {len(chosen)} method × setting pairs moved; the "
            "tables show the paper's grid's own best in a column 'paper grid best' where it differs). ◂ marks a "
            "chosen value still on an edge of the values tried.")


def _gap_table(tun: pd.DataFrame, syn: str) -> pd.DataFrame:
    """The "tuned NLMS closes the gap" evidence: at ORS's r, NLMS is far worse; at its own r, much less."""
    g = tun[(tun["kind"] == "single") & (tun["setting"] == syn)]
    nl = g[g["variant"] == "noisy feedback"].set_index("r")["mse"]
    gap_rows = []
    for v in ("beta", "one sample and pred", "one sample and pred (unknown v)", "two samples (unknown v)"):
        h = g[g["variant"] == v]
        best = h.loc[h["mse"].idxmin()]
        gap_rows.append({"variant": v, "its r": f"{best['r']:g}", "its MSE (tuning seq.)": best["mse"],
                         "NLMS at the same r": float(nl.get(best["r"], np.nan)),
                         "NLMS at its own r": float(nl.min()),
                         "ratio at equal r": best["mse"] / float(nl.get(best["r"], np.nan)),
                         "ratio, each tuned": best["mse"] / float(nl.min()),
                         "ratio at r = 1 (both)": float(h[np.isclose(h["r"], 1.0)]["mse"].min() / nl.loc[
                             nl.index[np.isclose(nl.index, 1.0)]].iloc[0]) if np.isclose(nl.index, 1.0).any()
                         else np.nan})
    return pd.DataFrame(gap_rows)


def _setup(plan: dict, quick: bool, elapsed: float, jobs: int, raw: dict, files: list[str],
           chosen: pd.DataFrame) -> list[str]:
    B7 = plan["self_tuned_budget"]
    syn_plan, ch_plan, sp_plan, bud = plan["synthetic"], plan["channel"], plan["speech"], plan["budget"]
    mode = "quick" if quick else "full"
    return [
        f"Mode: **{mode}**. Every run visits its rows once, in order (`nf.simulate(..., shuffle=False)`), "
        "and is scored by the cumulative mean squared error of the prediction made before the update against "
        "the **clean** target (the paper's measure).",
        f"Tuning: for every method, r from {len(plan['r_grid'])} log-spaced values "
        f"{plan['r_grid'][0]:g} … {plan['r_grid'][-1]:g} (and for 'beta' jointly β from "
        f"{plan['beta_grid'][0]:g} … {plan['beta_grid'][-1]:g}, {len(plan['beta_grid'])} values) by the lowest "
        f"final cumulative MSE on one separate sequence (data seed {TUNE_DATA_SEED}, noise seed {TUNE_NOISE_SEED}); "
        f"the reported runs use report seeds 0 … {plan['seeds'] - 1} (data seed s, noise seed "
        f"{NOISE_SEED_OFFSET} + s). NLMS ('noisy feedback', 'clean feedback') is tuned like every ORS variant."
        + _extension_text(plan, chosen),
        f"Figure 2: the paper's synthetic task, {syn_plan['n_samples']:,} rounds, d = 20, y = x·u + N(0, 0.01), "
        f"label noise variance v_t ~ U[0, {syn_plan['M']:g}]. Figure 4: channel equalization (s ~ N(0, 1) through "
        f"h(t) = sinc(t), t = 0, 0.5, …, 4.5, plus N(0, 4e-4); a 20-tap equalizer estimates s(t)), "
        f"{ch_plan['n_samples']:,} rounds, M ∈ {ch_plan['Ms']}.",
        f"Figure 5 (SUBSTITUTE data, see below): {sp_plan['n_samples']:,} samples, {sp_plan['n_taps']}-tap filter, "
        f"{sp_plan['room_length']}-tap room response; r and β tuned on the first "
        f"{sp_plan['tune_fraction']:.0%} of the signal (as in the paper) with their own noise draw, then the "
        f"filter runs from zero on the remaining {1 - sp_plan['tune_fraction']:.0%} for each report seed "
        "(the signal is fixed, the noise is redrawn).",
        f"Figures 6–7: the synthetic task with {bud['n_samples']:,} rounds, noise variance uniform on [0, "
        f"{bud['M']:g}], rising linearly 0 → {bud['M']:g} or falling {bud['M']:g} → 0; B ∈ {bud['budgets']}; "
        f"{bud['seeds']} report seeds (95 % t-intervals). 'scaling' = eq. (5) with 'one sample and pred' on "
        "one-label rounds and the mean and sample variance of the k labels on k-label rounds (variance "
        "unknown); 'no scaling' = α = 1 on the label or the mean. r is tuned for every (schedule, B, rule, "
        "strategy); for 'auto', a is found at each r by bisection on log a so that the spend on the tuning "
        f"sequence is at most B and as close to it as {bud['a_steps']} halvings get; 'auto self tuned' starts at "
        "a = 1. Figure 7 records the instantaneous budget and a every 100 rounds of one 'auto self tuned' run "
        f"(B = {B7:g}, report seed 0, r as tuned for Figure 6).",
        f"Wall time: {elapsed:.0f} s with {jobs} job(s) (tuning {raw['seconds']['tuning']:.0f} s, runs "
        f"{raw['seconds']['report']:.0f} s). Results tables: " + ", ".join(f"`{f}`" for f in files) + ".",
    ]


def _substitute(plan: dict, quick: bool) -> list[str]:
    sp_plan = plan["speech"]
    substitute = [
        "**Figure 5 runs on substitute data.** The paper filters a clean speech *recording* through 'a typical "
        "room impulse response of length 1024', with feedback 'recorded with hammer noise in the background'; "
        "none of these are public. We use `speech_substitute` (a synthetic speech-like signal: syllables of "
        "formant-filtered pitch pulse trains or noise with pauses, 8 kHz, through a synthetic room response with "
        "direct path, early reflections and an exponential tail; the target is the source delayed by half the "
        "filter length) and `hammer_variance` (a per-sample noise variance: a floor of "
        f"{sp_plan['floor']:g} plus bursts of peak {sp_plan['peak']:g} decaying in 20 ms at random 0.25–0.6 s "
        "intervals). Only the comparison between methods carries over; the numbers are not the paper's.",
    ]
    if quick:
        substitute.append("Quick mode shrinks every experiment (fewer rounds and seeds, coarser grids, a 256-tap "
                          "speech filter): its numbers show the pipeline works, not the paper's values; run "
                          "without --quick for the reproduction.")
    return substitute


def _below_at_equal_r(ratio: float) -> str:
    """"x% below NLMS at ORS's own r, " (or that NLMS did not run at that r: it lies past NLMS's values tried)."""
    if np.isnan(ratio):
        return "not compared with NLMS at ORS's own r (NLMS's grid did not reach it), "
    return f"{1 - ratio:.0%} below NLMS at ORS's own r, "


def _findings(claims: list[Claim], s_single: pd.DataFrame, gap: pd.DataFrame, syn: str) -> list[str]:
    n_hold = sum(bool(c.holds) for c in claims)
    n_judged = sum(c.holds is not None for c in claims)
    v_unk = "one sample and pred (unknown v)"
    syn_row = s_single[s_single["setting"] == syn].set_index("variant")
    findings = [
        f"{n_hold} of {n_judged} checked claims hold in this run. Nothing was tuned to match the paper; a claim "
        "that does not hold is a finding.",
        f"**With r tuned per method, NLMS closes most of ORS's gap.** On the tuning sequence of {syn} ORS "
        "'beta' is " + _below_at_equal_r(gap.loc[gap['variant'] == 'beta', 'ratio at equal r'].iloc[0]) +
        f"but {1 - gap.loc[gap['variant'] == 'beta', 'ratio, each tuned'].iloc[0]:.0%} below NLMS at NLMS's best r "
        "(table below): NLMS with a large r also averages the noise away. The gains that remain (report seeds): "
        f"'beta' {1 - syn_row.loc['beta', 'ratio to noisy NLMS']:.0%}, 'one sample and pred' (known v) "
        f"{1 - syn_row.loc['one sample and pred', 'ratio to noisy NLMS']:.0%}, "
        f"(unknown v) {1 - syn_row.loc[v_unk, 'ratio to noisy NLMS']:+.0%}.",
        "**'one sample and pred' with unknown variance is NLMS with half the step.** With y ≈ (ỹ + ŷ)/2 and "
        "v ≈ (ỹ − ŷ)²/4, v/(y − ŷ)² = 1 and eq. (5) gives α = r/(2r + ‖x‖²), so the update is "
        "(ỹ − ŷ)x/(2(r + ‖x‖²)) whatever the noise (tested in `tests/learners/test_regression.py`). On i.i.d. "
        "inputs with ‖x‖² ≈ d an NLMS with a larger r makes nearly the same steps, so once both are tuned it "
        "cannot do clearly better than NLMS; where ‖x‖² varies a lot (the speech substitute's pauses) the two "
        "differ and it helps.",
    ]
    return findings


def sections(results: dict, claims: list[Claim], ctx) -> list:
    """The report's sections (results, claims -> sections)."""
    from ...report import Section

    plan, raw, tun, single = ctx.plan, results["raw"], results["tun"], results["single"]
    s_single, fig6, traces, B7 = results["s_single"], results["fig6"], results["traces"], plan["self_tuned_budget"]
    chosen = chosen_frame(raw)
    by_fig = {f: [st["setting"] for st in raw["settings"] if st["figure"] == f]
              for f in ("Figure 2", "Figure 4", "Figure 5")}
    syn = by_fig["Figure 2"][0]
    ch_plan = plan["channel"]
    gap = _gap_table(tun, syn)
    setup = _setup(plan, ctx.quick, ctx.seconds, ctx.jobs, raw, results["files"], chosen)
    substitute = _substitute(plan, ctx.quick)
    findings = _findings(claims, s_single, gap, syn)
    return [
        Section("Set-up", text=setup),
        Section("Data: substitutes", text=substitute),
        Section("Paper's claims vs our measurements", text=findings, tables={
            "Claims": claims_table(claims),
            f"{syn}, tuning sequence: ORS vs NLMS at ORS's r and at NLMS's own best r": gap}),
        Section("Figure 2: synthetic data, known and unknown variance", figures={
            f"Figure 2: {syn}, cumulative MSE (log-log), mean over the report seeds":
                fig_single(single, by_fig["Figure 2"], "Fig. 2"),
            f"{syn}: MSE on the tuning sequence against r": fig_sensitivity(tun, syn)},
            tables={"Figure 2: final and late MSE, ratio to noisy-feedback NLMS": _fmt_table(
                s_single[s_single["figure"] == "Figure 2"], chosen)}),
        Section("Figure 4: channel equalization, M = " + ", ".join(f"{M:g}" for M in ch_plan["Ms"]), figures={
            "Figure 4: cumulative MSE (log-log); top known variance, bottom unknown":
                fig_single(single, by_fig["Figure 4"], "")},
            tables={"Figure 4: final and late MSE, ratio to noisy-feedback NLMS": _fmt_table(
                s_single[s_single["figure"] == "Figure 4"], chosen)}),
        Section("Figure 5: adaptive filter on the speech SUBSTITUTE", figures={
            "Figure 5 (substitute data): cumulative MSE over the last 80 % of the signal (log-log)":
                fig_single(single, by_fig["Figure 5"], "Fig. 5")},
            tables={"Figure 5 (substitute data): final and late MSE, ratio to noisy-feedback NLMS": _fmt_table(
                s_single[s_single["figure"] == "Figure 5"], chosen)}),
        Section("Figure 6: label budgets", figures={
            "Figure 6: final cumulative MSE against the budget B, 95 % t-intervals (solid: scaling, dashed: no "
            "scaling)": fig_budget(fig6)},
            tables={"Figure 6: final cumulative MSE ± 95 % t-interval (report seeds); labels spent per round by "
                    "'auto' (a tuned on the tuning sequence) and 'auto self tuned'": budget_pivot(fig6),
                    "Chosen r (and a for 'auto') per schedule, B, rule and strategy": fig6[
                        ["schedule", "B", "rule", "strategy", "r", "a", "labels/round",
                         "max of labels so far / rounds so far"]]}),
        Section("Figure 7: the self-tuned budget", figures={
            f"Figure 7: instantaneous budget and a during 'auto self tuned' runs, B = {B7:g}": fig_trace(traces, B7)}),
    ] + ([rec] if (rec := recommend_section(results, plan)) is not None else [])


def recommend_section(results: dict, plan: dict):
    """"What we recommend instead": WeightedRLS (defaults) and the peers next to the best tuned ORS on the
    same report sequences; None when they did not run."""
    from ...report import Section
    from .. import _recommend as rec
    from .claims import RECOMMEND_KNOWN_RATIO, recommend_bottom_lines, recommend_claims, recommend_rows
    from .plans import PADASIP_RLS_MAX_D
    from .tasks import PEERS, peers_available

    rows = recommend_rows(results)
    lines = recommend_bottom_lines(rows)
    if not lines:
        return None
    missing = [p for p in PEERS if p not in peers_available()]
    text = [rec.NOT_THE_PAPER,
            "`WeightedRLS`: recursive least squares weighting each round by the inverse of its target's noise "
            "variance (the Kalman filter of a fixed w; ridge λ = 1, its default, nothing tuned); with unknown "
            "variance it uses ORS's estimates (one label and the prediction, or two labels) and an online "
            "estimate of the variance. Run with `nf.simulate` on the **same** report sequences (data, noise and "
            "simulation seeds) as the paper's variants; the paper's best is the lowest mean MSE among ORS's runnable "
            "rules of the same panel in this run, r (and β) tuned on the separate tuning sequence"
            + (" on the grid extended past a binding edge (Set-up)" if plan.get("extend_grid") else "")
            + ". ORS `opt` is "
            "not among them: its step reads the clean target (the paper's oracle), so it is shown as a reference "
            "column and not counted. Peers: "
            "noisy-feedback NLMS (the paper's baseline, r tuned)"
            + (", " + ", ".join(f"`{p}`" for p in peers_available()) + " (online, predict then learn the noisy "
               f"target, on the first {plan.get('recommend_peer_seeds')} seeds)" if peers_available() else "")
            + (f"; not installed here: {', '.join(missing)} (optional extra `bench`)" if missing else "") + ".",
            f"The speech substitute runs on its first {plan.get('recommend_speech_seeds')} seeds (WeightedRLS "
            "costs O(d²) a round); every comparison is on the seeds ours ran."
            + (f" padasip's `FilterRLS` does not run there ({plan['speech']['n_taps']:,} taps): it multiplies "
               "d×d matrices every round (O(d³), 2 GFLOP a round at 1,024 taps, hours a seed)."
               if plan["speech"]["n_taps"] > PADASIP_RLS_MAX_D and "padasip FilterRLS(mu=0.999)" in
               peers_available() else ""),
            f"Our claims: WeightedRLS (known variance) ≤ {RECOMMEND_KNOWN_RATIO:g}× the best tuned ORS (known "
            "variance), and with unknown variance below ORS's unknown-variance rules, at every setting "
            "(the target is stated for the synthetic stream and channel equalization; the "
            "speech substitute is judged too). On the speech substitute the linear filter cannot fit the target "
            "exactly and the signal is not stationary: there a tracking first-order rule (ORS, NLMS) is as good as "
            "a least-squares fit over the whole past, so a miss there is a finding about the data, not a tuning gap."]
    what = {"known": "Known variance", "unknown": "Unknown variance"}
    tables = {"Ours vs the paper's (not counted in the paper's claims)": claims_table(recommend_claims(lines))}
    for panel, t in lines.items():
        tables[f"{what[panel]}: final cumulative MSE (mean ± std over seeds), ours vs the paper's best ORS and "
               "the peers"] = rec.public(t)
    return Section("What we recommend instead", text=text, tables=tables)


INTRO = ("ORS (online regression with scaling) shrinks NLMS's step by α_t when the label's noise "
         "variance is large. This report reruns the paper's Section 4 — every figure — with r "
         "and β tuned per method on a separate sequence, and puts the paper's statements next "
         "to our measurements.")
