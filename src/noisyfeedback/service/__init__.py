"""The decision service: rank and reward over HTTP, learning online from noisy clicks.

``noisyfeedback serve --db PATH --learner RCNBF --n-classes K --n-features D`` starts it; see
docs/deploy.md. Modules: :mod:`.engine` (model, log order, recovery), :mod:`.storage`
(the log interface and SQLite), :mod:`.app` (the HTTP API), :mod:`.auth` (API keys),
:mod:`.metrics`, :mod:`.policy` (action distributions), :mod:`.evaluate` (off-policy estimates),
:mod:`.export` (Parquet and VW cb). Needs the ``service`` extra (FastAPI, uvicorn).
"""

from .engine import Engine, ServiceConfig, ServiceError, build_learner

__all__ = ["Engine", "ServiceConfig", "ServiceError", "build_learner", "create_app"]


def create_app(cfg: ServiceConfig, engine: Engine | None = None):
    """The FastAPI app of a service (imports FastAPI only when called)."""
    from .app import create_app as _create

    return _create(cfg, engine)
