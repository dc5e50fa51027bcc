"""open-bandit's task kinds: pure functions task -> rows over `noisyfeedback.ope.replication`.

Every task loads its campaign's problem (the two logs, BTS's action distribution by ``n_sim`` Monte
Carlo draws); `problem` keeps the last few loaded in the worker process, as the loading is the
same for every task of a campaign. BLAS runs single-threaded in a task (many small calls: threads only
contend, and the numbers do not depend on the machine's thread count).
"""

from __future__ import annotations

import functools
from typing import Any

from ...engine import task_kind


@functools.lru_cache(maxsize=4)
def problem(data_dir: str | None, campaign: str, n_sim: int) -> dict[str, Any]:
    """The loaded problem (read-only: tasks never change it)."""
    from ....ope.replication import load_problem

    return load_problem(data_dir, campaign, n_sim)


def _problem(task: dict) -> dict[str, Any]:
    return problem(task.get("_data_dir"), task["campaign"], int(task["data"]["n_sim"]))


def _single_threaded(func):
    @functools.wraps(func)
    def wrapped(task):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            return func(task)

    return wrapped


@task_kind("open_bandit.problem")
@_single_threaded
def problem_task(task: dict) -> dict:
    """Rows and clicks of both logs, BTS's on-policy rate and its interval, the weights' effective size."""
    from ....ope.replication import problem_summary

    return problem_summary(_problem(task))


@task_kind("open_bandit.estimates")
@_single_threaded
def estimates_task(task: dict) -> list[dict]:
    """Every estimator on the whole random log, with its 95 % bootstrap interval."""
    from ....ope.replication import estimate_table

    return estimate_table(_problem(task), seed=task["seed"]).to_dict("records")


@task_kind("open_bandit.bootstrap")
@_single_threaded
def bootstrap_task(task: dict) -> list[dict]:
    """Each estimator's relative error over ``n_boot`` bootstrap resamples of the log."""
    from ....ope.replication import bootstrap_table

    return bootstrap_table(_problem(task), task["n_boot"], seed=task["seed"]).to_dict("records")


@task_kind("open_bandit.flips")
@_single_threaded
def flips_task(task: dict) -> list[dict]:
    """One flip setting: plain vs corrected estimators over ``n_draws`` draws of flipped clicks."""
    from ....ope.replication import flip_rows

    return flip_rows(_problem(task), task["rho0"], task["rho1"], task["index"], task["n_draws"], seed=task["seed"])


@task_kind("open_bandit.learning")
@_single_threaded
def learning_task(task: dict) -> list[dict]:
    """CatalogueSquareCB (item features) and SquareCB (item index) trained on ``train_fraction`` of the random
    log, evaluated off-policy on the rest, next to the random policy's and BTS's click rates."""
    from ....datasets.open_bandit import load_item_context
    from ....ope.replication import learning_table

    items = load_item_context("random", task["campaign"], data_dir=task.get("_data_dir"))
    return learning_table(_problem(task), items, seed=task["seed"],
                          train_fraction=task["train_fraction"]).to_dict("records")
