"""The decision service: rank and reward over HTTP, learning online from noisy clicks.

``noisyfeedback serve --db PATH --learner RCNBF --n-classes K --n-features D`` starts it; see the
README's "Deploy" section. Modules: :mod:`.engine` (the model, the order in which it ranks and learns),
:mod:`.config` (how a service starts), :mod:`.recovery` (the model rebuilt from the log), :mod:`.snapshots`,
:mod:`.replication` (several processes on one PostgreSQL log), :mod:`.writer` (the log writer thread),
:mod:`.errors` (refusals, mapped to HTTP statuses by the app), :mod:`.learner` (the learner's public API
as the service uses it), :mod:`.catalogue` (actions described by features: the catalogue learners,
multi-slot, deferred activation; their logged form in :mod:`.rounds`), :mod:`.storage` (the log interface
and SQLite), :mod:`.app` (the HTTP app and its request limits), :mod:`.routers` (the routes),
:mod:`.dependencies` (API keys per request), :mod:`.schemas` (request bodies), :mod:`.auth` (keys),
:mod:`.metrics`, :mod:`.evaluate` (off-policy estimates), :mod:`.export` (Parquet, CSV and VW cb),
:mod:`.server` (uvicorn with the header limit). Needs the ``service`` extra (FastAPI, uvicorn). Its Python client: :mod:`noisyfeedback.client`.
"""

from .config import ServiceConfig, build_learner
from .engine import Engine
from .errors import ConfigError, ServiceError

__all__ = ["Engine", "ServiceConfig", "ServiceError", "ConfigError", "build_learner", "create_app"]


def create_app(cfg: ServiceConfig, engine: Engine | None = None):
    """The FastAPI app of a service (imports FastAPI only when called)."""
    from .app import create_app as _create

    return _create(cfg, engine)
