"""``reproduce batra2021``: Batra & Manwani (2021), multiclass classification using dilute bandit feedback.

What the paper shows (its Section 5) and what this recipe reruns:

- Figure 2 / Table 1 — converged error against γ for MC-DBF with a low, a
  medium and a high set size m, and for SOBA (bandit feedback, m = 1); the
  paper's chosen γ (Table 1) next to the γ our selection chose (per dataset and
  m, on tuning seeds separate from the reported ones, on a grid that contains
  the paper's values).
- Figure 3 — learning curves (log-log) of MC-DBF for the three m against the
  Perceptron (full information) and SOBA (bandit feedback).
- Figure 4 — MC-DBF against MC-SLP, its full-information counterpart, with the
  same m; the gap at the last round is tabulated.
- Figure 5 — final error against m (1 … K−1) at a constant γ.
- Figure 6 — the same comparison as Figure 3 on SynSep (linearly separable).

The paper ran on 512-d VGG-16 features of CIFAR-10, SVHN, MNIST and
Fashion-MNIST; those features are not available here, so MNIST and
Fashion-MNIST run on raw pixels (rows scaled to unit L2 norm) and CIFAR-10 and
SVHN are not run. The report says so.

Full mode (`FULL_PLAN`): MNIST, Fashion-MNIST (from ``--data-dir``; a
missing one is skipped and the report says so) and SynSep, 1e6 rounds per run,
γ tuned on one seed, 5 report seeds (the paper: 10), m sweep on 3 seeds — about
310 runs of 1e6 rounds, roughly 30–60 minutes with ``-j 2`` on a 2-core machine
(one 784-d run takes 8–18 s there, depending on load).

Quick mode (part of ``noisyfeedback demo``) runs on SynSep (5,000 examples) and
scikit-learn's digits, 30,000 rounds, 2 report seeds and 1 tuning seed:
about 15–30 s on a 2-core machine. `QUICK_PLAN` holds its sizes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...recipes import Paper, register_paper, run_paper
from . import claims, plans, report, tables
from .claims import COMPARABLE_ABS, COMPARABLE_REL, CONVERGED_GAP, MONOTONE_TOL, make_claims
from .plans import FULL_PLAN, QUICK_PLAN, SOBA_FULL_MAX_KD, m_levels
from .report import INTRO
from .tables import (LEVELS, NOT_AVAILABLE, PAPER_TABLE1, PLATEAU_TOL, final_table, gamma_table, gap_table,
                     window_error)

TITLE = "Batra & Manwani (2021): multiclass classification using dilute bandit feedback"

PAPER = register_paper(Paper(
    name="batra2021", title=TITLE, url="https://arxiv.org/abs/2105.09534",
    plan=plans.plan, run=plans.run, claims=claims.claims, sections=report.sections, intro=INTRO,
    description="Figs. 2–6 and Table 1: MC-DBF (low/medium/high m) vs MC-SLP, Perceptron, SOBA; "
                "γ chosen on separate seeds; set-miss rates."))


def run(plan: dict, *, quick: bool, data_dir, out_dir: Path, jobs: int = 1, progress: Any = True) -> Path:
    """Run ``plan`` (see `QUICK_PLAN`, `FULL_PLAN`) into ``out_dir`` and write the report."""
    return run_paper(PAPER, quick=quick, data_dir=data_dir, out_dir=out_dir, jobs=jobs, progress=progress, plan=plan)


__all__ = ["PAPER", "TITLE", "run", "QUICK_PLAN", "FULL_PLAN", "PAPER_TABLE1", "NOT_AVAILABLE", "LEVELS",
           "SOBA_FULL_MAX_KD", "COMPARABLE_REL", "COMPARABLE_ABS", "CONVERGED_GAP", "MONOTONE_TOL", "PLATEAU_TOL",
           "m_levels", "window_error", "final_table", "gap_table", "gamma_table", "make_claims",
           "plans", "tables", "claims", "report"]
