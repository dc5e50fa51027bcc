"""The request and response bodies of the HTTP API, and the parsing of a raw JSON body into one.

Bodies are validated straight from bytes (pydantic, strict: no coercion, no unknown fields, no NaN);
an invalid body raises ``RequestValidationError`` naming the field in ``loc``.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal, Union

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["RankRequest", "RankResponse", "RewardRequest", "RewardResponse", "ModeRequest", "parse_body",
           "FeatureRankRequest", "MultislotRankRequest", "SlotRewardRequest", "PzRankRequest", "PzMultiSlotRankRequest",
           "PzRewardRequest", "PzMultiSlotRewardRequest", "EventId"]

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


#: a reward: a click (0 or 1) or a graded reward in [-1, 1] (Personalizer's range); what a service takes
#: depends on its learner (the engine refuses the rest, naming the field)
Reward = Annotated[float, Field(ge=-1.0, le=1.0)]


class RewardRequest(BaseModel):
    """The reward of a ranked event: 0/1, or in [-1, 1] for an action-feature service without flip rates
    (graded rewards); the numeric API's learners take [0, 1] (0/1 for the bandit learners)."""

    model_config = _STRICT
    event_id: Annotated[str, Field(min_length=1, max_length=128)]
    reward: Reward
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


# ------------------------------------------------------------------ action features
#: a client's event id: ASCII letters, digits and . _ : - (the service's own ids contain '~')
EventId = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:\-]+$")]
#: an event to reward: a client's id or one the service gave ('ev~12')
RankedEventId = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:~\-]+$")]
#: an action or slot id: 1 to 256 printable ASCII characters
ItemId = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[\x20-\x7E]+$")]
_Name = Annotated[str, Field(max_length=256)]
_Leaf = Union[Annotated[str, Field(max_length=1024)], float, bool, None]
_Leaves = Annotated[list[_Leaf], Field(max_length=1024)]
_Inner = Union[_Leaf, _Leaves, Annotated[dict[_Name, Union[_Leaf, _Leaves]], Field(max_length=1024)]]
#: one namespaced dict of features (VW's and Personalizer's JSON): {namespace: {name: value}}, or
#: {name: value} in the default namespace; values are finite numbers, strings (name+value is the feature),
#: booleans, null (dropped) or lists of them
Features = Annotated[dict[_Name, Union[_Leaf, _Leaves, Annotated[dict[_Name, _Inner], Field(max_length=1024)]]],
                     Field(max_length=256)]
FeatureList = Annotated[list[Features], Field(max_length=64)]


class Action(BaseModel):
    model_config = _STRICT
    id: ItemId
    features: FeatureList = []


class Slot(BaseModel):
    model_config = _STRICT
    id: ItemId
    features: FeatureList = []
    excluded_actions: Annotated[list[ItemId], Field(max_length=10_000)] | None = None
    baseline_action: ItemId | None = None


class FeatureRankRequest(BaseModel):
    """Actions described by features to rank for a context (an action-feature service)."""

    model_config = _STRICT
    context_features: FeatureList = []
    actions: Annotated[list[Action], Field(min_length=1, max_length=10_000)]
    excluded_actions: Annotated[list[ItemId], Field(max_length=10_000)] | None = None
    event_id: EventId | None = None
    defer_activation: bool = False


class MultislotRankRequest(FeatureRankRequest):
    """One action per slot (drawn without replacement, the first slot first), 1 to the service's n_slots
    slots; a slot's ``excluded_actions`` may not fill it (the request's are excluded from every slot)."""

    slots: Annotated[list[Slot], Field(min_length=1, max_length=50)]


class SlotReward(BaseModel):
    model_config = _STRICT
    slot_id: ItemId
    reward: Reward


class SlotRewardRequest(BaseModel):
    """The rewards of a multi-slot event, per slot (a slot left out: 0)."""

    model_config = _STRICT
    event_id: RankedEventId
    rewards: Annotated[list[SlotReward], Field(min_length=1, max_length=50)]
    timestamp: float | None = None


# ------------------------------------------------------------------ Personalizer v1.0 shapes
class PzAction(BaseModel):
    model_config = _STRICT
    id: ItemId
    features: FeatureList = []


class PzRankRequest(BaseModel):
    """Personalizer's RankRequest."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=False)
    contextFeatures: FeatureList = []  # noqa: N815  (the wire names of the Personalizer API)
    actions: Annotated[list[PzAction], Field(min_length=1, max_length=10_000)]
    excludedActions: Annotated[list[ItemId], Field(max_length=10_000)] | None = None  # noqa: N815
    eventId: EventId | None = None  # noqa: N815
    deferActivation: bool | None = None  # noqa: N815


class PzSlot(BaseModel):
    model_config = _STRICT
    id: ItemId
    features: FeatureList = []
    excludedActions: Annotated[list[ItemId], Field(max_length=10_000)] | None = None  # noqa: N815
    baselineAction: ItemId | None = None  # noqa: N815


class PzMultiSlotRankRequest(PzRankRequest):
    """Personalizer's MultiSlotRankRequest."""

    slots: Annotated[list[PzSlot], Field(min_length=1, max_length=50)]


class PzRewardRequest(BaseModel):
    """Personalizer's RewardRequest: a value in [-1, 1]."""

    model_config = _STRICT
    value: Reward


class PzSlotReward(BaseModel):
    model_config = _STRICT
    slotId: ItemId  # noqa: N815
    value: Reward


class PzMultiSlotRewardRequest(BaseModel):
    """Personalizer's MultiSlotRewardRequest."""

    model_config = _STRICT
    reward: Annotated[list[PzSlotReward], Field(min_length=1, max_length=50)]
