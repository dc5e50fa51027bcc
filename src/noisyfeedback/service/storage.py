"""The service's durable log behind one small interface, `Storage`, and its SQLite implementation.

Tables: ``events`` (one per ``/rank``: ``seq`` assigned by the service in the order it drew the action,
the context as float64 bytes, the action, its propensity, the distribution, the number of uniforms drawn
from the learner's stream), ``rewards`` (one per accepted ``/reward``; ``seq`` is the order of arrival at
the writer, i.e. the order of commit, and THE order in which the model learns), ``snapshots`` (model files
and the log positions they cover), ``api_keys`` (SHA-256 hashes and roles) and ``meta`` (the service's
configuration). A PostgreSQL implementation needs the same methods (see docs/deploy.md, "PostgreSQL");
`noisyfeedback.service.stores.open_storage` opens either from a path or a DSN.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterator, Protocol

from .log_rows import EventRow, RewardOutcome, decode_action, encode_action
from .storage_keys import KEY_ID_LENGTH, KeyStore
from .storage_writes import apply_ops

__all__ = ["Storage", "SQLiteStorage", "EventRow", "RewardOutcome", "encode_action", "decode_action", "is_dsn",
           "KEY_ID_LENGTH"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    hash TEXT PRIMARY KEY, role TEXT NOT NULL CHECK (role IN ('rank', 'admin')), created REAL NOT NULL,
    last_used REAL);
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
    created REAL NOT NULL, sha256 TEXT);
CREATE TABLE IF NOT EXISTS event_extras (
    seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, deferred INTEGER NOT NULL DEFAULT 0,
    activated_at REAL, request_sha256 TEXT, answer BLOB);
"""

#: columns added after the first release, with their SQL types: added to older databases on open
#: (``replica``, ``replica_seq``: the replica that ranked an event and its own count of events; a snapshot's
#: replica, whose random stream it holds; NULL for a service of one process)
MIGRATIONS = (("api_keys", "last_used", "REAL"), ("snapshots", "sha256", "TEXT"), ("rewards", "slots", "TEXT"),
              ("events", "replica", "TEXT"), ("events", "replica_seq", "INTEGER"), ("snapshots", "replica", "TEXT"))



class Storage(Protocol):
    """What the service needs from its log. Writes come from ONE writer thread (``apply_batch``: one
    transaction, committed before it returns); reads may come from any thread."""

    def apply_batch(self, ops: list[tuple]) -> list[Any]: ...
    def event_exists(self, event_id: str) -> bool: ...
    def event_answer(self, event_id: str) -> tuple[str | None, bytes | None] | None: ...
    def event_context(self, event_id: str) -> tuple[bytes, str] | None: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def setdefault_meta(self, key: str, value: str) -> str: ...
    def add_key(self, key_hash: str, role: str) -> None: ...
    def key_role(self, key_hash: str) -> str | None: ...
    def list_keys(self) -> list[tuple[str, str, float, float | None]]: ...
    def revoke_key(self, key_hash_or_id: str) -> int: ...

    def latest_snapshot(self) -> tuple[str, int, int] | None: ...
    def snapshots(self) -> list[tuple[str, int, int, str | None]]: ...
    def replica_snapshots(self) -> list[tuple[str, int, int, str | None, str | None]]: ...
    def has_replica_events(self) -> bool: ...
    def max_reward_seq(self) -> int: ...
    def reward_events(self, after: int, upto: int) -> dict[int, tuple]: ...
    def add_snapshot(self, path: str, reward_seq: int, event_seq: int, digest: str | None = None,
                     replica: str | None = None) -> None: ...
    def writable(self) -> bool: ...
    def draws_after(self, event_seq: int, upto: int | None = None, replica: str | None = None) -> int: ...
    def max_event_seq(self, replica: str | None = None) -> int: ...
    def rewards_after(self, reward_seq: int, chunk: int = 4096, upto: int | None = None) -> Iterator[list[tuple]]: ...
    def catalogue_log(self) -> Iterator[tuple]:
        """Every action-feature event in seq order with its activation and reward: (seq, event_id, ranked_at,
        context, action, probability, distribution, model_version, deferred, activated_at, reward_seq, reward,
        slots, reward_timestamp, received_at)."""
        yield from self._x(
            "SELECT e.seq, e.event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution, "
            "e.model_version, x.deferred, x.activated_at, r.seq, r.reward, r.slots, r.timestamp, r.received_at "
            "FROM events e LEFT JOIN event_extras x ON x.seq = e.seq LEFT JOIN rewards r ON r.event_id = e.event_id "
            "ORDER BY e.seq")

    def stats(self, upto: int | None = None, replica: str | None = None) -> dict[str, float]: ...
    def close(self) -> None: ...


class SQLiteStorage(KeyStore):
    """The embedded default: one SQLite file in WAL mode.

    ``synchronous="FULL"`` (default) fsyncs the WAL at every commit (durable across power loss);
    ``"NORMAL"`` is durable across a crash of the process (SIGKILL) but not of the machine.
    """

    def __init__(self, path: str | Path, synchronous: str = "FULL", create: bool = True,
                 busy_timeout: float = 30.0):
        self.path = Path(path)
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(f"synchronous must be FULL, NORMAL or EXTRA; got {synchronous!r}.")
        if self.path.is_dir():
            raise ValueError(f"--db {str(path)!r} is a folder, not a database file.")
        if not self.path.exists():
            if not create:
                raise ValueError(f"no service database at {str(path)!r}.")
            if not self.path.parent.is_dir():
                raise ValueError(f"the folder of --db {str(path)!r} does not exist.")
            # created private (0600): the log holds contexts and the hashes of the API keys; SQLite gives
            # its -wal and -shm files the permissions of the database file
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self.synchronous = synchronous.upper()
        self.busy_timeout = float(busy_timeout)
        self._local = threading.local()
        self._key_roles: dict[str, str] = {}  # key_role's memory, valid while the keys mark is _key_roles_mark
        self._key_roles_mark: int | None = None
        con = self._con()
        try:
            con.executescript(SCHEMA)
            for table, column, kind in MIGRATIONS:
                cols = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
                if column not in cols:
                    con.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            con.commit()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ValueError(f"{str(path)!r} is not a service database ({exc}).") from None

    #: statement that opens a write transaction (takes the write lock at once)
    BEGIN = "BEGIN IMMEDIATE"

    def _x(self, sql: str, params: tuple = ()):
        """Execute one statement on this thread's connection (subclasses translate the SQL)."""
        return self._con().execute(sql, params)

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                  timeout=self.busy_timeout)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute(f"PRAGMA synchronous={self.synchronous}")
            con.execute("PRAGMA foreign_keys=OFF")
            self._local.con = con
        return con

    # ------------------------------------------------------------------ writes
    def apply_batch(self, ops: list[tuple]) -> list[Any]:
        """Apply the operations in order in one transaction and commit it (`.storage_writes.apply_ops`)."""
        return apply_ops(self, ops)

    def set_meta(self, key: str, value: str) -> None:
        self._x("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def setdefault_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless a value is there already; the stored value."""
        self._x("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, value))
        return self.get_meta(key)

    def add_snapshot(self, path: str, reward_seq: int, event_seq: int, digest: str | None = None,
                     replica: str | None = None) -> None:
        self.apply_batch([("snapshot", path, reward_seq, event_seq, digest, replica)])

    # ------------------------------------------------------------------- reads
    def get_meta(self, key: str) -> str | None:
        row = self._x("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def event_exists(self, event_id: str) -> bool:
        return self._x("SELECT 1 FROM events WHERE event_id = ?", (event_id,)).fetchone() is not None

    def event_answer(self, event_id: str) -> tuple[str | None, bytes | None] | None:
        """(request digest, answer) of a logged event (both None for events without them); None when the
        event is not in the log."""
        row = self._x("SELECT x.request_sha256, x.answer FROM events e LEFT JOIN event_extras x ON x.seq = e.seq "
                      "WHERE e.event_id = ?", (event_id,)).fetchone()
        return None if row is None else (row[0], None if row[1] is None else bytes(row[1]))

    def event_context(self, event_id: str) -> tuple[bytes, str] | None:
        """(context, action) of a logged event; None when it is not in the log."""
        row = self._x("SELECT context, action FROM events WHERE event_id = ?", (event_id,)).fetchone()
        return None if row is None else (bytes(row[0]), row[1])

    def latest_snapshot(self) -> tuple[str, int, int] | None:
        return self._x(
            "SELECT path, reward_seq, event_seq FROM snapshots ORDER BY id DESC LIMIT 1").fetchone()

    def snapshots(self) -> list[tuple[str, int, int, str | None]]:
        """(path, reward_seq, event_seq, sha256) of every snapshot, the latest first."""
        return [tuple(r) for r in self._x(
            "SELECT path, reward_seq, event_seq, sha256 FROM snapshots ORDER BY id DESC")]

    def replica_snapshots(self) -> list[tuple[str, int, int, str | None, str | None]]:
        """(path, reward_seq, event_seq, sha256, replica) of every snapshot, the latest first (a replica's
        snapshot counts its own events in ``event_seq``)."""
        return [tuple(r) for r in self._x(
            "SELECT path, reward_seq, event_seq, sha256, replica FROM snapshots ORDER BY id DESC")]

    def has_replica_events(self) -> bool:
        return self._x("SELECT 1 FROM events WHERE replica IS NOT NULL LIMIT 1").fetchone() is not None

    def writable(self) -> bool:
        """Whether a write transaction can be opened now (the probe after a failed write)."""
        try:
            self._x(self.BEGIN)
            self._x("ROLLBACK")
            return True
        except Exception:
            try:
                self._x("ROLLBACK")
            except Exception:
                pass
            return False

    def draws_after(self, event_seq: int, upto: int | None = None, replica: str | None = None) -> int:
        """Uniforms drawn by the events with seq > event_seq (and <= upto); with ``replica``, by that
        replica's events with its own count of events in that range."""
        top = (1 << 62) if upto is None else upto
        if replica is not None:
            return int(self._x("SELECT COALESCE(SUM(n_draws), 0) FROM events WHERE replica = ? AND replica_seq > ? "
                               "AND replica_seq <= ?", (replica, event_seq, top)).fetchone()[0])
        return int(self._x("SELECT COALESCE(SUM(n_draws), 0) FROM events WHERE seq > ? AND seq <= ?",
                           (event_seq, top)).fetchone()[0])

    def max_event_seq(self, replica: str | None = None) -> int:
        """The last event seq (with ``replica``: that replica's own count of events)."""
        if replica is not None:
            return int(self._x("SELECT COALESCE(MAX(replica_seq), 0) FROM events WHERE replica = ?",
                               (replica,)).fetchone()[0])
        return int(self._x("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])

    def max_reward_seq(self) -> int:
        return int(self._x("SELECT COALESCE(MAX(seq), 0) FROM rewards").fetchone()[0])

    def reward_events(self, after: int, upto: int) -> dict[int, tuple]:
        """{reward seq: (mode, default_action, greedy)} of the rewards with seq in (after, upto]: what the
        counters of a reward need besides the row the model learns from."""
        return {int(r[0]): tuple(r[1:]) for r in self._x(
            "SELECT r.seq, e.mode, e.default_action, e.greedy FROM rewards r JOIN events e ON e.event_id = r.event_id "
            "WHERE r.seq > ? AND r.seq <= ?", (after, upto))}

    def rewards_after(self, reward_seq: int, chunk: int = 4096, upto: int | None = None) -> Iterator[list[tuple]]:
        """Rewards with seq > reward_seq (and <= upto) in seq order, in chunks of (seq, reward, context,
        action, probability, per-slot rewards or None)."""
        cur = self._x(
            "SELECT r.seq, r.reward, e.context, e.action, e.probability, r.slots FROM rewards r "
            "JOIN events e ON e.event_id = r.event_id WHERE r.seq > ? AND r.seq <= ? ORDER BY r.seq",
            (reward_seq, (1 << 62) if upto is None else upto))
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

    def catalogue_log(self) -> Iterator[tuple]:
        """Every action-feature event in seq order with its activation and reward: (seq, event_id, ranked_at,
        context, action, probability, distribution, model_version, deferred, activated_at, reward_seq, reward,
        slots, reward_timestamp, received_at)."""
        yield from self._x(
            "SELECT e.seq, e.event_id, e.ranked_at, e.context, e.action, e.probability, e.distribution, "
            "e.model_version, x.deferred, x.activated_at, r.seq, r.reward, r.slots, r.timestamp, r.received_at "
            "FROM events e LEFT JOIN event_extras x ON x.seq = e.seq LEFT JOIN rewards r ON r.event_id = e.event_id "
            "ORDER BY e.seq")

    def stats(self, upto: int | None = None, replica: str | None = None) -> dict[str, float]:
        """Counters the metrics start from: events, rewards, sum and sum of squares of the rewards, and
        for apprentice events the agreements and their rewards. ``upto``: the rewards with seq <= upto
        only (those a model has learned; later ones are counted as they are learned); ``replica``: the
        events of that replica only."""
        x = self._x
        top = (1 << 62) if upto is None else upto
        n_events = (x("SELECT COUNT(*) FROM events").fetchone()[0] if replica is None else
                    x("SELECT COUNT(*) FROM events WHERE replica = ?", (replica,)).fetchone()[0])
        r = x("SELECT COUNT(*), COALESCE(SUM(reward), 0), COALESCE(SUM(reward * reward), 0) "
              "FROM rewards WHERE seq <= ?", (top,)).fetchone()
        a = x(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN 1 ELSE 0 END), 0) FROM events e "
            "WHERE e.mode = 'apprentice'").fetchone()
        ar = x(
            "SELECT COUNT(*), COALESCE(SUM(r.reward), 0), "
            "COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN 1 ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN e.greedy = e.default_action THEN r.reward ELSE 0 END), 0) "
            "FROM rewards r JOIN events e ON e.event_id = r.event_id WHERE e.mode = 'apprentice' AND r.seq <= ?",
            (top,)).fetchone()
        dx = x("SELECT COUNT(*), COALESCE(SUM(CASE WHEN activated_at IS NULL THEN 1 ELSE 0 END), 0) "
               "FROM event_extras WHERE deferred = 1").fetchone()
        return {"events": n_events, "rewards": r[0], "reward_sum": r[1], "reward_sq": r[2],
                "app_events": a[0], "app_agree": a[1], "app_rewards": ar[0], "app_reward_sum": ar[1],
                "app_agree_rewards": ar[2], "app_agree_reward_sum": ar[3],
                "deferred": dx[0], "deferred_pending": dx[1]}

    def close(self) -> None:
        self._close_keys_mark()
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


def is_dsn(db: str | Path) -> bool:
    """Whether ``db`` names a PostgreSQL database rather than a SQLite file."""
    return str(db).startswith(("postgresql://", "postgres://"))
