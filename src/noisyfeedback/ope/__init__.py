"""Off-policy evaluation and learning from logged bandit data (``nf.ope``).

- :func:`evaluate` — IPS, SNIPS, DM or DR estimate of a policy's value with an interval
  (bootstrap, normal, empirical Bernstein), plain or noise-corrected for flipped 0/1 rewards
  (known ρ0, ρ1, or estimated with :func:`estimate_rho`); :func:`evaluate_all` — every estimator.
- :class:`Estimate` — the frozen result (value, lower, upper, estimator, n, interval).
- :class:`RewardModel` — the per-action ridge/logistic regression oracle of DM and DR.
- :func:`train_and_evaluate` — train a bandit learner on one half of a log (``fit_logged``), estimate
  its value on the other half.
- :mod:`noisyfeedback.ope.replication` — the Open Bandit Dataset check's computations (the recipe ``reproduce open-bandit`` runs them: :mod:`noisyfeedback.lab.papers.open_bandit`).
"""

from .estimators import (
    ESTIMATORS,
    INTERVALS,
    Estimate,
    RewardModel,
    estimate_rho,
    evaluate,
    evaluate_all,
    noise_correct,
    policy_probabilities,
)
from .learning import train_and_evaluate

__all__ = ["Estimate", "evaluate", "evaluate_all", "policy_probabilities", "RewardModel", "noise_correct",
           "estimate_rho", "train_and_evaluate", "ESTIMATORS", "INTERVALS"]
