"""Graph's refusals as the neutral action failures (``mail.failures``) the tools branch on.

Only this backend reads Graph's statuses and codes: a 404 or ErrorItemNotFound is
``NotFound``, a 412 or ErrorIrresolvableConflict ``Conflict``, a 429 ``Throttled``, a 403 or
ErrorAccessDenied ``InsufficientScope``, and a request that may have left without a clear
answer (a timeout, a broken connection, a 5xx to a write) ``Ambiguous``. Sign-in failures
stay ``AuthError``; anything else is an ``ActionFailure`` (``provider_error``) carrying
Graph's status, code and request id under their neutral names.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import (
    AuthError,
    GraphError,
    GraphThrottledError,
    GraphTimeoutError,
    ToolError,
)
from mfconnector.graph.errors import AmbiguousWriteError
from mfconnector.mail.failures import (
    ActionFailure,
    Ambiguous,
    Conflict,
    InsufficientScope,
    NotFound,
    Throttled,
)

__all__ = ["as_failure", "graph_details"]


def graph_details(error: GraphError) -> dict[str, Any]:
    """Graph's own facts about a failure, in the one error shape's names."""
    details: dict[str, Any] = {"provider": "graph"}
    if error.status is not None:
        details["status"] = error.status
    if error.code:
        details["provider_code"] = error.code
    if error.request_id:
        details["request_id"] = error.request_id
    return details


def as_failure(error: ToolError, *, writing: bool) -> ToolError:
    """``error`` classified. ``writing``: the failed request could have changed the mailbox.

    Errors that are not Graph's (input, sign-in, failures already classified) pass as they
    are."""
    if isinstance(error, AuthError | ActionFailure) or not isinstance(error, GraphError):
        return error
    details = graph_details(error)
    codes = {(error.code or "").lower(), str(error.extra.get("innerCode", "")).lower()}
    unanswered = isinstance(error, GraphTimeoutError) or (error.status or 0) >= 500
    if isinstance(error, AmbiguousWriteError) or (writing and unanswered and error.status != 429):
        return Ambiguous(
            f"no clear answer from Microsoft Graph ({error.message}); the change may or may "
            "not have been made",
            hint="read the item again to see whether the change happened before repeating it",
            details=details,
        )
    if isinstance(error, GraphThrottledError):
        return Throttled(
            error.message,
            hint=error.hint,
            retry_after_seconds=error.retry_after_seconds,
            details=details,
        )
    if error.status == 404 or codes & {"erroritemnotfound", "itemnotfound"}:
        return NotFound(
            error.message,
            hint="the id does not exist (any more): list or search again for a current id",
            details=details,
        )
    if error.status == 412 or "errorirresolvableconflict" in codes:
        return Conflict(
            "the item changed since it was read; nothing was changed",
            hint="read it again and decide again",
            details=details,
        )
    if error.status == 403 or codes & {"erroraccessdenied", "accessdenied"}:
        return InsufficientScope(error.message, hint=error.hint, details=details)
    return ActionFailure(
        error.message,
        hint=error.hint,
        retry_safe=error.retry_safe or 400 <= (error.status or 0) < 500,
        details=details,
    )
