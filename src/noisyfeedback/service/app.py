"""The HTTP API (FastAPI, served by uvicorn): rank, reward, health, metrics, snapshot, mode, evaluate.

Roles: a ``rank`` key may call ``/rank``, ``/reward``, ``/apprentice`` and ``/metrics``; an ``admin`` key
may call every route (``/snapshot``, ``/mode``, ``/policy/evaluate`` only with it). ``/health`` needs no
key. Every refused request changes nothing in the log or the model; invalid ones get 422 with the field
named in ``detail[0].loc``. Limits checked before any parsing: request line and headers
(``max_header`` bytes, 431), body (``max_body`` bytes, 422) and JSON nesting (``max_depth`` levels, 422).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from contextlib import asynccontextmanager

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .bodies import LARGE_BODY, json_depth, too_many_actions
from .config import ServiceConfig
from .engine import Engine
from .errors import Conflict, Forbidden, Invalid, NotFound, ServiceError, Unauthorized, Unavailable, Unsupported
from .metrics import Metrics
from .routers import admin, rank
from .routers._common import json_response
from .routers._direct import DirectRoutes
from .schemas import RankRequest, RewardRequest

__all__ = ["create_app", "RankRequest", "RewardRequest", "json_depth", "status_of"]

#: the HTTP status of each kind of refusal (`.errors`)
STATUS = {Invalid: 422, NotFound: 404, Conflict: 409, Unavailable: 503, Unauthorized: 401, Forbidden: 403,
          Unsupported: 501}


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a refusal: its kind's (the nearest base class in `STATUS`), else 500."""
    for kind in type(exc).__mro__:
        if kind in STATUS:
            return STATUS[kind]
    return 500


def _error_body(status: int, message: str, field: str | None) -> dict:
    if status == 422:
        loc = ["body", *field.split(".", 1)] if field else ["body"]
        return {"detail": [{"type": "value_error", "loc": loc, "msg": message}]}
    return {"detail": message, "field": field}


def _validation_body(exc: RequestValidationError) -> dict:
    return {"detail": [{"type": e.get("type"), "loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg")}
                       for e in exc.errors()]}


# ------------------------------------------------------------------ Personalizer's error body
#: the paths whose errors are Personalizer's body (the Personalizer routes)
PERSONALIZER_PATHS = "/personalizer/"
#: Personalizer's error codes by HTTP status (its ErrorCode values where it has one)
_PZ_CODES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "ResourceNotFound",
             405: "MethodNotAllowed", 409: "Conflict", 413: "PayloadTooLarge", 429: "TooManyRequests",
             431: "RequestHeaderFieldsTooLarge", 500: "InternalServerError", 501: "NotImplemented",
             503: "ServiceUnavailable"}
_SNAKE = re.compile(r"_([a-z0-9])")


def personalizer_target(loc) -> str | None:
    """A field in Personalizer's words: ``("body", "slots", 0, "baselineAction")`` or the engine's dotted
    ``"slots.0.baseline_action"`` -> ``slots[0].baselineAction`` (names in camelCase, list indices in brackets;
    the location's ``body``/``path``/``query``/``header`` prefix dropped; an empty name is ``[""]``)."""
    if not loc:
        return None
    parts = loc.split(".") if isinstance(loc, str) else [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in ("body", "path", "query", "header"):
        parts = parts[1:]
    out = ""
    for p in parts:
        if p.isdigit():
            out += f"[{p}]"
        elif not p:  # (an empty key, e.g. an extra field named "")
            out += '[""]'
        else:
            name = _SNAKE.sub(lambda m: m.group(1).upper(), p)
            out += f".{name}" if out else name
    return out or None


def personalizer_status(status: int) -> int:
    """Personalizer answers 400 for any invalid request (our routes: 422)."""
    return 400 if status == 422 else status


def personalizer_error(status: int, message: str, loc=None, details: list | None = None) -> dict:
    """Personalizer's error body, ``{"error": {"code", "message", "target"}}``: the message starts with the
    target, since an SDK's exception shows code and message only."""
    target = personalizer_target(loc)
    err = {"code": _PZ_CODES.get(status, "BadRequest" if 400 <= status < 500 else "InternalServerError"),
           "message": f"{target}: {message}" if target else message, "target": target}
    if details:
        err["details"] = details
    return {"error": err}


def _pz_validation_body(exc: RequestValidationError) -> dict:
    errs = [personalizer_error(400, e.get("msg", "invalid value"), e.get("loc"))["error"] for e in exc.errors()]
    if not errs:
        return personalizer_error(400, "invalid request.")
    return {"error": {**errs[0], "details": errs[1:]} if len(errs) > 1 else errs[0]}


class Limits:
    """Pure ASGI middleware: the request limits, checked before FastAPI parses anything, and the request
    metrics (labelled by the route's template, or ``unmatched``: never the raw path)."""

    def __init__(self, app, cfg: ServiceConfig, metrics: Metrics, direct: DirectRoutes | None = None):
        self.app, self.metrics = app, metrics
        self.templates: set[str] = set()  # the templates routed so far (all without path parameters)
        self.max_body, self.max_header, self.max_depth = cfg.max_body, cfg.max_header, cfg.max_depth
        self.max_actions = cfg.max_actions
        self.direct = direct  # the app's hot routes, served past the router (None: every request to ``app``)

    async def _refuse(self, send, status: int, message: str, field: str | None, path: str = "") -> None:
        if path.startswith(PERSONALIZER_PATHS):
            status = personalizer_status(status)
            body = orjson.dumps(personalizer_error(status, message, field))
        else:
            body = orjson.dumps(_error_body(status, message, field))
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    def _scan(self, data: bytes) -> tuple[int, int]:
        return json_depth(data, self.max_depth), too_many_actions(data, self.max_actions)

    async def _read_body(self, receive) -> tuple[bytes | None, bool]:
        """(the body, True) or (None, False) when it is larger than the limit (reading stops there)."""
        chunks, total, more = [], 0, True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                break
            body = msg.get("body", b"")
            total += len(body)
            if total > self.max_body:
                return None, False
            chunks.append(body)
            more = msg.get("more_body", False)
        return b"".join(chunks), True

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        status_box = [500]

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
            await send(message)

        try:
            await self._handle(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            if route is not None and getattr(route, "path", None):
                label = route.path
                if "{" not in label:
                    self.templates.add(label)
            else:  # refused before routing: the template if the path is one, never the raw path
                label = scope.get("path") if scope.get("path") in self.templates else "unmatched"
            self.metrics.observe(label, status_box[0], time.perf_counter() - t0)

    async def _handle(self, scope, receive, send):
        headers = scope.get("headers", ())
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b""))
        size += sum(len(k) + len(v) + 4 for k, v in headers)
        if size > self.max_header:
            return await self._refuse(send, 431, f"request line and headers larger than {self.max_header} "
                                                 "bytes.", "headers", scope.get("path", ""))
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        for k, v in headers:
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    declared = self.max_body + 1
                if declared > self.max_body:
                    return await self._refuse(send, 422, f"request body larger than {self.max_body} bytes.", None,
                                              scope.get("path", ""))
                break
        data, ok = await self._read_body(receive)
        if not ok:
            return await self._refuse(send, 422, f"request body larger than {self.max_body} bytes.", None,
                                      scope.get("path", ""))
        depth, n = ((await asyncio.to_thread(self._scan, data)) if len(data) >= LARGE_BODY
                    else (json_depth(data, self.max_depth), 0))  # a large body: off the event loop
        if depth > self.max_depth:
            return await self._refuse(send, 422, f"JSON nested deeper than {self.max_depth} levels.", None,
                                      scope.get("path", ""))
        if n:
            return await self._refuse(send, 422, f"{n} actions; a request may list at most {self.max_actions}.",
                                      "actions", scope.get("path", ""))
        done = [False]

        async def replay():
            if not done[0]:
                done[0] = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        direct = self.direct
        route = direct.match(scope) if direct is not None else None
        if route is not None:  # the body read here is the request's (as if its handler had read it)
            done[0] = True
            return await direct.serve(route, scope, replay, send, data)
        await self.app(scope, replay, send)


def _add_error_handlers(app: FastAPI) -> None:
    """Errors as our routes' body (``detail``, with ``loc`` or ``field``), and as Personalizer's on the
    Personalizer routes (`personalizer_error`, status 400 for an invalid request)."""
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        status = status_of(exc)
        if request.url.path.startswith(PERSONALIZER_PATHS):
            status = personalizer_status(status)
            return json_response(personalizer_error(status, exc.message, exc.field), status)
        return json_response(_error_body(status, exc.message, exc.field), status)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):  # FastAPI's own 400/404/405
        field = {400: "body", 404: "path", 405: "method"}.get(exc.status_code, "request")
        if request.url.path.startswith(PERSONALIZER_PATHS):
            return json_response(personalizer_error(exc.status_code, str(exc.detail), field), exc.status_code)
        return json_response({"detail": exc.detail, "field": field}, exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        if request.url.path.startswith(PERSONALIZER_PATHS):
            return json_response(_pz_validation_body(exc), 400)
        return json_response(_validation_body(exc), 422)


def _hoist_defs(schema: dict) -> None:
    """Move the ``$defs`` of the bodies read as raw JSON into ``components/schemas`` (where their
    ``$ref`` points)."""
    comps = schema.setdefault("components", {}).setdefault("schemas", {})
    for item in schema["paths"].values():
        for op in item.values():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if isinstance(body, dict) and "$defs" in body:
                comps.update(body.pop("$defs"))


def _catalogue_openapi(schema: dict, engine: Engine) -> None:
    """An action-feature service: ``/rank`` takes the action-feature body; sizes of this service
    (actions a request, 1 to n_slots slots); the rank routes link to the reward and the activation of their event."""
    from .schemas import FeatureRankRequest

    rank_op = schema["paths"]["/rank"]["post"]
    body = FeatureRankRequest.model_json_schema(ref_template="#/components/schemas/{model}")
    schema["components"]["schemas"].update(body.pop("$defs", {}))
    rank_op["requestBody"]["content"]["application/json"]["schema"] = body
    rank_op.setdefault("responses", {}).setdefault("200", {})["links"] = {
        "Reward": {"operationId": "reward", "requestBody": {"event_id": "$response.body#/event_id", "reward": 1}},
        "Activate": {"operationId": "activate", "parameters": {"path.event_id": "$response.body#/event_id"}}}
    comps = schema["components"]["schemas"]
    k = engine.n_slots
    for name in ("FeatureRankRequest", "MultislotRankRequest", "PzRankRequest", "PzMultiSlotRankRequest"):
        for model in (comps.get(name), body if name == "FeatureRankRequest" else None):
            if model and "actions" in model.get("properties", {}):
                model["properties"]["actions"]["maxItems"] = engine.cfg.max_actions
            if model and "slots" in model.get("properties", {}):
                model["properties"]["slots"].update(minItems=1, maxItems=k)
    for item in schema["paths"].values():
        op = item.get("post", {})
        s = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        for key, n in (("actions", engine.cfg.max_actions), ("slots", k)):
            if key in s.get("properties", {}):
                s["properties"][key]["maxItems"] = n


def _openapi_for(app: FastAPI, engine: Engine):
    """The app's OpenAPI schema with this service's sizes: a dense context holds exactly n_features
    numbers, a sparse one at most n_features entries keyed by index, actions are labels 0..K-1."""
    def openapi():
        if app.openapi_schema is None:
            schema = FastAPI.openapi(app)
            _hoist_defs(schema)
            if engine.catalogue:
                _catalogue_openapi(schema, engine)
                app.openapi_schema = schema
                return schema
            d, K, m = engine.n_features, engine.n_classes, engine.m
            body = schema["paths"]["/rank"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            props = body["properties"]
            for alt in props["context"]["anyOf"]:
                if alt.get("type") == "array":
                    alt.update(minItems=d, maxItems=d)
                else:
                    alt.update(maxProperties=d, propertyNames={"pattern": f"^[0-9]{{1,{len(str(d - 1))}}}$"})
            label = {"type": "integer", "minimum": 0, "maximum": K - 1}
            for alt in props["allowed_actions"]["anyOf"]:
                if alt.get("type") == "array":
                    alt["items"] = label
            for alt in props["default_action"]["anyOf"]:
                if alt.get("type") == "integer":
                    alt.update(label)
                elif alt.get("type") == "array":
                    alt.update(items=label, minItems=m, maxItems=m, uniqueItems=True)
            app.openapi_schema = schema
        return app.openapi_schema

    return openapi


def _telemetry() -> dict | None:
    """FastAPI's native OpenTelemetry: on (its defaults) where a tracer, meter or logger provider is
    configured when the app is built (``opentelemetry-instrument``, or providers set before ``serve``),
    off otherwise. FastAPI asks for the global providers on every request to decide, which cost about a
    tenth of a rank+reward pair's CPU for a service that exports nothing."""
    try:
        from fastapi.telemetry._asgi import NativeTelemetry
    except ImportError:  # a FastAPI without native telemetry
        return None
    if os.getenv("FASTAPI_OTEL_AUTO_CONFIGURE", "").lower() == "true":  # providers configured at startup
        return None
    probe = NativeTelemetry({"tracer_provider": None, "meter_provider": None, "logger_provider": None,
                             "tracing": True, "metrics": True, "logs": True})
    return None if probe.enabled() else {"tracing": False, "metrics": False, "logs": False}


class ServiceApp(FastAPI):
    """The service's app. Its HTTP requests meet `Limits` first, and the hot routes are answered there
    (`DirectRoutes`), past the layers Starlette and FastAPI wrap each request in (their error, body-limit and
    telemetry middleware); `Limits` hands every other request to the whole app (`through`)."""

    limits: Limits | None = None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.limits is not None:
            scope["app"] = self
            return await self.limits(scope, receive, send)
        await super().__call__(scope, receive, send)

    async def through(self, scope, receive, send) -> None:
        await super().__call__(scope, receive, send)


def create_app(cfg: ServiceConfig, engine: Engine | None = None) -> FastAPI:
    """The ASGI app of a service (opens or creates its database and rebuilds the model)."""
    if engine is None:
        from .catalogue import open_engine

        engine = open_engine(cfg)

    @asynccontextmanager
    async def lifespan(app):
        engine.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            engine.stop()

    telemetry = _telemetry()
    app = ServiceApp(title="noisyfeedback decision service", version="1", lifespan=lifespan, description=__doc__,
                     telemetry=telemetry)
    app.state.engine = engine
    app.state.metrics = Metrics()
    # the hot routes on the app's own router, matched first: an included router re-resolves its routes
    # on every request (FastAPI's included routers are views), which cost a tenth of a pair's CPU
    app.router.routes[:0] = rank.hot.routes
    app.include_router(rank.router)
    app.include_router(admin.router)
    if engine.catalogue:
        from .routers import features, personalizer

        app.router.routes[len(rank.hot.routes):len(rank.hot.routes)] = features.hot.routes
        app.include_router(features.router)
        for router, documented in personalizer.routers():
            app.include_router(router, include_in_schema=documented)
    app.openapi = _openapi_for(app, engine)
    _add_error_handlers(app)
    # with FastAPI's telemetry on (no settings given: providers configured), every request is traced by the app
    app.limits = Limits(app.through, cfg=cfg, metrics=app.state.metrics,
                        direct=DirectRoutes(app) if telemetry is not None else None)
    return app
