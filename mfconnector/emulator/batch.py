"""JSON batching (``POST /$batch``).

Up to 20 requests in ``{"requests": [{"id", "method", "url", "headers"?, "body"?}]}``,
each answered as if sent alone (with the batch's token), in ``{"responses": [{"id",
"status", "headers", "body"}]}``. More than 20, a duplicate or missing id, or a malformed
entry answers 400 for the whole batch. ``dependsOn`` is accepted; requests run in the
order given, which satisfies any dependency.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call, error_answer
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.render import GRAPH
from mfconnector.emulator.state import EmulatorState

__all__ = ["MAX_BATCH_REQUESTS", "Route", "run_batch"]

MAX_BATCH_REQUESTS = 20
"""Graph's limit of requests in one JSON batch."""

Route = Callable[[str, str, dict[str, str], bytes], Answer]
"""(method, URL, headers, body) to an answer, raising ``GraphHttpError`` for an error."""


def run_batch(emulator: EmulatorState, call: Call, route: Route) -> Answer:
    """Each request through ``route`` (the dispatcher's own), answered as if sent alone."""
    body = call.json_body()
    requests = body.get("requests")
    if not isinstance(requests, list) or not requests:
        raise GraphHttpError(400, "BadRequest", "The batch needs a non-empty 'requests' array.")
    if len(requests) > MAX_BATCH_REQUESTS:
        raise GraphHttpError(
            400,
            "BadRequest",
            f"The number of requests in the batch exceeds the limit of {MAX_BATCH_REQUESTS}.",
        )
    seen: set[str] = set()
    for entry in requests:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), str)
            or not isinstance(entry.get("method"), str)
            or not isinstance(entry.get("url"), str)
        ):
            raise GraphHttpError(
                400, "BadRequest", "Each batch request needs string id, method and url."
            )
        if entry["id"] in seen:
            raise GraphHttpError(400, "BadRequest", f"Duplicate request id '{entry['id'][:40]}'.")
        seen.add(entry["id"])
    responses = []
    for entry in requests:
        headers = {k.lower(): str(v) for k, v in (entry.get("headers") or {}).items()}
        headers["authorization"] = call.headers.get("authorization", "")
        url = entry["url"] if entry["url"].startswith("/") else "/" + entry["url"]
        raw = entry.get("body")
        data = json.dumps(raw).encode() if raw is not None else b""
        request_id = ids.guid(f"batch:{emulator.requests}:{entry['id']}")
        try:
            answer = route(entry["method"].upper(), GRAPH + url, headers, data)
        except GraphHttpError as error:
            answer = error_answer(error, request_id, headers.get("client-request-id"))
        response: dict[str, Any] = {"id": entry["id"], "status": answer.status}
        out_headers = dict(answer.headers)
        if answer.json is not None or answer.json_text is not None:
            out_headers.setdefault("Content-Type", "application/json")
            response["body"] = answer.json_value()
        elif answer.content:
            response["body"] = base64.b64encode(answer.content).decode("ascii")
        response["headers"] = out_headers
        responses.append(response)
    return Answer(200, json={"responses": responses})
