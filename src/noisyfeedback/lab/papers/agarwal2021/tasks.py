"""agarwal2021's task kinds (pure functions of a task): Table 1's flip-rate estimates for one setting."""

from __future__ import annotations

import time

import pandas as pd

from ...engine import task_kind


def flip_rate_estimates(X, y, n_classes: int, settings, n_s: int, gamma: float = 0.05, seed: int = 0,
                        methods=("ours", "nrest")) -> pd.DataFrame:
    """Table 1's protocol: run RCINE for 2·n_s rounds under NoisyBandit(ρ0, ρ1); on its last n_s
    tuples (x, ỹ, f̃) — "an intermediate instance of RCINE" — estimate (ρ̂0, ρ̂1) with each method."""
    import noisyfeedback as nf

    from ....noise import DEFAULT_METHOD, estimate_flip_rates

    rows = []
    for k, (rho0, rho1) in enumerate(settings):
        learner = nf.RCINE(n_classes, gamma=gamma, n_s=n_s, estimator=DEFAULT_METHOD, seed=seed + k)
        nf.simulate(learner, X, y, nf.feedback.NoisyBandit(rho0, rho1), n_rounds=2 * n_s, seed=seed + k)
        row = {"rho0": rho0, "rho1": rho1}
        for m in methods:
            name = DEFAULT_METHOD if m == "ours" else m
            t0 = time.perf_counter()
            r0, r1 = estimate_flip_rates(learner.buffer_X_, learner.buffer_actions_, learner.buffer_feedback_,
                                         n_classes, method=name, seed=seed + k)
            row[f"{m}_rho0"], row[f"{m}_rho1"] = float(r0), float(r1)
            row[f"{m}_seconds"] = time.perf_counter() - t0
        rows.append(row)
    return pd.DataFrame(rows)


@task_kind("agarwal2021.table1")
def table1_setting(task: dict) -> dict:
    """Table 1, one (data set, noise setting): `flip_rate_estimates` with that setting's seed."""
    import noisyfeedback as nf

    ds = task["dataset"]
    X, y = nf.datasets.load(ds["name"], data_dir=task.get("_data_dir"), normalize=ds.get("normalize", False))
    k = task["setting_index"]
    tab = flip_rate_estimates(X, y, int(y.max()) + 1, [tuple(task["setting"])], task["n_s"], seed=k)
    return tab.to_dict("records")[0]


@task_kind("agarwal2021.per_action")
def per_action_setting(task: dict) -> list[dict]:
    """Beyond the paper, one (data set, flip setting, seed): SquareCB without rates, told them, estimating them
    (``recommend_bandit.PER_ACTION_LEARNERS``) on the same stream; one row each with the online error."""
    import noisyfeedback as nf

    from ... import recommend_bandit as rb

    ds = task["dataset"]
    X, y = nf.datasets.load(ds["name"], data_dir=task.get("_data_dir"), normalize=ds.get("normalize", False),
                            **{k: v for k, v in ds.items() if k in ("n_samples", "seed")})
    K = int(y.max()) + 1
    rho0, rho1 = rb.per_action_rates(task["setting"], K)
    channel = nf.feedback.NoisyBandit(rho0, rho1)
    rows = []
    for label in rb.PER_ACTION_LEARNERS:
        learner = rb.per_action_learner(label, K, rho0, rho1, task["seed"])
        tr = nf.simulate(learner, X, y, channel, n_rounds=task["n_rounds"], seed=task["seed"])
        row = {"dataset": ds.get("label", ds["name"]), "setting": task["setting"], "learner": label,
               "seed": task["seed"], "n_rounds": task["n_rounds"], "error_rate": float(tr.error_rate)}
        if label.endswith("estimated rates"):
            row["estimates_in_use"] = bool(learner.rate_state_[0])
            row["rho0_hat"] = learner.rate_estimates_[0].round(3).tolist()
            row["rho1_hat"] = learner.rate_estimates_[1].round(3).tolist()
        rows.append(row)
    return rows
