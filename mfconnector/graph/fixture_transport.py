"""The fixture transport: an httpx transport that answers from a loaded ``FixtureSet``.

Kept apart from the loader so that checking a fixture file at start-up does not import
httpx; the transport is built with the Graph client, on the first tool call.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import httpx
import trio

from mfconnector.graph.fixture_words import escape_controls, show_value
from mfconnector.graph.fixtures import (
    DRIVE_PREFIXES,
    MAIL_PREFIXES,
    SIGNIFICANT_QUERY_KEYS,
    USER_SCOPED,
    FixtureSet,
    RepeatBody,
    decode_query,
)
from mfconnector.graph.urls import is_graph_url
from mfconnector.limits import DEFAULT_LIMITS, Limits

__all__ = ["FixtureTransport"]


class _BodyStream(httpx.AsyncByteStream):
    """Streams a canned body in ``fixture_chunk_bytes`` chunks, generating ``repeat`` lazily.

    A plain iterator object rather than an async generator: a consumer that stops early
    (a capped download) leaves nothing half-run behind for the garbage collector.
    """

    def __init__(self, body: bytes | RepeatBody, chunk_bytes: int) -> None:
        self._chunk = chunk_bytes
        if isinstance(body, bytes):
            self._unit = body
            self._total = len(body)
            self._window = body
        else:
            self._unit = body.text.encode("utf-8")
            self._total = body.total_bytes
            # One window of the cycle that any chunk can be sliced from: bounded by the
            # pattern size plus one chunk, however large total_bytes is.
            self._window = self._unit * (2 + chunk_bytes // len(self._unit))
        self._cyclic = not isinstance(body, bytes)
        self._sent = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        await trio.lowlevel.checkpoint()
        if self._sent >= self._total:
            raise StopAsyncIteration
        size = min(self._chunk, self._total - self._sent)
        start = self._sent % len(self._unit) if self._cyclic else self._sent
        self._sent += size
        return self._window[start : start + size]

    async def aclose(self) -> None:
        self._sent = self._total


class FixtureTransport(httpx.AsyncBaseTransport):
    """An httpx transport answering from a :class:`FixtureSet` instead of the network."""

    def __init__(self, fixture_set: FixtureSet, *, limits: Limits = DEFAULT_LIMITS) -> None:
        self.fixture_set = fixture_set
        self._chunk_bytes = limits.fixture_chunk_bytes
        self._counter = itertools.count(1)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request_id = f"fixture-{next(self._counter)}"
        url = str(request.url)
        fixtures = self.fixture_set
        if "authorization" in request.headers and not is_graph_url(url, fixtures.graph_root):
            parts = urlsplit(url)
            return _error_response(
                request,
                400,
                "fixtureAuthorizationLeak",
                f"fixture mode: a request to {parts.scheme}://{parts.netloc.rpartition('@')[2]}"
                " carried an Authorization header; the bearer token may only go to Graph",
                request_id,
            )
        entry = fixtures.match(request.method, url)
        if entry is None:
            return _miss(request, fixtures, request_id)
        answer = entry.response
        if answer.delay_ms:
            # A slow Graph: the Graph client's deadline, a client's cancel or the shutdown
            # grace period interrupts this like any network wait.
            await trio.sleep(answer.delay_ms / 1000)
        headers = list(answer.headers)
        names = {name.lower() for name, _ in headers}
        if isinstance(answer.body, bytes) and "content-length" not in names:
            headers.append(("Content-Length", str(len(answer.body))))
        if "content-type" not in names:
            if answer.is_json:
                headers.append(("Content-Type", "application/json"))
            elif answer.is_text:
                headers.append(("Content-Type", "text/plain; charset=utf-8"))
        if "request-id" not in names:
            headers.append(("request-id", request_id))
        return httpx.Response(
            answer.status,
            headers=headers,
            stream=_BodyStream(answer.body, self._chunk_bytes),
            request=request,
        )


def _miss(request: httpx.Request, fixtures: FixtureSet, request_id: str) -> httpx.Response:
    url = str(request.url)
    rel = fixtures.graph_path(url)
    query = decode_query(urlsplit(url).query)
    if rel is None:
        # Never echo a download URL: its path or query may be the pre-authenticated part.
        parts = urlsplit(url)
        shown = f"{parts.scheme}://{parts.hostname or ''}/..."
        code = "ResourceNotFound"
    else:
        shown = escape_controls(rel[:300])
        scoped = USER_SCOPED.match(rel)
        folded = ("/me" + scoped.group(1) if scoped else rel).casefold()
        if folded.startswith(MAIL_PREFIXES):
            code = "ErrorItemNotFound"
        elif folded.startswith(DRIVE_PREFIXES):
            code = "itemNotFound"
        else:
            code = "ResourceNotFound"
    keys = [
        f"{key}={show_value(value)}"
        for key, value in query.items()
        if key.casefold() in SIGNIFICANT_QUERY_KEYS
    ]
    detail = ", ".join(keys) if keys else "no significant query options"
    message = (
        f"fixture mode: no canned response for {request.method} {shown} ({escape_controls(detail)})"
    )
    return _error_response(request, 404, code, message, request_id)


def _error_response(
    request: httpx.Request, status: int, code: str, message: str, request_id: str
) -> httpx.Response:
    inner: dict[str, str] = {"request-id": request_id}
    client_request_id = request.headers.get("client-request-id")
    if client_request_id is not None:
        inner["client-request-id"] = client_request_id
    payload = {"error": {"code": code, "message": message, "innerError": inner}}
    body = json.dumps(payload).encode("ascii")
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        ("request-id", request_id),
    ]
    # A few hundred bytes of our own: one chunk.
    stream = _BodyStream(body, max(1, len(body)))
    return httpx.Response(status, headers=headers, stream=stream, request=request)
