"""The emulator's dispatcher: one Graph request in, one answer out.

``Emulator.handle`` takes what arrived on the wire (method, URL, headers, body) and
returns an ``Answer``; the httpx adapter (``transport``) does nothing else. Routing is by
the decoded path after the Graph root: ``/me`` or ``/users/{id|upn}`` then mail, mailbox
settings or drive routes; ``/drives/{id}`` for any drive. Requests to a download host
(the URLs ``/content`` redirects to) are answered here too, and refused if they carry a
bearer token.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from mfconnector.emulator import downloads, drive_routes, ids, mail_routes, uploads
from mfconnector.emulator.batch import run_batch
from mfconnector.emulator.call import Answer, Call, Prefer, decode_query, error_answer
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import Tenant
from mfconnector.emulator.render import GRAPH, drive_json
from mfconnector.emulator.seed.facts import DEMO_NOW
from mfconnector.emulator.seed.tenant import build_tenant
from mfconnector.emulator.state import EmulatorState

__all__ = ["Emulator", "Fault"]

_log = logging.getLogger("mfconnector.emulator")
_BEARER = re.compile(r"^Bearer\s+\S+", re.IGNORECASE)
_ROOT = urlsplit(GRAPH)


@dataclass
class Fault:
    """An injected failure: the next ``times`` matching requests answer ``status``."""

    status: int
    times: int = 1
    retry_after: str | None = None
    path_contains: str = ""
    method: str | None = None
    code: str | None = None
    message: str | None = None

    def matches(self, method: str, path: str) -> bool:
        return (
            self.times > 0
            and self.path_contains in path
            and (self.method is None or self.method.upper() == method)
        )

    def error(self) -> GraphHttpError:
        defaults = {
            429: ("TooManyRequests", "Please retry again later."),
            503: ("ServiceUnavailable", "Service Unavailable"),
            504: ("GatewayTimeout", "Gateway Timeout"),
            401: ("InvalidAuthenticationToken", "Access token has expired or is not yet valid."),
        }
        code, message = defaults.get(self.status, ("generalException", "General failure."))
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
        if self.status == 401:
            headers["WWW-Authenticate"] = _CHALLENGE
        return GraphHttpError(
            self.status, self.code or code, self.message or message, headers=headers
        )


_CHALLENGE = (
    'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/'
    'authorize", client_id="00000003-0000-0000-c000-000000000000"'
)


class Emulator(EmulatorState):
    """An in-memory Microsoft Graph for the demo tenant. State lives as long as the object.

    Knobs for tests and benches (never used by ``--demo`` itself): ``add_fault`` makes the
    next matching requests fail with 429/503/401; ``tenant`` is the live state.
    """

    def __init__(self, tenant_factory: Callable[[], Tenant] = build_tenant) -> None:
        super().__init__(tenant_factory)
        self.faults: list[Fault] = []

    def add_fault(self, status: int, **options: Any) -> Fault:
        fault = Fault(status, **options)
        self.faults.append(fault)
        return fault

    # --- the entry point -----------------------------------------------------------

    def handle(self, method: str, url: str, headers: dict[str, str], body: bytes) -> Answer:
        self.requests += 1
        request_id = ids.guid(f"request:{self.requests}")
        try:
            answer = self.route(method.upper(), url, headers, body)
        except GraphHttpError as error:
            answer = error_answer(error, request_id, headers.get("client-request-id"))
        except Exception:  # a bug here must look like Graph's 500, not break the client
            _log.exception("emulator: internal error on %s", method)
            internal = GraphHttpError(500, "generalException", "An internal server error occurred.")
            answer = error_answer(internal, request_id, headers.get("client-request-id"))
        answer.headers.setdefault("request-id", request_id)
        answer.headers.setdefault("client-request-id", headers.get("client-request-id", request_id))
        return answer

    def route(self, method: str, url: str, headers: dict[str, str], body: bytes) -> Answer:
        """One request (already counted), raising ``GraphHttpError`` for an error answer."""
        parts = urlsplit(url)
        root = _ROOT
        if f"{parts.scheme}://{parts.netloc}" == uploads.UPLOAD_HOST:
            return uploads.serve_upload(self, method, parts, headers, body)
        if parts.hostname != root.hostname:
            return downloads.serve(self, method, parts, headers)
        if not parts.path.startswith(root.path + "/") and parts.path != root.path:
            raise GraphHttpError(400, "BadRequest", "Invalid version.")
        if not _BEARER.match(headers.get("authorization", "")):
            raise GraphHttpError(
                401,
                "InvalidAuthenticationToken",
                "Access token is empty.",
                headers={"WWW-Authenticate": _CHALLENGE},
            )
        raw_path = parts.path[len(root.path) :] or "/"
        path = unquote(raw_path)
        for fault in self.faults:
            if fault.matches(method, path):
                fault.times -= 1
                raise fault.error()
        call = Call(
            method=method,
            path=path,
            raw_path=raw_path,
            query=decode_query(parts.query),
            headers=headers,
            body=body,
            prefer=Prefer.parse(headers.get("prefer", "")),
            now=self.now() if method != "GET" else DEMO_NOW,
        )
        return self.dispatch(call)

    def dispatch(self, call: Call) -> Answer:
        segments = [s for s in call.path.split("/") if s != ""]
        if not segments:
            raise GraphHttpError(400, "BadRequest", "Invalid request.")
        head = segments[0]
        if segments == ["$batch"]:
            if call.method != "POST":
                raise GraphHttpError(405, "BadRequest", "$batch takes POST.")
            return run_batch(self, call, self.route)
        if head == "drives" and len(segments) >= 2:
            drive = self.tenant.drives.get(segments[1])
            if drive is None:
                raise GraphHttpError(404, "itemNotFound", "The drive could not be found.")
            return drive_routes.route(self, call, drive, segments[2:])
        if head == "me":
            mailbox, rest = self.me(), segments[1:]
        elif head == "users" and len(segments) >= 2:
            found = self.tenant.mailbox(segments[1])
            if found is None:
                raise GraphHttpError(
                    404, "ErrorInvalidUser", f"The requested user '{segments[1][:100]}' is invalid."
                )
            mailbox, rest = found, segments[2:]
        else:
            raise GraphHttpError(
                400, "BadRequest", f"Resource not found for the segment '{head[:100]}'."
            )
        if rest and rest[0] == "drive":
            return drive_routes.route(self, call, self.drive_of(mailbox), rest[1:])
        if rest and rest[0] == "drives" and len(rest) == 1 and call.method == "GET":
            drive = self.drive_of(mailbox)
            return Answer(
                200, {"@odata.context": f"{GRAPH}/$metadata#drives", "value": [drive_json(drive)]}
            )
        return mail_routes.route(self, call, mailbox, rest)
