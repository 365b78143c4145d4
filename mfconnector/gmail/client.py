"""The one way this package talks HTTP to the Gmail API: bounded in bytes, time and count.

Every logical call (``get``, ``post``, ``delete``):

- runs under ``trio.fail_after(graph_request_seconds)``: httpx's read timeout is per chunk,
  and a slow trickle would otherwise hold a worker for ever;
- reads at most ``graph_body_bytes`` as they arrive (``Accept-Encoding: identity``; a
  compressed answer is refused, never inflated), error bodies included, and counts a JSON
  body's values (``graph_body_values``) before parsing it;
- holds a slot of ``CapacityLimiter(gmail_concurrency)`` per exchange;
- retries 429 and 403 ``rateLimitExceeded``/``userRateLimitExceeded`` after Retry-After
  (or 1, 2, 4 s) within the ``graph_retries`` / ``graph_retry_after_max_seconds`` /
  ``graph_retry_total_seconds`` budget and the call's deadline, else ends in ``Throttled``
  with the wait; 5xx only for reads; refreshes the token once after a 401.

The token goes only to URLs built under the configured root (``api_root``); redirects are
never followed. ``trust_env=False``: the environment's proxy and CA settings do not apply
to a client that carries credentials (``net.graph_transport`` applies ours).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import trio

from mfconnector.auth import TokenProvider
from mfconnector.errors import AuthError
from mfconnector.gmail.api_root import DEFAULT_GMAIL_API_ROOT, api_url, under_root
from mfconnector.gmail.batch import BATCH_BOUNDARY, batch_body, parse_batch
from mfconnector.gmail.errors import (
    GmailUnreachable,
    failure_from_answer,
    is_rate_limited,
    provider_details,
)
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.failures import ActionFailure, Ambiguous, Throttled
from mfconnector.net.api_client import api_http_client
from mfconnector.net.capped_body import BodyError, parse_json_body, read_capped, read_prefix
from mfconnector.net.graph_transport import graph_transport
from mfconnector.net.settings import NetworkSettings

__all__ = ["CallCounter", "GmailClient", "retry_wait"]

_log = logging.getLogger("mfconnector.gmail")
_CHATTY_LIBRARIES = ("httpx", "httpcore")
"""They log full URLs (a search's ``q``) at INFO."""
_READ_METHODS = frozenset({"GET"})
_SERVER_ERRORS = frozenset({500, 502, 503, 504})


class CallCounter:
    """Requests sent and answer bytes read by one client (what ``bench/`` reports)."""

    __slots__ = ("bytes_read", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.bytes_read = 0


def retry_wait(headers: Mapping[str, str], attempt: int) -> float:
    """Retry-After in seconds (delta form), else 1, 2, 4 s."""
    value = headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(min(int(value), 86_400))
    return float(2**attempt)


class GmailClient:
    """A bounded Gmail API client for one account; shared by that account's calls."""

    def __init__(
        self,
        *,
        token_provider: TokenProvider,
        limits: Limits = DEFAULT_LIMITS,
        root: str = DEFAULT_GMAIL_API_ROOT,
        login_command: str = "mfconnector login --provider gmail",
        transport: httpx.AsyncBaseTransport | None = None,
        network: NetworkSettings | None = None,
    ) -> None:
        for name in _CHATTY_LIBRARIES:
            logging.getLogger(name).setLevel(logging.WARNING)
        self._tokens = token_provider
        self._limits = limits
        self._root = root.rstrip("/")
        self.login_command = login_command
        self._limiter = trio.CapacityLimiter(limits.gmail_concurrency)
        self.counter = CallCounter()
        if transport is None:
            transport = graph_transport(network or NetworkSettings())
        self._http = api_http_client(transport, limits)

    @property
    def root(self) -> str:
        return self._root

    @property
    def limits(self) -> Limits:
        return self._limits

    async def aclose(self) -> None:
        await self._http.aclose()

    async def granted_scopes(self) -> frozenset[str] | None:
        """The scopes the sign-in holds, when the token provider says (Google sign-in
        does; an operator-managed token does not: None)."""
        described = await self._tokens.describe()
        scopes = described.get("scopes") if isinstance(described, dict) else None
        if not isinstance(scopes, list) or not scopes:
            return None
        return frozenset(str(scope) for scope in scopes)

    # --- public calls ----------------------------------------------------------------

    async def get(self, *segments: str, query: Sequence[tuple[str, str]] = ()) -> Any:
        """GET ``/gmail/v1/users/me/<segments>`` and its JSON answer."""
        return await self._call("GET", api_url(self._root, *segments), query, None)

    async def get_base64_field(
        self, segments: Sequence[str], field: str, max_bytes: int
    ) -> tuple[bytes, bool]:
        """The first ``max_bytes`` of a base64url JSON field (``attachments.get``'s
        ``data``): the answer is read only as far as those bytes need, so a large
        attachment costs ``max_bytes`` of memory, not its size. ``complete`` False: more
        followed."""
        prefix = _Prefix(field, max_bytes)
        data = await self._call("GET", api_url(self._root, *segments), (), None, prefix=prefix)
        assert isinstance(data, tuple)
        return data

    async def batch_get(self, paths: Sequence[str]) -> list[tuple[int, bytes]]:
        """GETs in one request to the batch endpoint (``<root>/batch``, the Gmail API's
        ``batchPath``), at most ``gmail_batch_calls``; each answer's status and body, in
        order. The whole batch answer is read under ``graph_body_bytes``."""
        if not 1 <= len(paths) <= self._limits.gmail_batch_calls:
            raise ValueError("a batch holds 1 to gmail_batch_calls calls")
        body = batch_body(paths)
        data, content_type = await self._call(
            "POST", self._root + "/batch", (), body, raw=True, idempotent=True
        )
        return parse_batch(data, content_type, len(paths))

    async def post(
        self, *segments: str, body: Mapping[str, Any] | None = None, retry: bool = True
    ) -> Any:
        """POST a JSON body. ``retry`` False: nothing is repeated but a refusal Google
        documents as "nothing was done" (a rate limit) - for sends."""
        data = json.dumps(body or {}, ensure_ascii=False).encode()
        return await self._call("POST", api_url(self._root, *segments), (), data, retry=retry)

    async def patch(self, *segments: str, body: Mapping[str, Any]) -> Any:
        data = json.dumps(body, ensure_ascii=False).encode()
        return await self._call("PATCH", api_url(self._root, *segments), (), data)

    async def delete(self, *segments: str) -> None:
        await self._call("DELETE", api_url(self._root, *segments), (), None)

    # --- the machinery ---------------------------------------------------------------

    async def _call(
        self,
        method: str,
        url: str,
        query: Sequence[tuple[str, str]],
        body: bytes | None,
        *,
        retry: bool = True,
        prefix: _Prefix | None = None,
        raw: bool = False,
        idempotent: bool | None = None,
    ) -> Any:
        if not under_root(url, self._root):  # never: every URL is built from the root
            raise ValueError("refusing to send the Gmail token outside the API root")
        seconds = self._limits.graph_request_seconds
        reads = method in _READ_METHODS if idempotent is None else idempotent
        state = {"waiting_for_token": False, "sent": False, "reads": reads}
        try:
            with trio.fail_after(seconds):
                return await self._attempts(method, url, query, body, retry, state, prefix, raw)
        except trio.TooSlowError:
            if state["waiting_for_token"]:
                raise AuthError(
                    f"the Google sign-in service did not answer within {seconds:g} s",
                    hint="check the network path to oauth2.googleapis.com, then retry",
                    code="signin_timeout",
                ) from None
            message = f"Gmail did not finish answering within {seconds:g} s"
            if not reads and state["sent"]:
                raise Ambiguous(
                    message + ": the change may have been made",
                    hint="read the item again before repeating the change",
                    details={"provider": "gmail"},
                ) from None
            raise ActionFailure(
                message,
                retry_safe=True,
                hint="retry later, or ask for less",
                details={"provider": "gmail"},
            ) from None

    async def _attempts(
        self,
        method: str,
        url: str,
        query: Sequence[tuple[str, str]],
        body: bytes | None,
        retry: bool,
        state: dict[str, bool],
        prefix: _Prefix | None,
        raw: bool = False,
    ) -> Any:
        limits = self._limits
        content_type = "application/json"
        if raw and body is not None:
            content_type = f"multipart/mixed; boundary={BATCH_BOUNDARY}"
        attempt, waited, refreshed, force = 0, 0.0, False, False
        while True:
            state["waiting_for_token"] = True
            token = await self._tokens.get_token(force_refresh=force)
            state["waiting_for_token"] = False
            force = False
            request = self._http.build_request(
                method,
                url,
                params=httpx.QueryParams(list(query)) if query else None,
                content=body,
                headers={"Content-Type": content_type} if body is not None else None,
            )
            request.headers["Authorization"] = f"Bearer {token}"
            status, headers, data, cut = await self._exchange(request, state, prefix)
            if 200 <= status < 300:
                if prefix is not None:
                    return prefix.decode(data, cut, self.parse_json)
                if raw:
                    return data, headers.get("content-type", "")
                return self.parse_json(data, status)
            retried = is_rate_limited(status, data) or (
                retry and state["reads"] and status in _SERVER_ERRORS
            )
            if retried:
                wait = retry_wait(headers, attempt)
                over = (
                    attempt >= limits.graph_retries
                    or wait > limits.graph_retry_after_max_seconds
                    or waited + wait > limits.graph_retry_total_seconds
                    or trio.current_time() + wait >= trio.current_effective_deadline()
                )
                if not over:
                    attempt += 1
                    waited += wait
                    _log.debug("gmail %s: %s, retry %d in %g s", method, status, attempt, wait)
                    await trio.sleep(wait)
                    continue
                failure = failure_from_answer(
                    status, headers, data, login_command=self.login_command, retry_after=wait
                )
                if not isinstance(failure, Throttled):  # a 5xx past the budget
                    failure.details["retry_after_seconds"] = wait
                raise failure
            if status == 401 and not refreshed:
                refreshed = force = True
                continue
            if 300 <= status < 400:
                raise ActionFailure(
                    f"Gmail answered a redirect ({status}); it is not followed",
                    details=provider_details(status, None),
                )
            raise failure_from_answer(status, headers, data, login_command=self.login_command)

    async def _exchange(
        self, request: httpx.Request, state: dict[str, bool], prefix: _Prefix | None = None
    ) -> tuple[int, Mapping[str, str], bytes, bool]:
        """One request and its answer read under the cap. Library exceptions are replaced
        outside their ``except`` block, so not even their context keeps the request."""
        async with self._limiter:
            self.counter.requests += 1
            unreachable = False
            try:
                response = await self._http.send(request)
            except httpx.ConnectError:
                unreachable = True
            except httpx.TransportError:
                response = None
            if unreachable:
                raise GmailUnreachable(
                    "cannot connect to the Gmail API",
                    hint="check the network path (and --gmail-api-root), then retry",
                    details={"provider": "gmail"},
                )
            state["sent"] = True
            if response is None:
                raise _lost(state["reads"])
            cap = self._limits.graph_body_bytes
            ok = 200 <= response.status_code < 300
            if prefix is not None and ok:
                cap = prefix.cap
            cut = False
            try:
                data, cut = await self._read_capped(response, cap, stop=prefix is not None and ok)
            except httpx.TransportError:
                data = None
            finally:
                with trio.move_on_after(self._limits.graph_close_seconds) as scope:
                    scope.shield = True
                    await response.aclose()
            if data is None:
                raise _lost(state["reads"])
            _log.debug("gmail %s %s -> %s", request.method, request.url.path, response.status_code)
            return response.status_code, response.headers, data, cut

    async def _read_capped(
        self, response: httpx.Response, cap: int, *, stop: bool = False
    ) -> tuple[bytes, bool]:
        """At most ``cap`` bytes; past it an error, or (``stop``) the bytes so far. A
        compressed answer is refused, never inflated: the client asked for none."""
        with gmail_words():
            if stop:
                data, complete = await read_prefix(
                    response, cap, limits=self._limits, inflate=False
                )
            else:
                data, complete = (
                    await read_capped(response, cap, limits=self._limits, inflate=False),
                    True,
                )
        self.counter.bytes_read += len(data)
        return data, not complete

    def parse_json(self, data: bytes, status: int = 200) -> Any:
        """A JSON answer (or a batch part's) under ``graph_body_values``: strict UTF-8,
        standard JSON only."""
        if not data.strip():
            return None
        with gmail_words(status):
            return parse_json_body(data, self._limits.graph_body_values)


@contextmanager
def gmail_words(status: int | None = None) -> Iterator[None]:
    """The capped body reader's refusals as Gmail's failures; none echoes the body."""
    try:
        yield
    except BodyError as error:
        raise _body_failure(error, status) from None


def _body_failure(error: BodyError, status: int | None) -> ActionFailure:
    status = error.status if error.status is not None else status
    details: dict[str, Any] = {"provider": "gmail", "status": status}
    if error.problem == "too_large":
        return _too_large(error.limit, status)
    if error.problem == "too_many_values":
        return ActionFailure(
            f"Gmail's answer holds more than {error.limit:,} JSON values (graph_body_values): "
            "not read",
            details=details,
        )
    if error.problem == "coding":
        return ActionFailure(
            f"Gmail answered with {error.detail!r} content although asked for none",
            details=details,
        )
    return ActionFailure(
        "Gmail answered with a body that is not valid JSON",
        retry_safe=True,
        details=details,
    )


class _Prefix:
    """The first ``max_bytes`` of one base64url field of a JSON answer, read as a prefix."""

    def __init__(self, field: str, max_bytes: int) -> None:
        self.field = field
        self.max_bytes = max_bytes
        self.cap = max_bytes * 4 // 3 + 65_536
        """Answer bytes read at most: the field's base64 for ``max_bytes`` and the rest."""

    def decode(
        self, data: bytes, cut: bool, parse: Callable[[bytes, int], Any]
    ) -> tuple[bytes, bool]:
        if not cut:
            answer = parse(data, 200)
            text = answer.get(self.field) if isinstance(answer, dict) else None
            decoded = _unb64url(text if isinstance(text, str) else "")
            return decoded[: self.max_bytes], len(decoded) <= self.max_bytes
        start = data.find(f'"{self.field}"'.encode())
        quote = data.find(b'"', data.find(b":", start) + 1) if start >= 0 else -1
        if quote < 0:
            raise ActionFailure(
                "Gmail's attachment answer is too large and its data was not found in it",
                details={"provider": "gmail"},
            )
        end = data.find(b'"', quote + 1)
        encoded = data[quote + 1 : end if end >= 0 else len(data)]
        usable = len(encoded) - len(encoded) % 4
        return _unb64url(encoded[:usable].decode("ascii", "replace"))[: self.max_bytes], False


def _unb64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ActionFailure(
            "Gmail answered attachment data that is not base64url",
            details={"provider": "gmail"},
        ) from None


def _too_large(cap: int, status: int | None) -> ActionFailure:
    return ActionFailure(
        f"Gmail's answer is larger than {cap:,} bytes (graph_body_bytes): not read",
        hint="ask for less (a smaller page), or read the item's attachments one by one",
        details={"provider": "gmail", "status": status, "reason": "response_too_large"},
    )


def _lost(reads: bool) -> ActionFailure:
    if reads:
        return ActionFailure(
            "the connection to Gmail broke before its answer was complete",
            retry_safe=True,
            hint="retry",
            details={"provider": "gmail"},
        )
    return Ambiguous(
        "the connection to Gmail broke after the request was sent: the change may have been made",
        hint="read the item again before repeating the change",
        details={"provider": "gmail"},
    )
