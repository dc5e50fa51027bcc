"""``DirectRoute``: an ``APIRoute`` for the hot routes (``/rank``, ``/reward``) that calls its endpoint
with its declared dependencies solved by a plain recursive call instead of FastAPI's per-request
dependency machinery (scopes, caches, exit stacks, telemetry), which cost about a third of a
rank+reward pair's CPU.

The route is declared, matched, documented (body, security scheme) and wrapped by the app's error
handlers exactly as any ``APIRoute``; only the calling differs, so it accepts only endpoints whose
parameters are the request and dependencies of the same kind (each a function of the request and of
other such dependencies: the engine, the caller's key), refusing anything else when the app is built.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.requests import Request

__all__ = ["DirectRoute"]

#: what a dependant of a direct route may not take (FastAPI would read them from the request)
_UNSUPPORTED = ("path_params", "query_params", "header_params", "cookie_params", "body_params")
_UNSUPPORTED_NAMES = ("websocket_param_name", "response_param_name",
                      "background_tasks_param_name", "security_scopes_param_name")


def _check(dependant: Dependant, where: str) -> None:
    for kind in _UNSUPPORTED:
        if getattr(dependant, kind):
            raise TypeError(f"{where}: a DirectRoute endpoint takes the request and dependencies only; "
                            f"{kind.replace('_', ' ')} {[f.name for f in getattr(dependant, kind)]} are not "
                            "supported.")
    for name in _UNSUPPORTED_NAMES:
        if getattr(dependant, name, None):
            raise TypeError(f"{where}: a DirectRoute endpoint cannot take a {name[:-11]} parameter.")
    for sub in dependant.dependencies:
        _check(sub, f"{where} -> {getattr(sub.call, '__name__', type(sub.call).__name__)}")


async def _solve(dependant: Dependant, request: Request) -> dict[str, Any]:
    """The keyword arguments of ``dependant.call``: the request (also where an ``HTTPConnection`` is
    asked for, as the security schemes do) and each dependency's value (awaited)."""
    kwargs: dict[str, Any] = {}
    for name in (dependant.request_param_name, dependant.http_connection_param_name):
        if name:
            kwargs[name] = request
    for sub in dependant.dependencies:
        value = sub.call(**await _solve(sub, request))
        if inspect.isawaitable(value):
            value = await value
        kwargs[sub.name] = value
    return kwargs


class DirectRoute(APIRoute):
    """An ``APIRoute`` whose dependencies are solved by a direct recursive call (see the module)."""

    def get_route_handler(self) -> Callable:
        dependant, endpoint = self.dependant, self.endpoint
        _check(dependant, f"route {self.path}")
        if not inspect.iscoroutinefunction(endpoint):
            raise TypeError(f"route {self.path}: a DirectRoute endpoint must be 'async def'.")

        async def handler(request: Request):
            return await endpoint(**await _solve(dependant, request))

        return handler
