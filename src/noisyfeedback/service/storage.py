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

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol

import numpy as np

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

#: the length of a key's public id (a prefix of its SHA-256 hash, shown by ``keys list``)
KEY_ID_LENGTH = 12


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

    def stats(self) -> dict[str, float]: ...
    def close(self) -> None: ...


class SQLiteStorage:
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
                    out.append(self._replica_event(op[1]))
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
                elif kind == "creward":
                    _, event_id, reward, ts, slots = op
                    ev = x(
                        "SELECT e.context, e.action, e.probability, e.mode, e.default_action, e.greedy, "
                        "x.deferred, x.activated_at FROM events e LEFT JOIN event_extras x ON x.seq = e.seq "
                        "WHERE e.event_id = ?", (event_id,)).fetchone()
                    if ev is None:
                        out.append(RewardOutcome("unknown"))
                        continue
                    if ev[6] and ev[7] is None:
                        out.append(RewardOutcome("inactive"))
                        continue
                    old = x("SELECT reward, slots FROM rewards WHERE event_id = ?", (event_id,)).fetchone()
                    if old is not None:
                        same = old[0] == reward and old[1] == slots
                        out.append(RewardOutcome("duplicate" if same else "conflict", logged_reward=old[0],
                                                 slots=old[1]))
                        continue
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
        except BaseException:
            x("ROLLBACK")
            raise
        return out

    def _replica_event(self, e: EventRow) -> int:
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

    def set_meta(self, key: str, value: str) -> None:
        self._x("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def setdefault_meta(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless a value is there already; the stored value."""
        self._x("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, value))
        return self.get_meta(key)

    def add_key(self, key_hash: str, role: str) -> None:
        self._x("INSERT INTO api_keys (hash, role, created) VALUES (?, ?, ?)", (key_hash, role, time.time()))
        self._keys_changed()

    # A running service keeps the roles of the keys it has seen, and instead of a query of the log on every
    # request (a third of a rank+reward pair's CPU) checks the size of a file beside the log, which every
    # key change (``add_key``, ``revoke_key``, in any process) grows by one byte after its commit: a revoked
    # key is refused from the next request on, as before.
    #: the most roles kept (unknown keys are never kept)
    KEY_CACHE_SIZE = 10_000

    def _keys_mark_path(self) -> str:
        return f"{self.path}-keys"

    def _keys_changed(self) -> None:
        fd = os.open(self._keys_mark_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)

    def _keys_mark(self) -> int:
        try:
            return os.stat(self._keys_mark_path()).st_size
        except FileNotFoundError:
            return -1

    def list_keys(self) -> list[tuple[str, str, float, float | None]]:
        """(id, role, created, last used) of every key, oldest first; the id is the first
        :data:`KEY_ID_LENGTH` hex digits of the key's hash (the key itself is never stored)."""
        return [(h[:KEY_ID_LENGTH], role, created, last) for h, role, created, last in self._x(
            "SELECT hash, role, created, last_used FROM api_keys ORDER BY created, hash")]

    def revoke_key(self, key_hash_or_id: str) -> int:
        """Delete the key with this hash, or the one key whose id (hash prefix) this is; the number of
        keys deleted (0 or 1). An id that more than one key starts with is refused."""
        h = key_hash_or_id.lower()
        if len(h) < 64:
            if len(h) < KEY_ID_LENGTH or any(c not in "0123456789abcdef" for c in h):
                raise ValueError(f"{key_hash_or_id!r} is not a key id (the {KEY_ID_LENGTH} hex digits "
                                 "`keys list` shows) nor a key.")
            found = [r[0] for r in self._x("SELECT hash FROM api_keys WHERE substr(hash, 1, ?) = ?", (len(h), h))]
            if len(found) > 1:
                raise ValueError(f"{len(found)} keys have an id starting with {h!r}; give more digits.")
            if not found:
                return 0
            h = found[0]
        n = self._x("DELETE FROM api_keys WHERE hash = ?", (h,)).rowcount
        if n:
            self._keys_changed()
        return n

    def add_snapshot(self, path: str, reward_seq: int, event_seq: int, digest: str | None = None,
                     replica: str | None = None) -> None:
        self.apply_batch([("snapshot", path, reward_seq, event_seq, digest, replica)])

    # ------------------------------------------------------------------- reads
    def get_meta(self, key: str) -> str | None:
        row = self._x("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def key_role(self, key_hash: str) -> str | None:
        """The role of the key with this hash (None: unknown or revoked); kept once seen, until a key changes."""
        mark = self._keys_mark()  # before the read: a change after it is seen by the next call
        if mark != self._key_roles_mark:
            self._key_roles.clear()
            self._key_roles_mark = mark
        role = self._key_roles.get(key_hash)
        if role is None:
            role = self._read_key_role(key_hash)
            if role is not None and len(self._key_roles) < self.KEY_CACHE_SIZE:
                self._key_roles[key_hash] = role
        return role

    def _read_key_role(self, key_hash: str) -> str | None:
        row = self._x("SELECT role FROM api_keys WHERE hash = ?", (key_hash,)).fetchone()
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
        dx = x("SELECT COUNT(*), COALESCE(SUM(CASE WHEN activated_at IS NULL THEN 1 ELSE 0 END), 0) "
               "FROM event_extras WHERE deferred = 1").fetchone()
        return {"events": n_events, "rewards": r[0], "reward_sum": r[1], "reward_sq": r[2],
                "app_events": a[0], "app_agree": a[1], "app_rewards": ar[0], "app_reward_sum": ar[1],
                "app_agree_rewards": ar[2], "app_agree_reward_sum": ar[3],
                "deferred": dx[0], "deferred_pending": dx[1]}

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


def is_dsn(db: str | Path) -> bool:
    """Whether ``db`` names a PostgreSQL database rather than a SQLite file."""
    return str(db).startswith(("postgresql://", "postgres://"))
