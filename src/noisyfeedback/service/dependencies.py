"""FastAPI dependencies of the HTTP API: the engine of the app, and the API key a route needs.

A key's role is kept once seen, and dropped whenever a key is added or revoked (in any process: see
``SQLiteStorage.key_role``; replicas on PostgreSQL read it on every request), so ``noisyfeedback keys revoke``
takes effect on the next request; each use is recorded (at most once a minute per key) for ``keys list``.
"""

from __future__ import annotations

from typing import Annotated, NamedTuple

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.requests import HTTPConnection

from .auth import hash_key
from .engine import Engine
from .errors import Forbidden, Unauthorized

__all__ = ["bearer", "subscription_key", "get_engine", "role_of", "rank_key", "admin_key", "personalizer_key",
           "EngineDep", "RankKey", "AdminKey", "PersonalizerKey"]


class BearerCredentials(NamedTuple):
    """A request's ``Authorization: <scheme> <credentials>``."""

    scheme: str
    credentials: str


class Bearer(HTTPBearer):
    """FastAPI's ``HTTPBearer`` (the same security scheme, and None without a bearer token) that answers a
    plain tuple instead of a pydantic model a request."""

    async def __call__(self, request: HTTPConnection) -> BearerCredentials | None:
        authorization = None
        for name, value in request.scope["headers"]:  # as request.headers.get, without its Headers object
            if name == b"authorization":
                authorization = value.decode("latin-1")
                break
        if not authorization:
            return None
        scheme, _, credentials = authorization.partition(" ")
        credentials = credentials.strip()
        if not (scheme and credentials) or scheme.lower() != "bearer":
            return None
        return BearerCredentials(scheme, credentials)


bearer = Bearer(auto_error=False, description="An API key from `noisyfeedback keys create`.", scheme_name="HTTPBearer")
subscription_key = APIKeyHeader(name="Ocp-Apim-Subscription-Key", auto_error=False,
                                description="The same API key, in the header Personalizer clients send.")


async def get_engine(request: Request) -> Engine:
    return request.app.state.engine


async def role_of(engine: Engine, creds: BearerCredentials | None) -> str:
    """The role of the presented key; 401 without a (known) bearer key."""
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Unauthorized("an API key is needed: 'Authorization: Bearer KEY'.", "Authorization")
    return await _role_of_key(engine, creds.credentials, "Authorization")


async def _role_of_key(engine: Engine, key: str, field: str) -> str:
    h = hash_key(key)
    role = await engine.key_role(h)  # (PostgreSQL: off the event loop, retried while the database is away)
    if role is None:
        raise Unauthorized("unknown or revoked API key.", field)
    engine.touch_key(h)
    return role


EngineDep = Annotated[Engine, Depends(get_engine)]
Credentials = Annotated[BearerCredentials | None, Depends(bearer)]


async def rank_key(engine: EngineDep, creds: Credentials) -> str:
    """Any valid key (rank or admin)."""
    return await role_of(engine, creds)


async def admin_key(engine: EngineDep, creds: Credentials) -> str:
    """An admin key (403 for a rank key)."""
    if await role_of(engine, creds) != "admin":
        raise Forbidden("this route needs an admin key.", "Authorization")
    return "admin"


async def personalizer_key(engine: EngineDep, creds: Credentials,
                           key: Annotated[str | None, Depends(subscription_key)]) -> str:
    """Any valid key, in ``Ocp-Apim-Subscription-Key`` (as Personalizer clients send it) or as Bearer."""
    if key:
        return await _role_of_key(engine, key, "Ocp-Apim-Subscription-Key")
    if creds is None:
        raise Unauthorized("an API key is needed: 'Ocp-Apim-Subscription-Key: KEY' or 'Authorization: "
                                "Bearer KEY'.", "Ocp-Apim-Subscription-Key")
    return await role_of(engine, creds)


RankKey = Annotated[str, Depends(rank_key)]
PersonalizerKey = Annotated[str, Depends(personalizer_key)]
AdminKey = Annotated[str, Depends(admin_key)]
