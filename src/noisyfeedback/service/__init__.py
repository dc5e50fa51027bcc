"""The decision service: rank and reward over HTTP, learning online from noisy clicks.

``noisyfeedback serve --db PATH --learner RCNBF --n-classes K --n-features D`` starts it; see the
README's "Deploy" section. Modules: `.engine` (the model, the order in which it ranks and learns),
`.config` (how a service starts), `.recovery` (the model rebuilt from the log), `.snapshots`,
`.replication` (several processes on one PostgreSQL log), `.writer` (the log writer thread),
`.errors` (refusals, mapped to HTTP statuses by the app), `.learner` (the learner's public API
as the service uses it), `.catalogue` (actions described by features: the catalogue learners,
multi-slot, deferred activation; their logged form in `.rounds`), `.storage` (the log interface
and SQLite), `.app` (the HTTP app and its request limits), `.routers` (the routes),
`.dependencies` (API keys per request), `.schemas` (request bodies), `.auth` (keys),
`.metrics`, `.evaluate` (off-policy estimates), `.export` (Parquet, CSV and VW cb),
`.server` (uvicorn with the header limit). Needs the ``service`` extra (FastAPI, uvicorn). Its Python client:
`noisyfeedback.client`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:  # the names below are imported on first use (lazy_attributes): the command line's
    # `serve`, `keys` and `export-log` definitions load none of the engine
    from .config import ServiceConfig, build_learner
    from .engine import Engine
    from .errors import ConfigError, ServiceError

_LAZY = {
    "ServiceConfig": ".config",
    "build_learner": ".config",
    "Engine": ".engine",
    "ConfigError": ".errors",
    "ServiceError": ".errors",
}

__all__ = ["Engine", "ServiceConfig", "ServiceError", "ConfigError", "build_learner", "create_app"]

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


def create_app(cfg: ServiceConfig, engine: Engine | None = None):
    """The FastAPI app of a service (imports FastAPI only when called)."""
    from .app import create_app as _create

    return _create(cfg, engine)
