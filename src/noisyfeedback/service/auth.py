"""API keys: random tokens shown once, stored as SHA-256 hashes with a role ("rank" or "admin").

A key is 32 random bytes (``secrets.token_urlsafe``), so a plain SHA-256 is a safe hash for it (a
slow password hash is for guessable secrets); the clear key is never stored.
"""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from .stores import open_storage

__all__ = ["hash_key", "create_key", "ROLES"]

ROLES = ("rank", "admin")


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(db: str | Path, role: str, storage=None) -> str:
    """Create a key of ``role`` in the service database ``db`` and return it (the only time it is seen)."""
    if role not in ROLES:
        raise ValueError(f"The 'role' of an API key must be one of {ROLES}. Got {role!r} instead.")
    storage = storage if storage is not None else open_storage(db)
    key = "nf_" + secrets.token_urlsafe(32)
    storage.add_key(hash_key(key), role)
    return key
