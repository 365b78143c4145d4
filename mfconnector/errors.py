"""The error tree, drawn once here so every layer raises from the same vocabulary.

    MfcError
    ├── ProtocolError            -> a JSON-RPC error response (code, message, data)
    ├── ToolError                -> an ``isError: true`` tool result the assistant can act on
    │   ├── ToolInputError       bad arguments, a tampered cursor, an offset past the end
    │   ├── AuthError            not signed in, consent missing, refresh token expired
    │   ├── BusyError            every worker busy and the queue full: not run, retry
    │   ├── DocumentError        a document that is protected, corrupt or too costly to read
    │   └── GraphError           Graph (or the way to it) failed: status, Graph code,
    │       │                    request-id, retry-after, whether a retry is safe, a hint
    │       ├── GraphTimeoutError        no answer within the deadline
    │       ├── GraphThrottledError      429/503 past the retry budget
    │       └── ResponseTooLargeError    a body past the byte cap
    └── FixtureError             a fixture file that cannot be served (start-up, exit 2)

Messages here reach the assistant or the terminal: they never carry a token, a URL with
a query string, or raw exception text from a library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LOGIN_HINT",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "AuthError",
    "BusyError",
    "DocumentError",
    "FixtureError",
    "GraphError",
    "GraphThrottledError",
    "GraphTimeoutError",
    "MfcError",
    "ProtocolError",
    "ResponseTooLargeError",
    "ToolError",
    "ToolInputError",
    "document_too_large",
]

LOGIN_HINT = (
    "run `mfconnector login` in a terminal (with the same --tenant/--cloud/--all-files "
    "settings as the server), then retry"
)
"""What to do when Graph refuses the token; shared by the Graph and auth layers."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022


class MfcError(Exception):
    """Base of every error this package raises on purpose."""


class ProtocolError(MfcError):
    """A request that gets a JSON-RPC error instead of a result."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ToolError(MfcError):
    """A failure the assistant sees as an ``isError`` result with actionable text.

    Every payload has one shape (docs/TOOLS.md, "Errors"): ``error_code`` (stable, to branch
    on), ``message``, ``retry_safe`` (repeating the same call cannot do anything twice) and
    perhaps a ``hint``; subclasses add their details under snake_case names.
    """

    error_code = "tool_error"
    retry_safe = False

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "error_code": self.error_code,
            "message": self.message,
            "retry_safe": self.retry_safe,
        }
        if self.hint:
            payload["hint"] = self.hint
        return payload


class ToolInputError(ToolError):
    """The arguments cannot be served as given; the message says what to change."""

    error_code = "invalid_arguments"


class BusyError(ToolError):
    """The server already has as many tool calls as it runs or queues: this one was not run."""

    error_code = "busy"
    retry_safe = True


class AuthError(ToolError):
    """No usable token: the hint says which command fixes it. ``reason`` says why."""

    error_code = "auth_required"
    retry_safe = True

    def __init__(self, message: str, *, hint: str | None = None, code: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.code = code

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        if self.code:
            payload["reason"] = self.code
        return payload


@dataclass(eq=False)
class GraphError(ToolError):
    """Graph, or the way to it, failed. Carries what support and the assistant need."""

    message: str
    status: int | None = None
    code: str | None = None
    request_id: str | None = None
    retry_after_seconds: float | None = None
    retry_safe: bool = False
    hint: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """More of Graph's answer under snake_case keys (``inner_code``)."""

    error_code = "provider_error"

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    def __str__(self) -> str:
        return self.message

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        payload["provider"] = "graph"
        for key, value in (
            ("status", self.status),
            ("provider_code", self.code),
            ("request_id", self.request_id),
            ("retry_after_seconds", self.retry_after_seconds),
        ):
            if value is not None:
                payload[key] = value
        payload.update(self.extra)
        return payload


@dataclass(eq=False)
class GraphTimeoutError(GraphError):
    error_code = "timeout"


@dataclass(eq=False)
class GraphThrottledError(GraphError):
    error_code = "throttled"


@dataclass(eq=False)
class ResponseTooLargeError(GraphError):
    error_code = "response_too_large"


class DocumentError(ToolError):
    """A document whose text cannot be given: protected, corrupt, too large, too costly.

    ``code`` (the payload's ``reason``) is one of: protected, corrupt, too_large,
    unsupported, timeout, cpu, memory, crashed. Nothing in the message comes from the
    document's own bytes.
    """

    error_code = "document_unreadable"

    def __init__(
        self, message: str, *, code: str, hint: str | None = None, retry_safe: bool = False
    ) -> None:
        super().__init__(message, hint=hint)
        self.code = code
        self.retry_safe = retry_safe

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        payload["reason"] = self.code
        return payload


def document_too_large(size: int | None, limit: int) -> DocumentError:
    """The one refusal of a document over ``document_bytes``, whoever downloads it (a
    backend's spool, the read tools' size check before it). ``size``: the declared size,
    or None when the bytes kept coming past ``limit``."""
    shown = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    return DocumentError(
        f"the file is {shown}; documents are read up to {limit:,} bytes",
        code="too_large",
        hint="open it in its application, or ask for a smaller export of the part you need",
    )


class FixtureError(MfcError):
    """A fixture file that cannot be served; the message names the entry and the problem."""
