"""The rows of the log as the service hands them to its store: an event, the outcome of a reward, and
actions as text."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EventRow", "RewardOutcome", "encode_action", "decode_action"]


def encode_action(action) -> str:
    """An action (label or set of labels) as text: "3" or "1,4,7"."""
    if isinstance(action, (list, tuple, np.ndarray)):
        return ",".join(str(int(a)) for a in np.ravel(action))
    return str(int(action))


def decode_action(text: str):
    """Inverse of `encode_action` (a set comes back as a list)."""
    return [int(a) for a in text.split(",")] if "," in text else int(text)


@dataclass
class EventRow:
    seq: int
    event_id: str
    ranked_at: float
    context: bytes
    action: str
    probability: float
    distribution: bytes
    n_draws: int
    mode: str
    default_action: str | None
    greedy: str
    model_version: int
    #: action-feature events (``event_extras``): deferred until activated; the digest of the request and
    #: the answer given (a retry with the same event id and body gets the same answer)
    deferred: bool = False
    request_sha256: str | None = None
    answer: bytes | None = None
    #: the replica that ranked it (None: a service of one process). A replica's event carries its own
    #: count of events as ``seq``; the log gives it the next global seq when it commits.
    replica: str | None = None

    @property
    def has_extras(self) -> bool:
        return self.deferred or self.request_sha256 is not None


@dataclass
class RewardOutcome:
    """What the log did with a reward: "accepted" (with its seq and the event needed to learn from it),
    "duplicate" (same value already logged: nothing written), "conflict" (a different value is logged)
    or "unknown" (no such event)."""

    status: str
    seq: int = 0
    reward: float = 0.0
    logged_reward: float | None = None
    event: tuple | None = None  # (context, action, probability, mode, default_action, greedy)
    #: the per-slot rewards of a multi-slot event ("1,0,0"), None for one slot
    slots: str | None = None
