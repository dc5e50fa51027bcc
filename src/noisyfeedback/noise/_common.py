"""Shared helpers of the flip-rate estimators: input checks, seeds, the valid region."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validation import AnySeed, Integer, check_labels, check_param, check_X

__all__ = ["check_tuples", "clip_rates", "seed_ints", "FlipRateWarning", "MAX_RATE_SUM"]

#: estimates are kept in the region rho0, rho1 >= 0, rho0 + rho1 <= MAX_RATE_SUM (< 1)
MAX_RATE_SUM = 1.0 - 1e-3


class FlipRateWarning(UserWarning):
    """The tuples cannot identify the flip rates (e.g. constant feedback); a fallback was returned."""


def check_feedback(feedback: Any, n_samples: int, name: str = "feedback") -> np.ndarray:
    """0/1 integers or booleans, one per row (no silent coercion of floats)."""
    arr = np.asarray(feedback)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}.")
    if arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} entries but X has {n_samples} rows.")
    if arr.dtype != bool and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must hold 0/1 integers or booleans; got dtype {arr.dtype}.")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be 0 or 1; row {row} has {arr[row]!r}.")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_tuples(X: Any, actions: Any, feedback: Any, n_classes: Any, seed: Any, owner: str):
    """Validate logged tuples (x_t, a_t, f̃_t): returns (X, actions, feedback) as float64 / int64 arrays."""
    check_param("n_classes", n_classes, Integer(2), owner)
    check_param("seed", seed, AnySeed(), owner)
    X = check_X(X, owner=owner)
    n = X.shape[0]
    if n == 0:
        raise ValueError(f"X of {owner} has no rows; at least one logged tuple is needed.")
    actions = check_labels(actions, n_classes, n_samples=n, name="actions")
    feedback = check_feedback(feedback, n)
    return X, actions, feedback


def seed_ints(seed: Any, k: int) -> list[int]:
    """k integer seeds (for scikit-learn's ``random_state``) derived from an int / SeedSequence / None."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return [int(v) for v in ss.generate_state(k, np.uint32)]


def clip_rates(rho0: float, rho1: float) -> tuple[float, float]:
    """Project (rho0, rho1) onto rho0, rho1 >= 0, rho0 + rho1 <= MAX_RATE_SUM (< 1).

    A sum that is too large is reduced by removing the excess equally from both
    rates (the Euclidean projection onto the constraint), keeping both >= 0.

    >>> clip_rates(-0.1, 0.3)
    (0.0, 0.3)
    >>> clip_rates(0.7, 0.5)
    (0.5995, 0.3995)
    """
    r0 = min(max(float(rho0), 0.0), MAX_RATE_SUM)
    r1 = min(max(float(rho1), 0.0), MAX_RATE_SUM)
    excess = r0 + r1 - MAX_RATE_SUM
    if excess > 0:
        r0, r1 = r0 - excess / 2, r1 - excess / 2
        if r0 < 0:
            r0, r1 = 0.0, MAX_RATE_SUM
        elif r1 < 0:
            r0, r1 = MAX_RATE_SUM, 0.0
    return round(r0, 12), round(r1, 12)


def uninformative(feedback: np.ndarray, min_rows: int, owner: str) -> bool:
    """Warn and return True when the tuples cannot identify the rates (constant feedback, too few rows)."""
    n = feedback.shape[0]
    if n < min_rows:
        reason = f"only {n} tuples (at least {min_rows} are needed)"
    elif feedback.min() == feedback.max():
        reason = f"every feedback value is {int(feedback[0])}"
    else:
        return False
    warnings.warn(
        f"{owner}: the flip rates are not identifiable from these tuples ({reason}); returning (0.0, 0.0).",
        FlipRateWarning,
        stacklevel=3,
    )
    return True
