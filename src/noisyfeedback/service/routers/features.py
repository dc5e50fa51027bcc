"""The routes of an action-feature service (a ``rank`` key): ``POST /rank/multislot``,
``POST /reward/multislot`` and ``POST /events/{event_id}/activate`` (``/rank`` and ``/reward`` are
`.rank`'s, which hands an action-feature body to the same engine)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from ..dependencies import EngineDep, RankKey
from ..errors import NotFound
from ..schemas import MultislotRankRequest, SlotRewardRequest, parse_body
from ._common import json_response, raw_body
from ._direct import DirectRoute

__all__ = ["router", "hot", "rank_args", "EventPath"]

router = APIRouter()
#: the multi-slot rank and reward: hot routes, which the app puts on its own router (see ``create_app``)
hot = APIRouter(route_class=DirectRoute)

#: an event id in a path: what a client may choose, or the service's own ("ev~12")
EventPath = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:~\-]+$")]


def rank_args(body, slots: bool = False) -> dict:
    """The engine's arguments from a validated native body."""
    d = body.model_dump()
    out = {"context_features": d["context_features"], "actions": d["actions"],
           "excluded": d["excluded_actions"], "event_id": d["event_id"], "defer": d["defer_activation"]}
    if slots:
        out["slots"] = d["slots"]
    return out


def need_catalogue(engine) -> None:
    if not engine.catalogue:
        raise NotFound("this service ranks a fixed set of actions for a numeric context; action "
                                "features, slots and activation need `serve --action-features`.", "path")


@hot.post("/rank/multislot", summary="Choose one action per slot (action features)", operation_id="rank_multislot",
             openapi_extra=raw_body(MultislotRankRequest))
async def rank_multislot(request: Request, engine: EngineDep, role: RankKey):
    need_catalogue(engine)
    body = parse_body(MultislotRankRequest, await request.body())
    return json_response(await engine.rank_features(**rank_args(body, slots=True)))


@hot.post("/reward/multislot", summary="Report the rewards of a multi-slot event, per slot",
             operation_id="reward_multislot", openapi_extra=raw_body(SlotRewardRequest))
async def reward_multislot(request: Request, engine: EngineDep, role: RankKey):
    need_catalogue(engine)
    body = parse_body(SlotRewardRequest, await request.body())
    return json_response(await engine.reward_slots(body.event_id, [(r.slot_id, r.reward) for r in body.rewards],
                                                   body.timestamp))


@router.post("/events/{event_id}/activate", summary="Activate a deferred event (its result was shown)",
             operation_id="activate")
async def activate(event_id: EventPath, engine: EngineDep, role: RankKey):
    need_catalogue(engine)
    return json_response(await engine.activate(event_id))
