"""The MCP endpoint over Streamable HTTP: an ASGI app around the same router as stdio.

    request ─► path ─► header size ─► Origin ─► global slot ─► bearer token ─► user slot
            ─► body (capped) ─► JSON-RPC parse ─► era rules ─► McpServer ─► JSON or SSE

One POST carries one JSON-RPC message. A request gets one response: ``application/json``,
or a single-event ``text/event-stream`` for a client that takes only SSE; a tool call with
a ``progressToken`` from a client that takes SSE is streamed (``sse_call``). Notifications
and client responses get 202 with no body. There is no server-initiated stream: GET is
405. The body is parsed by ``mfconnector.jsonrpc`` under the same limits as a stdio line
(``line_bytes``, ``request_values``), and ``McpServer`` applies ``tool_arguments_bytes``
and everything else exactly as on stdio.

Eras: a request with 2026-07-28 ``_meta`` is stateless and its headers must agree with its
body (-32020 otherwise). A 2025 client sends ``initialize`` first, which creates a session
(``Mcp-Session-Id``) bound to that user; its later requests must name it, and its answers
to our ``elicitation/create`` (sent on a call's stream) arrive as POSTs of their own.

Tokens are never logged: log lines name users by ``Subject.key``, a hash.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import trio

from mfconnector.errors import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from mfconnector.hosted.bearer import BearerVerifier, InsufficientScope, Subject, TokenRejected
from mfconnector.hosted.http_checks import (
    HEADER_MISMATCH,
    accepted_media,
    accepts_sse,
    header_mismatch,
    origin_of,
)
from mfconnector.hosted.resource import (
    ResourceSettings,
    challenge,
    metadata_document,
    metadata_path,
)
from mfconnector.hosted.sessions import LegacySession, LegacySessions
from mfconnector.hosted.sse_call import sse_event, stream_tool_call
from mfconnector.hosted.tenants import Tenant, TenantPool
from mfconnector.jsonrpc import (
    ClientResponse,
    Invalid,
    Notification,
    Request,
    encode,
    encode_json,
    error_response,
    parse_line,
)
from mfconnector.limits import Limits
from mfconnector.protocol import is_modern
from mfconnector.server import McpServer, Reply, ToolCall
from mfconnector.session import Session

__all__ = ["McpHttpApp"]

log = logging.getLogger("mfconnector.hosted.http")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

Answer = tuple[int, list[tuple[str, str]], bytes, str]
"""Status, extra headers, body and media type of a response sent in one piece."""

SESSION_HEADER = "mcp-session-id"
BAD_REQUEST_CODES = {PARSE_ERROR, INVALID_REQUEST, HEADER_MISMATCH}


class HttpRefusal(Exception):
    """A request answered with an HTTP status (and a JSON-RPC error body when it has one)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int | None = INVALID_REQUEST,
        request_id: Any = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.request_id = request_id
        self.headers = headers or []

    def body(self) -> bytes:
        if self.code is None:
            return encode_json({"error": str(self)})
        return encode(error_response(self.request_id, self.code, str(self)))


class McpHttpApp:
    """ASGI 3 application: the MCP endpoint at the public URL's path and its RFC 9728
    metadata at the well-known path, nothing else."""

    def __init__(
        self,
        resource: ResourceSettings,
        verifier: BearerVerifier,
        tenants: TenantPool,
        limits: Limits,
        *,
        allowed_origins: frozenset[str] = frozenset(),
        endpoint_path: str | None = None,
    ) -> None:
        self._resource = resource
        self._verifier = verifier
        self._tenants = tenants
        self._limits = limits
        self._sessions = LegacySessions(limits)
        tenants.on_drop = self._sessions.end_all
        self._endpoint = endpoint_path or _path_of(resource.public_url)
        self._metadata_path = metadata_path(resource.public_url)
        self._metadata = encode_json(metadata_document(resource))
        public_origin = origin_of(resource.public_url)
        self._origins = set(allowed_origins) | ({public_origin} if public_origin else set())
        self._in_flight = 0
        self._per_subject: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = _headers(scope)
        started = False
        body_read = not _has_body(headers)

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = True
            await send(message)

        async def reading() -> dict[str, Any]:
            nonlocal body_read
            event = await receive()
            if event["type"] != "http.request" or not event.get("more_body", False):
                body_read = True
            return event

        try:
            answer = await self._handle(scope, headers, reading, tracked)
        except HttpRefusal as refusal:
            answer = refusal.status, refusal.headers, refusal.body(), "application/json"
        except Exception:
            if started:
                raise  # a stream already under way: hypercorn closes the connection
            log.exception("unexpected failure serving %s %s", scope["method"], scope["path"][:100])
            failure = HttpRefusal(500, "Internal error", code=INTERNAL_ERROR)
            answer = failure.status, [], failure.body(), "application/json"
        if answer is not None:  # None: a stream that has been answered already
            status, extra, body, media = answer
            if not body_read:
                # Refused before its body was read (a 401, a 429): hypercorn then closes the
                # connection, and a client that kept it for its retry would lose that request
                # without an answer. "close" tells it to open a new one (RFC 9112, 9.6).
                extra = [*extra, ("connection", "close")]
            await _respond(send, status, extra, body, media)

    # --- routing -----------------------------------------------------------------------

    async def _handle(
        self, scope: Scope, headers: dict[str, str], receive: Receive, send: Send
    ) -> Answer | None:
        path, method = scope["path"], scope["method"]
        if path == self._metadata_path:
            if method != "GET":
                raise HttpRefusal(405, "use GET", code=None, headers=[("allow", "GET")])
            return 200, [("cache-control", "max-age=3600")], self._metadata, "application/json"
        if path != self._endpoint:
            raise HttpRefusal(404, "not found: the MCP endpoint is " + self._endpoint, code=None)
        size = sum(len(k) + len(v) + 4 for k, v in scope["headers"])
        if size > self._limits.http_header_bytes:
            raise HttpRefusal(
                431, f"the request headers exceed {self._limits.http_header_bytes:,} bytes"
            )
        origin = headers.get("origin")
        if origin is not None and origin_of(origin) not in self._origins:
            raise HttpRefusal(403, "Forbidden: the Origin header names an origin not allowed here")
        if method == "GET":
            raise HttpRefusal(
                405,
                "this server opens no server-initiated stream: send requests with POST",
                headers=[("allow", "POST, DELETE")],
            )
        if method not in ("POST", "DELETE"):
            raise HttpRefusal(405, f"method {method[:20]} is not served here")
        deadline = trio.current_time() + self._limits.http_request_seconds
        with self._slot():
            subject = await self._authenticate(headers)
            with self._subject_slot(subject):
                if method == "DELETE":
                    return self._delete(headers, subject)
                async with self._tenants.use(subject) as tenant:
                    return await self._post(headers, receive, send, subject, tenant, deadline)

    @contextmanager
    def _slot(self) -> Iterator[None]:
        if self._in_flight >= self._limits.http_requests:
            raise HttpRefusal(
                503,
                f"busy: {self._in_flight} requests are being served, the most this server "
                "takes at once; retry shortly",
                headers=[("retry-after", str(self._limits.http_retry_after_seconds))],
            )
        self._in_flight += 1
        try:
            yield
        finally:
            self._in_flight -= 1

    @contextmanager
    def _subject_slot(self, subject: Subject) -> Iterator[None]:
        key = subject.key
        if self._per_subject[key] >= self._limits.http_requests_per_subject:
            raise HttpRefusal(
                429,
                f"too many requests at once: {self._per_subject[key]} of yours are being "
                "served, the most one user may have; retry when one has been answered",
                headers=[("retry-after", str(self._limits.http_retry_after_seconds))],
            )
        self._per_subject[key] += 1
        try:
            yield
        finally:
            self._per_subject[key] -= 1
            if not self._per_subject[key]:
                del self._per_subject[key]

    async def _authenticate(self, headers: dict[str, str]) -> Subject:
        authorization = headers.get("authorization")
        try:
            return await self._verifier.verify(authorization)
        except InsufficientScope as exc:
            value = challenge(
                self._resource,
                error=exc.error,
                description=str(exc),
                scope=exc.scope,
            )
            raise HttpRefusal(
                403, str(exc), code=None, headers=[("www-authenticate", value)]
            ) from None
        except TokenRejected as exc:
            if authorization is None:
                value = challenge(self._resource, scope=self._resource.scope)
            else:
                value = challenge(self._resource, error=exc.error, description=str(exc))
            log.info("bearer token refused: %s", exc)
            raise HttpRefusal(
                401, str(exc), code=None, headers=[("www-authenticate", value)]
            ) from None

    def _delete(self, headers: dict[str, str], subject: Subject) -> Answer:
        session_id = headers.get(SESSION_HEADER)
        if session_id is None:
            raise HttpRefusal(400, "DELETE needs the Mcp-Session-Id of the session to end")
        if not self._sessions.end(session_id, subject.key):
            raise HttpRefusal(404, "no such session (it ended, expired or is not yours)")
        return 204, [], b"", "application/json"

    # --- POST --------------------------------------------------------------------------

    async def _post(
        self,
        headers: dict[str, str],
        receive: Receive,
        send: Send,
        subject: Subject,
        tenant: Tenant,
        deadline: float,
    ) -> Answer | None:
        """One message in, one answer out, all of it by ``deadline``."""
        media = accepted_media(headers.get("accept"))
        if media is None:
            raise HttpRefusal(
                406, "the Accept header must allow application/json or text/event-stream"
            )
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise HttpRefusal(415, "the body must be one JSON-RPC message (application/json)")
        seconds = self._limits.http_request_seconds
        with trio.move_on_at(deadline) as reading:
            body = await self._read_body(headers, receive)
        if reading.cancelled_caught:
            raise HttpRefusal(408, f"the request body did not arrive within {seconds:g} s")
        message = parse_line(body, self._limits.request_values, self._limits.request_integer_digits)
        if message is None:
            raise HttpRefusal(400, "Invalid Request: the body is empty")
        if isinstance(message, Invalid):
            error = message.reply["error"]
            raise HttpRefusal(400, error["message"], code=error["code"], request_id=None)
        if isinstance(message, (Notification, ClientResponse)):
            session_id = headers.get(SESSION_HEADER)
            session = None if session_id is None else self._sessions.get(session_id, subject.key)
            if session_id is not None and session is None:
                raise HttpRefusal(404, "no such session (it ended, expired or is not yours)")
            if isinstance(message, ClientResponse) and session is not None:
                session.asks.deliver(message.id, message.result, message.error)
            return 202, [], b"", media
        server, legacy = self._router(headers, message, subject, tenant)
        extra: list[tuple[str, str]] = []
        routed = server.answer_now(message)
        reply: Reply | None = routed if isinstance(routed, Reply) else None
        asks = legacy.asks if legacy is not None and routed_can_ask(routed) else None
        if (
            isinstance(routed, ToolCall)
            and (routed.progress_token is not None or asks is not None)
            and accepts_sse(headers.get("accept"))
        ):
            await stream_tool_call(
                server,
                routed,
                receive=receive,
                send=send,
                limits=self._limits,
                deadline=deadline,
                headers=[],
                asks=asks,
            )
            return None
        if isinstance(routed, ToolCall):
            with trio.move_on_at(deadline):
                reply = await server.call_tool(routed)
            if reply is None:
                text = f"Internal error: the tool call did not finish within {seconds:g} s"
                reply = Reply(error_response(message.id, INTERNAL_ERROR, text))
        assert reply is not None
        result = (reply.response or {}).get("result")
        if message.method == "initialize" and isinstance(result, dict):
            session_id = self._sessions.create(subject.key, server, result["protocolVersion"])
            extra = [("mcp-session-id", session_id)]
        lines = Session(server, self._limits).encode_reply(message.id, message.method, reply)
        return self._encode(lines, message, media, extra)

    def _router(
        self, headers: dict[str, str], request: Request, subject: Subject, tenant: Tenant
    ) -> tuple[McpServer, LegacySession | None]:
        """Which router serves this request: the user's stateless one, a new session's, or
        the named session's (then also that session)."""
        params = request.params if isinstance(request.params, dict) else None
        if params is not None and is_modern(params):
            problem = header_mismatch(headers, request.method, params)
            if problem is not None:
                raise HttpRefusal(
                    400, f"Header mismatch: {problem}", code=HEADER_MISMATCH, request_id=request.id
                )
            return tenant.server, None
        session_id = headers.get(SESSION_HEADER)
        if request.method == "initialize":
            if session_id is not None:
                raise HttpRefusal(
                    400,
                    "Invalid Request: initialize starts a new session; send it without "
                    "Mcp-Session-Id",
                    request_id=request.id,
                )
            return tenant.new_server(), None
        if session_id is None:
            raise HttpRefusal(
                400,
                "Invalid Request: a 2025 request needs the Mcp-Session-Id that initialize "
                "returned (or send 2026-07-28 _meta and no session)",
                request_id=request.id,
            )
        session = self._sessions.get(session_id, subject.key)
        if session is None:
            raise HttpRefusal(
                404,
                "Session not found: it ended, expired or is not yours; send initialize again",
                request_id=request.id,
            )
        version = headers.get("mcp-protocol-version")
        if version is not None and version != session.version:
            raise HttpRefusal(
                400,
                f"Bad Request: MCP-Protocol-Version {version[:40]!r} is not this session's "
                f"version ({session.version})",
                request_id=request.id,
            )
        return session.server, session

    def _encode(
        self, lines: list[bytes], request: Request, media: str, extra: list[tuple[str, str]]
    ) -> Answer:
        if not lines:
            raise HttpRefusal(500, "Internal error: no reply", code=INTERNAL_ERROR)
        status = 200
        try:
            last = json.loads(lines[-1])
        except ValueError:
            last = {}
        error = last.get("error") if isinstance(last, dict) else None
        if isinstance(error, dict):
            code = error.get("code")
            if code in BAD_REQUEST_CODES:
                status = 400
            elif code == METHOD_NOT_FOUND and is_modern(request.params):
                status = 404
        if media == "text/event-stream" or len(lines) > 1:
            if media != "text/event-stream":
                lines = lines[-1:]  # notifications need a stream the client did not accept
            else:
                return status, extra, b"".join(sse_event(line) for line in lines), media
        return status, extra, lines[-1], media

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        """The whole body, at most ``line_bytes`` (a stdio line's limit, newline included).

        A longer body is refused, but up to ``http_drain_bytes`` more of it are read and
        discarded first: a client still sending cannot read the 413 from a closed connection.
        """
        limit = self._limits.line_bytes
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            if int(declared) - limit <= self._limits.http_drain_bytes:
                await self._drain(receive, int(declared))
            raise _too_large(int(declared), limit)
        body = bytearray()
        while True:
            event = await receive()
            if event["type"] == "http.disconnect":
                raise HttpRefusal(400, "the client closed the request before its body ended")
            body += event.get("body", b"")
            more = bool(event.get("more_body", False))
            if len(body) > limit:
                if more:
                    await self._drain(receive, self._limits.http_drain_bytes - (len(body) - limit))
                raise _too_large(len(body), limit)
            if not more:
                return bytes(body)

    async def _drain(self, receive: Receive, budget: int) -> None:
        """Read and drop the rest of a refused body, at most ``budget`` more bytes."""
        while budget > 0:
            event = await receive()
            if event["type"] != "http.request":
                return
            budget -= len(event.get("body", b""))
            if not event.get("more_body", False):
                return


def _has_body(headers: dict[str, str]) -> bool:
    """Whether the request declares a body (a length above zero, or chunks)."""
    length = headers.get("content-length", "0").strip()
    return "transfer-encoding" in headers or length not in ("", "0")


def routed_can_ask(routed: Reply | ToolCall) -> bool:
    """A 2025-era tool call whose client declared elicitation at ``initialize``."""
    return isinstance(routed, ToolCall) and not routed.era.modern and routed.can_elicit


def _too_large(size: int, limit: int) -> HttpRefusal:
    return HttpRefusal(
        413,
        f"Invalid Request: body of {size:,} bytes or more is longer than the {limit:,}-byte "
        "limit; it was not read",
    )


def _path_of(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path or "/"


def _headers(scope: Scope) -> dict[str, str]:
    """Header names in lower case; a repeated header keeps its first value."""
    found: dict[str, str] = {}
    for name, value in scope["headers"]:
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found


async def _respond(
    send: Send, status: int, extra: list[tuple[str, str]], body: bytes, media: str
) -> None:
    headers = [(b"cache-control", b"no-store")] if media == "text/event-stream" else []
    if body:
        headers.append((b"content-type", media.encode()))
    headers.append((b"content-length", str(len(body)).encode()))
    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
