"""Failures of the acting tools, each with a stable ``error_code`` and ``retry_safe``.

The codes an assistant can branch on (docs/TOOLS.md lists what each one means):

    invalid_arguments      the call cannot be served as given; nothing was requested
    conflict               the message, draft or preparation changed since it was read
    not_found              no such message, folder or preparation
    unsupported_operation  not possible here (a well-known folder, another cloud)
    gate_disabled          the operator has not turned this tool on (the flag is named)
    insufficient_scope     the token lacks a permission (the re-consent command is named)
    throttled              Graph refused for now; nothing was done
    outcome_unknown        a write was sent and no answer came: check before repeating
    expired                a preparation past its 15 minutes
    state_unavailable      the local state file cannot be used (named)
    auth_required          not signed in
    graph_error            Graph refused for another reason (its code is included)
    declined               the person declined or dismissed the question; nothing was done
    confirmation_required  --confirm user, and this client cannot ask the person
    confirmation_invalid   a requestState that is not ours for this call, or a bad answer

``retry_safe`` says whether repeating the same call cannot do something twice.
``outcome`` (for multi-request operations) says what was done and what was not.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import (
    AuthError,
    GraphError,
    GraphThrottledError,
    GraphTimeoutError,
    ToolError,
    ToolInputError,
)

__all__ = ["AmbiguousWriteError", "WriteError", "as_write_error"]


class WriteError(ToolError):
    """A failed acting call: code, whether repeating is safe, and any partial outcome."""

    def __init__(
        self,
        error_code: str,
        message: str,
        *,
        hint: str | None = None,
        retry_safe: bool = False,
        outcome: dict[str, Any] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.error_code = error_code
        self.retry_safe = retry_safe
        self.outcome = outcome
        self.details = details or {}

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        payload.update(self.details)
        if self.outcome is not None:
            payload["outcome"] = self.outcome
        return payload


class AmbiguousWriteError(GraphError):
    """A write left the process and no answer came back: it may or may not have happened."""

    error_code = "outcome_unknown"


def _graph_code(error: GraphError) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if error.status is not None:
        details["status"] = error.status
    if error.code:
        details["provider_code"] = error.code
    if error.request_id:
        details["request_id"] = error.request_id
    return details


def as_write_error(
    error: ToolError, *, writing: bool, outcome: dict[str, Any] | None = None
) -> WriteError:
    """Classify any failure. ``writing``: the failed request could have changed the mailbox."""
    if isinstance(error, WriteError):
        if outcome is not None and error.outcome is None:
            error.outcome = outcome
        return error
    if isinstance(error, ToolInputError):
        return WriteError("invalid_arguments", error.message, hint=error.hint, outcome=outcome)
    if isinstance(error, AuthError):
        return WriteError(
            "auth_required", error.message, hint=error.hint, retry_safe=True, outcome=outcome
        )
    if not isinstance(error, GraphError):
        return WriteError("graph_error", error.message, hint=error.hint, outcome=outcome)
    details = _graph_code(error)
    codes = {(error.code or "").lower(), str(error.extra.get("inner_code", "")).lower()}
    unanswered = isinstance(error, GraphTimeoutError) or (error.status or 0) >= 500
    if isinstance(error, AmbiguousWriteError) or (writing and unanswered and error.status != 429):
        return WriteError(
            "outcome_unknown",
            f"no clear answer from Microsoft Graph ({error.message}); the change may or may "
            "not have been made",
            hint="read the item again to see whether the change happened before repeating it",
            outcome=outcome,
            details=details,
        )
    if isinstance(error, GraphThrottledError):
        wait = error.retry_after_seconds
        return WriteError(
            "throttled",
            error.message,
            hint=error.hint,
            retry_safe=True,
            outcome=outcome,
            details={**details, **({"retry_after_seconds": wait} if wait is not None else {})},
        )
    if error.status == 404 or codes & {"erroritemnotfound", "itemnotfound"}:
        return WriteError(
            "not_found",
            error.message,
            hint="the id does not exist (any more): list or search again for a current id",
            retry_safe=True,
            outcome=outcome,
            details=details,
        )
    if error.status == 412 or "errorirresolvableconflict" in codes:
        return WriteError(
            "conflict",
            "the item changed since it was read; nothing was changed",
            hint="read it again and decide again",
            retry_safe=True,
            outcome=outcome,
            details=details,
        )
    if error.status == 403 or codes & {"erroraccessdenied", "accessdenied"}:
        return WriteError(
            "insufficient_scope",
            error.message,
            hint=error.hint,
            outcome=outcome,
            details=details,
        )
    return WriteError(
        "graph_error",
        error.message,
        hint=error.hint,
        retry_safe=error.retry_safe or 400 <= (error.status or 0) < 500,
        outcome=outcome,
        details=details,
    )
