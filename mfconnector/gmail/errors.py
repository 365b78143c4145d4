"""Google's error answers as the neutral ``mail.failures``, in our words.

Google APIs answer ``{"error": {"code", "message", "status", "errors": [{"reason", ...}]}}``
(the Gmail API's "Resolve errors" guide). The reason decides: ``rateLimitExceeded`` and
``userRateLimitExceeded`` (403 or 429) are throttling, ``insufficientPermissions`` (or a
``WWW-Authenticate`` with ``insufficient_scope``) is a missing scope and names the login
command that grants it, 404 is ``not_found``, 409 ``conflict``. Google's own message is kept
shortened, never a URL or a token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mfconnector.mail.failures import (
    ActionFailure,
    Conflict,
    InsufficientScope,
    NotFound,
    Throttled,
)

__all__ = [
    "RATE_REASONS",
    "GmailUnreachable",
    "error_reason",
    "failure_from_answer",
    "is_rate_limited",
    "provider_details",
]

RATE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
_MESSAGE_CHARS = 300


class GmailUnreachable(ActionFailure):
    """No connection to the Gmail API: the request never left, nothing was done."""

    error_code = "provider_unreachable"
    default_retry_safe = True


def _error_object(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {}
    error = value.get("error") if isinstance(value, dict) else None
    return error if isinstance(error, dict) else {}


def error_reason(body: bytes) -> tuple[str | None, str]:
    """Google's first ``reason`` and its message (shortened; empty when there is none)."""
    error = _error_object(body)
    reason = None
    errors = error.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        found = errors[0].get("reason")
        reason = found if isinstance(found, str) else None
    if reason is None and isinstance(error.get("status"), str):
        reason = error["status"]
    message = error.get("message")
    text = message if isinstance(message, str) else ""
    return (reason[:80] if reason else None), " ".join(text.split())[:_MESSAGE_CHARS]


def is_rate_limited(status: int, body: bytes) -> bool:
    """429, or a 403 whose reason is one of Google's rate-limit reasons."""
    if status == 429:
        return True
    return status == 403 and error_reason(body)[0] in RATE_REASONS


def provider_details(
    status: int, reason: str | None, retry_after: float | None = None
) -> dict[str, Any]:
    details: dict[str, Any] = {"provider": "gmail", "status": status}
    if reason:
        details["provider_code"] = reason
    if retry_after is not None:
        details["retry_after_seconds"] = retry_after
    return details


def failure_from_answer(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    login_command: str,
    retry_after: float | None = None,
) -> ActionFailure:
    """The failure a non-success answer means. ``login_command`` is what grants more scope."""
    reason, google_says = error_reason(body)
    said = f": {google_says}" if google_says else ""
    details = provider_details(status, reason)
    challenge = headers.get("www-authenticate", "")
    if status in (403, 429) and (status == 429 or reason in RATE_REASONS):
        wait = retry_after if retry_after is not None else 1.0
        return Throttled(
            f"Gmail is limiting requests for this user ({status}{said})",
            retry_after_seconds=wait,
            hint=f"nothing was done; retry in {wait:g} s",
            details=details,
        )
    if status == 403 and (reason == "insufficientPermissions" or "insufficient_scope" in challenge):
        return InsufficientScope(
            "the Gmail sign-in lacks the permission this needs",
            hint=f"run `{login_command}` in a terminal, then retry",
            details=details,
        )
    if status == 401:
        return InsufficientScope(
            "Gmail refused the access token (expired or revoked)",
            hint=f"run `{login_command}` in a terminal, then retry",
            details=details,
        )
    if status == 404:
        return NotFound("Gmail has no such item (any more)", details=details)
    if status == 409:
        return Conflict(f"Gmail refused a conflicting change{said}", details=details)
    if status == 400:
        return ActionFailure(f"Gmail refused the request{said}", details=details)
    if status == 403:
        return ActionFailure(f"Gmail refused the request{said}", details=details)
    return ActionFailure(
        f"Gmail answered {status}{said}",
        retry_safe=status >= 500,
        hint="retry later" if status >= 500 else None,
        details=details,
    )
