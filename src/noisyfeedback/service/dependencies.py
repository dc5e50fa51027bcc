"""FastAPI dependencies of the HTTP API: the engine of the app, and the API key a route needs.

A key's role is read from the log on every request (no cache), so ``noisyfeedback keys revoke`` takes
effect on the next request; each use is recorded (at most once a minute per key) for ``keys list``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .auth import hash_key
from .engine import Engine, ServiceError

__all__ = ["bearer", "get_engine", "role_of", "rank_key", "admin_key", "EngineDep", "RankKey", "AdminKey"]

bearer = HTTPBearer(auto_error=False, description="An API key from `noisyfeedback keys create`.")


def get_engine(request: Request) -> Engine:
    return request.app.state.engine


def role_of(engine: Engine, creds: HTTPAuthorizationCredentials | None) -> str:
    """The role of the presented key; 401 without a (known) bearer key."""
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise ServiceError(401, "an API key is needed: 'Authorization: Bearer KEY'.", "Authorization")
    h = hash_key(creds.credentials)
    role = engine.storage.key_role(h)
    if role is None:
        raise ServiceError(401, "unknown or revoked API key.", "Authorization")
    engine.touch_key(h)
    return role


EngineDep = Annotated[Engine, Depends(get_engine)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


async def rank_key(engine: EngineDep, creds: Credentials) -> str:
    """Any valid key (rank or admin)."""
    return role_of(engine, creds)


async def admin_key(engine: EngineDep, creds: Credentials) -> str:
    """An admin key (403 for a rank key)."""
    if role_of(engine, creds) != "admin":
        raise ServiceError(403, "this route needs an admin key.", "Authorization")
    return "admin"


RankKey = Annotated[str, Depends(rank_key)]
AdminKey = Annotated[str, Depends(admin_key)]
