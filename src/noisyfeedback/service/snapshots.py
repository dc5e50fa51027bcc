"""The model's snapshots: ``learner.save`` files (our ``.npz``) in one folder, each with a row in the log
naming the log positions it covers and the file's SHA-256.

A file is written private (0600), fsynced, renamed into place and its folder fsynced before its row is
committed; a file that is missing, truncated or replaced (its SHA-256 differs from its row's) is skipped
for the one before it, as the log holds every event and reward after any snapshot.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from .. import base
from .storage import is_dsn

__all__ = ["SnapshotFolder", "NoSnapshot", "snapshot_name"]

log = logging.getLogger("noisyfeedback.service")


class NoSnapshot(ValueError):
    """No snapshot of the log can be read (each problem named)."""


def snapshot_name(reward_seq: int, event_seq: int, replica: str | None = None) -> str:
    """The file name of a snapshot after reward ``reward_seq`` and event ``event_seq`` (a replica's own
    count of events, its name in the file's)."""
    who = "" if replica is None else f"{replica}-"
    return f"snapshot-{who}{reward_seq:012d}-{event_seq:012d}.npz"


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover  (platforms without directory handles)
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class SnapshotFolder:
    """The snapshot files of the log at ``db`` (a SQLite file's path or a DSN), in ``folder``."""

    def __init__(self, folder: Path, db: str | Path):
        self.folder, self.db = folder, db

    def file(self, stored: str) -> Path:
        """A snapshot's file from its row: absolute, or relative to the database's folder (older rows:
        relative to the folder the service was started from; found by name in the snapshot folder)."""
        p = Path(stored)
        if p.is_absolute():
            return p
        if not is_dsn(self.db):
            near = Path(self.db).parent / p
            if near.exists():
                return near
        by_name = self.folder / p.name
        return by_name if by_name.exists() else p

    def _stored_path(self, path: Path) -> str:
        if not is_dsn(self.db):
            try:
                return str(path.relative_to(Path(self.db).parent))
            except ValueError:
                pass
        return str(path)

    def write(self, learner, name: str) -> tuple[str, str]:
        """Save ``learner`` as ``name``: private (0600), fsynced, renamed into place and the folder
        fsynced. Returns (the path to store, the file's SHA-256)."""
        final = self.folder / name
        tmp = self.folder / f".{name}.{os.getpid()}.tmp.npz"
        try:
            learner.save(tmp)
            os.chmod(tmp, 0o600)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            digest = _sha256(tmp)
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(self.folder)
        return self._stored_path(final), digest

    def read(self, stored: str, digest: str | None, problems: list[str]):
        """The learner of one snapshot row, or None (the problem noted) when its file is missing,
        truncated or replaced (its SHA-256 differs from its row's)."""
        path = self.file(stored)
        try:
            if digest is not None and _sha256(path) != digest:
                raise ValueError("its SHA-256 differs from the one logged when it was written")
            return base.load(path)
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            log.warning("snapshot %s is unusable (%s); trying the one before it", path, exc)
            return None

    def latest(self, rows) -> tuple:
        """The latest usable snapshot of ``rows`` ((path, reward_seq, event_seq, sha256), the latest first):
        (learner, reward_seq, event_seq)."""
        problems: list[str] = []
        for stored, reward_seq, event_seq, digest in rows:
            learner = self.read(stored, digest, problems)
            if learner is not None:
                return learner, int(reward_seq), int(event_seq)
        raise NoSnapshot("no usable snapshot: " + "; ".join(problems))

    def remove_new(self) -> None:
        """Remove the folder and its files (a failed first start on a new database)."""
        if self.folder.is_dir():
            for f in self.folder.iterdir():
                f.unlink()
            self.folder.rmdir()
