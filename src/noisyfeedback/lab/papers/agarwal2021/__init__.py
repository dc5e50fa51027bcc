"""``reproduce agarwal2021``: Agarwal & Manwani (2021), learning under noisy bandit feedback.

Figure 2 (average online error, log-log, of RCNBF, RCINE, Banditron, BPA and
SOBA under five noise settings), Figure 3 (RCINE's error against γ) and
Table 1 (estimated flip rates ρ̂0, ρ̂1 for six settings, the paper's values
beside ours and NREst's). γ is chosen per algorithm, dataset and setting on a
grid, on tuning seeds separate from the reported ones.
"""

from __future__ import annotations

from ...recipes import Paper, register_paper
from . import claims, plans, report, tasks
from .claims import OTHERS, PAPER_TABLE1
from .plans import LEARNERS, PAPER_NAMES, QUICK_PLAN, SETTINGS_FIG2, SETTINGS_TABLE1
from .tasks import flip_rate_estimates

PAPER = register_paper(Paper(
    name="agarwal2021", title="Agarwal & Manwani (2021): learning under noisy bandit feedback",
    url="https://arxiv.org/abs/2103.06079", plan=plans.plan, run=plans.run, claims=claims.claims,
    sections=report.sections,
    description="Fig. 2, Fig. 3 and Table 1: RCNBF, RCINE, Banditron, BPA, SOBA; NREst vs our estimator."))

__all__ = ["PAPER", "QUICK_PLAN", "LEARNERS", "PAPER_NAMES", "PAPER_TABLE1", "OTHERS", "SETTINGS_FIG2",
           "SETTINGS_TABLE1", "flip_rate_estimates", "plans", "tasks", "claims", "report"]
