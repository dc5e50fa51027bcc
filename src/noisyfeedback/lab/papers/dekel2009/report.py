"""dekel2009's report: tables, figures and sections (results, claims -> sections)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...figures import new_figure
from .claims import MAJORITY, _medians
from .tasks import problems


def sensitivity_tables(sens: pd.DataFrame) -> dict[str, pd.DataFrame]:
    if sens.empty:
        return {}
    out = {}
    sl = sens[sens["kind"] == "slack"]
    if not sl.empty:
        out["EvilTeacherSVM on the first problem at the largest k: training size and ε (test errors, means)"] = \
            _slack_table(sl)
    pg = sens[sens["kind"] == "pegasos"].groupby("problem").agg(
        splits=("split", "nunique"), svm=("e1", "mean"), pegasos=("e1_pegasos", "mean")).reset_index()
    out["Optimisation error of the SGD baseline: clean test error of the exact SVM and of Pegasos with the same "
        "λ and epochs"] = pg.rename(columns={"svm": "exact SVM, clean labels",
                                             "pegasos": "Pegasos (TeacherSGD, eps=None), clean"})
    return out


def _slack_table(sl: pd.DataFrame) -> pd.DataFrame:
    slack = sl.groupby(["setting", "k"], sort=False).agg(
        splits=("split", "nunique"), per_teacher=("per_teacher", "first"), eps=("eps", "first"),
        slack=("slack", "first"), e1=("e1", "mean"), e2=("e2", "mean"), e3=("e3", "mean"),
        median_ratio=("ratio", "median"), evil_flagged=("evil_flagged", "mean"),
        good_flagged=("good_flagged", "mean")).reset_index()
    return slack.rename(columns={"per_teacher": "examples per teacher", "slack": "ε/√|S_t|",
                                 "median_ratio": "median damage ratio", "evil_flagged": "evil flagged (ν > 0)",
                                 "good_flagged": "good flagged"})


# --------------------------------------------------------------- summaries
def ratio_table(df: pd.DataFrame, assignment: str = "random") -> pd.DataFrame:
    """Median [quartiles] of the damage ratio per (problem, k), both learners, with mean e1, e2."""
    out = []
    for (prob, k), g in df[df["assignment"] == assignment].groupby(["problem", "k"], sort=True):
        def q(col):
            v = g[col].dropna().to_numpy(float)
            return (np.median(v), np.quantile(v, 0.25), np.quantile(v, 0.75)) if v.size else (np.nan,) * 3
        me, le, he = q("ratio_ets")
        ms, ls, hs = q("ratio_sgd")
        out.append({"problem": prob, "k": int(k), "runs": len(g), "flipped": float(g["flipped"].mean()),
                    "e1": float(g["e1"].mean()), "e2": float(g["e2"].mean()),
                    "e3 EvilTeacherSVM": float(g["e3_ets"].mean()), "e3 TeacherSGD": float(g["e3_sgd"].mean()),
                    "ratio EvilTeacherSVM: median": me, "[q1, q3]": f"[{le:.2f}, {he:.2f}]",
                    "ratio TeacherSGD: median": ms, "[q1, q3] ": f"[{ls:.2f}, {hs:.2f}]",
                    "e2 ≤ e1 (runs)": int((g["e2"] <= g["e1"]).sum()),
                    "evil flagged (of k)": float(g["evil_flagged"].mean()),
                    "good flagged": float(g["good_flagged"].mean())})
    return pd.DataFrame(out)


#: the per-(problem, k) table's ratio columns: one table of its own, first (the paper's measure), so that
#: neither half is wider than a page
RATIO_COLUMNS = ["ratio EvilTeacherSVM: median", "[q1, q3]", "ratio TeacherSGD: median", "[q1, q3] ",
                 "evil flagged (of k)", "good flagged"]


# ---------------------------------------------------------------- figures
YLIM = (-1.0, 3.0)


def fig_ratio_vs_k(df: pd.DataFrame, col: str, title: str, n_teachers: int):
    d = df[df["assignment"] == "random"]
    probs = sorted(d["problem"].unique())
    fig, axes = new_figure(len(probs), ncols=3, width=4.2, height=3.4)
    for ax, p in zip(axes, probs):
        g = d[d["problem"] == p]
        ks = sorted(g["k"].unique())
        data = [g.loc[g["k"] == k, col].dropna().clip(*YLIM).to_numpy() for k in ks]
        ax.boxplot(data, positions=range(len(ks)), widths=0.6, showfliers=True,
                   flierprops={"markersize": 2, "alpha": 0.5})
        ax.set_xticks(range(len(ks)), [f"{k / n_teachers:.0%}" for k in ks], fontsize=7)
        ax.axhline(1.0, color="tab:red", lw=0.8, ls="--")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylim(*YLIM)
        ax.set_title(p, fontsize=9)
        ax.set_xlabel("evil teachers (k / teachers)", fontsize=8)
        ax.set_ylabel("damage ratio (e3−e1)/(e2−e1)", fontsize=8)
    fig.suptitle(title + f" (clipped to {list(YLIM)})", fontsize=10)
    return fig


def fig_topic(df: pd.DataFrame):
    d = df[df["assignment"] == "topic"]
    probs = sorted(d["problem"].unique())
    fig, axes = new_figure(len(probs), ncols=3, width=4.2, height=3.4)
    for ax, p in zip(axes, probs):
        g = d[d["problem"] == p]
        ax.scatter(g["flipped"], g["ratio_sgd"].clip(*YLIM), marker="+", s=14, lw=0.7, label="TeacherSGD")
        ax.scatter(g["flipped"], g["ratio_ets"].clip(*YLIM), marker="x", s=10, lw=0.6, alpha=0.6,
                   label="EvilTeacherSVM")
        ax.axhline(1.0, color="tab:red", lw=0.8, ls="--")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylim(*YLIM)
        ax.set_title(p, fontsize=9)
        ax.set_xlabel("fraction of flipped labels", fontsize=8)
        ax.set_ylabel("damage ratio", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure 3: topic teachers, damage ratio against the flipped fraction (clipped to {list(YLIM)})",
                 fontsize=10)
    return fig


def _setup(df: pd.DataFrame, plan: dict, quick: bool, seconds: float, jobs: int) -> list[str]:
    ds = plan["dataset"]
    n_t = plan["n_teachers"]
    nonconv = int((~df["ets_converged"]).sum() + (~df["svm_converged"]).sum())
    n_train = int(df["n_train"].iloc[0])
    n_test = int(df["n_test"].median())
    e2_le = int((df["e2"] <= df["e1"]).sum())
    return [
        f"Mode: **{'quick' if quick else 'full'}**. Data: **{ds['label']}**, classes {ds['classes']} "
        f"({len(problems(ds['classes']))} binary problems, every pair; the second class of a pair is +1)"
        + (", rows scaled to unit L2 norm" if ds.get("normalize") else "") + ". "
        f"{plan['n_splits']} random splits per problem into equal training and test halves"
        + (f"; the training half is **subsampled to {n_train:,} examples** ({n_train // n_t} per teacher) to keep "
           "the run short, the test half is used whole" if plan.get("n_train") else "")
        + f" (median test size {n_test:,}).",
        f"Teachers: random assignment into {n_t} equal teachers; k ∈ {plan['evil']} of them evil (flip all "
        f"their labels). Topic assignment: each problem's examples clustered into {plan['n_topics']} k-means "
        "clusters (one topic teacher each, sizes unequal; the paper used RCV1's low-level categories); the "
        "same k evil topics, damage ratio against the fraction of labels that ends up flipped.",
        f"SVM: LinearSVM, the paper's eq. (1) without bias; λ chosen per problem from {plan['lams']} on a "
        "separate validation split (lowest clean error; see the table below). EvilTeacherSVM: the same λ, "
        f"ε = {plan['eps']:g} (the paper's value); both solved to a certified relative duality gap of "
        f"{plan['tol']:g}. TeacherSGD: Pegasos with the per-teacher cap, the same λ and ε, "
        f"{plan['sgd_epochs']} epochs, last iterate.",
        "Damage ratio (e3 − e1)/(e2 − e1): e1 = SVM on the clean training labels, e2 = SVM on the corrupted "
        "labels, e3 = the robust learner on the corrupted labels; all errors on the clean test half. It is "
        f"undefined when e2 = e1 (left out) and meaningless when e2 < e1: {e2_le} of {len(df)} runs had "
        "e2 ≤ e1 (mostly at small k), which makes single ratios noisy; we report medians and quartiles.",
        f"{len(df):,} noisy runs; {df['seconds'].sum():,.0f} CPU-s summed over the tasks (this invocation: "
        f"{seconds:,.0f} s wall with {jobs} job(s), results of earlier invocations reused); "
        + (f"**{nonconv} fits did not reach the gap**." if nonconv else "every SVM fit reached its certified gap."),
    ]


def _data_note(df: pd.DataFrame, plan: dict, quick: bool) -> list[str]:
    ds, n_t = plan["dataset"], plan["n_teachers"]
    n_train = int(df["n_train"].iloc[0])
    data_note = [
        "**Not reproduced on the paper's data.** The paper's RCV1 set-up (four top categories CCAT/ECAT/GCAT/"
        "MCAT, 99 low-level categories as topic teachers) is not available here. This run uses "
        f"{ds['label']} (dense pixels, not sparse TF-IDF) and k-means topics, with far fewer training examples "
        f"per teacher ({n_train // n_t} against the paper's thousands: 800k RCV1 articles): Proposition 1's condition "
        "ε > |S^e|√|S_t|/m is easier to meet with small teachers, but the constraint's slack ε/(m√|S_t|) is "
        "looser relative to the average α, so absolute numbers are not expected to match the paper.",
        "Users with LIBSVM's `rcv1.binary` (one binary problem, CCAT+ECAT vs GCAT+MCAT) can run "
        "`noisyfeedback.lab.papers.dekel2009.run(RCV1_PLAN, ...)`.",
    ]
    if quick:
        data_note.append("Quick mode runs on scikit-learn's digits (≈180 training examples per problem, "
                         f"{n_t} teachers, {plan['n_splits']} splits): it shows the pipeline works; its numbers "
                         "are not a reproduction. Run without --quick (with --data-dir holding MNIST).")
    return data_note


def _findings(df: pd.DataFrame, sens: pd.DataFrame, plan: dict, claims: list) -> list[str]:
    n_judged = sum(c.holds is not None for c in claims)
    n_hold = sum(bool(c.holds) for c in claims)
    n_t = plan["n_teachers"]
    n_train = int(df["n_train"].iloc[0])
    findings = [f"{n_hold} of {n_judged} judged claims hold in this run. A claim that does not hold is a finding "
                "of this reproduction; nothing was tuned to match the paper."]
    rnd = df[df["assignment"] == "random"]
    by_k = rnd.groupby("k").agg(ets=("ratio_ets", "median"), sgd=("ratio_sgd", "median"),
                                none=("evil_flagged", lambda v: float(np.mean(v == 0))))
    findings.append("Median damage ratio over all problems and splits, by k (random teachers): EvilTeacherSVM "
                    + ", ".join(f"k={k}: {r.ets:.2f}" for k, r in by_k.iterrows()) + "; TeacherSGD "
                    + ", ".join(f"k={k}: {r.sgd:.2f}" for k, r in by_k.iterrows()) + ".")
    k_max = int(by_k.index.max())
    none_share = float(by_k.loc[k_max, "none"])
    slack = (f"the constraint (3) allows each teacher's mean α to exceed the overall mean by ε/(m√|S_t|), i.e. by "
             f"ε/√|S_t| = {plan['eps'] / np.sqrt(n_train / n_t):.2f} in units of the largest α (1/m)")
    if none_share >= MAJORITY:
        findings.append(
            f"At k = {k_max} EvilTeacherSVM flagged no teacher (every ν = 0, i.e. it returned the plain SVM, ratio "
            f"exactly 1) in {none_share:.0%} of the runs: {slack}; with this many flipped labels the plain SVM's α "
            "are large everywhere, so no teacher exceeds that slack. The slack shrinks with the teacher size; see "
            "the sensitivity section.")
    else:
        flagged = float(rnd.loc[rnd["k"] == k_max, "evil_flagged"].mean())
        findings.append(
            f"At k = {k_max} EvilTeacherSVM flagged on average {flagged:.1f} of the {k_max} evil teachers (ν > 0) "
            f"and no teacher in {none_share:.0%} of the runs; {slack}. With smaller teachers the slack is looser "
            "and the constraint stops binding at the largest k; see the sensitivity section.")
    if not sens.empty:
        sl = sens[sens["kind"] == "slack"] if "setting" in sens.columns else sens.iloc[:0]
        if not sl.empty:
            top = sl[sl["k"] == sl["k"].max()].groupby("setting", sort=False).agg(
                r=("ratio", "median"), f=("evil_flagged", "mean"))
            findings.append(f"Sensitivity (first problem, k = {int(sl['k'].max())}): "
                            + "; ".join(f"{name}: median ratio {v.r:.2f}, {v.f:.1f} evil teachers flagged"
                                        for name, v in top.iterrows()) + ".")
        pg = sens[sens["kind"] == "pegasos"]
        findings.append(f"TeacherSGD's ratio also carries Pegasos' own optimisation error: on clean labels, "
                        f"{plan['sgd_epochs']} epochs of Pegasos err {pg['e1_pegasos'].mean():.4f} on average "
                        f"against the exact SVM's {pg['e1'].mean():.4f} — comparable to e2 − e1 at small k, "
                        "which inflates TeacherSGD's ratio there (the paper compares to the SVM too).")
    return findings


def sections(results: dict, claims: list, ctx) -> list:
    """The report's sections (the summary line and the links come from the engine's `run_paper`)."""
    from ...recipes import claims_table
    from ...report import Section

    df, lam_tab, sens, plan = results["df"], results["lam_tab"], results["sens"], ctx.plan
    n_t = plan["n_teachers"]
    rand = ratio_table(df, "random")
    topic = df[df["assignment"] == "topic"]
    setup = _setup(df, plan, ctx.quick, ctx.seconds, ctx.jobs)
    data_note = _data_note(df, plan, ctx.quick)
    findings = _findings(df, sens, plan, claims)
    ets_m, sgd_m = _medians(df, "ratio_ets"), _medians(df, "ratio_sgd")
    med_tab = pd.concat({"EvilTeacherSVM": ets_m, "TeacherSGD": sgd_m}, names=["learner"]).reset_index()
    med_tab.columns = [c if isinstance(c, str) else f"k={c}" for c in med_tab.columns]
    sections = [
        Section("Set-up", text=setup, tables={"λ per problem (clean validation error) and topic teachers": lam_tab}),
        Section("Data: what could not be reproduced", text=data_note),
        Section("Paper's claims vs our measurements", text=findings, tables={"Claims": claims_table(claims)}),
        Section("Figures 1 and 2: random assignment",
                figures={"Figure 1: EvilTeacherSVM vs SVM, damage ratio against the fraction of evil teachers":
                         fig_ratio_vs_k(df, "ratio_ets", "Figure 1: EvilTeacherSVM (Sec. 3) vs SVM", n_t),
                         "Figure 2: TeacherSGD vs SVM, damage ratio against the fraction of evil teachers":
                         fig_ratio_vs_k(df, "ratio_sgd", "Figure 2: TeacherSGD (Sec. 6) vs SVM", n_t)},
                tables={"Median damage ratio per problem and k (random assignment)": med_tab,
                        "Per problem and k: damage-ratio median and quartiles, teachers with ν > 0 "
                        "(EvilTeacherSVM)": rand[["problem", "k"] + [c for c in RATIO_COLUMNS if c in rand.columns]],
                        "Per problem and k: mean errors": rand[[c for c in rand.columns if c not in RATIO_COLUMNS]]}),
        Section("Figure 3: topic teachers",
                text=[f"{len(topic)} runs; fraction of flipped labels from {topic['flipped'].min():.2f} to "
                      f"{topic['flipped'].max():.2f}." if len(topic) else "No topic runs."],
                figures={"Figure 3: damage ratio against the fraction of flipped labels (topic teachers)":
                         fig_topic(df)} if len(topic) else {},
                tables={"Median damage ratio per problem and k (topic assignment)":
                        pd.concat({"EvilTeacherSVM": _medians(df, "ratio_ets", "topic"),
                                   "TeacherSGD": _medians(df, "ratio_sgd", "topic")},
                                  names=["learner"]).reset_index().rename(columns=lambda c: c if isinstance(c, str)
                                                                         else f"k={c}")} if len(topic) else {}),
        Section("Sensitivity: the slack per teacher, and the SGD baseline's own error",
                text=["Extra runs, not in the paper: on the first problem, the largest k's with "
                      "the main setting, with the whole training half (larger teachers), and with the main "
                      "training size but ε scaled down to the whole half's slack ε/√|S_t|; and plain Pegasos "
                      "against the exact SVM on clean labels on every problem."],
                tables=sensitivity_tables(sens)),
        Section("Results tables", text=[
            "One row per (problem, split, assignment, k) in `results/results.parquet`; the engine's per-task "
            "files in `results/tasks/` let a rerun with the same plan resume (only missing tasks run)."]),
    ]
    return sections


INTRO = ("Labels come from many teachers, some of whom flip every label. The paper's SVM "
         "limits each teacher's share of the dual weight (EvilTeacherSVM); its Section 6 "
         "heuristic caps the SGD steps per teacher (TeacherSGD). This report reruns the "
         "paper's Figures 1–3 and puts its statements next to our numbers.")
