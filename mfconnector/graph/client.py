"""The one way this package talks HTTP to Microsoft Graph: bounded in bytes, time and count.

Every logical read (``get_json``, ``get_json_url``, ``download``):

- runs under ``trio.fail_after(graph_request_seconds)``, because httpx's read timeout is
  per chunk and a slow trickle would otherwise hold a worker for ever;
- reads at most ``graph_body_bytes`` (``body.read_capped``), error bodies included;
- takes a slot of a per-client ``CapacityLimiter(graph_concurrency)`` for each exchange;
- retries 429/503/504 after Retry-After (or 1, 2, 4 s) within a budget, else fails fast
  with "retry in N s"; refreshes the token once on a token-shaped 401; retries nothing else.

A write (``write_json``) shares the token handling (a sign-in that stalls is named as one,
and nothing was sent; a token-shaped 401/403 earns one forced refresh), the slots, the cap
and the deadline, but is never repeated after it may have left: a 429/503 is reported at
once, and a lost or late answer is an ``AmbiguousWriteError`` (the write may have happened).
A refused connection, or a deadline spent waiting for the token, means nothing was sent.

The bearer token goes only to URLs under the Graph root. ``/content`` answers a redirect to
a pre-authenticated URL: it is fetched with a separate request that carries no
Authorization and no cookies, and it never appears in an error, a log line or a result.
httpx keeps such URLs in ``next_request`` and in ``raise_for_status()`` text, so neither is
used here, and responses are never logged.

This module is the call machinery; each policy it applies lives on its own: ``url_policy``
(where the token and a redirect may go), ``retry`` (the throttling budget), ``token_refresh``
(which refusals earn one forced refresh) and ``download`` (reading a file's first bytes).

``trust_env=False``: proxy and CA settings from the environment are not applied to a
client that carries credentials. The transport comes from ``net.graph_transport`` (the
configured proxy, the operating system's trust store), unless one is passed (fixtures, tests).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import trio

from mfconnector.auth import TokenProvider
from mfconnector.errors import AuthError, GraphError, GraphTimeoutError, ToolInputError
from mfconnector.graph.body import (
    checked_cost,
    decode_utf8_strict,
    parse_json_text,
    read_capped,
    read_json,
)
from mfconnector.graph.download import (
    Download,
    download_host_error,
    parse_content_range,
    read_download,
)
from mfconnector.graph.errors import (
    AmbiguousWriteError,
    connection_error,
    graph_error_from_response,
    request_id,
)
from mfconnector.graph.retry import RETRIED, Answer, RetryBudget
from mfconnector.graph.token_refresh import WAITING_FOR_TOKEN, refresh_claims
from mfconnector.graph.url_policy import Location, checked_graph_url, checked_redirect
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT, build_url
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.net.api_client import api_http_client
from mfconnector.net.graph_transport import graph_transport
from mfconnector.net.settings import NetworkSettings, ProxySetting

__all__ = ["Download", "GraphClient", "GraphResponse"]

_log = logging.getLogger("mfconnector.graph")
T = TypeVar("T")

_KEPT_HEADERS = ("request-id", "content-type", "preference-applied")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SUCCESS = frozenset(range(200, 300))
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Failures before a request could leave: nothing reached Graph."""
_CHATTY_LIBRARIES = ("httpx", "httpcore")
"""They log full URLs at INFO and response headers (Location) at DEBUG."""


@dataclass(frozen=True, slots=True)
class GraphResponse:
    """A parsed Graph JSON answer and the few headers worth keeping."""

    body: Any
    status: int
    headers: dict[str, str]


def _kept_headers(headers: httpx.Headers) -> dict[str, str]:
    return {name: headers[name] for name in _KEPT_HEADERS if name in headers}


class GraphClient:
    """A bounded Microsoft Graph client; one per process, shared by the tools."""

    def __init__(
        self,
        *,
        token_provider: TokenProvider,
        limits: Limits = DEFAULT_LIMITS,
        root: str = DEFAULT_GRAPH_ROOT,
        transport: httpx.AsyncBaseTransport | None = None,
        network: NetworkSettings | None = None,
    ) -> None:
        for name in _CHATTY_LIBRARIES:  # never let a log level leak a pre-authenticated URL
            logging.getLogger(name).setLevel(logging.WARNING)
        self._tokens = token_provider
        self._limits = limits
        self._root = root.rstrip("/")
        self._limiter = trio.CapacityLimiter(limits.graph_concurrency)
        self._proxy: ProxySetting | None = None
        """The proxy our own transport routes through (None with a given transport)."""
        if transport is None:
            network = network or NetworkSettings()
            transport = graph_transport(network)
            self._proxy = network.proxy
        self._http = api_http_client(transport, limits)

    @property
    def limits(self) -> Limits:
        """The limits this client (and whatever reads its answers) works within."""
        return self._limits

    @property
    def root(self) -> str:
        """The Graph root every authenticated URL must sit under, without a final slash."""
        return self._root

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> GraphClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- public calls ----------------------------------------------------------------

    async def get_json(
        self,
        path: str | Sequence[str],
        *,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> GraphResponse:
        """GET a Graph JSON answer. ``path`` is pre-encoded text, or segments to encode."""
        url = self._graph_url(build_url(self._root, path, query))
        return await self._within_deadline(
            url, lambda: self._graph_call(url, headers, self._json_answer, _SUCCESS)
        )

    async def get_json_url(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> GraphResponse:
        """GET a continuation URL (a nextLink); refused unless it is under the Graph root."""
        url = self._graph_url(url)
        return await self._within_deadline(
            url, lambda: self._graph_call(url, headers, self._json_answer, _SUCCESS)
        )

    async def download(
        self,
        path: str | Sequence[str],
        *,
        query: Mapping[str, str] | None = None,
        max_bytes: int | None = None,
        first_byte: int = 0,
    ) -> Download:
        """``max_bytes`` of a file from ``first_byte``: ``path`` ends in ``/content`` or
        ``/$value``.

        Graph answers a redirect to a pre-authenticated URL (fetched without our token,
        with a Range header) or the bytes themselves. A larger file is not an error:
        the result says ``complete=False``.
        """
        if first_byte < 0:
            raise ValueError("first_byte must not be negative")
        cap = self._limits.graph_body_bytes if max_bytes is None else max_bytes
        if not 1 <= cap <= self._limits.graph_body_bytes:
            raise ToolInputError(
                f"max_bytes must be between 1 and {self._limits.graph_body_bytes:,}"
            )
        url = self._graph_url(build_url(self._root, path, query))
        return await self._within_deadline(
            url,
            lambda: self._download(
                url,
                cap,
                lambda response: read_download(response, cap, first_byte, limits=self._limits),
                first_byte,
            ),
        )

    async def download_stream(
        self,
        path: str | Sequence[str],
        read: Callable[[httpx.Response], Awaitable[T]],
        *,
        range_bytes: int,
    ) -> T:
        """Like ``download``, but the 200/206 answer goes to ``read`` (a file spooler).

        Same redirect handling (no Authorization to the download host, its URL never
        shown) and deadline; the download host is asked for ``range_bytes`` at most.
        """
        url = self._graph_url(build_url(self._root, path, None))
        return await self._within_deadline(url, lambda: self._download(url, range_bytes, read))

    async def describe_token(self) -> dict[str, Any]:
        """What the token provider says of the sign-in (account, mode, granted scopes)."""
        facts: dict[str, Any] = await self._tokens.describe()
        return facts

    async def write_json(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> GraphResponse:
        """``method path`` with a JSON body (or none), answered 2xx, or an error; sent once.

        ``AuthError`` (``signin_timeout``) when the deadline passed while waiting for the
        token: no request left. ``AmbiguousWriteError`` when one may have and no clear
        answer came back.
        """
        url = self._graph_url(build_url(self._root, path))
        content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        log_as = f"{method} {urlsplit(url).path}"
        seconds = self._limits.graph_request_seconds
        WAITING_FOR_TOKEN.set(False)
        try:
            with trio.fail_after(seconds):
                return await self._write_attempts(method, url, content, headers, log_as)
        except trio.TooSlowError:
            if WAITING_FOR_TOKEN.get():
                raise AuthError(
                    f"the sign-in service did not answer within {seconds:g} s; nothing was "
                    "sent to Microsoft Graph",
                    hint="check the network path to the sign-in service, then retry",
                    code="signin_timeout",
                ) from None
            raise AmbiguousWriteError(
                f"Microsoft Graph did not answer {log_as} within {seconds:g} s",
                hint="the change may or may not have been made: check before repeating it",
            ) from None

    # --- the machinery ---------------------------------------------------------------

    def _graph_url(self, url: str) -> str:
        return checked_graph_url(url, self._root)

    async def _within_deadline(self, url: str, call: Callable[[], Awaitable[T]]) -> T:
        seconds = self._limits.graph_request_seconds
        WAITING_FOR_TOKEN.set(False)
        try:
            with trio.fail_after(seconds):
                return await call()
        except trio.TooSlowError:
            if WAITING_FOR_TOKEN.get():
                raise AuthError(
                    f"the sign-in service did not answer within {seconds:g} s",
                    hint="check the network path to the sign-in service, then retry",
                    code="signin_timeout",
                ) from None
            raise GraphTimeoutError(
                f"Microsoft Graph did not finish answering within {seconds:g} s "
                f"(GET {urlsplit(url).path})",
                retry_safe=True,
                hint="retry later, or ask for less (fewer items, fewer fields)",
            ) from None

    async def _graph_call(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        handle: Callable[[httpx.Response], Awaitable[T]],
        ok: frozenset[int],
        budget: RetryBudget | None = None,
    ) -> T:
        """One authenticated logical call: throttling retries and one token refresh."""
        budget = budget or RetryBudget(self._limits)
        force_refresh, claims, refreshed = False, None, False
        while True:
            WAITING_FOR_TOKEN.set(True)
            token = await self._tokens.get_token(force_refresh=force_refresh, claims=claims)
            WAITING_FOR_TOKEN.set(False)
            force_refresh, claims = False, None
            request = self._http.build_request("GET", url, headers=headers)
            request.headers["Authorization"] = f"Bearer {token}"
            outcome = await self._exchange(request, handle, ok, log_as=url)
            if not isinstance(outcome, Answer):
                return outcome
            if outcome.status in RETRIED:
                await budget.pause(outcome)
                continue
            if not refreshed:
                force_refresh, claims = refresh_claims(outcome, self._limits)
                if force_refresh:
                    refreshed = True
                    _log.debug("token refused (%s): refreshing once", outcome.status)
                    continue
            raise graph_error_from_response(
                outcome.status, outcome.headers, outcome.body, limits=self._limits
            )

    async def _exchange(
        self,
        request: httpx.Request,
        handle: Callable[[httpx.Response], Awaitable[T]],
        ok: frozenset[int],
        *,
        log_as: str,
        peer: str = "Microsoft Graph",
    ) -> T | Answer:
        """Send one request and read its answer under the cap, holding a concurrency slot.
        ``log_as`` names it in the debug log: a URL (only its path is logged, and only
        split when the debug log is on) or a label.

        Library exceptions are replaced outside their ``except`` block, so not even the
        exception context keeps httpx's request (and its URL).
        """
        async with self._limiter:
            failure: GraphError | None = None
            proxy = self._proxy
            via = proxy.display if proxy and proxy.applies_to(request.url.host) else None
            try:
                response = await self._http.send(request)
            except httpx.TransportError as exc:
                failure = connection_error(exc, limits=self._limits, peer=peer, proxy=via)
            if failure is not None:
                raise failure
            try:
                if _log.isEnabledFor(logging.DEBUG):  # the header lookup costs when unused
                    _log.debug(
                        "GET %s -> %s request-id=%s",
                        urlsplit(log_as).path if "://" in log_as else log_as,
                        response.status_code,
                        request_id(response.headers) or "-",
                    )
                if response.status_code in ok:
                    return await handle(response)
                body = await self._error_body(response)
                return Answer(response.status_code, response.headers, body)
            except httpx.TransportError as exc:
                failure = connection_error(exc, limits=self._limits, peer=peer, proxy=via)
            except GraphError as err:
                err.status = err.status or response.status_code
                err.request_id = err.request_id or request_id(response.headers)
                raise
            finally:
                if not response.is_closed:  # a body read to its end was closed by its reader
                    with trio.move_on_after(self._limits.graph_close_seconds) as scope:
                        scope.shield = True
                        await response.aclose()
            raise failure

    async def _write_attempts(
        self,
        method: str,
        url: str,
        content: bytes,
        headers: Mapping[str, str] | None,
        log_as: str,
    ) -> GraphResponse:
        """Repeated only where Graph cannot have acted: one forced refresh after a
        token-shaped refusal (``refresh_claims``, as reads do)."""
        force_refresh, claims, refreshed = False, None, False
        while True:
            WAITING_FOR_TOKEN.set(True)
            token = await self._tokens.get_token(force_refresh=force_refresh, claims=claims)
            WAITING_FOR_TOKEN.set(False)
            request = self._http.build_request(method, url, headers=headers, content=content)
            request.headers["Authorization"] = f"Bearer {token}"
            if content:
                request.headers["Content-Type"] = "application/json"
            answer = await self._write_exchange(request, log_as)
            if 200 <= answer.status < 300:
                data = answer.body
                text = decode_utf8_strict(checked_cost(data, self._limits.graph_body_values))
                parsed = parse_json_text(text) if text.strip() else None
                kept = {k: answer.headers[k] for k in ("request-id",) if k in answer.headers}
                return GraphResponse(body=parsed, status=answer.status, headers=kept)
            if not refreshed:
                force_refresh, claims = refresh_claims(answer, self._limits)
                if force_refresh:
                    refreshed = True
                    _log.debug("token refused (%s) before a write: refreshing once", answer.status)
                    continue
            raise graph_error_from_response(
                answer.status, answer.headers, answer.body, limits=self._limits
            )

    async def _write_exchange(self, request: httpx.Request, log_as: str) -> Answer:
        """One write request and its whole answer (capped), holding a concurrency slot."""
        async with self._limiter:
            failure: GraphError | None = None
            try:
                response = await self._http.send(request)
            except _NOT_SENT:
                failure = GraphError(
                    f"could not reach Microsoft Graph for {log_as}; nothing was sent",
                    retry_safe=True,
                    hint="check the network, then call again",
                )
            except httpx.TransportError:
                failure = AmbiguousWriteError(
                    f"the connection broke before Microsoft Graph answered {log_as}",
                    hint="the change may or may not have been made: check before repeating it",
                )
            if failure is not None:
                raise failure
            _log.debug(
                "%s -> %s request-id=%s",
                log_as,
                response.status_code,
                request_id(response.headers) or "-",
            )
            try:
                data = await read_capped(
                    response, self._limits.graph_body_bytes, limits=self._limits
                )
            except (GraphError, httpx.TransportError):
                data = b""
                if 200 <= response.status_code < 300:
                    failure = AmbiguousWriteError(
                        f"Microsoft Graph accepted {log_as} but its answer could not be read "
                        f"(request-id {request_id(response.headers) or '-'})",
                        hint="the change was probably made: read the item again to see",
                    )
            finally:
                with trio.move_on_after(self._limits.graph_close_seconds) as scope:
                    scope.shield = True
                    await response.aclose()
            if failure is not None:
                raise failure
            return Answer(response.status_code, response.headers, data)

    async def _error_body(self, response: httpx.Response) -> bytes:
        """An error body for its code and message; too large or broken reads as empty."""
        try:
            return await read_capped(response, self._limits.graph_body_bytes, limits=self._limits)
        except (GraphError, httpx.TransportError):
            return b""

    async def _json_answer(self, response: httpx.Response) -> GraphResponse:
        body = await read_json(response, limits=self._limits)
        return GraphResponse(
            body=body, status=response.status_code, headers=_kept_headers(response.headers)
        )

    async def _download(
        self,
        url: str,
        cap: int,
        read: Callable[[httpx.Response], Awaitable[T]],
        first_byte: int = 0,
    ) -> T:
        budget = RetryBudget(self._limits)

        async def first(response: httpx.Response) -> T | Location:
            if response.status_code in _REDIRECTS:
                return checked_redirect(response, self._root)
            return await read(response)

        ok = _REDIRECTS | {200, 206}
        outcome = await self._graph_call(url, {"Accept": "*/*"}, first, ok, budget)
        if not isinstance(outcome, Location):
            return outcome
        return await self._fetch_preauthenticated(outcome, cap, budget, read, first_byte)

    async def _fetch_preauthenticated(
        self,
        location: Location,
        cap: int,
        budget: RetryBudget,
        read: Callable[[httpx.Response], Awaitable[T]],
        first_byte: int = 0,
    ) -> T:
        """GET the pre-authenticated URL: no Authorization, no cookies, a Range header."""
        wanted = f"bytes={first_byte}-{first_byte + cap - 1}"
        while True:
            request = self._http.build_request(
                "GET", location.url, headers={"Accept": "*/*", "Range": wanted}
            )
            request.headers.pop("Authorization", None)
            request.headers.pop("Cookie", None)
            outcome = await self._exchange(
                request,
                read,
                frozenset({200, 206}),
                log_as="<download host>",
                peer="the file's download host",
            )
            if not isinstance(outcome, Answer):
                return outcome
            if outcome.status in RETRIED:
                await budget.pause(outcome)
                continue
            if outcome.status == 416:
                _, total = parse_content_range(outcome.headers.get("content-range"))
                if total == 0:
                    return await read(_empty_answer())
            raise download_host_error(outcome, self._limits)


def _empty_answer() -> httpx.Response:
    """A 200 with no body, standing for an empty file the host answered 416 for."""
    return httpx.Response(200, headers={"content-length": "0"}, stream=httpx.ByteStream(b""))
