r"""The routes of a ``rank`` key (an ``admin`` key may call them too): ``POST /rank``, ``POST /reward``,
``GET /apprentice``, ``GET /metrics``; and ``GET /health``, which needs no key.

``/rank`` and ``/reward`` read their body as bytes and validate it in one step
(`parse_body`), and are `DirectRoute`\ s (their
dependencies, the engine and the key, solved by a direct call): the hot routes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from ..dependencies import EngineDep, RankKey
from ..schemas import FeatureRankRequest, RankRequest, RankResponse, RewardRequest, RewardResponse, parse_body
from ._common import json_response, raw_body
from ._direct import DirectRoute

__all__ = ["router"]

router = APIRouter()
#: the hot routes, /rank and /reward: the app puts them on its own router, first (see ``create_app``)
hot = APIRouter(route_class=DirectRoute)

REWARD_LINK = {"Reward": {"operationId": "reward", "description": "Report the reward of the ranked event.",
                          "requestBody": {"event_id": "$response.body#/event_id", "reward": 1}}}


@hot.post("/rank", response_model=RankResponse, summary="Choose an action for a context", operation_id="rank",
             openapi_extra=raw_body(RankRequest, REWARD_LINK))
async def rank(request: Request, engine: EngineDep, role: RankKey):
    if engine.catalogue:  # an action-feature service: context_features and actions (its OpenAPI says so)
        from .features import rank_args

        body = parse_body(FeatureRankRequest, await request.body())
        return json_response(await engine.rank_features(**rank_args(body)))
    body = parse_body(RankRequest, await request.body())
    return json_response(await engine.rank(body.context, body.event_id, body.allowed_actions, body.default_action))


@hot.post("/reward", response_model=RewardResponse, summary="Report the reward of a ranked event",
             operation_id="reward", openapi_extra=raw_body(RewardRequest))
async def reward(request: Request, engine: EngineDep, role: RankKey):
    body = parse_body(RewardRequest, await request.body())
    return json_response(await engine.reward(body.event_id, body.reward, body.timestamp))




@router.get("/health", summary="Liveness and the model's version (no key)", operation_id="health")
async def health(engine: EngineDep):
    healthy = await engine.check_health()
    body = {"status": "ok" if healthy else "log unavailable",
            "model_version": engine.model_version, "events": int(engine.stats["events"]),
            "rewards": int(engine.stats["rewards"]), "mode": engine.mode, "learner": engine.conf["class"]}
    if engine.replica is not None:  # a replica also says which one it is
        body["replica"] = engine.replica
    return json_response(body, 200 if healthy else 503)


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus text format", operation_id="metrics")
async def metrics(request: Request, engine: EngineDep, role: RankKey):
    return PlainTextResponse(request.app.state.metrics.render(engine), media_type="text/plain; version=0.0.4")


@router.get("/apprentice", summary="Apprentice mode: agreement with the application and the rewards of both",
            operation_id="apprentice")
async def apprentice(engine: EngineDep, role: RankKey):
    return json_response(engine.apprentice_report())
