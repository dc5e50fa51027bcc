"""The routes of an ``admin`` key: ``POST /snapshot``, ``POST /mode``, ``GET /policy/evaluate`` (run in a
worker thread, off the event loop)."""

from __future__ import annotations

import copy
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from ..dependencies import AdminKey, EngineDep
from ..errors import Invalid, Unsupported
from ..schemas import ModeRequest, parse_body
from ._common import json_response, raw_body

__all__ = ["router"]

router = APIRouter()


@router.post("/snapshot", summary="Save the model now (admin)", operation_id="snapshot")
async def snapshot(engine: EngineDep, role: AdminKey):
    return json_response(await engine.snapshot())


@router.post("/mode", summary="Switch between apprentice and online mode (admin)", operation_id="mode",
             openapi_extra=raw_body(ModeRequest))
async def mode(request: Request, engine: EngineDep, role: AdminKey):
    body = parse_body(ModeRequest, await request.body())
    await engine.set_mode(body.mode)
    return json_response({"mode": engine.mode})


@router.get("/policy/evaluate", summary="Off-policy estimate of a candidate on the logged events (admin)",
            operation_id="evaluate")
async def evaluate(engine: EngineDep, role: AdminKey,
                   candidate: Annotated[str, Query(min_length=1, max_length=64)],
                   param: Annotated[list[str], Query(max_length=32)] = [],  # noqa: B006
                   estimator: Annotated[Literal["ips", "snips", "dm", "dr"], Query()] = "snips",
                   alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05):
    from ..evaluate import Logged, evaluate_candidate

    if engine.catalogue:
        raise Invalid("candidate", "off-policy evaluation works on the numeric API's log; this service ranks actions "
                                "described by features (export its log with `noisyfeedback export-log`).")

    try:
        import noisyfeedback.ope  # noqa: F401
    except ImportError:
        raise Unsupported("off-policy evaluation needs noisyfeedback.ope, which this installation "
                                "lacks.", "candidate") from None
    # what the worker thread reads: a copy of the deployed model, taken here on the event loop
    logged = Logged(storage=engine.storage, n_classes=engine.n_classes, n_features=engine.n_features, m=engine.m,
                    rho0=engine.rho0, rho1=engine.rho1,
                    deployed=copy.deepcopy(engine.learner) if candidate == "deployed" else None)
    return json_response(await run_in_threadpool(evaluate_candidate, logged, candidate, param,
                                                 estimator=estimator, alpha=alpha))
