"""The numeric API's request values checked once, at the boundary: the context as the one row the
learner reads (float64, C-contiguous, finite, ``n_features`` wide), the allowed actions and the
application's default action. What these return is handed to the learner as is."""

from __future__ import annotations

import numpy as np

from .errors import Invalid

__all__ = ["context_row", "allowed_labels", "check_action"]


def context_row(context, d: int) -> np.ndarray:
    """The context of a request (a dense list of ``d`` numbers, or a sparse {index: value}) as a (1, d)
    float64 row; `Invalid` naming the entry for anything else."""
    if isinstance(context, dict):
        x = np.zeros((1, d))
        seen: set[int] = set()
        for k, v in context.items():
            if not (k.isascii() and k.isdigit()) or len(k) > 18:
                raise Invalid(f"context.{k}", f"sparse context index {k!r} is not a plain decimal integer "
                                              "(ASCII digits only).")
            i = int(k)
            if not 0 <= i < d:
                raise Invalid(f"context.{k}", f"sparse context index {i} is outside 0..{d - 1}.")
            if i in seen:
                raise Invalid(f"context.{k}", f"sparse context index {i} is given twice.")
            seen.add(i)
            x[0, i] = v
    else:
        if len(context) != d:
            raise Invalid("context", f"context has {len(context)} features; the model has {d}.")
        x = np.array(context, dtype=np.float64).reshape(1, d)
    if not np.isfinite(x).all():
        raise Invalid("context", "context holds a value that is not finite.")
    return x


def allowed_labels(allowed_actions: list[int] | None, K: int, m: int) -> np.ndarray | None:
    """The allowed actions as sorted distinct labels (None: every action)."""
    if allowed_actions is None:
        return None
    if not allowed_actions:
        raise Invalid("allowed_actions", "allowed_actions is empty.")
    if any(not 0 <= a < K for a in allowed_actions):
        raise Invalid("allowed_actions", f"allowed_actions must hold labels in 0..{K - 1}.")
    if m > 1:
        raise Invalid("allowed_actions", "allowed_actions is supported for single-action learners only.")
    return np.unique(np.asarray(allowed_actions, dtype=np.int64))


def check_action(value, name: str, K: int, m: int):
    """An action a request names (a label, or a set of ``m`` distinct labels, sorted)."""
    vals = value if isinstance(value, list) else [value]
    if len(vals) != m:
        raise Invalid(name, f"{name} must be {'one label' if m == 1 else f'a set of {m} labels'}.")
    if any(not 0 <= v < K for v in vals):
        raise Invalid(name, f"{name} must hold labels in 0..{K - 1}.")
    if len(set(vals)) != m:
        raise Invalid(name, f"{name} must hold {m} distinct labels.")
    return sorted(vals) if m > 1 else vals[0]
