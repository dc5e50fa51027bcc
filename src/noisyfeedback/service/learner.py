"""The service's side of the learner contract: building a servable learner from a name or a model file,
checking that its state is finite, and the parameters given as ``key=value`` text.

Only the learner's public API is used: the constructor and ``get_params``, ``learn`` (with zero rows to
create the state of a fresh learner), ``act``, ``action_probabilities``, ``predict`` / ``predict_set``,
``save`` and `noisyfeedback.load`; learned state is read by the scikit-learn convention (attributes
whose names end in ``_``). A learner may also offer ``act_explained`` (``act`` with the distribution and
greedy action of the same rows, from one validation), which a ``/rank`` then calls instead of three
methods (`.choice`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import base, build, registry

__all__ = ["servable_learners", "parse_param_items", "make_learner", "load_model", "set_size", "n_features_of",
           "state_is_finite", "start_state"]


def servable_learners() -> list[str]:
    """Names of the catalogue's learners the service can deploy (tag ``servable``)."""
    return registry.learners_where(servable=True)


def parse_param_items(items: list[str] | None, flag: str = "--param") -> dict[str, Any]:
    """``["gamma=0.05", "seed=3"]`` -> ``{"gamma": 0.05, "seed": 3}`` (the catalogue's parser); names
    starting with ``_`` are refused.

    >>> parse_param_items(["gamma=0.05", "oracle=ridge", "seed=none"])
    {'gamma': 0.05, 'oracle': 'ridge', 'seed': None}
    """
    try:
        out = build.parse_params(items, flag=flag)
    except (RecursionError, MemoryError):
        raise ValueError(f"{flag}: a value is nested too deeply.") from None
    bad = [k for k in out if k.startswith("_")]
    if bad:
        raise ValueError(f"{flag} takes NAME=VALUE with a parameter name; got {bad[0]!r}.")
    return out


def parse_rates(text: str | None, flag: str = "--rho0") -> float | list[float] | None:
    """A flip-rate option: one rate, or one per action separated by commas.

    >>> parse_rates("0.2"), parse_rates("0.3,0.3,0,0"), parse_rates(None)
    (0.2, [0.3, 0.3, 0.0, 0.0], None)
    """
    if text is None:
        return None
    try:
        vals = [float(t) for t in str(text).split(",")]
    except ValueError:
        raise ValueError(f"{flag} takes a rate in [0, 1) or one per action separated by commas; got {text!r}.") \
            from None
    return vals[0] if len(vals) == 1 and "," not in str(text) else vals


def set_size(learner) -> int:
    """m, the number of labels one action holds (1 for single-action learners)."""
    return int(learner.get_params().get("m", 1)) if learner.feedback_kind == "set" else 1


def n_features_of(learner) -> int | None:
    """The context dimension of a fitted learner (None before any learning)."""
    try:
        return int(learner.n_features_)
    except AttributeError:
        return None


def start_state(learner, n_features: int):
    """Create a fresh learner's state (weights, random stream) by learning from zero rows: this also
    validates its parameters. Returns the learner."""
    m = set_size(learner)
    actions = np.zeros((0, m) if m > 1 else 0, dtype=np.int64)
    learner.learn(np.zeros((0, int(n_features))), actions, np.zeros(0, dtype=np.int64), np.zeros(0))
    return learner


def make_learner(name: str, n_classes: int, n_features: int, params: dict[str, Any],
                 rho0: float | None = None, rho1: float | None = None, what: str = "--learner"):
    """A fresh servable learner ``name`` with its state created; every problem is one ``ValueError``
    naming what to fix (unknown or non-servable learner, unknown parameter, invalid value)."""
    try:
        klass = build.learner_class(name)
    except build.UnknownName as exc:
        hint = f" (did you mean {exc.suggestions[0]!r}?)" if exc.suggestions else ""
        raise ValueError(f"{what} {name!r} is not a registered learner{hint}; the service serves: "
                         f"{', '.join(servable_learners())}.") from None
    if registry.learner_tags(klass).family == "catalogue":
        raise ValueError(f"{what} {klass.__name__} ranks actions described by features: serve it with "
                         "--action-features (without --n-classes and --n-features).")
    if klass.__name__ not in servable_learners():
        raise ValueError(f"{what} {klass.__name__} does not learn from bandit feedback; the service serves: "
                         f"{', '.join(servable_learners())}.")
    params = dict(params)
    names = registry.learner_params(klass)
    for k, v in (("rho0", rho0), ("rho1", rho1)):
        if k in names and k not in params and (any(v) if isinstance(v, (list, tuple)) else v):
            params[k] = list(v) if isinstance(v, (list, tuple)) else v
    try:
        learner = build.build_learner(klass, n_classes, **params)
        if learner.feedback_kind not in ("bandit", "set"):
            raise ValueError(f"{klass.__name__} with these parameters does not learn from bandit feedback.")
        start_state(learner, n_features)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{klass.__name__}: {exc}") from None
    return learner


def load_model(path: str | Path, n_features: int | None = None):
    """A servable learner from a model file (a fitted one keeps its dimension; an unfitted one needs
    ``n_features``)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"--model {str(path)!r} is a folder; give a model file (.npz) written by learner.save.")
    if not path.is_file():
        raise ValueError(f"--model {str(path)!r}: no such file.")
    learner = base.load(path)
    if getattr(learner, "feedback_kind", None) not in ("bandit", "set") or not hasattr(learner, "act"):
        raise ValueError(f"--model holds a {type(learner).__name__}, which does not learn from bandit feedback; "
                         f"the service serves: {', '.join(servable_learners())}.")
    d = n_features_of(learner)
    if d is None:
        if n_features is None:
            raise ValueError("--model holds an unfitted learner: give --n-features too.")
        start_state(learner, n_features)
    elif n_features is not None and n_features != d:
        raise ValueError(f"--n-features {n_features} differs from the model's {d} features.")
    return learner


def state_is_finite(learner) -> bool:
    """Whether every learned number of ``learner`` (float arrays and scalars ending in ``_``) is finite.

    A sum is checked first (NaN and ±inf propagate into it); only when the sum itself overflows are the
    entries checked one by one."""
    for name, value in vars(learner).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            with np.errstate(over="ignore", invalid="ignore"):
                total = value.sum()
            if not np.isfinite(total) and not np.isfinite(value).all():
                return False
        elif isinstance(value, (float, np.floating)) and not math.isfinite(value):
            return False
    return True
