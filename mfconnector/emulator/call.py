"""What a route sees of one request (``Call``) and what it gives back (``Answer``).

A module of its own, below every route and below the dispatcher (``core``), so the routes
and the dispatcher need not import each other.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.render import GRAPH
from mfconnector.emulator.seed.facts import DEMO_NOW

__all__ = ["Answer", "Call", "Prefer", "answer", "decode_query", "error_answer"]

_PREFER_PART = re.compile(r'\s*([A-Za-z.\-]+)\s*(?:=\s*("[^"]*"|[^,\s]*))?\s*')


@dataclass(frozen=True)
class Prefer:
    """What the ``Prefer`` header asked for (several values, comma-separated)."""

    immutable_ids: bool = False
    text_body: bool = False
    time_zone: str | None = None
    max_page_size: int | None = None

    @classmethod
    def parse(cls, value: str) -> Prefer:
        """The header's value (repeated headers already joined with commas)."""
        return _parsed_prefer(value)

    @classmethod
    def _parse(cls, value: str) -> Prefer:
        found: dict[str, str] = {}
        for part in value.split(","):
            match = _PREFER_PART.fullmatch(part)
            if match:
                found[match.group(1).lower()] = (match.group(2) or "").strip('"')
        page = found.get("odata.maxpagesize", "")
        return cls(
            immutable_ids=found.get("idtype", "").lower() == "immutableid",
            text_body=found.get("outlook.body-content-type", "").lower() == "text",
            time_zone=found.get("outlook.timezone") or None,
            max_page_size=int(page) if page.isdigit() and int(page) > 0 else None,
        )


@functools.lru_cache(maxsize=64)
def _parsed_prefer(value: str) -> Prefer:
    """A client sends the same few Prefer headers on every request: each is parsed once
    (``Prefer`` is frozen, so one value serves every request that sent that header)."""
    return Prefer._parse(value)


@dataclass
class Call:
    """One request as the routes see it."""

    method: str
    path: str
    """Percent-decoded, after the Graph root: ``/me/messages/AAkALg...``."""
    raw_path: str
    """As sent (still encoded), for building nextLinks on the same address."""
    query: dict[str, str]
    headers: dict[str, str]
    """Lower-case names."""
    body: bytes
    prefer: Prefer
    now: datetime

    def json_body(self) -> dict[str, Any]:
        if not self.body.strip():
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise GraphHttpError(
                400,
                "BadRequest",
                "Unable to read JSON request payload. Please ensure "
                "Content-Type header is set and payload is of valid JSON format.",
            ) from None
        if not isinstance(value, dict):
            raise GraphHttpError(400, "BadRequest", "The request body must be a JSON object.")
        return value

    def next_link(self, **changes: str) -> str:
        query = dict(self.query)
        query.update(changes)
        encoded = "&".join(f"{_quoted(key)}={_quoted(value)}" for key, value in query.items())
        return f"{GRAPH}{self.raw_path}?{encoded}"


@dataclass
class Answer:
    status: int
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    json_text: str | None = None
    """The JSON answer already encoded (compact, non-ASCII kept), instead of ``json``: a
    message list is joined from each message's cached text, not encoded again per call."""

    def json_value(self) -> Any:
        """The JSON answer as values, however it was given (None for bytes or nothing)."""
        return self.json if self.json_text is None else json.loads(self.json_text)


def answer(status: int, body: Any = None, **headers: str) -> Answer:
    """A JSON answer (or an empty one, for 202 and 204)."""
    return Answer(status, json=body, headers=dict(headers))


@functools.lru_cache(maxsize=256)
def _quoted(text: str) -> str:
    """A query key or value percent-encoded; a client repeats the same few on every page."""
    return quote(text, safe="")


@functools.lru_cache(maxsize=256)
def _unquoted(text: str) -> str:
    return unquote(text)


def decode_query(raw: str) -> dict[str, str]:
    """``%XX`` decoding only: a ``+`` stays a ``+``, as Graph reads query strings."""
    out: dict[str, str] = {}
    for part in raw.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        out[_unquoted(key)] = _unquoted(value)
    return out


def error_answer(error: GraphHttpError, request_id: str, client_request_id: str | None) -> Answer:
    inner: dict[str, Any] = {
        "date": DEMO_NOW.strftime("%Y-%m-%dT%H:%M:%S"),
        "request-id": request_id,
        "client-request-id": client_request_id or request_id,
    }
    if error.inner_code:
        inner["code"] = error.inner_code
    body = {"error": {"code": error.code, "message": error.message, "innerError": inner}}
    return Answer(error.status, json=body, headers=dict(error.headers))
