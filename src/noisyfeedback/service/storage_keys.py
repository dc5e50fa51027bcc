"""The API keys of a log (hashes and roles), and how a running service learns that they changed."""

from __future__ import annotations

import os
import time

__all__ = ["KeyStore", "KEY_ID_LENGTH"]

#: the length of a key's public id (a prefix of its SHA-256 hash, shown by ``keys list``)
KEY_ID_LENGTH = 12


class KeyStore:
    """The ``api_keys`` table of a store whose ``_x`` executes SQLite-style SQL (a part of
    `SQLiteStorage`)."""

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
        """The mark beside the database's real file: every path to it (a symlink, a relative path) names
        the same mark, so a key revoked through any of them is seen. Resolved once per store (the file a
        store has open does not move; ``realpath`` on every request cost a third of a pair's CPU)."""
        cached = self.__dict__.get("_keys_mark_cache")
        if cached is None or cached[0] is not self.path:
            cached = self._keys_mark_cache = (self.path, f"{os.path.realpath(self.path)}-keys")
        return cached[1]

    def _keys_changed(self) -> None:
        fd = os.open(self._keys_mark_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)

    def _keys_mark(self) -> int:
        """The mark's size (-1 while there is none). The mark is kept open once it exists and its size
        read from the open file (a path lookup a request cost more); a mark removed since (no link left)
        is looked up again by its path."""
        fd = self.__dict__.get("_keys_mark_fd")
        if fd is not None:
            st = os.fstat(fd)
            if st.st_nlink:
                return st.st_size
            self._close_keys_mark()
        try:
            fd = os.open(self._keys_mark_path(), os.O_RDONLY)
        except FileNotFoundError:
            return -1
        self._keys_mark_fd = fd
        return os.fstat(fd).st_size

    def _close_keys_mark(self) -> None:
        fd = self.__dict__.pop("_keys_mark_fd", None)
        if fd is not None:
            os.close(fd)

    def list_keys(self) -> list[tuple[str, str, float, float | None]]:
        """(id, role, created, last used) of every key, oldest first; the id is the first
        `KEY_ID_LENGTH` hex digits of the key's hash (the key itself is never stored)."""
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
