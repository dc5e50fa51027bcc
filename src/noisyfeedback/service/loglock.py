"""One serving process per SQLite log: an OS lock (``flock``) on a file beside the database's real file,
taken when a service opens the log and held for the life of the process; the file names the holder's
pid. A second process on the same log (by any path to it) is refused at start, naming that pid. The
commands that only read the log or manage its keys take no lock."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["LogInUse", "lock_log", "release_log"]

#: this process's locks: the lock file's path -> [descriptor, holders]
_HELD: dict[str, list[int]] = {}


class LogInUse(ValueError):
    """Another process serves this log."""


def _lock_path(db: str | Path) -> str:
    return f"{os.path.realpath(db)}-lock"


def lock_log(db: str | Path) -> str:
    """Take the lock of the SQLite log ``db`` for this process (again: counted); the lock file's path.
    `LogInUse` naming the holder's pid when another process holds it."""
    path = _lock_path(db)
    held = _HELD.get(path)
    if held is not None:
        held[1] += 1
        return path
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        finally:
            os.close(fd)
        raise LogInUse(f"the database {db} is served by another process (pid {holder}); one process serves a "
                       "SQLite log: stop that one first, or serve a PostgreSQL log with replicas.") from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[path] = [fd, 1]
    return path


def release_log(db: str | Path, remove: bool = False) -> None:
    """Give back one hold of this process on the lock of ``db`` (the last one unlocks; ``remove``: and
    deletes the lock file, after a failed first start)."""
    path = _lock_path(db)
    held = _HELD.get(path)
    if held is None:
        return
    held[1] -= 1
    if held[1] > 0:
        return
    del _HELD[path]
    if remove:
        Path(path).unlink(missing_ok=True)
    os.close(held[0])
