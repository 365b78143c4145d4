"""The one way this package talks HTTP to Microsoft Graph: bounded in bytes, time and count.

Every logical call (``get_json``, ``get_json_url``, ``download``):

- runs under ``trio.fail_after(graph_request_seconds)``, because httpx's read timeout is
  per chunk and a slow trickle would otherwise hold a worker for ever;
- reads at most ``graph_body_bytes`` (``body.read_capped``), error bodies included;
- takes a slot of a per-client ``CapacityLimiter(graph_concurrency)`` for each exchange;
- retries 429/503/504 after Retry-After (or 1, 2, 4 s) within a budget, else fails fast
  with "retry in N s"; refreshes the token once on a token-shaped 401; retries nothing else.

The bearer token goes only to URLs under the Graph root. ``/content`` answers a redirect to
a pre-authenticated URL: it is fetched with a separate request that carries no
Authorization and no cookies, and it never appears in an error, a log line or a result.
httpx keeps such URLs in ``next_request`` and in ``raise_for_status()`` text, so neither is
used here, and responses are never logged.

``trust_env=False``: proxy and CA settings from the environment are not applied to a
client that carries credentials; pass a ``transport`` to route differently.
"""

from __future__ import annotations

import contextvars
import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import trio

from mfconnector import __version__
from mfconnector.auth import TokenProvider
from mfconnector.errors import AuthError, GraphError, GraphTimeoutError, ToolInputError
from mfconnector.graph.body import (
    decode_utf8_strict,
    parse_json_text,
    read_capped,
    read_prefix,
)
from mfconnector.graph.errors import (
    bearer_challenge,
    clean_text,
    connection_error,
    decode_claims,
    graph_error_from_response,
    header,
    parse_retry_after,
    request_id,
)
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT, build_url, is_graph_url
from mfconnector.limits import DEFAULT_LIMITS, Limits

__all__ = ["Download", "GraphClient", "GraphResponse"]

_log = logging.getLogger("mfconnector.graph")
_WAITING_FOR_TOKEN: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mfconnector_waiting_for_token", default=False
)
"""Set while a call waits on the token provider, so a deadline there is named a sign-in
timeout, not a slow Graph (each trio task has its own copy)."""

T = TypeVar("T")

_KEPT_HEADERS = ("request-id", "content-type", "preference-applied")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_RETRIED = frozenset({429, 503, 504})
_SUCCESS = frozenset(range(200, 300))
_CONTENT_RANGE_RE = re.compile(r"^\s*bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)\s*$", re.IGNORECASE)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f]")
"""Whitespace and controls: urlsplit silently drops some that httpx would refuse."""
_CHATTY_LIBRARIES = ("httpx", "httpcore")
"""They log full URLs at INFO and response headers (Location) at DEBUG."""


@dataclass(frozen=True, slots=True)
class GraphResponse:
    """A parsed Graph JSON answer and the few headers worth keeping."""

    body: Any
    status: int
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Download:
    """The first ``max_bytes`` of a file. ``complete`` is False when more was left unread."""

    data: bytes
    content_type: str | None
    complete: bool
    total_size: int | None

    def __repr__(self) -> str:
        return (
            f"Download(<{len(self.data):,} bytes>, content_type={self.content_type!r}, "
            f"complete={self.complete}, total_size={self.total_size})"
        )


@dataclass(frozen=True, slots=True)
class _Answer:
    """A non-success answer, its body already read under the cap (or empty)."""

    status: int
    headers: httpx.Headers
    body: bytes


class _Location:
    """A pre-authenticated download URL: usable, never printable."""

    __slots__ = ("url",)

    def __init__(self, url: httpx.URL) -> None:
        self.url = url

    def __repr__(self) -> str:
        return "<download location>"


class _RetryBudget:
    """Throttling retries of one logical call: count, single wait, total wait, deadline."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._retries = 0
        self._waited = 0.0

    async def pause(self, answer: _Answer) -> None:
        """Sleep before the next attempt, or raise the mapped error when over budget."""
        limits = self._limits
        wait = parse_retry_after(header(answer.headers, "retry-after"))
        if wait is None:
            wait = float(2**self._retries)
        over = (
            self._retries >= limits.graph_retries
            or wait > limits.graph_retry_after_max_seconds
            or self._waited + wait > limits.graph_retry_total_seconds
            or trio.current_time() + wait >= trio.current_effective_deadline()
        )
        if over:
            raise graph_error_from_response(
                answer.status, answer.headers, answer.body, retry_after_seconds=wait
            )
        self._retries += 1
        self._waited += wait
        _log.debug("throttled (%s): retry %d in %.3f s", answer.status, self._retries, wait)
        await trio.sleep(wait)


def _refresh_claims(answer: _Answer) -> tuple[bool, str | None]:
    """Whether a 401/403 is about the token (so one forced refresh may help), and claims.

    Token-shaped: a claims challenge, ``invalid_token``, code InvalidAuthenticationToken,
    or a 401 with no JSON code at all. MailboxNotEnabledForRESTAPI never is.
    """
    if answer.status not in (401, 403):
        return False, None
    challenge = bearer_challenge(answer.headers)
    if challenge.get("error") == "insufficient_claims":
        return True, decode_claims(challenge.get("claims"))
    if answer.status == 403:
        return False, None
    if challenge.get("error") == "invalid_token":
        return True, None
    code = graph_error_from_response(answer.status, answer.headers, answer.body).code
    return code is None or code.lower() == "invalidauthenticationtoken", None


def _valid_host(host: str) -> bool:
    """A DNS name or an IP address: httpx's lenient join lets ``%5bbad`` through."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(_HOSTNAME_RE.match(host))
    return True


def _kept_headers(headers: httpx.Headers) -> dict[str, str]:
    return {name: headers[name] for name in _KEPT_HEADERS if name in headers}


def _parse_content_range(value: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) from ``bytes 0-99/1234``; None where unknown."""
    match = _CONTENT_RANGE_RE.match(value or "")
    if not match:
        return None, None
    first = int(match.group(1)) if match.group(1) is not None else None
    total = int(match.group(3)) if match.group(3) != "*" else None
    return first, total


def _download_host_error(answer: _Answer) -> GraphError:
    """An error from the download host: status only, never its URL or body text."""
    if answer.status in _RETRIED:
        return graph_error_from_response(answer.status, answer.headers, b"")
    try:
        phrase = HTTPStatus(answer.status).phrase
    except ValueError:
        phrase = "unexpected status"
    expired = answer.status in (401, 403, 404, 410)
    return GraphError(
        f"the file's download host answered {answer.status} {phrase}",
        status=answer.status,
        retry_safe=expired or answer.status >= 500,
        hint=(
            "the download link expired or was withdrawn: ask for the download again"
            if expired
            else "retry later"
        ),
    )


class GraphClient:
    """A bounded Microsoft Graph client; one per process, shared by the tools."""

    def __init__(
        self,
        *,
        token_provider: TokenProvider,
        limits: Limits = DEFAULT_LIMITS,
        root: str = DEFAULT_GRAPH_ROOT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        for name in _CHATTY_LIBRARIES:  # never let a log level leak a pre-authenticated URL
            logging.getLogger(name).setLevel(logging.WARNING)
        self._tokens = token_provider
        self._limits = limits
        self._root = root.rstrip("/")
        self._limiter = trio.CapacityLimiter(limits.graph_concurrency)
        no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        self._http = httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            cookies=no_cookies,  # a jar that refuses every cookie: nothing is ever sent back
            timeout=httpx.Timeout(
                connect=limits.graph_connect_timeout_seconds,
                read=limits.graph_read_timeout_seconds,
                write=limits.graph_read_timeout_seconds,
                pool=limits.graph_connect_timeout_seconds,
            ),
            headers={
                "Accept": "application/json",
                "Accept-Encoding": "identity",
                "User-Agent": f"mfconnector/{__version__}",
            },
        )

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
    ) -> Download:
        """The first ``max_bytes`` of a file: ``path`` ends in ``/content`` or ``/$value``.

        Graph answers a redirect to a pre-authenticated URL (fetched without our token,
        with a Range header) or the bytes themselves. A larger file is not an error:
        the result says ``complete=False``.
        """
        cap = self._limits.graph_body_bytes if max_bytes is None else max_bytes
        if not 1 <= cap <= self._limits.graph_body_bytes:
            raise ToolInputError(
                f"max_bytes must be between 1 and {self._limits.graph_body_bytes:,}"
            )
        url = self._graph_url(build_url(self._root, path, query))
        return await self._within_deadline(url, lambda: self._download(url, cap))

    # --- the machinery ---------------------------------------------------------------

    def _graph_url(self, url: str) -> str:
        """``url`` if the bearer token may go there; urlsplit and httpx must agree on it."""
        if (
            not isinstance(url, str)
            or _UNSAFE_URL_CHARS.search(url)
            or not is_graph_url(url, self._root)
        ):
            raise ToolInputError(
                "refused: that link does not point into Microsoft Graph "
                f"({urlsplit(self._root).netloc}); nothing was sent. Pass a `cursor` "
                "or id from a previous result unchanged",
            )
        return url

    async def _within_deadline(self, url: str, call: Callable[[], Awaitable[T]]) -> T:
        seconds = self._limits.graph_request_seconds
        _WAITING_FOR_TOKEN.set(False)
        try:
            with trio.fail_after(seconds):
                return await call()
        except trio.TooSlowError:
            if _WAITING_FOR_TOKEN.get():
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
        budget: _RetryBudget | None = None,
    ) -> T:
        """One authenticated logical call: throttling retries and one token refresh."""
        budget = budget or _RetryBudget(self._limits)
        force_refresh, claims, refreshed = False, None, False
        while True:
            _WAITING_FOR_TOKEN.set(True)
            token = await self._tokens.get_token(force_refresh=force_refresh, claims=claims)
            _WAITING_FOR_TOKEN.set(False)
            force_refresh, claims = False, None
            request = self._http.build_request("GET", url, headers=headers)
            request.headers["Authorization"] = f"Bearer {token}"
            outcome = await self._exchange(request, handle, ok, log_as=urlsplit(url).path)
            if not isinstance(outcome, _Answer):
                return outcome
            if outcome.status in _RETRIED:
                await budget.pause(outcome)
                continue
            if not refreshed:
                force_refresh, claims = _refresh_claims(outcome)
                if force_refresh:
                    refreshed = True
                    _log.debug("token refused (%s): refreshing once", outcome.status)
                    continue
            raise graph_error_from_response(outcome.status, outcome.headers, outcome.body)

    async def _exchange(
        self,
        request: httpx.Request,
        handle: Callable[[httpx.Response], Awaitable[T]],
        ok: frozenset[int],
        *,
        log_as: str,
        peer: str = "Microsoft Graph",
    ) -> T | _Answer:
        """Send one request and read its answer under the cap, holding a concurrency slot.

        Library exceptions are replaced outside their ``except`` block, so not even the
        exception context keeps httpx's request (and its URL).
        """
        async with self._limiter:
            failure: GraphError | None = None
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                failure = connection_error(exc, peer=peer)
            if failure is not None:
                raise failure
            try:
                _log.debug(
                    "GET %s -> %s request-id=%s",
                    log_as,
                    response.status_code,
                    request_id(response.headers) or "-",
                )
                if response.status_code in ok:
                    return await handle(response)
                body = await self._error_body(response)
                return _Answer(response.status_code, response.headers, body)
            except httpx.TransportError as exc:
                failure = connection_error(exc, peer=peer)
            except GraphError as err:
                err.status = err.status or response.status_code
                err.request_id = err.request_id or request_id(response.headers)
                raise
            finally:
                with trio.move_on_after(self._limits.graph_close_seconds) as scope:
                    scope.shield = True
                    await response.aclose()
            raise failure

    async def _error_body(self, response: httpx.Response) -> bytes:
        """An error body for its code and message; too large or broken reads as empty."""
        try:
            return await read_capped(response, self._limits.graph_body_bytes)
        except (GraphError, httpx.TransportError):
            return b""

    async def _json_answer(self, response: httpx.Response) -> GraphResponse:
        # The bytes die as soon as they are decoded: parsing then holds text + objects only.
        text = decode_utf8_strict(await read_capped(response, self._limits.graph_body_bytes))
        body = parse_json_text(text) if text else None
        del text
        return GraphResponse(
            body=body, status=response.status_code, headers=_kept_headers(response.headers)
        )

    async def _download(self, url: str, cap: int) -> Download:
        budget = _RetryBudget(self._limits)

        async def first(response: httpx.Response) -> Download | _Location:
            if response.status_code in _REDIRECTS:
                return self._location(response)
            return await _read_download(response, cap)

        ok = _REDIRECTS | {200, 206}
        outcome = await self._graph_call(url, {"Accept": "*/*"}, first, ok, budget)
        if isinstance(outcome, Download):
            return outcome
        return await self._fetch_preauthenticated(outcome, cap, budget)

    def _location(self, response: httpx.Response) -> _Location:
        """Validate a redirect target: absolute http(s) with a host; https unless on loopback."""
        raw = response.headers.get("location", "")
        try:
            target = response.request.url.join(raw.strip()) if raw.strip() else None
        except (httpx.InvalidURL, ValueError):
            target = None
        allowed = {"https", urlsplit(self._root).scheme}
        if (
            target is None
            or target.scheme not in allowed
            or not _valid_host(target.host)
            or target.userinfo
        ):
            raise GraphError(
                "Graph redirected the download to an address this client refuses "
                "(missing, not https, or carrying credentials)",
                status=response.status_code,
                hint="retry later; if it persists, the file cannot be downloaded here",
            )
        return _Location(target)

    async def _fetch_preauthenticated(
        self, location: _Location, cap: int, budget: _RetryBudget
    ) -> Download:
        """GET the pre-authenticated URL: no Authorization, no cookies, a Range header."""
        while True:
            request = self._http.build_request(
                "GET", location.url, headers={"Accept": "*/*", "Range": f"bytes=0-{cap - 1}"}
            )
            request.headers.pop("Authorization", None)
            request.headers.pop("Cookie", None)
            outcome = await self._exchange(
                request,
                lambda response: _read_download(response, cap),
                frozenset({200, 206}),
                log_as="<download host>",
                peer="the file's download host",
            )
            if isinstance(outcome, Download):
                return outcome
            if outcome.status in _RETRIED:
                await budget.pause(outcome)
                continue
            if outcome.status == 416:
                _, total = _parse_content_range(outcome.headers.get("content-range"))
                if total == 0:
                    return Download(b"", None, True, 0)
            raise _download_host_error(outcome)


async def _read_download(response: httpx.Response, cap: int) -> Download:
    """Read at most ``cap`` bytes of a 200 or 206 answer and say how complete they are."""
    data, whole = await read_prefix(response, cap)
    raw_type = response.headers.get("content-type")
    content_type = clean_text(raw_type, 200) if raw_type else None
    encoded = response.headers.get("content-encoding", "identity").strip().lower() != "identity"
    if response.status_code == 206:
        first, total = _parse_content_range(response.headers.get("content-range"))
        if first not in (0, None):
            raise GraphError(
                "the file's download host answered a range that was not asked for",
                retry_safe=True,
                hint="retry later",
            )
        if total is None and whole and len(data) < cap:
            total = len(data)  # the range came back short: that was the end of the file
        complete = whole and total is not None and len(data) >= total
        return Download(data, content_type, complete, total)
    declared = response.headers.get("content-length")
    total = int(declared) if declared and declared.isdigit() and not encoded else None
    if whole and total is None:
        total = len(data)
    return Download(data, content_type, whole, total)
