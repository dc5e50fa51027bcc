"""``DirectRoute``: an ``APIRoute`` for the hot routes (``/rank``, ``/reward``) that calls its endpoint
with its declared dependencies solved by a plain recursive call instead of FastAPI's per-request
dependency machinery (scopes, caches, exit stacks, telemetry), which cost about a third of a
rank+reward pair's CPU.

The route is declared, matched, documented (body, security scheme) and wrapped by the app's error
handlers exactly as any ``APIRoute``; only the calling differs, so it accepts only endpoints whose
parameters are the request and dependencies of the same kind (each a function of the request and of
other such dependencies: the engine, the caller's key), refusing anything else when the app is built.

`DirectRoutes` goes one step further for the app's request middleware: a request whose path and method
are those of a direct route (matched before any other route, as the app puts them first) is handed to
the route's handler and the app's exception handlers without Starlette's exception middleware, router
and FastAPI's request wrapper (five layers of coroutines a request), with the scope those would set.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request

__all__ = ["DirectRoute", "DirectRoutes"]

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


def _plan(dependant: Dependant) -> tuple:
    """What `_solve` does for ``dependant``, worked out once: (the names given the request, and per
    dependency its name, callable, own plan and whether its value is shared within a request)."""
    names = tuple(n for n in (dependant.request_param_name, dependant.http_connection_param_name) if n)
    return names, tuple((sub.name, sub.call, _plan(sub), sub.use_cache) for sub in dependant.dependencies)


async def _solve(plan: tuple, request: Request, cache: dict) -> dict[str, Any]:
    """The keyword arguments of a dependant's call: the request (also where an ``HTTPConnection`` is
    asked for, as the security schemes do) and each dependency's value (awaited; computed once a
    request, as FastAPI caches it, unless the dependency says ``use_cache=False``)."""
    names, subs = plan
    kwargs: dict[str, Any] = dict.fromkeys(names, request)
    for name, call, sub, shared in subs:
        if shared and call in cache:
            kwargs[name] = cache[call]
            continue
        value = call(**(await _solve(sub, request, cache) if sub[1] else dict.fromkeys(sub[0], request)))
        if inspect.isawaitable(value):
            value = await value
        if shared:
            cache[call] = value
        kwargs[name] = value
    return kwargs


class DirectRoute(APIRoute):
    """An ``APIRoute`` whose dependencies are solved by a direct recursive call (see the module)."""

    def get_route_handler(self) -> Callable:
        dependant, endpoint = self.dependant, self.endpoint
        _check(dependant, f"route {self.path}")
        if not inspect.iscoroutinefunction(endpoint):
            raise TypeError(f"route {self.path}: a DirectRoute endpoint must be 'async def'.")

        plan = _plan(dependant)

        async def handler(request: Request):
            return await endpoint(**await _solve(plan, request, {}))

        self.direct_handler = handler
        return handler


class DirectRoutes:
    """The direct routes of an app by (path, method), for the app's outermost request middleware:
    `serve` answers a request that one of them matches exactly as Starlette's router and FastAPI's
    ``request_response`` would (the same scope keys, the app's exception handlers), with fewer layers."""

    def __init__(self, app) -> None:
        self.app = app
        self.routes: dict[tuple[str, str], DirectRoute | None] = {}
        for route in app.router.routes:
            path, methods = getattr(route, "path", None), getattr(route, "methods", None) or ()
            for method in methods:
                # the first route of a path and method takes it (the router's order); only direct ones
                # without path parameters are served here
                key = (path, method)
                if key not in self.routes:
                    direct = isinstance(route, DirectRoute) and "{" not in path
                    self.routes[key] = route if direct else None
        handlers = {k: v for k, v in app.exception_handlers.items() if k not in (500, Exception)}
        self.status_handlers = {k: v for k, v in handlers.items() if isinstance(k, int)}
        self.exception_handlers = {k: v for k, v in handlers.items() if not isinstance(k, int)}

    def match(self, scope) -> DirectRoute | None:
        """The direct route that the router would give this request (None: let the router route it)."""
        if scope.get("root_path") or "fastapi.telemetry" in scope:  # telemetry: the router names the span
            return None
        return self.routes.get((scope["path"], scope["method"]))  # no parameters: the path is the pattern

    def _handler(self, exc: Exception):
        if isinstance(exc, HTTPException) and exc.status_code in self.status_handlers:
            return self.status_handlers[exc.status_code]
        for cls in type(exc).__mro__:
            if cls in self.exception_handlers:
                return self.exception_handlers[cls]
        return None

    async def serve(self, route: DirectRoute, scope, receive, send, body: bytes | None = None) -> None:
        """Answer a request that `match` gave ``route`` (``body``: its body, already read from
        ``receive``; kept where Starlette's ``Request.body`` keeps what it read)."""
        scope.setdefault("router", self.app.router)
        scope.update(endpoint=route.endpoint, path_params={}, route=route)
        request = Request(scope, receive, send)
        if body is not None:
            request._body = body
        try:
            response = await route.direct_handler(request)
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise
            response = (await handler(request, exc) if inspect.iscoroutinefunction(handler)
                        else await run_in_threadpool(handler, request, exc))
            exc.__traceback__ = None  # a reused exception instance would accumulate tracebacks
        await response(scope, receive, send)
