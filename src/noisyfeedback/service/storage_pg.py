"""The service's log on PostgreSQL (psycopg 3): the same :class:`~.storage.Storage` methods and SQL as
SQLite, with PostgreSQL types.

Every write transaction takes one transaction-level advisory lock first, so reward sequence numbers
(``BIGSERIAL``) are handed out and committed in the same order even with several writers: the reward
``seq`` stays the order of commit, the order in which a model learns. ``dsn`` is a libpq connection
string, e.g. ``postgresql://nf@db.internal/noisyfeedback`` or ``host=/run/postgresql dbname=nf``.
"""

from __future__ import annotations

import threading
from typing import Any

from .storage import SQLiteStorage

__all__ = ["PostgresStorage"]

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


class PostgresStorage(SQLiteStorage):
    """The log in a PostgreSQL database (one connection per thread, autocommit, explicit transactions)."""

    BEGIN = "BEGIN"

    def __init__(self, dsn: str, synchronous: str = "FULL"):
        import psycopg  # noqa: F401  (fails early and clearly without the driver)

        self.dsn = dsn
        self.path = dsn
        self.synchronous = synchronous.upper()
        self._local = threading.local()
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

    def _con(self):
        con = getattr(self._local, "con", None)
        if con is None:
            import psycopg

            con = psycopg.connect(self.dsn, autocommit=True)
            if self.synchronous == "NORMAL":  # the analogue of SQLite's NORMAL: crash-safe, not power-safe
                con.execute("SET synchronous_commit = off")
            self._local.con = con
        return con

    def _x(self, sql: str, params: tuple = ()) -> Any:
        cur = self._con().execute(sql.replace("?", "%s"), params)
        if sql == self.BEGIN:
            cur = self._con().execute(f"SELECT pg_advisory_xact_lock({LOCK_KEY})")
        return cur
