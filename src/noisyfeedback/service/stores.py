"""Open the service's log: a SQLite file (`.storage`) or a PostgreSQL database (`.storage_pg`).

The one place that knows both implementations (each builds on the one below it: the PostgreSQL
store extends the SQLite one, never the other way round).
"""

from __future__ import annotations

from pathlib import Path

from .storage import SQLiteStorage, is_dsn

__all__ = ["open_storage"]


def open_storage(db: str | Path, synchronous: str = "FULL", create: bool = True, busy_timeout: float = 30.0,
                 retry_budget: float | None = None):
    """The log at ``db``: a PostgreSQL DSN (``postgresql://...``; operations retried for ``retry_budget``
    seconds while it cannot be reached, default `.storage_pg.RETRY_BUDGET`) or the path of a SQLite file
    (created, mode 0600, when absent and ``create``; its folder must exist)."""
    if is_dsn(db):
        from .storage_pg import RETRY_BUDGET, PostgresStorage  # psycopg is imported only for a DSN

        return PostgresStorage(str(db), synchronous, RETRY_BUDGET if retry_budget is None else retry_budget)
    return SQLiteStorage(db, synchronous, create=create, busy_timeout=busy_timeout)
