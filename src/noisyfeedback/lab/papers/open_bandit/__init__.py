"""``reproduce open-bandit``: the Open Bandit Dataset authors' off-policy check, plus flipped clicks.

Estimate the click rate of the Bernoulli Thompson Sampling (BTS) policy from the uniform-random
policy's logs with every estimator of `noisyfeedback.ope`, and compare it with the click rate BTS
actually got in its own logs (the on-policy rate) — the check of Saito et al. (2021), Section 5, on
the authors' small sample. Then train the action-feature learner (``CatalogueSquareCB``: user features,
affinities, the items' features of ``item_context.csv``, the slot) and the index ``SquareCB`` on half
of the random log and estimate their click rates off-policy on the other half, next to the random
policy's and BTS's. Then flip the random policy's clicks at known rates (ρ0: a click reported
where there was none, ρ1: a click lost) and compare the plain estimators with the noise-corrected ones.

The computations are `noisyfeedback.ope.replication`'s pure functions; this package only declares:
its plans (`.plans`: quick, a generated log in the Open Bandit layout; full, the authors' three
campaigns), its task kinds (`.tasks`: per campaign the problem's summary, the estimates with their
bootstrap intervals, the bootstrap of the relative error and the learners trained on half the random
log; one task per flip setting), its claims
(`.claims`) and its report sections (`.report`). The engine runs the tasks, so a killed run
resumes.
"""

from __future__ import annotations

from ...recipes import Paper, register_paper
from . import claims, plans, report, tasks
from .claims import make_claims
from .plans import FULL_PLAN, QUICK_PLAN

TITLE = "Open Bandit Dataset: off-policy estimates of BTS from random logs"

PAPER = register_paper(Paper(
    name="open-bandit", title=TITLE, url="https://arxiv.org/abs/2008.07146",
    plan=plans.plan, run=plans.run, claims=claims.claims, sections=report.sections, intro=report.INTRO,
    description="IPS/SNIPS/DM/DR vs the on-policy click rate; the action-feature learner from half the random "
                "log; plain vs noise-corrected under flipped clicks."))

__all__ = ["PAPER", "TITLE", "QUICK_PLAN", "FULL_PLAN", "make_claims", "claims", "plans", "report", "tasks"]
