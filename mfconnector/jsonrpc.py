"""JSON-RPC 2.0 messages: parse one line into a typed message, encode one reply.

Pure code. Each line is decoded as strict UTF-8 on its own and parsed as strict JSON
(no NaN or Infinity). Anything that is not a request, a notification or a client
response becomes an ``Invalid`` carrying the exact error reply to send.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from mfconnector.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from mfconnector.jsoncost import OverLimit, values_over_limit
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.strictjson import RepeatedKeys, StrictJsonError, Strictness, parse_strict

__all__ = [
    "ClientResponse",
    "Invalid",
    "Notification",
    "Request",
    "RequestId",
    "encode",
    "encode_json",
    "encode_with_result",
    "error_response",
    "parse_line",
    "result_response",
]

RequestId = str | int


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class ClientResponse:
    """A ``result``/``error`` sent to us: the answer to an ``elicitation/create`` we sent,
    or (for any other id) something to ignore."""

    id: Any
    result: Any = None
    error: Any = None


@dataclass(frozen=True, slots=True)
class Invalid:
    """A line that gets an error reply instead of being dispatched."""

    reply: dict[str, Any]


Message = Request | Notification | ClientResponse | Invalid


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def parse_line(
    line: bytes,
    max_values: int | None = None,
    integer_digits: int = DEFAULT_LIMITS.request_integer_digits,
) -> Message | None:
    """Classify one input line; ``None`` for a blank line (skipped, never answered).

    With ``max_values``, a line holding more JSON values than that is refused before it
    is parsed (``-32600``, with its id when the id can be recovered; silence for a
    notification or a client response, which are never answered).
    """
    if max_values is not None:
        over = values_over_limit(line, max_values)
        if over is not None:
            return _too_costly(over, max_values)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Invalid(
            error_response(
                None, PARSE_ERROR, f"Parse error: line is not valid UTF-8 (byte {exc.start})"
            )
        )
    if text.endswith("\r"):
        text = text[:-1]
    if not text.strip():
        return None
    if text.startswith("\ufeff"):
        bom = "Parse error: the line starts with a byte order mark (EF BB BF); send JSON only"
        return Invalid(error_response(None, PARSE_ERROR, bom))
    try:
        parsed = parse_strict(text, _request_strictness(integer_digits))
    except StrictJsonError as exc:
        where = f" at column {exc.column}" if exc.column is not None else ""
        return Invalid(error_response(None, PARSE_ERROR, f"Parse error: {exc}{where}"))
    message = classify(parsed.value)
    if parsed.problem is None:
        return message
    if isinstance(message, (Notification, ClientResponse)):
        return None
    top = parsed.value
    id_unknown = isinstance(top, RepeatedKeys) and top.repeated == "id"
    request_id = message.id if isinstance(message, Request) and not id_unknown else None
    code = INVALID_REQUEST if parsed.problem.kind == "repeated_key" else INVALID_PARAMS
    problem = parsed.problem.message
    if not isinstance(message, Request):
        code = INVALID_REQUEST  # the id itself is the number refused
    kind = "Invalid params" if code == INVALID_PARAMS else "Invalid Request"
    return Invalid(error_response(request_id, code, f"{kind}: {problem}"))


@cache
def _request_strictness(integer_digits: int) -> Strictness:
    """Problems are noted, not raised, so the line still parses and the reply keeps the
    request's id; a repeated key is flagged (a repeated ``id`` makes the id unknown)."""
    return Strictness(numbers="note", integer_digits=integer_digits, repeated_keys="flag")


def _too_costly(over: OverLimit, limit: int) -> Invalid | None:
    request_id: RequestId | None = None
    if over.top is not None:
        message = classify(over.top)
        if isinstance(message, (Notification, ClientResponse)):
            return None
        if isinstance(message, Request):
            request_id = message.id
    text = (
        f"Invalid Request: the line holds {over.values:,} JSON values (keys included), more "
        f"than the {limit:,}-value limit; it was not parsed"
    )
    return Invalid(error_response(request_id, INVALID_REQUEST, text))


def classify(obj: Any) -> Message:
    """Sort a parsed JSON value into request, notification, client response or invalid."""
    if isinstance(obj, list):
        return Invalid(
            error_response(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
        )
    if not isinstance(obj, dict):
        return Invalid(
            error_response(
                None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
            )
        )
    has_id = "id" in obj
    raw_id = obj.get("id")
    usable_id = raw_id if has_id and _valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return Invalid(
            error_response(usable_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
        )
    method = obj.get("method")
    if method is None and ("result" in obj or "error" in obj):
        return ClientResponse(raw_id, obj.get("result"), obj.get("error"))
    if has_id and not _valid_id(raw_id):
        return Invalid(
            error_response(
                None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'
            )
        )
    if not isinstance(method, str):
        return Invalid(
            error_response(usable_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        )
    params = obj.get("params")
    if has_id:
        assert usable_id is not None
        return Request(usable_id, method, params)
    return Notification(method, params)


def encode_json(value: Any) -> bytes:
    """Compact, ASCII-only JSON for one value (a result that can be encoded once and reused)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode(
        "ascii"
    )


def encode_with_result(request_id: RequestId, result_json: bytes) -> bytes:
    """The line ``encode(result_response(request_id, result))`` would give, from encoded JSON."""
    return (
        b'{"jsonrpc":"2.0","id":' + encode_json(request_id) + b',"result":' + result_json + b"}\n"
    )


def encode(message: dict[str, Any]) -> bytes:
    """One compact, ASCII-only JSON line: safe in UTF-8 and C locales alike."""
    return (
        json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode(
            "ascii"
        )
        + b"\n"
    )
