"""The service's log on PostgreSQL (psycopg 3): the same `Storage` methods and SQL as
SQLite, with PostgreSQL types.

Every write transaction takes one transaction-level advisory lock first, so reward sequence numbers
(``BIGSERIAL``) are handed out and committed in the same order even with several writers: the reward
``seq`` stays the order of commit, the order in which a model learns. ``dsn`` is a libpq connection
string, e.g. ``postgresql://nf@db.internal/noisyfeedback`` or ``host=/run/postgresql dbname=nf``.

**A database that goes away** (a restart, a failover): a connection that fails is dropped and the next
use opens a new one (each try bounded by ``CONNECT_TIMEOUT`` seconds). A statement that cannot have
changed anything (a read outside a transaction, or the ``BEGIN`` of one) is retried at once on a new
connection, so connections left stale by a restart cost nothing; a write transaction that failed
before its ``COMMIT`` was sent is redone from its ``BEGIN`` (`PostgresStorage.apply_batch`), and so
is a read (`retry_delays`), for at most ``retry_budget`` seconds (`RETRY_BUDGET` by default), with backoff:
a short outage delays requests instead of failing them. A transaction whose ``COMMIT`` was sent when the
connection failed may have committed (`ConnectionLost.maybe_committed`): its outcome is asked of the
server once it answers again (``txid_status`` of the transaction's id, taken at its ``BEGIN``):
committed, its results stand; aborted, it is redone; unknown within the budget, it fails. After a budget
spent in vain, further uses fail at once (one try each) until one succeeds. Failures raise `Unavailable`
with a fixed message (the driver's text goes to the log, never to a client).
The service's own recovery (a failed write: 503, then the model rebuilt from the log once it can be
written; ``/health`` answers 503 while `PostgresStorage.ping` fails) does the rest: nothing that
was acknowledged is lost, since an answer waits for its commit.

**Replica names** are claimed for the life of the process by a session advisory lock on a connection of
their own (`PostgresStorage.claim_replica`): a second process with the same name is refused.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Iterator

from .errors import Unavailable
from .storage import SQLiteStorage

__all__ = ["PostgresStorage", "ConnectionLost", "RETRY_BUDGET", "retry_delays"]

SCHEMA_PG = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    hash TEXT PRIMARY KEY, role TEXT NOT NULL CHECK (role IN ('rank', 'admin')), created DOUBLE PRECISION NOT NULL,
    last_used DOUBLE PRECISION);
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, ranked_at DOUBLE PRECISION NOT NULL,
    context BYTEA NOT NULL, action TEXT NOT NULL, probability DOUBLE PRECISION NOT NULL,
    distribution BYTEA NOT NULL, n_draws BIGINT NOT NULL, mode TEXT NOT NULL, default_action TEXT,
    greedy TEXT NOT NULL, model_version BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS rewards (
    seq BIGSERIAL PRIMARY KEY, event_id TEXT NOT NULL UNIQUE REFERENCES events(event_id),
    reward DOUBLE PRECISION NOT NULL, timestamp DOUBLE PRECISION, received_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS snapshots (
    id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, reward_seq BIGINT NOT NULL, event_seq BIGINT NOT NULL,
    created DOUBLE PRECISION NOT NULL, sha256 TEXT);
CREATE TABLE IF NOT EXISTS event_extras (
    seq BIGINT PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, deferred INTEGER NOT NULL DEFAULT 0,
    activated_at DOUBLE PRECISION, request_sha256 TEXT, answer BYTEA);
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used DOUBLE PRECISION;
ALTER TABLE rewards ADD COLUMN IF NOT EXISTS slots TEXT;
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS sha256 TEXT;
ALTER TABLE events ADD COLUMN IF NOT EXISTS replica TEXT;
ALTER TABLE events ADD COLUMN IF NOT EXISTS replica_seq BIGINT;
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS replica TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS events_replica_seq ON events (replica, replica_seq) WHERE replica IS NOT NULL;
"""

LOCK_KEY = 0x6E66  # "nf": the advisory lock every write transaction takes
REPLICA_LOCK = 0x6E67  # with the hash of a replica's name: the session lock that claims the name
#: seconds a new connection may take
CONNECT_TIMEOUT = 5
#: seconds a write transaction or a request's read is retried for (with backoff) while the database is away,
#: by default (``PostgresStorage.retry_budget``; ``serve --db-retry``)
RETRY_BUDGET = 2.0
UNREACHABLE = "the database cannot be reached now; retry later (see GET /health)."
log = logging.getLogger("noisyfeedback.service")


#: this process's claimed replica names: (dsn, name) -> [connection holding the lock, stores holding it]
_CLAIMS: dict[tuple[str, str], list] = {}
_CLAIMS_LOCK = threading.RLock()  # (the writer thread claims again after an outage, a repair on the loop too)


class ReplicaInUse(ValueError):
    """Another process serves under this replica name."""


class ConnectionLost(Unavailable):
    """The connection to the database failed; ``maybe_committed``: it failed on a ``COMMIT``, whose
    transaction may have committed (redone only once the server says it did not); ``results``: what
    the transaction's operations returned, if it did commit (set by `.storage_writes.apply_ops`)."""

    def __init__(self, message: str, maybe_committed: bool = False):
        super().__init__(message)
        self.maybe_committed = maybe_committed
        self.results: list[Any] | None = None


def retry_delays(budget: float = RETRY_BUDGET) -> Iterator[float]:
    """The pauses between the tries of a retried operation: 0.05 s, doubling up to 0.4 s, while the
    tries and pauses fit within ``budget`` seconds of the first try."""
    t_end = time.monotonic() + budget
    delay = 0.05
    while time.monotonic() + delay < t_end:
        yield delay
        delay = min(2 * delay, 0.4)


class PostgresStorage(SQLiteStorage):
    """The log in a PostgreSQL database (one connection per thread, autocommit, explicit transactions)."""

    BEGIN = "BEGIN"

    def __init__(self, dsn: str, synchronous: str = "FULL", retry_budget: float = RETRY_BUDGET):
        import psycopg  # (fails early and clearly without the driver)

        #: seconds an operation is tried again for while the database cannot be reached
        self.retry_budget = float(retry_budget)
        self._errors = (psycopg.OperationalError, psycopg.InterfaceError)
        self._claim: str | None = None  # the replica name this store holds a claim of
        self.dsn = dsn
        self.path = dsn
        self.synchronous = synchronous.upper()
        self._local = threading.local()
        #: a retry budget was spent in vain and nothing succeeded since: one try each until one does
        self.outage = False
        self._lost = False  # a connection failed since the replica name was last claimed
        con = self._con()
        with con.transaction():
            con.execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
            for stmt in SCHEMA_PG.split(";"):
                if stmt.strip():
                    con.execute(stmt)

    def key_role(self, key_hash: str) -> str | None:
        """The role of the key with this hash, read on every call: replicas on other machines share no file
        that would tell them of a revoked key."""
        return self._read_key_role(key_hash)

    def _keys_changed(self) -> None:
        pass

    def _connect(self, **kw):
        import psycopg

        return psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT, **kw)

    def _con(self):
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._connect()
            if self.synchronous == "NORMAL":  # the analogue of SQLite's NORMAL: crash-safe, not power-safe
                con.execute("SET synchronous_commit = off")
            self._local.con = con
        return con

    def _drop(self) -> None:
        """Forget this thread's connection (broken): the next use opens a new one."""
        con = getattr(self._local, "con", None)
        self._local.con = None
        if con is not None:
            try:
                con.close()
            except Exception:  # noqa: BLE001  (closing a broken connection)
                pass

    def _x(self, sql: str, params: tuple = ()) -> Any:
        """Execute one statement (SQLite-style ``?`` placeholders). A failed connection is dropped; a
        statement that cannot have changed anything (a read outside a transaction, a ``BEGIN``) is tried
        once more on a new connection; otherwise `ConnectionLost`."""
        local = self._local
        in_tx = getattr(local, "in_tx", False)
        if sql == "ROLLBACK":
            local.in_tx = False
            con = getattr(local, "con", None)
            if con is None or con.closed or con.broken:  # the session ended: the server rolled it back
                return None
        if sql == "COMMIT":
            local.in_tx = False
        safe = sql == self.BEGIN or (not in_tx and sql.lstrip()[:6].upper() == "SELECT")
        for again in (False, True):
            stale = getattr(local, "con", None) is not None  # (a failed new connection: no second try)
            try:
                cur = self._con().execute(sql.replace("?", "%s"), params)
                if sql == self.BEGIN:
                    local.in_tx = True
                    local.xid = None
                    cur = self._con().execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY}), txid_current()")
                    local.xid = cur.fetchone()[1]  # (to ask for its outcome if its COMMIT is lost)
                return cur
            except self._errors as exc:
                con = getattr(local, "con", None)
                broken = con is None or con.closed or con.broken
                if broken:
                    self._drop()
                    self._lost = True
                if sql == self.BEGIN:
                    local.in_tx = False
                if broken and stale and safe and not again:
                    continue  # e.g. a connection a restart of the server closed: a new one
                log.warning("the PostgreSQL connection failed (%s); the next use reconnects", exc)
                raise ConnectionLost(UNREACHABLE, maybe_committed=sql == "COMMIT") from exc

    def apply_batch(self, ops: list[tuple]) -> list[Any]:
        """`SQLiteStorage.apply_batch`, redone from its ``BEGIN`` while the connection fails before the
        ``COMMIT`` was sent, or fails as it is sent and the server then says the transaction aborted, for
        at most ``retry_budget`` seconds (one try while `outage`)."""
        delays = retry_delays(0.0 if self.outage else self.retry_budget)
        while True:
            try:
                out = super().apply_batch(ops)
            except ConnectionLost as exc:
                if exc.maybe_committed:
                    status = self._outcome(getattr(self._local, "xid", None), delays)
                    if status == "committed":
                        out = exc.results
                        break
                    if status != "aborted":
                        self.outage = status is None
                        raise
                    log.warning("a write transaction whose COMMIT was lost had aborted; redoing it")
                    continue
                pause = next(delays, None)
                if pause is None:
                    self.outage = True
                    raise
                time.sleep(pause)
                continue
            break
        self.outage = False
        if self._lost:
            self._claim_again()
        return out

    def _outcome(self, xid: int | None, delays: Iterator[float]) -> str | None:
        """The server's word on transaction ``xid`` ("committed", "aborted", "in progress"), asked on a
        new connection after each pause of ``delays`` until it answers and the transaction has ended;
        None if it does not answer in time (or ``xid`` is unknown or too old to tell)."""
        if xid is None:
            return None
        while True:
            try:
                status = self._x("SELECT txid_status(?)", (xid,)).fetchone()[0]
                if status != "in progress":
                    return status
            except ConnectionLost:
                pass
            pause = next(delays, None)
            if pause is None:
                return None
            time.sleep(pause)

    def ping(self) -> bool:
        """Whether the database answers now (a new connection if the last one broke)."""
        try:
            self._x("SELECT 1").fetchone()
            self.outage = False
            return True
        except Exception:  # noqa: BLE001  (any failure: not reachable)
            return False

    def claim_replica(self, name: str) -> None:
        """Claim ``name`` among the replicas of this log for this process (again after the database came
        back; the engines of one process share the claim); `ReplicaInUse` when another process
        holds it."""
        with _CLAIMS_LOCK:
            self._claim_replica(name)

    def _claim_again(self) -> None:
        """After a connection failed and a write succeeded since: this store's replica name claimed again
        (the session that held it may have ended with a restart of the server)."""
        self._lost = False
        if self._claim is None:
            return
        try:
            self.claim_replica(self._claim)
        except (ReplicaInUse, Unavailable) as exc:  # (the next repair claims it, or refuses to serve)
            log.error("replica %r could not claim its name again after the database came back: %s", self._claim,
                      exc)

    def _claim_replica(self, name: str) -> None:
        key = (self.dsn, name)
        held = _CLAIMS.get(key)
        if held is not None:
            try:  # the session (and its lock) may have ended with a restart of the server
                held[0].execute("SELECT 1").fetchone()
                alive = True
            except self._errors:
                alive = False
            if alive:
                if self._claim != name:
                    held[1] += 1
                    self._claim = name
                return
            del _CLAIMS[key]
            try:
                held[0].close()
            except Exception:  # noqa: BLE001  (closing a broken connection)
                pass
        try:
            con = self._connect(application_name=f"noisyfeedback replica {name} pid {os.getpid()}"[:63])
            got = con.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (REPLICA_LOCK, name)).fetchone()[0]
        except self._errors as exc:
            raise Unavailable(UNREACHABLE) from exc
        if not got:
            con.close()
            raise ReplicaInUse(f"another process serves as replica {name!r} of this log; give this one another "
                               "name (or stop that one first).")
        holders = held[1] if held is not None else 0  # stores of this process that held the lost claim
        if self._claim != name:
            holders += 1
        _CLAIMS[key] = [con, max(holders, 1)]
        self._claim = name

    def release_replica(self) -> None:
        """Give back this store's claim of its replica name (the last one in the process unlocks it)."""
        with _CLAIMS_LOCK:
            self._release_replica()

    def _release_replica(self) -> None:
        if self._claim is None:
            return
        key, self._claim = (self.dsn, self._claim), None
        held = _CLAIMS.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del _CLAIMS[key]
            try:
                held[0].close()
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        super().close()
        self.release_replica()
