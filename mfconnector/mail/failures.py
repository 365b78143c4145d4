"""The action failures every backend raises, in the one error shape the server writes.

A backend classifies its provider's answers into these (Graph's 412, IMAP's ``[MODIFIED]``
and Gmail's 409 are all ``Conflict``); the tools never read a provider's error format.
Every payload has ``error_code``, ``message`` and ``retry_safe`` (repeating the same call
cannot do anything twice), perhaps a ``hint``, an ``outcome`` of a multi-step operation,
and the provider's own details (``status``, ``provider_code``, ``request_id``,
``retry_after_seconds``) under their neutral names.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import ToolError

__all__ = [
    "ActionFailure",
    "Ambiguous",
    "Conflict",
    "InsufficientScope",
    "NotFound",
    "StaleReference",
    "Throttled",
    "Unsupported",
]


class ActionFailure(ToolError):
    """A mail or files operation that failed in a way the assistant can branch on."""

    error_code = "provider_error"
    default_retry_safe = False

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        retry_safe: bool | None = None,
        outcome: dict[str, Any] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.retry_safe = self.default_retry_safe if retry_safe is None else retry_safe
        self.outcome = outcome
        self.details = details or {}

    def to_payload(self) -> dict[str, Any]:
        payload = super().to_payload()
        payload["error_code"] = self.error_code
        payload["retry_safe"] = self.retry_safe
        payload.update(self.details)
        if self.outcome is not None:
            payload["outcome"] = self.outcome
        return payload


class NotFound(ActionFailure):
    """No such message, folder, attachment, draft or preparation (any more)."""

    error_code = "not_found"
    default_retry_safe = True


class Conflict(ActionFailure):
    """The item changed since it was read (a change key, MODSEQ or draft digest differs);
    nothing was changed."""

    error_code = "conflict"
    default_retry_safe = True


class StaleReference(ActionFailure):
    """A reference of another account or provider, or one its provider can no longer
    resolve to the same object (IMAP: UIDVALIDITY changed). Refused before any request."""

    error_code = "stale_reference"
    default_retry_safe = True


class Throttled(ActionFailure):
    """The provider refused for now; nothing was done. ``retry_after_seconds`` when known."""

    error_code = "throttled"
    default_retry_safe = True

    def __init__(
        self, message: str, *, retry_after_seconds: float | None = None, **kw: Any
    ) -> None:
        super().__init__(message, **kw)
        self.retry_after_seconds = retry_after_seconds
        if retry_after_seconds is not None:
            self.details.setdefault("retry_after_seconds", retry_after_seconds)


class Ambiguous(ActionFailure):
    """A change left this process and no clear answer came back: it may have happened.
    Never repeated on the assistant's behalf; the hint says how to check."""

    error_code = "outcome_unknown"


class Unsupported(ActionFailure):
    """This account's provider cannot do it (permanent delete without UIDPLUS, conditional
    flags on Gmail, files on IMAP). Raised before any request."""

    error_code = "unsupported"


class InsufficientScope(ActionFailure):
    """The token or login lacks a permission; the hint names the command that grants it."""

    error_code = "insufficient_scope"
