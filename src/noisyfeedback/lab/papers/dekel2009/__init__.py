"""``reproduce dekel2009``: Dekel & Shamir (2009), good learners for evil teachers.

What the paper shows (its Sections 5 and 6) and what this recipe reruns:

- Figure 1 — the damage (excess-error) ratio (e3 − e1)/(e2 − e1) of the
  teacher-constrained SVM (`EvilTeacherSVM`, ε = 1) against
  the plain SVM, as a function of the number k ∈ {5, 10, …, 40} of evil teachers
  out of 100; training examples assigned to teachers at random, an evil teacher
  flips all its labels. e1: SVM on clean labels, e2: SVM on the corrupted labels,
  e3: the robust learner on the corrupted labels, all on the same clean test set.
- Figure 2 — the same for the Section 6 heuristic (`TeacherSGD`).
- Figure 3 — teachers by topic (unequal sizes): damage ratio against the fraction of
  flipped labels, one point per run (the paper shows TeacherSGD; we add EvilTeacherSVM).

The paper ran on the 6 binary problems between RCV1's four top categories (CCAT,
ECAT, GCAT, MCAT), 99 low-level categories as topic teachers, 40 random half/half
train/test splits. RCV1 with those categories is not available here: full mode runs
the 6 binary problems between 4 classes of MNIST (`FULL_PLAN`; rows scaled to
unit L2 norm), with 100 k-means clusters of each problem's examples as the topic
teachers. Users who have RCV1 can pass `RCV1_PLAN` (LIBSVM ``rcv1.binary``:
one binary problem, CCAT+ECAT vs GCAT+MCAT) to `run`.

Full mode: 40 splits per problem into equal training and test halves, both used whole
(as the paper; about 67 training examples per teacher, about an hour on 2 cores); λ of the SVM is chosen
once per problem on a separate validation split (the paper: "a standard well-tuned
linear SVM"), from a grid; ε = 1 as in the paper; both SVMs solved to a certified
relative duality gap of 1e-5. Quick mode (part of ``noisyfeedback demo``) runs on
scikit-learn's digits (4 classes, 20 teachers, 3 splits): seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...recipes import Paper, register_paper, run_paper
from . import claims, plans, report, tasks
from .claims import MAJORITY, make_claims
from .plans import FULL_PLAN, PAPER_K, QUICK_PLAN, RCV1_PLAN
from .report import INTRO, fig_ratio_vs_k, fig_topic, ratio_table, sensitivity_tables
from .tasks import choose_lambda, choose_problem, problems, run_split, sensitivity_split

TITLE = "Dekel & Shamir (2009): good learners for evil teachers"

PAPER = register_paper(Paper(
    name="dekel2009", title=TITLE, url="https://www.cs.huji.ac.il/~shais/papers/DekelSh09.pdf",
    plan=plans.plan, run=plans.run, claims=claims.claims, sections=report.sections, intro=INTRO,
    description="Figs. 1–3: damage ratio of EvilTeacherSVM and TeacherSGD vs SVM, random and topic "
                "teachers, 6 binary problems."))


def run(plan: dict, *, quick: bool, data_dir, out_dir: Path, jobs: int = 1, progress: Any = True) -> Path:
    """Run ``plan`` (`QUICK_PLAN`, `FULL_PLAN`, `RCV1_PLAN`) into ``out_dir``; write the report."""
    return run_paper(PAPER, quick=quick, data_dir=data_dir, out_dir=out_dir, jobs=jobs, progress=progress, plan=plan)


__all__ = ["PAPER", "TITLE", "run", "QUICK_PLAN", "FULL_PLAN", "RCV1_PLAN", "PAPER_K", "MAJORITY", "make_claims",
           "problems", "choose_lambda", "choose_problem", "run_split", "sensitivity_split",
           "ratio_table", "sensitivity_tables", "fig_ratio_vs_k", "fig_topic", "plans", "tasks", "claims", "report"]
