"""Graph error answers and failed connections, mapped to a ``GraphError`` one can act on.

Graph's error body is ``{"error": {"code", "message", "innerError": {...}}}``, but the
inner key is spelled ``innererror`` by OneDrive, it may nest (OneDrive puts the specific
code deepest), and gateways answer HTML or nothing at all. Everything here is defensive:
any body parses to *some* error, and Graph's ``message`` is untrusted text (it can echo
input), so it is cleaned and capped before it reaches the assistant.

Branch on codes, never on messages (Graph's own advice: messages change).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

from mfconnector.errors import LOGIN_HINT, GraphError, GraphThrottledError, GraphTimeoutError
from mfconnector.limits import Limits
from mfconnector.net.tls import TLS_HINT, certificate_problem

__all__ = [
    "LOGIN_HINT",
    "RETRY_SAFE_STATUSES",
    "AmbiguousWriteError",
    "bearer_challenge",
    "clean_text",
    "connection_error",
    "decode_claims",
    "graph_error_from_response",
    "header",
    "parse_retry_after",
    "request_id",
]


class AmbiguousWriteError(GraphError):
    """A write left the process and no answer came back: it may or may not have happened."""

    error_code = "outcome_unknown"


RETRY_SAFE_STATUSES = frozenset({429, 502, 503, 504})
"""Answers where the same read, later, may well succeed (throttling and gateways)."""


_ID_RE = re.compile(r"^[A-Za-z0-9_.:\-]{1,100}$")
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s\"'<>]*")
_JWT_RE = re.compile(r"eyJ[A-Za-z0-9_\-]{6,}(?:\.[A-Za-z0-9_\-]*){1,2}")
_BEARER_RE = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}")
_REDACT_PARAM_RE = re.compile(r"(?i)[^\s\"'<>]{0,64}(?:tempauth|sig|code|token)=[^\s\"'<>&]*")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


@functools.lru_cache(maxsize=4)
def _challenge_param_re(chars: int) -> re.Pattern[str]:
    """Bounded pieces, and a header cut to ``challenge_header_chars``: linear on a hostile
    header. One pattern per limit (a process has one ``Limits``, tests a few)."""
    return re.compile(
        r"([A-Za-z_][A-Za-z0-9_\-]{0,63})[ \t]{0,8}=[ \t]{0,8}"
        rf'("(?:[^"\\]|\\.){{0,{chars}}}"|[^\s,]{{1,{chars}}})'
    )


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup for httpx.Headers and plain dicts alike."""
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


def request_id(headers: Mapping[str, str]) -> str | None:
    """Graph's ``request-id`` header, when it looks like an id (support quotes it)."""
    return _identifier(header(headers, "request-id"))


def parse_retry_after(
    value: str | None, *, limits: Limits, now: datetime | None = None
) -> float | None:
    """Seconds to wait from a Retry-After value: ``120``, ``2.128`` or an HTTP date.

    Negative values and dates in the past mean "now" (0); anything past a day is a day
    (it only has to say "much later", not print a 300-digit number). Unparseable is None.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return round(min(max(0.0, seconds), limits.retry_after_reported_max_seconds), 3)


def format_wait(seconds: float) -> str:
    """``retry in 3 s`` (whole seconds, rounded up) or ``retry now``."""
    whole = math.ceil(seconds)
    return f"retry in {whole:,} s" if whole > 0 else "retry now"


def clean_text(text: str, limit: int) -> str:
    """Untrusted text made safe to show: no control characters, no URL queries, no tokens.

    Cut to a few times the limit first, so no pattern ever runs over megabytes of it.
    """
    text = _CONTROL_RE.sub(" ", text[: 4 * limit])
    text = _URL_RE.sub(lambda m: re.split(r"[?#]", m.group(0), maxsplit=1)[0], text)
    text = _REDACT_PARAM_RE.sub("[redacted]", text)
    text = _JWT_RE.sub("[redacted]", text)
    text = _BEARER_RE.sub("Bearer [redacted]", text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _identifier(value: Any) -> str | None:
    """A Graph code or request id, only when it looks like one (never free text)."""
    if isinstance(value, str) and _ID_RE.match(value):
        return value
    return None


def _get_ci(obj: Mapping[str, Any], key: str) -> Any:
    lowered = key.lower()
    for name, value in obj.items():
        if isinstance(name, str) and name.lower() == lowered:
            return value
    return None


def _error_object(body: bytes) -> dict[str, Any] | None:
    if not body:
        return None
    try:
        doc = json.loads(body.decode("utf-8"), parse_constant=lambda _: None)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    error = doc.get("error")
    return error if isinstance(error, dict) else None


def _message_text(error: Mapping[str, Any], limit: int) -> str:
    message = error.get("message")
    if isinstance(message, dict):  # old OData shape: {"lang": "en-US", "value": "..."}
        message = message.get("value")
    return clean_text(message, limit) if isinstance(message, str) else ""


class _ParsedError:
    """The facts we take from an error body: top code, innermost code, message, request id."""

    def __init__(self, body: bytes, limits: Limits) -> None:
        self.code: str | None = None
        self.inner_code: str | None = None
        self.message = ""
        self.request_id: str | None = None
        error = _error_object(body)
        if error is None:
            return
        self.code = _identifier(error.get("code"))
        self.message = _message_text(error, limits.graph_error_message_chars)
        level: Any = error
        for _ in range(limits.graph_error_nesting_depth):
            level = _get_ci(level, "innererror")
            if not isinstance(level, dict):
                break
            self.request_id = _identifier(_get_ci(level, "request-id")) or self.request_id
            code = _identifier(_get_ci(level, "code"))
            if code and not code.isdigit() and code != self.code:
                self.inner_code = code

    def codes(self) -> set[str]:
        return {c.lower() for c in (self.code, self.inner_code) if c}


def bearer_challenge(headers: Mapping[str, str], *, limits: Limits) -> dict[str, str]:
    """Parameters of a ``WWW-Authenticate: Bearer ...`` header, keys lowercased."""
    value = header(headers, "www-authenticate") or ""
    params: dict[str, str] = {}
    chars = limits.challenge_header_chars
    for key, raw in _challenge_param_re(chars).findall(value[:chars]):
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        params.setdefault(key.lower(), raw)
    return params


def decode_claims(value: str | None, *, limits: Limits) -> str | None:
    """The JSON text of a base64 claims challenge, or None when it is not one."""
    if not value or len(value) > limits.claims_challenge_chars:
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        decoded = base64.b64decode(text, validate=True).decode("utf-8")
        doc = json.loads(decoded)
    except (binascii.Error, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return decoded if isinstance(doc, dict) else None


def _hint(status: int, codes: set[str], wait: float | None, challenge: Mapping[str, str]) -> str:
    if "mailboxnotenabledforrestapi" in codes:
        return (
            "this mailbox cannot be reached through Microsoft Graph (it is on-premises, "
            "inactive, unlicensed, or a consumer mailbox not enabled for the API)"
        )
    if status == 401:
        return LOGIN_HINT
    if status == 403:
        if challenge.get("error") == "insufficient_claims":
            return "Conditional Access asks for a fresh sign-in: run `mfconnector login`"
        return (
            "permission denied: the account or app lacks access (Mail.Read / Files.Read), "
            "or consent is missing; run `mfconnector login` to consent, or ask an administrator"
        )
    if codes & {"erroritemnotfound", "itemnotfound"}:
        return "the id or path does not exist (ids change when a message is moved)"
    if "errorinvalididmalformed" in codes:
        return "the id is malformed: pass an id exactly as a previous result gave it"
    if codes & {"searchwithorderby", "searchwithfilter"}:
        return "a search cannot be combined with sorting or filtering: drop one of them"
    if "inefficientfilter" in codes:
        return "the filter and sort order are too complex together: simplify the filter"
    if status in (429, 503):
        return "throttled: " + (format_wait(wait) if wait is not None else "retry later")
    if status == 404:
        return "nothing exists at that id or path: check it against a previous result"
    if status >= 500:
        return "Microsoft Graph had a transient failure: retry later (quote the request-id)"
    return "Graph refused the request as sent: check the ids and values passed"


def graph_error_from_response(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    limits: Limits,
    retry_after_seconds: float | None = None,
    now: datetime | None = None,
) -> GraphError:
    """The error for a non-success Graph answer. Never echoes a URL query or a token.

    429 and 503 give ``GraphThrottledError``. ``retry_after_seconds`` overrides the
    header (the client passes the backoff it would have used when there is none).
    """
    parsed = _ParsedError(body, limits)
    rid = request_id(headers) or parsed.request_id
    wait = retry_after_seconds
    if wait is None:
        wait = parse_retry_after(header(headers, "retry-after"), limits=limits, now=now)
    codes = parsed.codes()
    hint = _hint(status, codes, wait, bearer_challenge(headers, limits=limits))
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "unexpected status"
    what = f"{status} {parsed.code}" if parsed.code else f"{status} {phrase}"
    suffix = f" (request-id {rid})" if rid else ""
    throttled = status in (429, 503) and "mailboxnotenabledforrestapi" not in codes
    if throttled:
        when = format_wait(wait) if wait is not None else "retry later"
        message = f"throttled by Microsoft Graph: {when} ({what}){suffix}"
    else:
        detail = f": {parsed.message}" if parsed.message else ""
        message = f"Microsoft Graph answered {what}{detail}{suffix}"
    extra = {"inner_code": parsed.inner_code} if parsed.inner_code else {}
    cls = GraphThrottledError if throttled else GraphError
    return cls(
        message,
        status=status,
        code=parsed.code,
        request_id=rid,
        retry_after_seconds=wait,
        retry_safe=status in RETRY_SAFE_STATUSES,
        hint=hint,
        extra=extra,
    )


def connection_error(
    exc: Exception, *, limits: Limits, peer: str = "Microsoft Graph", proxy: str | None = None
) -> GraphError:
    """A failed exchange (refused, dropped, timed out) without the library's own text.

    ``proxy`` is the proxy the request went through (its address without credentials).
    httpx is imported here, on the first failed exchange: the Graph backend's error
    classification is on the start-up path, the HTTP stack is not.
    """
    import httpx

    the_proxy = f"the proxy {proxy}" if proxy else "the proxy"
    if (
        proxy is not None
        and isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
        and certificate_problem(exc, reason_chars=limits.tls_reason_chars) is None
    ):
        return GraphError(
            f"{peer}: could not connect through {the_proxy}",
            retry_safe=True,
            hint=f"check --proxy / MFC_PROXY: is {proxy} running and reachable from here?",
        )
    if isinstance(exc, httpx.TimeoutException):
        kind = {
            httpx.ConnectTimeout: "connecting took too long",
            httpx.PoolTimeout: "no connection became free in time",
            httpx.WriteTimeout: "sending the request took too long",
        }.get(type(exc), "it stopped sending data")
        return GraphTimeoutError(
            f"{peer} did not answer in time ({kind})",
            retry_safe=True,
            hint="retry later; check the network if it keeps happening",
        )
    problem = certificate_problem(exc, reason_chars=limits.tls_reason_chars)
    if problem is not None:
        return GraphError(
            f"{peer}: its TLS certificate was not accepted: {problem}",
            retry_safe=False,
            hint=TLS_HINT,
        )
    if isinstance(exc, httpx.ProxyError):
        return GraphError(
            f"{peer}: {the_proxy} did not open a connection",
            retry_safe=True,
            hint="check --proxy / MFC_PROXY (address, credentials) and that the proxy allows "
            "this host",
        )
    if isinstance(exc, httpx.ConnectError):
        what = "could not connect"
    elif isinstance(exc, httpx.RemoteProtocolError):
        what = "the connection broke or the answer was malformed"
    elif isinstance(exc, httpx.ReadError):
        what = "the connection dropped while reading the answer"
    else:
        what = "the connection failed"
    return GraphError(
        f"{peer}: {what}",
        retry_safe=True,
        hint="retry later; check the network if it keeps happening",
    )
