"""Azure Personalizer's REST routes and JSON shapes, so that an application written for Personalizer (either
generation of its SDK) can point its client at an action-feature service.

**Versions.** ``/personalizer/v1.0/...`` (the legacy SDK, ``azure-cognitiveservices-personalizer``), the
multi-slot previews ``/personalizer/v1.1-preview.1``, ``.2`` and ``.3``, and ``/personalizer/...?api-version=``
with the versions the current SDK (``azure-ai-personalizer``) sends: ``2022-09-01-preview``. Another or no
``api-version`` answers 400 naming ``api-version``.

**Routes.** ``POST rank`` (201, ``{"ranking": [{"id", "probability"}], "eventId", "rewardActionId"}``),
``POST events/{eventId}/reward`` (``{"value": v}``, v in [-1, 1], 204; the reward of a deferred event that is
not activated is acknowledged and dropped, as Personalizer ignores it), ``POST events/{eventId}/activate``
(204), ``POST multislot/rank`` (201, ``{"slots": [{"id", "rewardActionId"}], "eventId"}``; as many slots as the
request names, up to the service's ``n_slots``, each with its own ``excludedActions``),
``POST multislot/events/{eventId}/reward`` (``{"reward": [{"slotId", "value"}]}``, 204) and
``POST multislot/events/{eventId}/activate`` (204). The key goes in ``Ocp-Apim-Subscription-Key`` (or as
Bearer). Every other route under a prefix (configurations, evaluations, logs, model, ...) answers 501.

**Errors** are Personalizer's body, ``{"error": {"code", "message", "target"}}`` (the app's handlers, for every
path under ``/personalizer/``): ``target`` names the field in Personalizer's words (``slots[0].baselineAction``)
and the message starts with it, so that both SDKs' exceptions show it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from ..dependencies import EngineDep, PersonalizerKey
from ..errors import Invalid, NotFound, Unsupported
from ..schemas import PzMultiSlotRankRequest, PzMultiSlotRewardRequest, PzRankRequest, PzRewardRequest, parse_body
from ._common import json_response, raw_body

__all__ = ["make_router", "PREFIX", "PREVIEW_PREFIXES", "API_PREFIX", "API_VERSIONS", "ROOT", "routers"]

ROOT = "/personalizer"
#: the legacy SDK's version (in the schema)
PREFIX = ROOT + "/v1.0"
#: the multi-slot previews (the same bodies and routes)
PREVIEW_PREFIXES = tuple(f"{ROOT}/v1.1-preview.{i}" for i in (1, 2, 3))
#: the current SDK's routes: the version is a query parameter, ``api-version``
API_PREFIX = ROOT
API_VERSIONS = ("2022-09-01-preview",)

EventIdPath = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:~\-]+$")]

NOT_SUPPORTED = ("this route of the Personalizer API is not supported by noisyfeedback (501): the service is "
                 "configured by `noisyfeedback serve` options and its log read with `noisyfeedback export-log`; "
                 "supported are rank, multislot/rank, events/{eventId}/reward and /activate (see the Deploy "
                 "guide, 'Personalizer').")


def _args(body, slots: bool) -> dict:
    d = body.model_dump()
    out = {"context_features": d["contextFeatures"], "actions": d["actions"], "excluded": d["excludedActions"],
           "event_id": d["eventId"], "defer": bool(d["deferActivation"])}
    if slots:
        out["slots"] = [{"id": s["id"], "features": s["features"], "baseline_action": s["baselineAction"],
                         "excluded_actions": s["excludedActions"]} for s in d["slots"]]
    return out


def _need(engine) -> None:
    if not engine.catalogue:
        raise NotFound("the Personalizer routes need an action-feature service (`serve --action-features`).", "path")


async def api_version(request: Request) -> str:
    """The ``api-version`` of a request to the current SDK's routes: one of `API_VERSIONS` (400
    otherwise). Read from the query string itself: the routes take no other query parameter."""
    v = request.query_params.get("api-version")
    if v not in API_VERSIONS:
        got = "none" if v is None else repr(v[:64])
        raise Invalid("api-version", f"api-version {got} is not supported; this service serves "
                                     f"{', '.join(API_VERSIONS)} (and the versioned paths {PREFIX}, "
                                     f"{', '.join(PREVIEW_PREFIXES)}).")
    return v


def make_router(prefix: str, by_query: bool = False) -> APIRouter:
    """The routes under ``prefix`` (full paths, so that each route's template, the label of its metrics,
    names its prefix); ``by_query``: the version is the ``api-version`` query parameter."""
    router = APIRouter(dependencies=[Depends(api_version)] if by_query else [])

    @router.post(prefix + "/rank", summary="Personalizer: rank actions", operation_id="pz_rank", status_code=201,
                 openapi_extra=raw_body(PzRankRequest))
    async def rank(request: Request, engine: EngineDep, role: PersonalizerKey):
        _need(engine)
        body = parse_body(PzRankRequest, await request.body())
        a = await engine.rank_features(**_args(body, slots=False))
        return json_response({"ranking": a["ranking"], "eventId": a["event_id"], "rewardActionId": a["action"]},
                             201)

    @router.post(prefix + "/events/{eventId}/reward", summary="Personalizer: the reward of an event",
                 operation_id="pz_reward", status_code=204, openapi_extra=raw_body(PzRewardRequest))
    async def reward(eventId: EventIdPath, request: Request, engine: EngineDep, role: PersonalizerKey):  # noqa: N803
        _need(engine)
        body = parse_body(PzRewardRequest, await request.body())
        await engine.reward(eventId, body.value, ignore_inactive=True, field="value")
        return Response(status_code=204)

    @router.post(prefix + "/events/{eventId}/activate", summary="Personalizer: activate a deferred event",
                 operation_id="pz_activate", status_code=204)
    async def activate(eventId: EventIdPath, engine: EngineDep, role: PersonalizerKey):  # noqa: N803
        _need(engine)
        await engine.activate(eventId)
        return Response(status_code=204)

    @router.post(prefix + "/multislot/rank", summary="Personalizer: rank actions for several slots",
                 operation_id="pz_multislot_rank", status_code=201, openapi_extra=raw_body(PzMultiSlotRankRequest))
    async def multislot_rank(request: Request, engine: EngineDep, role: PersonalizerKey):
        _need(engine)
        body = parse_body(PzMultiSlotRankRequest, await request.body())
        a = await engine.rank_features(**_args(body, slots=True))
        return json_response({"slots": [{"id": s["id"], "rewardActionId": s["action"]} for s in a["slots"]],
                              "eventId": a["event_id"]}, 201)

    @router.post(prefix + "/multislot/events/{eventId}/reward",
                 summary="Personalizer: the rewards of a multi-slot event", operation_id="pz_multislot_reward",
                 status_code=204, openapi_extra=raw_body(PzMultiSlotRewardRequest))
    async def multislot_reward(eventId: EventIdPath, request: Request, engine: EngineDep,  # noqa: N803
                               role: PersonalizerKey):
        _need(engine)
        body = parse_body(PzMultiSlotRewardRequest, await request.body())
        await engine.reward_slots(eventId, [(r.slotId, r.value) for r in body.reward], field="reward",
                                  ignore_inactive=True)
        return Response(status_code=204)

    @router.post(prefix + "/multislot/events/{eventId}/activate",
                 summary="Personalizer: activate a deferred multi-slot event", operation_id="pz_multislot_activate",
                 status_code=204)
    async def multislot_activate(eventId: EventIdPath, engine: EngineDep, role: PersonalizerKey):  # noqa: N803
        _need(engine)
        await engine.activate(eventId)
        return Response(status_code=204)

    return router


def not_supported_router() -> APIRouter:
    """Every other path under ``/personalizer/`` (without an ``api-version`` check: 501 whatever the version)."""
    router = APIRouter()

    @router.api_route(ROOT + "/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                      include_in_schema=False)
    async def not_supported(rest: str):
        raise Unsupported(NOT_SUPPORTED, "path")

    return router


def routers() -> list[tuple[APIRouter, bool]]:
    """(router, in the schema) of every Personalizer route, in the order the app includes them: v1.0 (in the
    schema), the previews, the current SDK's routes, then the catch-all of unsupported routes."""
    out = [(make_router(PREFIX), True)]
    out += [(make_router(p), False) for p in PREVIEW_PREFIXES]
    out += [(make_router(API_PREFIX, by_query=True), False), (not_supported_router(), False)]
    return out
