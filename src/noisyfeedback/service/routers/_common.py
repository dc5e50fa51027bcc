"""What both routers use: the JSON response and the OpenAPI description of a raw JSON body."""

from __future__ import annotations

import orjson
from fastapi.responses import Response

__all__ = ["json_response", "raw_body"]


def json_response(obj, status: int = 200) -> Response:
    return Response(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY), status_code=status,
                    media_type="application/json")


def raw_body(model, links: dict | None = None) -> dict:
    """``openapi_extra`` of a route that reads its body itself (validated from bytes by
    `parse_body`): the body's schema and the response links."""
    extra = {"requestBody": {"required": True, "content": {"application/json": {
        "schema": model.model_json_schema(ref_template="#/components/schemas/{model}")}}}}
    if links:
        extra["responses"] = {"200": {"links": links}}
    return extra
