"""The log's writes: the operations of one batch applied in one transaction (the writer thread's
``apply_batch``), on any store whose ``_x`` executes SQLite-style SQL (`.storage`, `.storage_pg`)."""

from __future__ import annotations

import time
from typing import Any

from .log_rows import EventRow, RewardOutcome

__all__ = ["apply_ops", "replica_event"]

#: a rewarded event in one query: what the model learns from, its reward and slots if it has one, and
#: (action-feature events) whether it is deferred and when it was activated
_EVENT_FOR_REWARD = (
    "SELECT e.context, e.action, e.probability, e.mode, e.default_action, e.greedy, r.reward, r.slots, "
    "x.deferred, x.activated_at FROM events e LEFT JOIN rewards r ON r.event_id = e.event_id "
    "LEFT JOIN event_extras x ON x.seq = e.seq WHERE e.event_id = ?")


def apply_ops(self, ops: list[tuple]) -> list[Any]:
    """Apply ("event", EventRow) / ("reward", event_id, reward, timestamp) / ("snapshot", path,
    reward_seq, event_seq, sha256) / ("unreward", seq) (a reward the model refused to learn, removed) /
    ("touch", key_hash, time) (a key's last use) / ("creward", event_id, reward, timestamp, slots) (the
    reward of an action-feature event: refused, status "inactive", while the event is deferred and not
    activated) / ("activate", event_id, time) operations in order in one transaction and commit it."""
    x = self._x
    out: list[Any] = []
    now = time.time()
    x(self.BEGIN)
    try:
        for op in ops:
            kind = op[0]
            if kind == "event" and op[1].replica is not None:
                out.append(replica_event(self, op[1]))
            elif kind == "event":
                e: EventRow = op[1]
                x(
                    "INSERT INTO events (seq, event_id, ranked_at, context, action, probability, distribution, "
                    "n_draws, mode, default_action, greedy, model_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (e.seq, e.event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution,
                     e.n_draws, e.mode, e.default_action, e.greedy, e.model_version))
                if e.has_extras:
                    x("INSERT INTO event_extras (seq, event_id, deferred, request_sha256, answer) "
                      "VALUES (?,?,?,?,?)", (e.seq, e.event_id, int(e.deferred), e.request_sha256, e.answer))
                out.append(e.seq)
            elif kind in ("reward", "creward"):  # an action-feature event's ("creward") carries slots
                _, event_id, reward, ts, *slot = op
                slots = slot[0] if slot else None
                ev = x(_EVENT_FOR_REWARD, (event_id,)).fetchone()
                if ev is None:
                    out.append(RewardOutcome("unknown"))
                elif ev[8] and ev[9] is None:  # deferred and not activated
                    out.append(RewardOutcome("inactive"))
                elif ev[6] is not None:  # (rewards.reward is never NULL)
                    same = ev[6] == reward and ev[7] == slots
                    out.append(RewardOutcome("duplicate" if same else "conflict", logged_reward=ev[6],
                                             slots=ev[7]))
                else:
                    seq = x("INSERT INTO rewards (event_id, reward, timestamp, received_at, slots) "
                            "VALUES (?,?,?,?,?) RETURNING seq", (event_id, reward, ts, now, slots)).fetchone()[0]
                    out.append(RewardOutcome("accepted", seq=seq, reward=reward, event=tuple(ev[:6]), slots=slots))
            elif kind == "activate":
                _, event_id, when = op
                ev = x("SELECT x.deferred, x.activated_at FROM events e LEFT JOIN event_extras x "
                       "ON x.seq = e.seq WHERE e.event_id = ?", (event_id,)).fetchone()
                if ev is None:
                    out.append("unknown")
                elif not ev[0]:
                    out.append("not_deferred")
                elif ev[1] is not None:
                    out.append("duplicate")
                else:
                    x("UPDATE event_extras SET activated_at = ? WHERE event_id = ?", (when, event_id))
                    out.append("activated")
            elif kind == "snapshot":
                _, path, reward_seq, event_seq, digest, *replica = op
                x("INSERT INTO snapshots (path, reward_seq, event_seq, created, sha256, replica) "
                  "VALUES (?,?,?,?,?,?)", (str(path), reward_seq, event_seq, now, digest,
                                           replica[0] if replica else None))
                out.append(None)
            elif kind == "unreward":
                x("DELETE FROM rewards WHERE seq = ?", (op[1],))
                out.append(None)
            elif kind == "touch":
                x("UPDATE api_keys SET last_used = ? WHERE hash = ?", (op[2], op[1]))
                out.append(None)
            else:  # pragma: no cover
                raise ValueError(f"unknown operation {kind!r}")
        x("COMMIT")
    except BaseException as exc:
        x("ROLLBACK")
        if getattr(exc, "maybe_committed", False):  # the COMMIT's outcome is unknown: its results, in case
            exc.results = out
        raise
    return out

def replica_event(self, e: EventRow) -> int:
    """Log a replica's event under the next global seq (the write lock is held); its own count goes to
    ``replica_seq``. An ``event_id`` another replica logged meanwhile is refused (returns 0): the event
    is logged under a void id ('~' and the replica's count, which no client id can be), so that the
    draws it made stay in the replica's log."""
    x = self._x
    event_id = e.event_id
    if x("SELECT 1 FROM events WHERE event_id = ?", (event_id,)).fetchone() is not None:
        event_id = f"{e.event_id}~void~{e.replica}~{e.seq}"
    seq = int(x("SELECT COALESCE(MAX(seq), 0) + 1 FROM events").fetchone()[0])
    x("INSERT INTO events (seq, event_id, ranked_at, context, action, probability, distribution, n_draws, mode, "
      "default_action, greedy, model_version, replica, replica_seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
      (seq, event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution, e.n_draws, e.mode,
       e.default_action, e.greedy, e.model_version, e.replica, e.seq))
    if getattr(e, "has_extras", False):  # an action-feature event's extras, under the global seq
        x("INSERT INTO event_extras (seq, event_id, deferred, request_sha256, answer) VALUES (?,?,?,?,?)",
          (seq, event_id, int(e.deferred), e.request_sha256, e.answer))
    return 0 if event_id != e.event_id else seq
