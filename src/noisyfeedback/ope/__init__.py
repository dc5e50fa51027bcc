"""Off-policy evaluation and learning from logged bandit data (``nf.ope``).

- `evaluate` — IPS, SNIPS, DM or DR estimate of a policy's value with an interval
  (bootstrap, normal, empirical Bernstein), plain or noise-corrected for flipped 0/1 rewards
  (known ρ0, ρ1, or estimated with `estimate_rho`); `evaluate_all` — every estimator.
- `Estimate` — the frozen result (value, lower, upper, estimator, n, interval).
- `RewardModel` — the per-action ridge/logistic regression oracle of DM and DR.
- `train_and_evaluate` — train a bandit learner on one half of a log (``fit_logged``), estimate
  its value on the other half.
- `evaluate_candidates` — per-round candidate lists (ragged: offsets, the logged candidate's
  index within its round): IPS, SNIPS, DM, DR, Switch-DR, DR with optimistic shrinkage (DRos) and
  self-normalised DR, plain or noise-corrected (flip rates scalar or per candidate), with intervals.
- slates (k candidates in k slots): `slot_ips` (per-slot IPS) and `pseudoinverse`
  (Swaminathan et al. 2017); `sequential_slate_moments` gives a sequential (VW ccb /
  Plackett–Luce) logging policy's marginals and pairwise moments.
- `noisyfeedback.ope.replication` — the Open Bandit Dataset check's computations (the recipe ``reproduce open-bandit``
  runs them: `noisyfeedback.lab.papers.open_bandit`).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes)
    from .estimators import (
        ESTIMATORS,
        INTERVALS,
        Estimate,
        RewardModel,
        estimate_rho,
        evaluate_all,
        noise_correct,
        policy_probabilities,
    )
    from .learning import train_and_evaluate
    from .streaming import evaluate, evaluate_log, stream_folds
    from .candidates import CANDIDATE_ESTIMATORS, evaluate_candidates, evaluate_candidates_all
    from .slates import SLATE_ESTIMATORS, pseudoinverse, sequential_slate_moments, slot_ips

_LAZY = {
    'ESTIMATORS': '.estimators',
    'INTERVALS': '.estimators',
    'Estimate': '.estimators',
    'RewardModel': '.estimators',
    'estimate_rho': '.estimators',
    'evaluate_all': '.estimators',
    'noise_correct': '.estimators',
    'policy_probabilities': '.estimators',
    'train_and_evaluate': '.learning',
    'evaluate': '.streaming',
    'evaluate_log': '.streaming',
    'stream_folds': '.streaming',
    'CANDIDATE_ESTIMATORS': '.candidates',
    'evaluate_candidates': '.candidates',
    'evaluate_candidates_all': '.candidates',
    'SLATE_ESTIMATORS': '.slates',
    'pseudoinverse': '.slates',
    'sequential_slate_moments': '.slates',
    'slot_ips': '.slates',
}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = ["Estimate", "evaluate", "evaluate_log", "stream_folds", "evaluate_all", "policy_probabilities",
           "RewardModel", "noise_correct", "estimate_rho", "train_and_evaluate", "ESTIMATORS", "INTERVALS",
           "evaluate_candidates", "evaluate_candidates_all", "CANDIDATE_ESTIMATORS",
           "slot_ips", "pseudoinverse", "sequential_slate_moments", "SLATE_ESTIMATORS"]
