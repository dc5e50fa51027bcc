"""The HTTP API (FastAPI, served by uvicorn): rank, reward, health, metrics, snapshot, mode, evaluate.

Roles: a ``rank`` key may call ``/rank``, ``/reward`` and ``/metrics``; an ``admin`` key may call every
route (``/snapshot``, ``/mode``, ``/policy/evaluate`` only with it). ``/health`` needs no key.
Every refused request changes nothing in the log or the model; invalid ones get 422 with the field
named in ``detail[0].loc``.
"""


import asyncio
import hashlib
import json
import time
from contextlib import asynccontextmanager
from typing import Annotated, Literal, Union

import numpy as np
import orjson
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .engine import Engine, ServiceConfig, ServiceError
from .metrics import Metrics

__all__ = ["create_app", "RankRequest", "RewardRequest"]

_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class RankRequest(BaseModel):
    """A context to rank: dense (a list of the model's n_features numbers) or sparse ({index: value})."""

    model_config = _STRICT
    context: Union[list[float], dict[str, float]] = Field(min_length=1)
    event_id: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:\-]+$")] | None = None
    allowed_actions: Annotated[list[int], Field(max_length=100_000)] | None = None
    default_action: Union[int, list[int]] | None = None


class RankResponse(BaseModel):
    event_id: str
    action: Union[int, list[int]]
    probability: float
    distribution: list[float]
    greedy: Union[int, list[int]]
    model_version: int
    mode: str


class RewardRequest(BaseModel):
    """The reward of a ranked event: 0/1 (or in [0, 1] for learners of graded rewards)."""

    model_config = _STRICT
    event_id: Annotated[str, Field(min_length=1, max_length=128)]
    reward: Annotated[float, Field(ge=0.0, le=1.0)]
    timestamp: float | None = None


class RewardResponse(BaseModel):
    event_id: str
    status: Literal["accepted", "duplicate"]
    model_version: int


class ModeRequest(BaseModel):
    model_config = _STRICT
    mode: Literal["online", "apprentice"]


def _json(obj, status: int = 200) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json")


def _error_body(status: int, message: str, field: str | None) -> dict:
    if status == 422:
        loc = ["body", *field.split(".")] if field else ["body"]
        return {"detail": [{"type": "value_error", "loc": loc, "msg": message}]}
    return {"detail": message, "field": field}


def _error(status: int, message: str, field: str | None) -> Response:
    return _json(_error_body(status, message, field), status)


def _validation_body(exc: RequestValidationError) -> dict:
    return {"detail": [{"type": e.get("type"), "loc": list(e.get("loc", ())), "msg": e.get("msg")}
                       for e in exc.errors()]}


class _Limits:
    """Pure ASGI middleware: the body size limit (oversize -> 422 naming "body"), request metrics, and the
    hot routes (POST /rank, /reward) answered here directly, without FastAPI's routing and dependency
    machinery (the same handlers the FastAPI routes call; those routes give the OpenAPI schema)."""

    def __init__(self, app, max_body: int, metrics: Metrics, fast: dict | None = None):
        self.app, self.max_body, self.metrics, self.fast = app, max_body, metrics, fast or {}

    async def _fast(self, handler, scope, receive, send) -> int:
        chunks, more = [], True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                return 499
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False)
        auth = None
        for k, v in scope["headers"]:
            if k == b"authorization":
                auth = v.decode("latin-1")
                break
        try:
            status, payload = 200, await handler(b"".join(chunks), auth)
        except ServiceError as exc:
            status, payload = exc.status, _error_body(exc.status, exc.message, exc.field)
        except RequestValidationError as exc:
            status, payload = 422, _validation_body(exc)
        body = orjson.dumps(payload, option=orjson.OPT_SERIALIZE_NUMPY)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return status

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        status_box = [500]

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
            await send(message)

        too_big = False
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    too_big = int(v) > self.max_body
                except ValueError:
                    too_big = True
                break
        else:
            if scope.get("method") in ("POST", "PUT", "PATCH"):  # chunked: read up to the limit
                chunks, total, more = [], 0, True
                while more:
                    msg = await receive()
                    body = msg.get("body", b"")
                    total += len(body)
                    chunks.append(body)
                    more = msg.get("more_body", False)
                    if total > self.max_body:
                        too_big = True
                        break
                if not too_big:
                    data = b"".join(chunks)
                    done = [False]

                    async def receive():  # noqa: F811
                        if not done[0]:
                            done[0] = True
                            return {"type": "http.request", "body": data, "more_body": False}
                        return {"type": "http.disconnect"}
        handler = self.fast.get(scope["path"]) if scope["method"] == "POST" else None
        if too_big:
            resp = _error(422, f"request body larger than {self.max_body} bytes.", None)
            await resp(scope, receive, send_wrapper)
        elif handler is not None:
            status_box[0] = await self._fast(handler, scope, receive, send)
        else:
            await self.app(scope, receive, send_wrapper)
        self.metrics.observe(scope.get("path", ""), status_box[0], time.perf_counter() - t0)


def create_app(cfg: ServiceConfig, engine: Engine | None = None) -> FastAPI:
    """The ASGI app of a service (opens or creates its database and rebuilds the model)."""
    engine = engine if engine is not None else Engine(cfg)
    metrics = Metrics()
    bearer = HTTPBearer(auto_error=False, description="An API key from `noisyfeedback keys create`.")
    roles: dict[str, str] = {}

    @asynccontextmanager
    async def lifespan(app):
        engine.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            engine.stop()

    app = FastAPI(title="noisyfeedback decision service", version="1", lifespan=lifespan,
                  description=__doc__)
    app.state.engine = engine

    def role_of(creds: HTTPAuthorizationCredentials | None) -> str:
        if creds is None or creds.scheme.lower() != "bearer":
            raise ServiceError(401, "an API key is needed: 'Authorization: Bearer KEY'.", "Authorization")
        h = hashlib.sha256(creds.credentials.encode()).hexdigest()
        role = roles.get(h)
        if role is None:
            role = engine.storage.key_role(h)
            if role is None:
                raise ServiceError(401, "unknown API key.", "Authorization")
            roles[h] = role
        return role

    async def any_key(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        return role_of(creds)

    async def admin_key(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        if role_of(creds) != "admin":
            raise ServiceError(403, "this route needs an admin key.", "Authorization")
        return "admin"

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        return _error(exc.status, exc.message, exc.field)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        return _json(_validation_body(exc), 422)

    def parse(model, raw: bytes):
        """Validate a JSON body straight from bytes; on failure, re-parse with the standard library (which
        reads NaN/Infinity) so that the error names the field."""
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                raise RequestValidationError([{"type": "json_invalid", "loc": ("body",), "msg": str(exc)}]) from None
            try:
                return model.model_validate(obj)
            except ValidationError as exc:
                errors = exc.errors()
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in errors])

    def fast_role(auth: str | None) -> str:
        if auth is None:
            return role_of(None)
        scheme, _, cred = auth.partition(" ")
        return role_of(HTTPAuthorizationCredentials(scheme=scheme, credentials=cred.strip()))

    def body_of(model) -> dict:
        return {"openapi_extra": {"requestBody": {"required": True, "content": {"application/json": {
            "schema": model.model_json_schema()}}}, "security": [{"HTTPBearer": []}]}}

    @app.post("/rank", response_model=RankResponse, summary="Choose an action for a context", **body_of(RankRequest))
    async def rank(request: Request):
        return _json(await rank_raw(await request.body(), request.headers.get("authorization")))

    async def rank_raw(raw: bytes, auth: str | None) -> dict:
        fast_role(auth)
        body = parse(RankRequest, raw)
        return await engine.rank(body.context, body.event_id, body.allowed_actions, body.default_action)

    @app.post("/reward", response_model=RewardResponse, summary="Report the reward of a ranked event",
              **body_of(RewardRequest))
    async def reward(request: Request):
        return _json(await reward_raw(await request.body(), request.headers.get("authorization")))

    async def reward_raw(raw: bytes, auth: str | None) -> dict:
        fast_role(auth)
        body = parse(RewardRequest, raw)
        return await engine.reward(body.event_id, body.reward, body.timestamp)

    @app.get("/health", summary="Liveness and the model's version")
    async def health():
        return _json({"status": "ok" if engine.healthy else "log unavailable", "model_version": engine.model_version,
                      "events": int(engine.stats["events"]), "rewards": int(engine.stats["rewards"]),
                      "mode": engine.mode, "learner": engine.conf["class"]}, 200 if engine.healthy else 503)

    @app.get("/metrics", response_class=PlainTextResponse, summary="Prometheus text format")
    async def metrics_route(role: Annotated[str, Depends(any_key)]):
        return PlainTextResponse(metrics.render(engine), media_type="text/plain; version=0.0.4")

    @app.post("/snapshot", summary="Save the model now (admin)")
    async def snapshot(role: Annotated[str, Depends(admin_key)]):
        return _json(await engine.snapshot())

    @app.get("/apprentice", summary="Apprentice mode: agreement with the application and the rewards")
    async def apprentice(role: Annotated[str, Depends(any_key)]):
        return _json(engine.apprentice_report())

    @app.post("/mode", summary="Switch between apprentice and online mode (admin)")
    async def mode(body: ModeRequest, role: Annotated[str, Depends(admin_key)]):
        engine.set_mode(body.mode)
        return _json({"mode": engine.mode})

    @app.get("/policy/evaluate", summary="Off-policy estimate of a candidate on the logged events (admin)")
    async def evaluate(role: Annotated[str, Depends(admin_key)],
                       candidate: Annotated[str, Query(min_length=1, max_length=64)],
                       param: Annotated[list[str], Query()] = [],  # noqa: B006
                       estimator: Annotated[Literal["ips", "snips", "dm", "dr"], Query()] = "snips",
                       alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05):
        from .evaluate import evaluate_candidate

        try:
            import noisyfeedback.ope  # noqa: F401
        except ImportError:
            raise ServiceError(501, "off-policy evaluation needs noisyfeedback.ope, which this installation "
                                    "lacks.", "candidate") from None
        return _json(evaluate_candidate(engine, candidate, param, estimator=estimator, alpha=alpha))

    app.add_middleware(_Limits, max_body=cfg.max_body, metrics=metrics,
                       fast={"/rank": rank_raw, "/reward": reward_raw})
    return app
