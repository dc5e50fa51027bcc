"""Off-policy learning: train a bandit learner from one part of a log, estimate its value on the other."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import make_rng
from .estimators import ESTIMATORS, Estimate, evaluate

__all__ = ["train_and_evaluate"]


def train_and_evaluate(learner: Any, X: Any, actions: Any, rewards: Any, propensities: Any,
                       train_fraction: float = 0.5, estimators: tuple[str, ...] = ESTIMATORS,
                       rho0: float = 0.0, rho1: float = 0.0, alpha: float = 0.05, seed: int | None = 0,
                       shuffle: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Train a fresh copy of ``learner`` on a part of the log (``fit_logged``) and estimate its value
    on the rest with each estimator.

    The rows are split at random (``shuffle``, from ``seed``) or in order; the learner is cloned
    (``learner.clone()``), trained with ``fit_logged(X, actions, rewards, propensities)`` on the first
    ``train_fraction`` of them, and its action distribution (``action_probabilities``) is evaluated on
    the others. Returns ``{"learner": the trained copy, "estimates": {name: Estimate},
    "logging_value": mean reward of the logging policy on the evaluation rows (noise-corrected with
    ρ0, ρ1), "n_train": int, "n_eval": int}``.

    Examples
    --------
    >>> import noisyfeedback as nf, numpy as np
    >>> X, y = nf.datasets.load("digits", normalize=True)
    >>> rng = np.random.default_rng(0)
    >>> actions = rng.integers(0, 10, len(y)); rewards = (actions == y).astype(int)
    >>> out = train_and_evaluate(nf.Banditron(10, gamma=0.1, seed=0), X, actions, rewards,
    ...                          np.full(len(y), 0.1), estimators=("ips",), seed=0)
    >>> out["estimates"]["ips"].value > 2 * out["logging_value"]
    True
    """
    if not 0 < train_fraction < 1:
        raise ValueError("The 'train_fraction' parameter of train_and_evaluate must be in (0, 1). "
                         f"Got {train_fraction!r} instead.")
    actions = np.asarray(actions)
    rewards = np.asarray(rewards)
    propensities = np.asarray(propensities, dtype=np.float64)
    n = actions.shape[0]
    order = make_rng(seed).permutation(n) if shuffle else np.arange(n)
    cut = int(round(train_fraction * n))
    tr, ev = np.sort(order[:cut]), np.sort(order[cut:])
    if tr.size == 0 or ev.size == 0:
        raise ValueError(f"train_fraction={train_fraction} leaves no rows to train on or to evaluate on (n = {n}).")
    model = learner.clone()
    noisy = rho0 != 0 or rho1 != 0
    if noisy and "rho0" in model.get_params():  # a noise-aware learner trains with the known rates
        model.set_params(rho0=rho0, rho1=rho1)
    model.fit_logged(X[tr], actions[tr], rewards[tr], propensities[tr])
    Xe = X[ev]
    P = model.action_probabilities(Xe)
    ests: dict[str, Estimate] = {
        e: evaluate(P, Xe, actions[ev], rewards[ev], propensities[ev], e, rho0=rho0, rho1=rho1,
                    alpha=alpha, seed=seed, **kwargs) for e in estimators}
    r = rewards[ev].astype(np.float64)
    logging_value = float(((r - rho0) / (1 - rho0 - rho1)).mean())
    return {"learner": model, "estimates": ests, "logging_value": logging_value,
            "n_train": int(tr.size), "n_eval": int(ev.size)}
