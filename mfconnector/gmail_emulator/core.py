"""The dispatcher: one HTTP request in (method, URL, headers, body), one answer out.

Order of checks, as Google's front end answers: the path must be a Gmail API v1 path
(``/gmail/v1/users/{userId}/...``, or ``/batch/gmail/v1``); the bearer token must be one
the emulator knows (401); it must carry one of the scopes the method's reference page
lists (403 insufficientPermissions); then the fault knobs (429 / 403 rate limits); then
the method itself. Any host is accepted: the caller chose to talk to the emulator.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from mfconnector.gmail_emulator import labels, messages, threads
from mfconnector.gmail_emulator.calls import ALL_SCOPES, Answer, Call, Route
from mfconnector.gmail_emulator.errors import (
    GmailError,
    bad_request,
    insufficient_scope,
    not_found,
    rate_limited,
    unauthenticated,
)
from mfconnector.gmail_emulator.store import Mailbox

__all__ = ["DEMO_TOKEN", "Fault", "GmailEmulator"]

_log = logging.getLogger("mfconnector.gmail_emulator")
DEMO_TOKEN = "gmail-demo-token"
"""The token the demo accepts when no token map is given (every scope)."""
API_PREFIX = "/gmail/v1/users/"
BATCH_PATHS = ("/batch/gmail/v1", "/batch")
_BEARER = re.compile(r"^Bearer\s+(\S+)$", re.IGNORECASE)
ROUTES: tuple[Route, ...] = (*messages.ROUTES, *threads.ROUTES, *labels.ROUTES)


@dataclass
class Fault:
    """Every ``every``-th matching call fails with a rate-limit error (a test knob).

    ``status`` 429 with reason ``rateLimitExceeded``, or 403 with ``rateLimitExceeded`` /
    ``userRateLimitExceeded``, as the Gmail "Resolve errors" guide lists them; ``times``
    caps how often it fires (None: for ever). Calls inside a batch count one by one.
    """

    status: int = 429
    reason: str = "rateLimitExceeded"
    every: int = 1
    retry_after: str | None = "1"
    times: int | None = None
    path_contains: str = ""
    seen: int = 0
    fired: int = 0

    def check(self, path: str) -> None:
        if self.path_contains not in path:
            return
        self.seen += 1
        if self.seen % self.every or (self.times is not None and self.fired >= self.times):
            return
        self.fired += 1
        raise rate_limited(self.status, self.reason, self.retry_after)


def _granted(scopes: Iterable[str]) -> frozenset[str]:
    return frozenset(scopes)


class GmailEmulator:
    """An in-memory Gmail API v1 for one mailbox; state lives as long as the object.

    ``tokens`` maps each bearer token the emulator accepts to its scopes (the scope URLs
    in ``calls``); by default only ``DEMO_TOKEN``, with every scope.
    """

    def __init__(
        self,
        mailbox: Mailbox | None = None,
        *,
        tokens: Mapping[str, Iterable[str]] | None = None,
        mailbox_factory: Callable[[], Mailbox] | None = None,
    ) -> None:
        if mailbox is None:
            from mfconnector.gmail_emulator.demo import build_demo_mailbox

            mailbox = (mailbox_factory or build_demo_mailbox)()
        self.mailbox = mailbox
        source = tokens if tokens is not None else {DEMO_TOKEN: ALL_SCOPES}
        self.tokens = {token: _granted(scopes) for token, scopes in source.items()}
        self.faults: list[Fault] = []
        self.http_requests = 0
        """HTTP requests received (a batch is one)."""
        self.calls = 0
        """API calls made (each call inside a batch counts, as Google counts quota)."""

    def add_fault(self, **options: Any) -> Fault:
        fault = Fault(**options)
        if fault.every < 1:
            raise ValueError("every must be at least 1")
        self.faults.append(fault)
        return fault

    # --- the entry point -------------------------------------------------------------

    def handle(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """One HTTP request; header names in any case."""
        self.http_requests += 1
        lowered = {name.lower(): value for name, value in headers.items()}
        parts = urlsplit(url)
        if parts.path.rstrip("/") in BATCH_PATHS and method.upper() == "POST":
            from mfconnector.gmail_emulator.batch import run_batch

            return self.guarded(lambda: run_batch(self.call, lowered, body))
        return self.call(method, parts.path, parts.query, lowered, body)

    def guarded(self, work: Callable[[], Answer]) -> Answer:
        try:
            answer = work()
        except GmailError as error:
            answer = Answer(error.status, error.body(), dict(error.headers))
        except Exception:  # a bug here must look like Google's 500, not break the client
            _log.exception("gmail emulator: internal error")
            internal = GmailError(500, "backendError", "Backend Error")
            answer = Answer(500, internal.body())
        if answer.json is not None:
            answer.headers.setdefault("Content-Type", "application/json; charset=UTF-8")
        answer.headers.setdefault("Vary", "Origin, X-Origin, Referer")
        return answer

    def call(
        self, method: str, raw_path: str, raw_query: str, headers: dict[str, str], body: bytes
    ) -> Answer:
        """One API call (also each part of a batch)."""
        self.calls += 1
        return self.guarded(lambda: self._route(method.upper(), raw_path, raw_query, headers, body))

    def _scopes(self, headers: dict[str, str]) -> frozenset[str]:
        match = _BEARER.match(headers.get("authorization", "").strip())
        if not match or match.group(1) not in self.tokens:
            raise unauthenticated()
        return self.tokens[match.group(1)]

    def _route(
        self, method: str, raw_path: str, raw_query: str, headers: dict[str, str], body: bytes
    ) -> Answer:
        path = unquote(raw_path)
        if not path.startswith(API_PREFIX):
            raise not_found()
        user, _, rest = path[len(API_PREFIX) :].partition("/")
        scopes = self._scopes(headers)
        if user not in ("me", self.mailbox.address):
            raise GmailError(403, "forbidden", "Delegation denied for " + user[:100])
        rest = "/" + rest.rstrip("/")
        candidates = [r for r in ROUTES if r.pattern.match(rest)]
        chosen = next((r for r in candidates if r.method == method), None)
        if chosen is None:
            if candidates:
                raise GmailError(405, "methodNotAllowed", "Method Not Allowed")
            raise not_found()
        if not scopes & set(chosen.scopes):
            raise insufficient_scope(chosen.scopes)
        for fault in self.faults:
            fault.check(rest)
        query: dict[str, list[str]] = {}
        try:
            pairs = parse_qsl(raw_query, keep_blank_values=True, strict_parsing=False)
        except ValueError:
            raise bad_request("Invalid query string") from None
        for key, value in pairs:
            query.setdefault(key, []).append(value)
        call = Call(method, rest, query, headers, body, scopes, self.mailbox)
        match = chosen.pattern.match(rest)
        assert match is not None
        return chosen.handler(call, match)
