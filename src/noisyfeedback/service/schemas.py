"""The request and response bodies of the HTTP API, and the parsing of a raw JSON body into one.

Bodies are validated straight from bytes (pydantic, strict: no coercion, no unknown fields, no NaN);
an invalid body raises ``RequestValidationError`` naming the field in ``loc``.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal, Union

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["RankRequest", "RankResponse", "RewardRequest", "RewardResponse", "ModeRequest", "parse_body"]

_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class RankRequest(BaseModel):
    """A context to rank: dense (a list of the model's n_features numbers) or sparse ({index: value},
    indices in plain ASCII decimal, each at most once)."""

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


def _no_duplicates(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise RequestValidationError([{"type": "value_error", "loc": ("body", "context", k),
                                           "msg": f"key {k!r} is given twice."}])
        seen.add(k)
    return dict(pairs)


def parse_body(model: type[BaseModel], raw: bytes):
    """Validate a JSON body straight from bytes; on failure, re-parse with the standard library (which
    reads NaN/Infinity) so that the error names the field. A sparse context with a key given twice is
    refused (JSON parsers keep the last value silently)."""
    try:
        body = model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors()
    else:
        if isinstance(getattr(body, "context", None), dict):
            json.loads(raw, object_pairs_hook=_no_duplicates)
        return body
    if any(e.get("type") == "json_invalid" for e in errors):
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise RequestValidationError([{"type": "json_invalid", "loc": ("body",), "msg": str(exc)}]) from None
        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            errors = exc.errors()
    raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in errors])
