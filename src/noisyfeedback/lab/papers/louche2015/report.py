"""louche2015's report: figures and sections (results, claims -> sections)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...figures import learner_color, new_figure
from ...recipes import Claim, availability_note, claims_table
from .tables import _t1_means, fig1a_table, fig1b_table, fig5_table, sample_size_table, table1, table1_setup
from .tasks import STRATEGIES


def _band(ax, x, groups, label, **kw):
    mean = np.array([np.mean(v) for v in groups])
    (line,) = ax.plot(x, mean, marker="o", ms=4, lw=1.6, label=label, **kw)
    if max(len(v) for v in groups) > 1:
        ax.fill_between(x, [np.min(v) for v in groups], [np.max(v) for v in groups], color=line.get_color(),
                        alpha=0.2, lw=0)


def fig1a(df: pd.DataFrame):
    fig, (ax,) = new_figure()
    g = df[df["part"] == "fig1a"]
    levels = g.groupby("lam")["noise_level"].mean().sort_index()
    for learner, kw in (("UMA", {}), ("Perceptron", {"ls": "--"})):
        kw = {**kw, "color": learner_color(learner)}
        h = g[g["learner"] == learner]
        _band(ax, levels.to_numpy(), [h.loc[h["lam"] == lam, "confusion_rate"].to_numpy() for lam in levels.index],
              learner if learner == "UMA" else "Perceptron (UMA with C = I)", **kw)
    ax.set_xlabel("noise level ‖C − diag(C)‖_F")
    ax.set_ylabel("confusion rate (test)")
    ax.set_title(f"Figure 1(a): toy data, mean and min–max over {g['run'].nunique()} runs")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def fig1b(df: pd.DataFrame):
    fig, (ax,) = new_figure()
    g = df[df["part"] == "fig1b"]
    alphas = np.sort(g["alpha"].unique())
    _band(ax, alphas, [g.loc[g["alpha"] == a, "confusion_rate"].to_numpy() for a in alphas], "UMA fed C(λ')",
          color=learner_color("UMA"))
    ax.axvline(0.0, color="k", lw=0.8, ls=":")
    ax.set_xlabel("approximation factor α = 1 − λ'/λ*  (1: C = I, 0: true C, < 0: noise overestimated)")
    ax.set_ylabel("confusion rate (test)")
    lam = g["lam"].iloc[0] if len(g) else np.nan
    ax.set_title(f"Figure 1(b): true C = C(λ* = {lam:g}), {g['run'].nunique()} runs")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def fig_sample_size(df: pd.DataFrame):
    g = df[df["part"] == "sample_size"]
    lams = sorted(g["lam"].unique())
    fig, axes = new_figure(len(lams), width=5.0, height=4.0)
    for ax, lam in zip(axes, lams):
        h = g[g["lam"] == lam]
        ns = np.sort(h["n_train"].unique())
        for learner, kw in (("UMA", {}), ("Perceptron", {"ls": "--"})):
            kw = {**kw, "color": learner_color(learner)}
            k = h[h["learner"] == learner]
            _band(ax, ns, [k.loc[k["n_train"] == n, "confusion_rate"].to_numpy() for n in ns], learner, **kw)
        ax.set_xscale("log")
        ax.set_xlabel("training examples n (log scale)")
        ax.set_ylabel("confusion rate (test)")
        ax.set_title(f"λ = {lam:g}, ‖C − diag C‖_F = {h['noise_level'].mean():.2f}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    return fig


def fig5(df: pd.DataFrame, ds: str):
    fig, axes = new_figure(2, width=5.0, height=4.0)
    g = df[(df["part"] == "fig5") & (df["dataset"] == ds)]
    for strat in STRATEGIES:
        h = g[g["strategy"] == strat]
        if h.empty:
            continue
        its = np.asarray(h["iterations"].iloc[0])
        for ax, col in zip(axes, ("error_curve", "cr_curve")):
            ax.plot(its, np.vstack(h[col].to_numpy()).mean(axis=0), lw=1.6, label=strat)
    for ax, what in zip(axes, ("error rate (test)", "confusion rate (test)")):
        ax.set_xlabel("iteration")
        ax.set_ylabel(what)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", title="strategy")
    fig.suptitle(f"Figure 5, {ds}: mean over {g['run'].nunique()} run(s)")
    return fig


def _describe(ds: dict) -> str:
    split = ("the official 16,000 / 4,000 split" if ds.get("n_train") is None
             else f"{ds['n_train']:,} training points drawn per run, the rest for test")
    return (f"{ds['label']} ({split}, n_l = {ds['n_labelled']} per class, Gaussian kernel PCA to "
            f"{ds['n_components']} dimensions fitted on at most {ds['kpca_fit']:,} training points)")


def _drop_private(t: pd.DataFrame) -> pd.DataFrame:
    return t.drop(columns=[c for c in t.columns if str(c).startswith("_")])


def _setup(df: pd.DataFrame, plan: dict, quick: bool, elapsed: float, jobs: int) -> list[str]:
    toy = plan["toy"]
    mode = "quick" if quick else "full"
    ran = [ds["label"] for ds in plan["table1"] if ds["label"] in set(df.get("dataset", pd.Series(dtype=str)).dropna())]
    t1_desc = "; ".join(_describe(ds) for ds in plan["table1"] if ds["label"] in ran)
    return [        f"Mode: **{mode}**. Toy data: K = {toy['n_classes']} classes, d = {toy['n_features']}, margin γ = "
        f"{toy['margin']:g}, {toy['n_train']:,} training and {toy['n_test']:,} test points per run, a fresh data set "
        f"and reference matrix R per run ({plan['toy_runs']} runs). Noise levels λ ∈ {plan['lams']}: "
        "C(λ) = N(I + λ(R − I)), which stops changing once every diagonal entry is clipped to 0 (λ ≈ 1.1–1.3 "
        "for K = 10), so the grid spans the whole family.",
        f"Every learner runs {plan['max_iter']} batch iterations (UMA with C = I is the batch Perceptron of the "
        "paper's baseline; the rough classifier of Table 1 is the same). Strategy 'error', θ = 0.",
        f"Figure 1(b): true C = C(λ* = {plan['fig1b_lam']:g}); UMA is fed C(λ*(1 − α)) for α ∈ {plan['alphas']}.",
        "Table 1: " + (t1_desc or "no data set available") + f"; {plan['table1_runs']} runs (fresh S_l, split and "
        "kernel-PCA sample per run). Features are scaled by the training maximum; the kernel width by the median "
        "heuristic. S_u is the whole training set minus S_l; Ĉ is estimated by 5-fold cross-validation of the "
        "rough classifier on S_l (`noisyfeedback.learners.label_noise.rough.pseudo_label`).",
        "Semi-supervised baseline: the paper used a multiclass S3VM, which scikit-learn does not have; we use "
        "scikit-learn's `LabelSpreading` (k-NN graph, 7 neighbours) on the kernel-PCA features and, for the "
        "paper's '(no K-PCA)' column, on the raw features.",
        f"Figure 5: {plan['fig5_runs']} run(s), test metrics every {plan['fig5_every']} iterations, on the toy data "
        f"with class-conditional noise C(λ = {plan['fig5_toy_lam']:g}) and on Table 1's pseudo-labels.",
        f"Wall time {elapsed:.0f} s with {jobs} job(s). Results (one row per fitted model or curve): "
        "`results/louche2015.parquet`.",
    ]


def _data_note(plan: dict, quick: bool, skipped: list[str]) -> list[str]:
    data_note = [
        "**The paper's numbers are not available to us.** The extracted text of the paper lost every number of its "
        "Section 4 (toy data sizes, K, d, γ, n_l, the kernel-PCA dimension, the number of runs, Table 1 and the "
        "values quoted from Figures 1 and 5). The sizes here are our choices, stated above; the 'paper' column of "
        "the claims table holds the paper's qualitative statements, and each is judged from our measurements.",
        "**Not reproduced: Reuters.** The Reuters data set of the paper is not available here (not bundled, not in "
        "the data directory), so its Table 1 row is not run, and Figure 5 — which the paper ran on Reuters — runs "
        "on the toy data and on our Table 1 data sets instead. A user who has it as a LIBSVM/svmlight file can load "
        "it with `nf.datasets.load('path/to/file.svm')` (sparse CSR, which UMA accepts) and apply the protocol "
        "without a kernel, as the paper did (`noisyfeedback.learners.label_noise.rough.pseudo_label`, then "
        "`nf.UMA(confusion=C_hat)`); this recipe does not run it.",
        "Handwritten Digits: scikit-learn bundles only UCI optdigits' 1,797-image part, so it is split into "
        "training and test sets per run (the paper: 3,823 training and 1,797 test images).",
        "Figure 3 (error against the size of S_l) is not rerun.",
    ]
    if skipped:
        data_note.append(availability_note(skipped, "data files"))
    if quick:
        data_note.append("Quick mode uses 4,000 toy training points, 2 runs and digits only: its numbers show the "
                         "pipeline works, not the paper's values (UMA's sample requirement grows with the noise, "
                         "so its strongest levels need the full mode's data — see the sample-size panel there).")
    return data_note


def _findings(df: pd.DataFrame, claims: list[Claim]) -> list[str]:
    n_judged = sum(c.holds is not None for c in claims)
    n_hold = sum(bool(c.holds) for c in claims)
    a = fig1a_table(df)
    findings = [f"{n_hold} of {n_judged} checked claims hold in this run. A claim that does not hold is a finding "
                "of this reproduction; nothing was tuned to match the paper."]
    if not a.empty:
        below = a["_u"] < a["_p"]
        if not below.all():
            findings.append(
                "**Figure 1(a):** UMA is below the Perceptron at "
                f"{int(below.sum())} of {len(a)} noise levels; at λ = "
                + ", ".join(f"{v:g}" for v in a.loc[~below, "λ"])
                + " (where most labels are wrong and cond(C) is large) it is not, with this many training points. "
                "C⁻¹ amplifies the sampling error of μ, and picking the pair of largest ‖Z‖ then follows noise; "
                "the sample-size panel (full mode) shows UMA's confusion rate falling with n at those levels, "
                "as Propositions 3–4 predict.")
    m = _t1_means(df)
    if m:
        findings.append(
            "**Table 1 (realistic protocol):** "
            + "; ".join(f"{ds}: UMA {v.get('UMA', np.nan):.3f} vs the Perceptron on the same pseudo-labels "
                        f"{v.get('P_noisy', np.nan):.3f} (the rough classifier h₀, i.e. the Perceptron on S_l: "
                        f"{v.get('P_labelled', np.nan):.3f})" for ds, v in m.items())
            + ". The pseudo-labels are a deterministic function of x (h₀'s prediction, linear in the same "
            "features), not class-conditional noise: within a true class the wrong labels sit exactly where h₀ "
            "errs, so E[μ] ≠ C·Z* and C⁻¹μ is a biased update (the paper's Assumption 2 fails), while the "
            "Perceptron on the pseudo-labels essentially relearns h₀. Giving UMA the *actual* confusion of the "
            "pseudo-labels instead of Ĉ does not remove the bias ("
            + "; ".join(f"{ds}: {v.get('UMA_actual_C', np.nan):.3f}" for ds, v in m.items())
            + "). With labels drawn from the same Ĉ independently of x (class-conditional noise, what UMA "
              "assumes): UMA "
            + "; ".join(f"{v.get('UMA_cc', np.nan):.3f} vs the Perceptron's {v.get('P_cc', np.nan):.3f} on {ds}"
                        for ds, v in m.items())
            + ". The paper reports UMA slightly better than the Perceptron on the pseudo-labels; we do not "
              "reproduce that.")
    return findings


def sections(results: dict, claims: list[Claim], ctx) -> list:
    """The report's sections (results, claims -> sections)."""
    from ...report import Section

    df, plan = results["df"], ctx.plan
    setup = _setup(df, plan, ctx.quick, ctx.seconds, ctx.jobs)
    data_note = _data_note(plan, ctx.quick, results["skipped"])
    findings = _findings(df, claims)
    a = fig1a_table(df)
    m = _t1_means(df)
    fig5_sets = list(dict.fromkeys(df.loc[df["part"] == "fig5", "dataset"].dropna()))
    sections = [
        Section("Set-up", text=setup),
        Section("Data and numbers: what could not be reproduced", text=data_note),
        Section("Paper's claims vs our measurements", text=findings, tables={"Claims": claims_table(claims)}),
        Section("Figure 1(a): robustness to the noise level",
                figures={"Figure 1(a): confusion rate against ‖C − diag(C)‖_F, UMA (true C) vs the Perceptron":
                         fig1a(df)},
                tables={"Figure 1(a), per noise level (mean ± std over runs)": _drop_private(a)}),
        Section("Figure 1(b): robustness to an approximate C",
                figures={"Figure 1(b): UMA's confusion rate against the approximation factor α": fig1b(df)},
                tables={"Figure 1(b), per approximation factor": _drop_private(fig1b_table(df))}),
    ]
    s = sample_size_table(df)
    if not s.empty:
        sections.append(Section(
            "Sample size at the strongest noise levels (ours)",
            text=["Not in the paper: UMA and the Perceptron at the strongest noise levels of Figure 1(a) with more "
                  "training points (same K, d, γ, test set size and number of iterations)."],
            figures={"Confusion rate against the number of training examples": fig_sample_size(df)},
            tables={"Sample size": _drop_private(s)}))
    if m:
        sections.append(Section(
            "Table 1: the realistic protocol (Example 1)",
            text=["Mean ± std over runs, on the test set. Paper's columns: UMA, the Perceptron on the "
                  "pseudo-labels (the paper's first and last columns), the Perceptron on S_l (this is also the "
                  "rough classifier h₀ that made the pseudo-labels), on all clean labels, and the semi-supervised "
                  "baseline with and without kernel PCA. Diagnostics (ours): UMA given the actual confusion of the "
                  "pseudo-labels, and UMA / the Perceptron on labels drawn from Ĉ independently of x."],
            tables={"Table 1: test error rate": _paper_columns(table1(df, "error")),
                    "Table 1: test confusion rate": _paper_columns(table1(df, "confusion_rate")),
                    "Table 1, diagnostics (ours): test error rate": _paper_columns(table1(df, "error"), False),
                    "Table 1, diagnostics (ours): test confusion rate":
                        _paper_columns(table1(df, "confusion_rate"), False),
                    "Table 1: the protocol's measured quantities": table1_setup(df)}))
    if fig5_sets:
        sections.append(Section(
            "Figure 5: pair-selection strategies along the iterations",
            figures={f"Figure 5, {ds}: test error and confusion rate per iteration": fig5(df, ds) for ds in fig5_sets},
            tables={"Figure 5: final values and means over the second half of the iterations": fig5_table(df)}))
    rec = recommend_section(df, plan)
    if rec is not None:
        sections.append(rec)
    return sections


def _paper_columns(t: pd.DataFrame, paper: bool = True) -> pd.DataFrame:
    """Table 1's paper columns (``paper``) or our diagnostics: two tables that fit a page, not one."""
    from .tables import T1_DIAGNOSTICS, T1_LEARNERS

    cols = (T1_LEARNERS if paper else T1_DIAGNOSTICS).values()
    return t[[c for c in t.columns if c in ("dataset", "runs") or c in cols]]


def recommend_section(df: pd.DataFrame, plan: dict):
    """"What we recommend instead": CorrectedLogisticRegression and the peers next to UMA and the
    Perceptron of the same runs, on the same noisy labels; None when they did not run."""
    from ...report import Section
    from .. import _recommend as rec
    from .claims import recommend_bottom_lines, recommend_claims

    lines = recommend_bottom_lines(df, "error")
    if not lines:
        return None
    conf = recommend_bottom_lines(df, "confusion_rate")
    peers = ("plain logistic regression on the noisy labels and cleanlab's `CleanLearning(LogisticRegression())`"
             if any("cleanlab" in c for t in lines.values() for c in t.columns) else
             "plain logistic regression on the noisy labels (cleanlab's `CleanLearning(LogisticRegression())` "
             "runs too where the optional extra `bench` is installed; it is not installed here)")
    text = [rec.NOT_THE_PAPER,
            "`CorrectedLogisticRegression`: multinomial logistic regression trained on the forward-corrected loss "
            "(the model's clean class probabilities pushed through C, then the log-loss of the noisy label; "
            "Patrini et al. 2017), its regularisation chosen by cross-validated corrected log-loss of the noisy "
            "labels (no clean label needed), told the same C as UMA"
            + (", and with C estimated from the noisy data (`confusion=\"estimate\"`)" if
               plan.get("recommend_estimate", True) else "") + ". Peers: " + peers + ". All on standardised "
            "features, fitted on the **same** training sets and noisy labels as the paper's UMA and Perceptron of "
            "the same runs: Figure 1(a)'s toy runs at λ ∈ " + str(plan.get("recommend_lams", plan["lams"]))
            + " (C(λ) known) and Table 1's pseudo-labels with the estimated Ĉ. The paper's best is the lower "
            "of UMA and the Perceptron (on the same labels) in this run.",
            "Our claims: CorrectedLogisticRegression told C has a lower test error than UMA told the same C at "
            "each setting; and so has CorrectedLogisticRegression estimating C itself from the noisy labels, "
            "against UMA told C (Ĉ on Table 1; the case of a user who does not know C)."]
    tables = {"Ours vs the paper's (not counted in the paper's claims)": claims_table(recommend_claims(lines))}
    what = {"toy": "Figure 1(a)'s toy runs, per noise level λ", "table1": "Table 1's pseudo-labels, per data set"}
    for part, t in lines.items():
        for metric, table in (("test error", t), ("test confusion rate (the paper's measure)", conf.get(part))):
            if table is None:
                continue
            values, ratios = _split(rec.public(table))
            tables[f"{what[part]}: {metric}, mean ± std over runs"] = values
            tables[f"{what[part]}: {metric}, ours / the paper's best"] = ratios
    return Section("What we recommend instead", text=text, tables=tables)


#: short column names, so that the tables fit a page: (name in the results, name in the table)
SHORT = {"CorrectedLogisticRegression (known C)": "ours, told C",
         "CorrectedLogisticRegression (estimated C)": "ours, C estimated",
         "cleanlab CleanLearning(LogisticRegression())": "cleanlab",
         "LogisticRegression (noisy labels)": "plain LogReg"}


def _split(t: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One wide table as two that fit a page: the values (ours and the peers first, then the paper's best),
    and the ratios ours / the paper's best."""
    key = [c for c in ("lam", "dataset") if c in t.columns]
    best = [c for c in t.columns if c.startswith("paper's best ")]
    names = [c for c in SHORT if c in t.columns]
    ratios = [c for c in t.columns if c.endswith(" / best")]
    values = t[key + ["seeds"] + names + ["paper's best"] + best].rename(
        columns={**SHORT, "lam": "λ", "seeds": "runs", **{b: b.replace("paper's best ", "paper's best, ")
                                                          .replace("confusion_rate", "rate") for b in best}})
    ratio = t[key + ["paper's best"] + ratios].rename(
        columns={"lam": "λ", **{r: SHORT[r[:-len(" / best")]] + " / best" for r in ratios}})
    return values, ratio


INTRO = ("UMA learns a linear multiclass classifier from labels corrupted by a known confusion "
         "matrix C: each iteration it estimates, with C⁻¹, the sum of the points of true class q "
         "predicted as p, and makes a Perceptron step with it. This report reruns the paper's "
         "Section 4 and puts its statements next to our numbers.")
