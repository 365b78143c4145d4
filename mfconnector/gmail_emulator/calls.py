"""One API call as the routes see it, the answer they give, and the pieces they share.

Scopes are Google's OAuth scope URLs; each route names the scopes its reference page lists
under "Authorization scopes" (any one of them is enough).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mfconnector.gmail_emulator.errors import GmailError, bad_request
from mfconnector.gmail_emulator.store import Mailbox

__all__ = [
    "ALL_SCOPES",
    "COMPOSE",
    "FULL",
    "INSERT",
    "LABELS",
    "MAX_PAGE_SIZE",
    "METADATA",
    "MODIFY",
    "READONLY",
    "SEND",
    "Answer",
    "Call",
    "Route",
    "page",
]

_AUTH = "https://www.googleapis.com/auth/"
FULL = "https://mail.google.com/"
MODIFY = _AUTH + "gmail.modify"
READONLY = _AUTH + "gmail.readonly"
COMPOSE = _AUTH + "gmail.compose"
SEND = _AUTH + "gmail.send"
INSERT = _AUTH + "gmail.insert"
LABELS = _AUTH + "gmail.labels"
METADATA = _AUTH + "gmail.metadata"
ALL_SCOPES = frozenset({FULL, MODIFY, READONLY, COMPOSE, SEND, INSERT, LABELS, METADATA})

MAX_PAGE_SIZE = 500
"""``maxResults`` of the list methods: "The maximum allowed value for this field is 500"."""
DEFAULT_PAGE_SIZE = 100
"""``maxResults``: "This field defaults to 100"."""


@dataclass
class Answer:
    status: int
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None


@dataclass
class Call:
    method: str
    path: str
    """Decoded, after ``/gmail/v1/users/{userId}``: ``/messages/18c...``."""
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    scopes: frozenset[str]
    mailbox: Mailbox
    """The emulator's mailbox, the one every route reads and changes."""

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def args(self, name: str) -> list[str]:
        """A repeated parameter (``labelIds=A&labelIds=B``); ``labelIds[]`` too."""
        return self.query.get(name, []) + self.query.get(f"{name}[]", [])

    def flag(self, name: str) -> bool:
        value = (self.arg(name) or "false").lower()
        if value not in ("true", "false", "1", "0"):
            raise bad_request(f"Invalid value for boolean parameter '{name}': '{value[:40]}'")
        return value in ("true", "1")

    @property
    def metadata_only(self) -> bool:
        """The token's only reading scope is ``gmail.metadata`` (no ``q``, no bodies)."""
        return METADATA in self.scopes and not self.scopes & {FULL, MODIFY, READONLY}

    def json_body(self) -> dict[str, Any]:
        if not self.body.strip():
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise bad_request("Invalid JSON payload received.", "parseError") from None
        if not isinstance(value, dict):
            raise bad_request("Invalid JSON payload received. Expected an object.", "parseError")
        return value

    def page_size(self) -> int:
        text = self.arg("maxResults")
        if text is None:
            return DEFAULT_PAGE_SIZE
        if not text.isdigit() or int(text) < 1:
            raise bad_request(f"Invalid value for 'maxResults': '{text[:40]}'")
        return min(int(text), MAX_PAGE_SIZE)


Handler = Callable[[Call, re.Match[str]], Answer]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    scopes: tuple[str, ...]
    handler: Handler


def route(method: str, pattern: str, scopes: Sequence[str]) -> Callable[[Handler], Route]:
    def wrap(handler: Handler) -> Route:
        return Route(method, re.compile(pattern), tuple(scopes), handler)

    return wrap


def _fingerprint(call: Call) -> int:
    keys = sorted((k, tuple(v)) for k, v in call.query.items() if k not in ("pageToken",))
    keys = [(k, v) for k, v in keys if k != "maxResults"]
    return zlib.crc32(repr((call.path, keys)).encode()) % 10**10


def page(call: Call, items: list[Any]) -> tuple[list[Any], str | None]:
    """One page of ``items`` and the token of the next (digits, like Gmail's).

    The token carries the offset and a fingerprint of the query: a token sent with a
    different query is refused instead of silently paging another result.
    """
    size = call.page_size()
    token = call.arg("pageToken")
    start = 0
    if token:
        if not re.fullmatch(r"\d{20}", token) or int(token[:10]) != _fingerprint(call):
            raise bad_request("Invalid pageToken")
        start = int(token[10:])
    chunk = items[start : start + size]
    following = start + size
    if following >= len(items):
        return chunk, None
    return chunk, f"{_fingerprint(call):010d}{following:010d}"


def require(condition: bool, error: GmailError) -> None:
    if not condition:
        raise error
