"""Replicas: several processes serving one PostgreSQL log, each with its own ``replica`` name.

Each ranks with its own copy of the model and its own random stream (derived from the log's
``replica_entropy`` and the name); its events carry its name and its own count of events. Each learns
*every* reward of the log, whichever replica received it, in reward-``seq`` order: the writer thread
reads the rewards after the last one handed to the model after each commit and, when idle, every
``poll_interval`` seconds (`tail`). The reward ``seq`` is the order of commit (one advisory lock), so
the rewards a replica reads after a commit are all those up to its own, and learning is a pure function
of the log: every replica's model after reward ``s`` equals an offline replay of the log up to ``s``.

A replica starts from the weights of the latest snapshot of any replica (the one with the highest
reward seq) and the random stream of its own latest snapshot (or its initial stream), advanced by the
draws of its own events after it (`replica_snapshot`).
"""

from __future__ import annotations

import hashlib

import numpy as np

from .snapshots import NoSnapshot, SnapshotFolder

__all__ = ["replica_stream", "replica_snapshot", "tail", "void_event_id"]


def void_event_id(replica: str | None, seq: int) -> str:
    """The id the service gives an event ranked without one ('~' is not allowed in a client's ids)."""
    return f"ev~{seq}" if replica is None else f"ev~{replica}~{seq}"


def replica_stream(storage, learner, replica: str) -> np.random.Generator:
    """A replica's initial random stream: PCG64 from SeedSequence(the log's ``replica_entropy``,
    spawn_key = the SHA-256 of the name). The entropy is stored once per log (the learner's integer
    seed, else fresh entropy), so the stream is known from the log alone."""
    seed = learner.get_params().get("seed")
    default = int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0 \
        else int(np.random.SeedSequence().entropy)
    entropy = int(storage.setdefault_meta("replica_entropy", str(default)))
    digest = hashlib.sha256(replica.encode()).digest()[:16]
    key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


def replica_snapshot(storage, folder: SnapshotFolder, replica: str) -> tuple:
    """A replica's start: the weights of the usable snapshot with the highest reward seq (of any
    replica), the random stream of this replica's latest usable snapshot (or its initial stream) and
    the replica's own count of events that stream has drawn for: (learner, reward_seq, event_seq)."""
    rows = storage.replica_snapshots()  # the latest first
    problems: list[str] = []
    learner = None
    reward_seq = 0
    for stored, seq, _, digest, _ in sorted(rows, key=lambda r: -int(r[1])):  # stable: ties by id
        learner = folder.read(stored, digest, problems)
        if learner is not None:
            reward_seq = seq
            break
    if learner is None:
        raise NoSnapshot("no usable snapshot: " + "; ".join(problems))
    rng, event_seq = None, 0
    for stored, _, own_seq, digest, name in rows:
        if name == replica:
            own = folder.read(stored, digest, problems)
            if own is not None:
                rng, event_seq = own.rng_, int(own_seq)
                break
    learner.rng_ = rng if rng is not None else replica_stream(storage, learner, replica)
    return learner, int(reward_seq), event_seq


def tail(storage, after: int) -> tuple[list[tuple], dict[int, tuple]]:
    """The rewards logged after seq ``after`` (by any replica), in seq order, as the replay reads them,
    and their events' (mode, default_action, greedy) by seq."""
    rows = [r for chunk in storage.rewards_after(after) for r in chunk]
    if not rows:
        return rows, {}
    events = storage.reward_events(after, rows[-1][0])
    # a reward removed (refused by the model) between the two reads: learned by no one, counted as online
    return rows, {r[0]: events.get(r[0], ("online", None, None)) for r in rows}
