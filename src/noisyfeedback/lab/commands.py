"""The lab's commands: what ``noisyfeedback demo``, ``run``, ``plot`` and ``reproduce`` do.

The command line (`noisyfeedback.cli`) parses the flags and calls these; they live here, in the
lab, because they run studies and write reports (the core and the service never import the lab).

- `demo`: a Markdown + HTML report built from `DEMO_PARTS` (the bandit baselines on
  `DEMO_DATASETS`, then every paper recipe in quick mode); append a part to extend it;
- `results_table`: the numbers of a results table (``noisyfeedback run``) as a rich table;
- ``run``, ``plot`` and ``reproduce`` call `.runner.run_config`, `.figures.plot_results`
  and `.recipes.reproduce`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

import noisyfeedback as nf

from .figures import learning_curves, traces_to_frame
from .recipes import recipe_names, reproduce
from .report import Section, write_report

__all__ = ["DEMO_PARTS", "DEMO_DATASETS", "DemoDataset", "DemoContext", "Unavailable", "demo", "results_table"]


@dataclass
class DemoDataset:
    """A dataset of the demo: a loader returning (X, y) and per-dataset hyperparameters."""

    name: str
    load: Callable[[], tuple]
    gamma: float = 0.05
    note: str = ""


class Unavailable(Exception):
    """Raised by a demo loader whose dataset cannot be had here (the demo skips it, saying why)."""


def _load_digits():
    return nf.datasets.load("digits", normalize=True)


#: datasets of the demo's bandit part, in order; add entries to extend it
DEMO_DATASETS: list[DemoDataset] = [
    DemoDataset("synsep", lambda: nf.datasets.synsep(n_samples=20_000, seed=0), gamma=0.05,
                note="SynSep (Kakade et al. 2008): 20,000 generated examples, d = 400, K = 9, linearly separable."),
    DemoDataset("digits", _load_digits, gamma=0.1,
                note="scikit-learn digits (UCI optdigits 8×8): 1,797 examples, d = 64, K = 10, rows scaled to "
                     "unit L2 norm; the 200,000 rounds are ~110 passes over it."),
]


@dataclass
class DemoContext:
    """What a demo part gets: the budget, the seeds, a progress bar and a console."""

    rounds: int
    seeds: list[int]
    progress: Progress
    console: Console
    data_dir: Path | None = None
    notes: list[str] = field(default_factory=list)
    out: Path = Path("noisyfeedback-report")

    def run_many(self, description: str, runs: list[tuple[str, Callable[[], Any], Callable[[], Any]]], X, y):
        """Simulate every (label, make_learner, make_feedback) for every seed; return the Traces and labels."""
        task = self.progress.add_task(description, total=len(runs) * len(self.seeds) * self.rounds)
        traces, labels = [], []
        for label, make_learner, make_feedback in runs:
            for seed in self.seeds:
                base = next(t.completed for t in self.progress.tasks if t.id == task)
                traces.append(nf.simulate(make_learner(), X, y, feedback=make_feedback(), n_rounds=self.rounds,
                                          seed=seed, progress=lambda done, b=base: self.progress.update(
                                              task, completed=b + done)))
                labels.append(label)
        return traces, labels


def _summary_table(frame) -> "Any":
    """Final error rate, mean ± std over seeds, per label (order kept)."""
    import pandas as pd

    rows = []
    for label, g in frame.groupby("label", sort=False):
        e = g["error_rate"].to_numpy()
        rows.append({
            "configuration": label,
            "seeds": len(e),
            "rounds": int(g["n_rounds"].iloc[0]),
            "final error (mean ± std)": f"{e.mean():.4f} ± {e.std(ddof=1) if len(e) > 1 else 0.0:.4f}",
            "min": f"{e.min():.4f}",
            "max": f"{e.max():.4f}",
            "rounds/s": float((g["n_rounds"] / g["wall_time"]).median()),
        })
    table = pd.DataFrame(rows)
    table["rounds/s"] = table["rounds/s"].map(lambda v: f"{v:,.0f}")
    return table


def demo_bandit_baselines(ctx: DemoContext) -> list:
    """Perceptron (full labels) vs Banditron (clean bandit) vs Banditron under NoisyBandit(0.2, 0.4)."""

    sections = []
    for ds in DEMO_DATASETS:
        try:
            X, y = ds.load()
        except Unavailable as exc:
            ctx.notes.append(f"Dataset {ds.name} skipped: {exc}.")
            continue
        K = max(int(np.max(y)) + 1, 2)
        g = ds.gamma
        runs = [
            ("Perceptron, full labels", lambda: nf.Perceptron(K), nf.feedback.FullLabel),
            (f"Banditron γ={g}, clean bandit", lambda: nf.Banditron(K, gamma=g), lambda: nf.feedback.NoisyBandit(0, 0)),
            (f"Banditron γ={g}, NoisyBandit(0.2,0.4)", lambda: nf.Banditron(K, gamma=g),
             lambda: nf.feedback.NoisyBandit(0.2, 0.4)),
        ]
        traces, labels = ctx.run_many(f"{ds.name}: bandit baselines", runs, X, y)
        frame = traces_to_frame(traces, labels)
        fig = learning_curves(frame, title=f"{ds.name}: cumulative online error rate "
                              f"(mean and min–max over {len(ctx.seeds)} seeds)")
        sections.append(Section(
            heading=f"Bandit baselines on {ds.name}",
            text=[
                ds.note,
                f"Each configuration runs {ctx.rounds:,} rounds (passes over the data, each in a fresh "
                f"seeded order) for seeds {', '.join(map(str, ctx.seeds))}. The error rate counts the "
                "greedy prediction against the **true** label, before the update.",
                f"Banditron's exploration rate γ = {g} is fixed here, not tuned. "
                "Expected: the Perceptron, seeing full labels, errs least; the Banditron pays for "
                "exploration with clean bandit feedback (a fraction γ·(K−1)/K of its rounds plays a random "
                "non-greedy label), and degrades "
                "badly when its feedback is flipped with ρ0 = 0.2, ρ1 = 0.4, because it treats the noisy "
                "feedback as clean (the noise-corrected RCNBF is the fix).",
            ],
            figures={f"{ds.name} learning curves (log-log)": fig},
            tables={f"{ds.name}: final online error rate": _summary_table(frame)},
        ))
    return sections


def demo_reproductions(ctx: DemoContext) -> list:
    """Every registered paper recipe in quick mode, each into ``<out>/reproduce/<name>/``, linked."""

    names = [n for n in recipe_names() if n != "example"]
    lines = []
    for name in names:
        t0 = time.perf_counter()
        try:
            path = reproduce(name, quick=True, data_dir=ctx.data_dir, out=ctx.out / "reproduce" / name,
                             jobs=2, progress=ctx.progress)  # results do not depend on the backend
        except Exception as exc:  # the demo goes on; the report says what failed
            lines.append(f"`{name}`: failed ({type(exc).__name__}: {exc}).")
            ctx.notes.append(f"Recipe {name} failed: {type(exc).__name__}: {exc}")
            continue
        rel = os.path.relpath(path, ctx.out).replace(os.sep, "/")
        lines.append(f"[{name}]({rel}) — quick mode, {time.perf_counter() - t0:.0f} s.")
    if not lines:
        return []
    return [Section(heading="Paper reproductions (quick mode)", text=[
        "Each paper's recipe, reduced to generated or bundled data (`noisyfeedback reproduce NAME --quick`); "
        "the full versions take `--data-dir` with the papers' data sets. Reports:"] + lines)]


#: the demo's parts, in report order: (name, function(ctx) -> list of report Sections); append to extend
DEMO_PARTS: list[tuple[str, Callable[[DemoContext], list]]] = [
    ("bandit-baselines", demo_bandit_baselines),
    ("reproductions", demo_reproductions),
]


def demo(out: Path, rounds: int, seeds: int, data_dir: Path | None, parts: list[str] | None,
         progress: Progress, console: Console) -> tuple[Path, list, list[str]]:
    """Run the demo's parts (all, or ``parts``) and write the report into ``out``:
    (the report's ``index.html``, its sections, the notes of skipped parts)."""
    t0 = time.perf_counter()
    known = [n for n, _ in DEMO_PARTS]
    unknown = sorted(set(parts or []) - set(known))
    if unknown:
        raise ValueError(f"unknown demo part(s) {unknown}; choose from {known}.")
    sections = []
    ctx = DemoContext(rounds=rounds, seeds=list(range(seeds)), progress=progress, console=console,
                      data_dir=data_dir, out=out)
    with progress:
        for name, part in DEMO_PARTS:
            if parts is None or name in parts:
                sections.extend(part(ctx))
    elapsed = time.perf_counter() - t0
    about = [
        f"Generated by `noisyfeedback demo --rounds {rounds} --seeds {seeds}` in {elapsed:.1f} s "
        f"(noisyfeedback {nf.__version__}, numpy {np.__version__}).",
    ] + ctx.notes
    sections.append(Section(heading="About this report", text=about))
    path = write_report(out, "noisyfeedback demo", sections,
                        intro="Online multiclass learning from imperfect feedback: learning curves and "
                              "final error rates of the built-in demo.")
    return path, sections, ctx.notes


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    return escape(str(v))


def _setting(keys: list[str], group: tuple) -> str:
    """One readable label for a group of a results table: ``phase: dataset · channel(p=v) · learner(p=v)``,
    each name followed by its grid parameters that take more than one value."""
    values = dict(zip(keys, group))
    parts = []
    for owner in ("dataset", "channel", "learner"):
        params = [f"{k.split('.', 1)[1]}={values[k]}" for k in keys if k.startswith(owner + ".")]
        name = str(values.get(owner, "")) if owner in values else ""
        if "(" in name:  # a display name that already shows its parameters, e.g. NoisyBandit(0.2,0.4)
            params = []
        if name or params:
            parts.append(name + (f"({', '.join(params)})" if params else ""))
    label = " · ".join(parts)
    return f"{values['phase']}: {label}" if "phase" in values else label


def results_table(path: Path) -> Table:
    """The numbers of a results table: final error (or MSE) mean ± std, min, max over seeds, one row per
    (phase,) dataset, channel, learner and grid value (parameter columns with several values), the
    setting in one folded column so that the table reads at 80 columns."""
    import pandas as pd

    frame = pd.read_parquet(path)
    keys = [k for k in ("phase", "dataset", "channel", "learner") if k in frame.columns
            and (k != "phase" or frame[k].nunique() > 1)]
    # grid axes: the parameter columns that take more than one value
    keys += [c for c in frame.columns if c.split(".")[0] in ("dataset", "channel", "learner") and "." in c
             and frame[c].astype(str).nunique() > 1]
    metric = "error_rate" if "error_rate" in frame.columns else None
    regression = "mse" in frame.columns and frame["mse"].notna().all()
    rounds = frame["n_rounds"].unique() if "n_rounds" in frame else []
    per_row_rounds = len(rounds) > 1
    title = f"{escape(str(path))}: {'MSE' if regression else 'final error rate'} over seeds"
    if len(rounds) == 1:
        title += f", {_fmt(rounds[0])} rounds"
    table = Table(title=title, title_justify="left")
    table.add_column("setting", overflow="fold", ratio=1)
    for col in ("seeds",) + (("rounds",) if per_row_rounds else ()) + ("mean ± std", "min", "max"):
        table.add_column(col, justify="right", no_wrap=True)
    for group, g in frame.groupby(keys, sort=False, dropna=False) if keys else [((), frame)]:
        group = group if isinstance(group, tuple) else (group,)
        e = g[metric].to_numpy(dtype=float) if metric else np.full(len(g), np.nan)
        std = e.std(ddof=1) if len(e) > 1 else 0.0
        cells = [escape(_setting(keys, group)), str(len(g))]
        if per_row_rounds:
            cells.append(_fmt(g["n_rounds"].iloc[0]))
        table.add_row(*cells, f"{e.mean():.4g} ± {std:.2g}", f"{e.min():.4g}", f"{e.max():.4g}")
    return table
