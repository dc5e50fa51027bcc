"""What we recommend instead of UMA and ORS (label noise and noisy regression targets): the plan for the "What we
recommend instead" sections of the ``louche2015`` and ``moroshko`` reproductions, as pure data and factories.

No report code: each function returns task specs (dicts) whose ``learners`` map names to
zero-argument factories; the reproductions run them on their own data and seeds.
Defaults were chosen on seeds disjoint from the reported ones (see benchmarks/label_noise.py and
benchmarks/regression_peers.py).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["label_noise_plan", "regression_plan", "confusion", "CS_GRID"]

#: candidates of C for CorrectedLogisticRegression, chosen by cross-validated corrected log-loss of the
#: noisy labels (needs no clean label); a fixed C = 1 overfits digits, C ≤ 0.1 underfits the UMA toy
CS_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)


def confusion(kind: str, rho: float, K: int) -> np.ndarray:
    """Symmetric (C[q, q] = 1 − ρ, the rest ρ/(K − 1)) or pair-flip (C[q+1 mod K, q] = ρ) noise
    (`noisyfeedback.feedback.symmetric_confusion`, `pair_confusion`)."""
    from ..feedback import pair_confusion, symmetric_confusion

    if kind == "symmetric":
        return symmetric_confusion(K, rho)
    if kind == "pair":
        return pair_confusion(K, rho)
    raise ValueError(f"The 'kind' parameter of confusion must be 'symmetric' or 'pair'. Got {kind!r} instead.")


def label_noise_plan(C: np.ndarray, seed: int = 0) -> dict[str, Callable[[], Any]]:
    """Learners to fit on (standardised X, noisy y) for one setting with confusion C."""
    from sklearn.linear_model import LogisticRegression

    from ..learners.label_noise.corrected_logistic import CorrectedLogisticRegression
    from ..learners.label_noise.uma import UMA

    plan: dict[str, Callable[[], Any]] = {
        "CorrectedLogisticRegression (known C)":
            lambda: CorrectedLogisticRegression(confusion=C, Cs=CS_GRID, n_folds=3, seed=seed),
        "CorrectedLogisticRegression (estimated C)":
            lambda: CorrectedLogisticRegression(confusion="estimate", Cs=CS_GRID, n_folds=3, seed=seed),
        "UMA": lambda: UMA(confusion=C, max_iter=1000),
        "LogisticRegression (noisy labels)": lambda: LogisticRegression(max_iter=1000),
    }
    try:
        from cleanlab.classification import CleanLearning

        # n_jobs=1: cleanlab's own process pool reads globals its parent set, which a pool started inside an
        # engine worker (-j 2) does not have (NameError 'pred_probs_by_class'); the same labels either way
        plan["cleanlab CleanLearning(LogisticRegression())"] = \
            lambda: CleanLearning(LogisticRegression(max_iter=1000), seed=seed,
                                  find_label_issues_kwargs={"n_jobs": 1})
    except ImportError:  # the bench extra
        pass
    return plan


def label_noise_settings() -> list[dict[str, Any]]:
    """The grid: data × kind × ρ × seeds (digits 1,200 train; Letter 16,000/4,000; UMA toy 4,000/4,000)."""
    return [{"data": d, "kind": k, "rho": r, "seeds": SEEDS}
            for d in ("digits", "letter", "toy") for k in ("symmetric", "pair") for r in (0.2, 0.4, 0.6)]


def regression_plan(r_grid=tuple(10.0 ** e for e in np.arange(-1, 4.01, 0.5))) -> dict[str, Any]:
    """Regression learners for ``nf.simulate`` under GaussianNoise.uniform(M): ours (fixed λ = 1) and the
    paper's (r, β tuned on a separate seed over ``r_grid``), plus the peers named for the report."""
    from ..learners.regression.nlms import NLMS
    from ..learners.regression.ors import ORS
    from ..learners.regression.wrls import WeightedRLS

    return {
        "ours": {
            "WeightedRLS (known variance)": lambda: WeightedRLS(lam=1.0),
            "WeightedRLS (unknown, one label)": lambda: WeightedRLS(lam=1.0, variance="unknown"),
            "WeightedRLS (unknown, two labels)": lambda: WeightedRLS(lam=1.0, variance="unknown", n_labels=2),
        },
        # every rule of the paper's panels, each tuned (r, and β for "beta") on tune_seed; "opt" is the
        # paper's oracle (it reads the CLEAN target), shown but not counted as "best tuned ORS"
        "tuned": {
            **{f"ORS {sc} (known)": [lambda r=r, b=b, sc=sc: ORS(r=r, scaling=sc, beta=b) for r in r_grid
                                     for b in ((0.1, 1.0, 10.0, 100.0) if sc == "beta" else (1.0,))]
               for sc in ("beta", "one_sample", "one_sample_pred", "two_samples", "opt")},
            **{f"ORS {sc} (unknown)": [lambda r=r, sc=sc: ORS(r=r, scaling=sc, variance="unknown") for r in r_grid]
               for sc in ("one_sample_pred", "two_samples")},
            "NLMS": [lambda r=r: NLMS(r=r) for r in r_grid],
        },
        "oracles": ["ORS opt (known)"],
        "peers": ["padasip FilterRLS(mu=0.999)", "padasip FilterNLMS(mu=0.5)", "river LinearRegression"],
        "settings": [{"data": "synthetic", "M": M} for M in (0.5, 1.0, 3.0, 5.0)]
        + [{"data": "channel", "M": M} for M in (0.5, 1.0, 5.0)],
        "tune_seed": 100,
        "seeds": SEEDS,
    }
