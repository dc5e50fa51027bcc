"""The service's durable log behind one small interface, :class:`Storage`, and its SQLite implementation.

Tables: ``events`` (one per ``/rank``: ``seq`` assigned by the service in the order it drew the action,
the context as float64 bytes, the action, its propensity, the distribution, the number of uniforms drawn
from the learner's stream), ``rewards`` (one per accepted ``/reward``; ``seq`` is the order of arrival at
the writer, i.e. the order of commit, and THE order in which the model learns), ``snapshots`` (model files
and the log positions they cover), ``api_keys`` (SHA-256 hashes and roles) and ``meta`` (the service's
configuration). A PostgreSQL implementation needs the same methods (see docs/deploy.md, "PostgreSQL");
:func:`noisyfeedback.service.stores.open_storage` opens either from a path or a DSN.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol

import numpy as np

__all__ = ["Storage", "SQLiteStorage", "EventRow", "RewardOutcome", "encode_action", "decode_action"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    hash TEXT PRIMARY KEY, role TEXT NOT NULL CHECK (role IN ('rank', 'admin')), created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, ranked_at REAL NOT NULL,
    context BLOB NOT NULL, action TEXT NOT NULL, probability REAL NOT NULL, distribution BLOB NOT NULL,
    n_draws INTEGER NOT NULL, mode TEXT NOT NULL, default_action TEXT, greedy TEXT NOT NULL,
    model_version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rewards (
    seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE REFERENCES events(event_id),
    reward REAL NOT NULL, timestamp REAL, received_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, reward_seq INTEGER NOT NULL, event_seq INTEGER NOT NULL,
    created REAL NOT NULL);
"""


def encode_action(action) -> str:
    """An action (label or set of labels) as text: "3" or "1,4,7"."""
    if isinstance(action, (list, tuple, np.ndarray)):
        return ",".join(str(int(a)) for a in np.ravel(action))
    return str(int(action))


def decode_action(text: str):
    """Inverse of :func:`encode_action` (a set comes back as a list)."""
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


class Storage(Protocol):
    """What the service needs from its log. Writes come from ONE writer thread (``apply_batch``: one
    transaction, committed before it returns); reads may come from any thread."""

    def apply_batch(self, ops: list[tuple]) -> list[Any]: ...
    def event_exists(self, event_id: str) -> bool: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def add_key(self, key_hash: str, role: str) -> None: ...
    def key_role(self, key_hash: str) -> str | None: ...
    def latest_snapshot(self) -> tuple[str, int, int] | None: ...
    def add_snapshot(self, path: str, reward_seq: int, event_seq: int) -> None: ...
    def draws_after(self, event_seq: int) -> int: ...
    def max_event_seq(self) -> int: ...
    def rewards_after(self, reward_seq: int, chunk: int = 4096) -> Iterator[list[tuple]]: ...
    def stats(self) -> dict[str, float]: ...
    def close(self) -> None: ...


class SQLiteStorage:
    """The embedded default: one SQLite file in WAL mode.

    ``synchronous="FULL"`` (default) fsyncs the WAL at every commit (durable across power loss);
    ``"NORMAL"`` is durable across a crash of the process (SIGKILL) but not of the machine.
    """

    def __init__(self, path: str | Path, synchronous: str = "FULL"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA; got {synchronous!r}.")
        self.synchronous = synchronous.upper()
        self._local = threading.local()
        con = self._con()
        con.executescript(SCHEMA)
        con.commit()

    #: statement that opens a write transaction (takes the write lock at once)
    BEGIN = "BEGIN IMMEDIATE"

    def _x(self, sql: str, params: tuple = ()):
        """Execute one statement on this thread's connection (subclasses translate the SQL)."""
        return self._con().execute(sql, params)

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute(f"PRAGMA synchronous={self.synchronous}")
            con.execute("PRAGMA foreign_keys=OFF")
            self._local.con = con
        return con

    # ------------------------------------------------------------------ writes
    def apply_batch(self, ops: list[tuple]) -> list[Any]:
        """Apply ("event", EventRow) / ("reward", event_id, reward, timestamp) / ("snapshot", path,
        reward_seq, event_seq) operations in order in one transaction and commit it."""
        x = self._x
        out: list[Any] = []
        now = time.time()
        x(self.BEGIN)
        try:
            for op in ops:
                kind = op[0]
                if kind == "event":
                    e: EventRow = op[1]
                    x(
                        "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        (e.seq, e.event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution,
                         e.n_draws, e.mode, e.default_action, e.greedy, e.model_version))
                    out.append(e.seq)
                elif kind == "reward":
                    _, event_id, reward, ts = op
                    ev = x(
                        "SELECT context, action, probability, mode, default_action, greedy FROM events "
                        "WHERE event_id = ?", (event_id,)).fetchone()
                    if ev is None:
                        out.append(RewardOutcome("unknown"))
                        continue
                    old = x("SELECT reward FROM rewards WHERE event_id = ?", (event_id,)).fetchone()
                    if old is not None:
                        out.append(RewardOutcome("duplicate" if old[0] == reward else "conflict",
                                                 logged_reward=old[0]))
                        continue
                    seq = x("INSERT INTO rewards (event_id, reward, timestamp, received_at) VALUES (?,?,?,?) "
                            "RETURNING seq", (event_id, reward, ts, now)).fetchone()[0]
                    out.append(RewardOutcome("accepted", seq=seq, reward=reward, event=tuple(ev)))
                elif kind == "snapshot":
                    _, path, reward_seq, event_seq = op
                    x("INSERT INTO snapshots (path, reward_seq, event_seq, created) VALUES (?,?,?,?)",
                                (str(path), reward_seq, event_seq, now))
                    out.append(None)
                else:  # pragma: no cover
                    raise ValueError(f"unknown operation {kind!r}")
            x("COMMIT")
        except BaseException:
            x("ROLLBACK")
            raise
        return out

    def set_meta(self, key: str, value: str) -> None:
        self._x("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def add_key(self, key_hash: str, role: str) -> None:
        self._x("INSERT INTO api_keys VALUES (?, ?, ?)", (key_hash, role, time.time()))

    def add_snapshot(self, path: str, reward_seq: int, event_seq: int) -> None:
        self.apply_batch([("snapshot", path, reward_seq, event_seq)])

    # ------------------------------------------------------------------- reads
    def get_meta(self, key: str) -> str | None:
        row = self._x("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def key_role(self, key_hash: str) -> str | None:
        row = self._x("SELECT role FROM api_keys WHERE hash = ?", (key_hash,)).fetchone()
        return None if row is None else row[0]

    def event_exists(self, event_id: str) -> bool:
        return self._x("SELECT 1 FROM events WHERE event_id = ?", (event_id,)).fetchone() is not None

    def latest_snapshot(self) -> tuple[str, int, int] | None:
        return self._x(
            "SELECT path, reward_seq, event_seq FROM snapshots ORDER BY id DESC LIMIT 1").fetchone()

    def draws_after(self, event_seq: int) -> int:
        return int(self._x("SELECT COALESCE(SUM(n_draws), 0) FROM events WHERE seq > ?",
                                       (event_seq,)).fetchone()[0])

    def max_event_seq(self) -> int:
        return int(self._x("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])

    def rewards_after(self, reward_seq: int, chunk: int = 4096) -> Iterator[list[tuple]]:
        """Rewards with seq > reward_seq in seq order, in chunks of (seq, reward, context, action, probability)."""
        cur = self._x(
            "SELECT r.seq, r.reward, e.context, e.action, e.probability FROM rewards r "
            "JOIN events e ON e.event_id = r.event_id WHERE r.seq > ? ORDER BY r.seq", (reward_seq,))
        while True:
            rows = cur.fetchmany(chunk)
            if not rows:
                return
            yield rows

    def log(self) -> Iterator[tuple]:
        """Every event in seq order with its reward (None when none arrived): the export's rows."""
        yield from self._x(
            "SELECT e.seq, e.event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution, "
            "e.n_draws, e.mode, e.default_action, e.greedy, e.model_version, r.seq, r.reward, r.timestamp, "
            "r.received_at FROM events e LEFT JOIN rewards r ON r.event_id = e.event_id ORDER BY e.seq")

    def stats(self) -> dict[str, float]:
        """Counters the metrics start from: events, rewards, sum and sum of squares of the rewards, and
        for apprentice events the agreements and their rewards."""
        x = self._x
        n_events = x("SELECT COUNT(*) FROM events").fetchone()[0]
        r = x("SELECT COUNT(*), COALESCE(SUM(reward), 0), COALESCE(SUM(reward * reward), 0) "
                        "FROM rewards").fetchone()
        a = x(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN 1 ELSE 0 END), 0) FROM events e "
            "WHERE e.mode = 'apprentice'").fetchone()
        ar = x(
            "SELECT COUNT(*), COALESCE(SUM(r.reward), 0), COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN 1 ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN r.reward ELSE 0 END), 0) "
            "FROM rewards r JOIN events e ON e.event_id = r.event_id WHERE e.mode = 'apprentice'").fetchone()
        return {"events": n_events, "rewards": r[0], "reward_sum": r[1], "reward_sq": r[2],
                "app_events": a[0], "app_agree": a[1], "app_rewards": ar[0], "app_reward_sum": ar[1],
                "app_agree_rewards": ar[2], "app_agree_reward_sum": ar[3]}

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None
