"""What the reproductions' "What we recommend instead" sections run (noisy and diluted bandit feedback): a plan, no
report code.

The papers' figures stay as they are; next to them, on the **same streams and seeds** (the same data
sets, channels, round counts, checkpoints and report seeds as the paper's figure), the learners we
recommend run with their default parameters — nothing is tuned, so they need no tuning seeds:

- ``agarwal2021`` (noisy bandit, Figure 2 and the supplement): ``SquareCB()`` and ``EpsilonGreedy()``
  (m = 1) under each ``NoisyBandit(ρ0, ρ1)`` setting of the figure;
- ``batra2021`` (diluted bandit): ``SquareCB(m=m)`` and ``EpsilonGreedy(m=m)`` under each ``Diluted(m)``
  channel of the main figure (m = 2, K//2, K−2), and, beyond the paper, with flips (0.1, 0.2).

`learner_entries` gives the experiment-config entries (``{"name", "params", "match_channel"}``,
as in ``lab/papers/*.py``): ``match_channel`` copies the channel's m into the learner, while ρ0 = ρ1 = 0:
our learners are measured without knowing the flip rates (given them, they would explore and exploit on
the corrected values). `tasks` lists the runs as plain dicts.

Beyond the papers, in agarwal2021's section: **flips that depend on the action** (`PER_ACTION_SETTINGS`),
``SquareCB()`` against ``SquareCB`` told the per-action rates and ``SquareCB(rho0="estimate", rho1="estimate")``
(`per_action_rates`, `per_action_learner`, `per_action_tasks`).

>>> [(e["name"], e["params"]) for e in learner_entries()]
[('SquareCB', {'rho0': 0.0, 'rho1': 0.0}), ('EpsilonGreedy', {'rho0': 0.0, 'rho1': 0.0})]
>>> t = tasks("batra2021", n_classes=10)
>>> sorted({d["channel"]["params"]["m"] for d in t})
[2, 5, 8]
>>> t[0]["learner"]
{'name': 'SquareCB', 'params': {'rho0': 0.0, 'rho1': 0.0}, 'match_channel': True}
"""

from __future__ import annotations

from typing import Any

__all__ = ["RECOMMENDED", "NOISY_SETTINGS", "DILUTED_FLIPS", "learner_entries", "tasks", "learner_factories",
           "PER_ACTION_SETTINGS", "PER_ACTION_LEARNERS", "PER_ACTION_RATIOS", "per_action_rates", "per_action_learner",
           "per_action_tasks"]

#: the learners we recommend, by registry name (default parameters)
RECOMMENDED = ("SquareCB", "EpsilonGreedy")
#: agarwal2021's Figure 2 settings (ρ0, ρ1)
NOISY_SETTINGS = ((0.0, 0.0), (0.15, 0.15), (0.4, 0.4), (0.2, 0.4), (0.4, 0.2))
#: batra2021: the paper's clean diluted feedback, and (beyond the paper) flipped
DILUTED_FLIPS = ((0.0, 0.0), (0.1, 0.2))


def learner_entries() -> list[dict[str, Any]]:
    """Experiment-config learner entries: default parameters, m from the channel, the flip rates unknown."""
    return [{"name": name, "params": {"rho0": 0.0, "rho1": 0.0}, "match_channel": True} for name in RECOMMENDED]


def _set_sizes(n_classes: int) -> list[int]:
    K = int(n_classes)
    return sorted({2, max(2, K // 2), max(2, K - 2)})


def tasks(paper: str, n_classes: int = 10) -> list[dict[str, Any]]:
    """One dict per (channel, learner) of the paper's figure: ``{"paper", "channel": {"name", "params"},
    "learner": <learner entry>}``; data sets, rounds and seeds are the figure's own."""
    if paper == "agarwal2021":
        channels = [{"name": "NoisyBandit", "params": {"rho0": r0, "rho1": r1}} for r0, r1 in NOISY_SETTINGS]
    elif paper == "batra2021":
        channels = [{"name": "Diluted", "params": {"m": m, "rho0": r0, "rho1": r1}}
                    for m in _set_sizes(n_classes) for r0, r1 in DILUTED_FLIPS]
    else:
        raise ValueError(f"unknown paper {paper!r}; allowed: agarwal2021, batra2021.")
    return [{"paper": paper, "channel": ch, "learner": entry} for ch in channels for entry in learner_entries()]


def learner_factories(n_classes: int, m: int = 1, seed: int | None = None) -> dict[str, Any]:
    """name -> a zero-argument factory of the recommended learner (default parameters)."""
    from .. import build

    return {name: (lambda cls=build.learner_class(name): build.build_learner(cls, n_classes, m=m, seed=seed))
            for name in RECOMMENDED}


# ------------------------------------------------------------ flips that depend on the action
#: "action-dependent": ρ0 = 0.3 for the first half of the labels (a wrong play of those is reported a hit 30 % of
#: the time: accidental clicks), ρ1 = 0.5 for the second half (a right play reported a miss half of the time:
#: missed clicks), 0 otherwise; "uniform (0.15, 0.25)": the same rates for every action (the papers' assumption)
PER_ACTION_SETTINGS = ("action-dependent", "uniform (0.15, 0.25)")
#: SquareCB with defaults: without rates, told the channel's rates, estimating them online
PER_ACTION_LEARNERS = ("SquareCB", "SquareCB, known rates", "SquareCB, estimated rates")
#: our targets, as ratios of the error of SquareCB() on the same stream: the known rates at most 0.65×, the
#: estimated ones 0.75× (action-dependent flips); under uniform flips the estimating learner within 1.05×
PER_ACTION_RATIOS = {"known": 0.65, "estimated": 0.75, "uniform": 1.05}


def per_action_rates(setting: str, n_classes: int):
    """(ρ0, ρ1), arrays of one rate per action, of a `PER_ACTION_SETTINGS` entry.

    >>> r0, r1 = per_action_rates("action-dependent", 4)
    >>> r0.tolist(), r1.tolist()
    ([0.3, 0.3, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5])
    """
    import numpy as np

    K = int(n_classes)
    if setting == "action-dependent":
        half = K // 2 + K % 2
        return np.r_[np.full(half, 0.3), np.zeros(K - half)], np.r_[np.zeros(half), np.full(K - half, 0.5)]
    if setting == "uniform (0.15, 0.25)":
        return np.full(K, 0.15), np.full(K, 0.25)
    raise ValueError(f"unknown setting {setting!r}; allowed: {', '.join(PER_ACTION_SETTINGS)}.")


def per_action_learner(label: str, n_classes: int, rho0, rho1, seed: int):
    """The `PER_ACTION_LEARNERS` entry ``label`` (SquareCB with defaults), told ``rho0``/``rho1`` (the
    channel's) for "known rates"."""
    import noisyfeedback as nf

    if label == "SquareCB":
        return nf.SquareCB(n_classes, seed=seed)
    if label == "SquareCB, known rates":
        return nf.SquareCB(n_classes, rho0=rho0, rho1=rho1, seed=seed)
    if label == "SquareCB, estimated rates":
        return nf.SquareCB(n_classes, rho0="estimate", rho1="estimate", seed=seed)
    raise ValueError(f"unknown learner {label!r}; allowed: {', '.join(PER_ACTION_LEARNERS)}.")


def per_action_tasks(datasets: list[dict[str, Any]], n_rounds: int, seeds: list[int]) -> list[dict[str, Any]]:
    """One dict per (data set, setting, seed): ``{"dataset", "setting", "seed", "n_rounds"}``; each runs every
    `PER_ACTION_LEARNERS` entry on the same stream (simulate's seed = the learner's seed).

    >>> len(per_action_tasks([{"name": "digits"}], 100_000, [0, 1]))
    4
    """
    return [{"dataset": ds, "setting": st, "seed": int(s), "n_rounds": int(n_rounds)}
            for ds in datasets for st in PER_ACTION_SETTINGS for s in seeds]
