"""``reproduce moroshko``: Moroshko & Crammer, *Online regression with controlled label noise rate*.

What the paper shows (its Section 4) and what this recipe reruns:

- Figure 2 — the synthetic task (d = 20, v_t ~ U[0, M], M = 5): cumulative MSE against
  the clean target for NLMS on clean and on noisy labels and for ORS with every scaling
  rule, known variance (``beta``, ``opt``, ``one_sample``, ``one_sample_pred``,
  ``two_samples``) and unknown variance (``one_sample_pred``, ``two_samples``).
- Figure 4 — channel equalization (sinc channel, 20-tap equalizer) for M = 0.5, 1, 5.
- Figure 5 — the adaptive speech filter. The paper's speech recording, room response and
  hammer noise are not public: we run a SUBSTITUTE (a synthetic speech-like signal through a
  synthetic 1024-tap room response, a 1024-tap filter, and a synthetic hammering noise
  profile), and say so in the report. r and β are tuned on the first 20 % of the signal (as in
  the paper) and the filter is then run, from zero, on the other 80 %.
- Figure 6 — label budgets: ``const``, ``begin``, ``auto`` (a found by bisection so the
  spend on the tuning sequence is B) and ``auto_self_tuned``, each with scaling (eq. (5),
  one sample and pred / sample variance) and without, under uniform, increasing and
  decreasing noise; 95 % t-intervals over the report seeds.
- Figure 7 — the instantaneous budget and a during an ``auto_self_tuned`` run (B = 1.5).

Every method's r (and β) is tuned on a separate sequence (its own data and noise seeds) as
the lowest final cumulative MSE over a log grid; where the best sits on an edge of the grid,
up to ``extend_grid`` more values per parameter are tried past it (`.tasks.tune_grid`),
and both bests are kept. The reported runs use the extended best and fresh seeds. Rows are
visited in their given order (``nf.simulate(..., shuffle=False)``: the signals are time
series). Its protocol (seeded noise schedules, joint (r, β) selection, a bisection for a, a
block-wise trace of a) is not a declarative grid: it has its own task kind (`.tasks`,
``moroshko.work``), run by the engine in two parts (`.plans`: tuning, then the reported
runs). Results do not depend on ``jobs``: every run is seeded from its own spec.

Full mode (`FULL_PLAN`, the paper's sizes: 50,000 rounds, 20 seeds) takes a few
minutes on two cores; quick mode (`QUICK_PLAN`, part of ``noisyfeedback demo``)
a few seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...recipes import Paper, register_paper, run_paper
from . import claims, plans, report, tables, tasks
from .claims import CLOSE_TO_LIMITED, LIKE, NOT_FAR, NOT_MUCH_WORSE, USUALLY, make_claims
from .plans import FULL_PLAN, QUICK_PLAN
from .report import INTRO
from .tables import summary_budget, summary_single, t_interval
from .tasks import (BUDGET_RULES, KNOWN_PANEL, LATE_FRACTION, SCHEDULES, STRATEGIES, UNKNOWN_PANEL, VARIANTS,
                    dataset, find_a, late_mse, make_learner, noise_channel, run_one, self_tuned_trace, work)

TITLE = "Moroshko & Crammer: online regression with controlled label noise rate (NLMS vs ORS)"

PAPER = register_paper(Paper(
    name="moroshko", title=TITLE,
    url="https://proceedings.mlr.press/v25/moroshko12.html",
    plan=plans.plan, run=plans.run, claims=claims.claims, sections=report.sections, intro=INTRO,
    description="Figs. 2, 4–7: NLMS vs ORS (every scaling rule, known/unknown variance) on synthetic, "
                "channel-equalization and substitute speech data; label-budget strategies."))


def run(plan: dict, *, quick: bool, out_dir: Path, jobs: int = 1, progress: Any = True) -> Path:
    """Run ``plan`` (see `QUICK_PLAN`, `FULL_PLAN`) and write the report into ``out_dir``."""
    return run_paper(PAPER, quick=quick, data_dir=None, out_dir=out_dir, jobs=jobs, progress=progress, plan=plan)


__all__ = ["PAPER", "TITLE", "run", "QUICK_PLAN", "FULL_PLAN", "VARIANTS", "KNOWN_PANEL", "UNKNOWN_PANEL",
           "STRATEGIES", "SCHEDULES", "BUDGET_RULES", "LATE_FRACTION", "NOT_FAR", "NOT_MUCH_WORSE", "LIKE", "USUALLY",
           "CLOSE_TO_LIMITED", "make_claims", "dataset", "noise_channel", "make_learner", "late_mse", "run_one",
           "find_a", "self_tuned_trace", "work", "summary_single", "summary_budget", "t_interval",
           "plans", "tasks", "tables", "claims", "report"]
