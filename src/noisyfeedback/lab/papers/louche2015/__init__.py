"""``reproduce louche2015``: Louche & Ralaivola (2015), Unconfused Ultraconservative Multiclass Algorithms (UMA).

What the paper shows (its Section 4) and what this recipe reruns:

- Figure 1(a) — confusion rate on the toy data (uniform on the unit sphere, K
  random unit prototypes, margin γ) against the noise level ‖C − diag(C)‖_F,
  for UMA (given the true C) and the batch Perceptron (UMA with C = I), with
  C(λ) = N(I + λ(R − I)) from a random column-stochastic R (Section 4.1).
- Figure 1(b) — UMA's confusion rate when it is fed C(λ') instead of the true
  C(λ*), against the approximation factor α = 1 − λ'/λ* (α = 1: C = I, the
  Perceptron; α = 0: the true C; α < 0: noise overestimated).
- A sample-size panel (ours, not in the paper): at the strongest noise levels,
  confusion rate against the number of training examples (Propositions 3–4:
  the sample UMA needs grows with the noise).
- Table 1 — the realistic protocol of Example 1 / Section 4.2.1: n_l labelled
  examples per class (S_l), a rough classifier (UMA with C = I) learned on them,
  its confusion Ĉ estimated by cross-validation on S_l, pseudo-labels for the
  rest of the training set (S_u), then UMA(Ĉ) on S_u; against the Perceptron on
  the pseudo-labels, the Perceptron on S_l, the Perceptron on all clean labels
  and a semi-supervised baseline from scikit-learn (label spreading, on the
  kernel-PCA features and on the raw features — the paper's S3VM columns).
  Diagnostics: UMA given the *actual* confusion of the pseudo-labels, and UMA /
  Perceptron on labels drawn from Ĉ independently of x (class-conditional noise,
  the paper's Assumption 2).
- Figure 5 — test error and confusion rate along the iterations for the three
  pair-selection strategies (error, confusion, random).

Data: the toy data is generated; Table 1 runs on UCI optdigits as bundled with
scikit-learn (its 1,797-image test part; the paper used the 3,823 + 1,797
split) and UCI Letter (``letter-recognition.data`` from ``--data-dir``; the
official 16,000 / 4,000 split). Reuters is not available here and is not run.
Every number of the paper's protocol and results (n, K, d, γ, n_l, the kernel-
PCA dimension, the number of runs, Table 1, the figures' values) was lost in
the text we have, so the sizes are ours and the claims are judged
qualitatively; nothing was tuned to match the paper.

Quick mode (part of ``noisyfeedback demo``): toy data with 4,000 training
points, Table 1 and Figure 5 on digits, 2 runs — about 17 s of CPU.
Full mode: 20,000 training points, 5 runs, digits and Letter, plus the
sample-size panel — about 4–5 minutes of CPU on one core (``-j 2`` spreads
the runs over two processes, with identical results).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...recipes import Paper, register_paper, run_paper
from . import claims, plans, report, tables, tasks
from .claims import CLOSE_ABS, DRASTIC_FACTOR, STABLE_TOL, make_claims
from .plans import FULL_PLAN, QUICK_PLAN, plan_tasks
from .report import INTRO
from .tables import T1_DIAGNOSTICS, T1_LEARNERS, fig1a_table, fig1b_table, fig5_table, sample_size_table, table1
from .tasks import (BASE_SEED, STRATEGIES, fig5_toy_task, sample_size_task, strategy_curves, table1_task,
                    toy_task)

TITLE = "Louche & Ralaivola (2015): unconfused ultraconservative multiclass algorithms (UMA)"

PAPER = register_paper(Paper(
    name="louche2015", title=TITLE, url="https://proceedings.mlr.press/v37/louche15.html",
    plan=plans.plan, run=plans.run, claims=claims.claims, sections=report.sections, intro=INTRO,
    description="Figs. 1(a), 1(b), 5 and Table 1: UMA vs the Perceptron on toy data and the realistic "
                "pseudo-label protocol (digits, Letter); C estimated from a small clean set."))


def run(plan: dict, *, quick: bool, data_dir, out_dir: Path, jobs: int = 1, progress: Any = True) -> Path:
    """Run ``plan`` (see `QUICK_PLAN`, `FULL_PLAN`) and write the report into ``out_dir``."""
    return run_paper(PAPER, quick=quick, data_dir=data_dir, out_dir=out_dir, jobs=jobs, progress=progress, plan=plan)


__all__ = ["PAPER", "TITLE", "run", "QUICK_PLAN", "FULL_PLAN", "BASE_SEED", "STRATEGIES", "T1_LEARNERS",
           "T1_DIAGNOSTICS", "DRASTIC_FACTOR", "CLOSE_ABS", "STABLE_TOL", "make_claims", "plan_tasks",
           "toy_task", "sample_size_task", "fig5_toy_task", "strategy_curves", "table1_task", "fig1a_table",
           "fig1b_table", "sample_size_table", "table1", "fig5_table", "plans", "tasks", "tables", "claims", "report"]
