"""Failures of the acting tools, each with a stable ``error_code`` and ``retry_safe``.

``WriteError`` carries the codes of the acting layer itself (gates, preparations, the state
file, the person's answer); a backend's failures are ``mail.failures`` classes with the
same shape.

The codes an assistant can branch on (docs/TOOLS.md lists what each one means):

    invalid_arguments      the call cannot be served as given; nothing was requested
    stale_reference        an id of another account, or one this server did not hand out
    conflict               the message, draft or preparation changed since it was read
    not_found              no such message, folder or preparation
    unsupported            not possible here (a system folder, this provider, this cloud)
    gate_disabled          the operator has not turned this tool on (the flag is named)
    insufficient_scope     the sign-in lacks a permission (the re-consent command is named)
    throttled              the provider refused for now; nothing was done
    outcome_unknown        a change was sent and no answer came: check before repeating
    expired                a preparation past its 15 minutes
    state_unavailable      the local state file cannot be used (named)
    auth_required          not signed in
    provider_error         the provider refused for another reason (its code is included)
    declined               the person declined or dismissed the question; nothing was done
    confirmation_required  --confirm user, and this client cannot ask the person
    confirmation_invalid   a requestState that is not ours for this call, or a bad answer

``retry_safe`` says whether repeating the same call cannot do something twice.
``outcome`` (for multi-request operations) says what was done and what was not.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import AuthError, ToolError, ToolInputError
from mfconnector.mail.failures import ActionFailure

__all__ = ["WriteError", "as_write_error"]


class WriteError(ToolError):
    """A failed acting call: code, whether repeating is safe, and any partial outcome."""

    kind = "write"

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
        payload: dict[str, Any] = {
            "error_code": self.error_code,
            "message": self.message,
            "retry_safe": self.retry_safe,
        }
        if self.hint:
            payload["hint"] = self.hint
        payload.update(self.details)
        if self.outcome is not None:
            payload["outcome"] = self.outcome
        return payload


def as_write_error(error: ToolError, *, outcome: dict[str, Any] | None = None) -> ToolError:
    """Any failure of an acting call in the one shape, with the partial ``outcome``.

    Backends classify their providers' answers (``mail.failures``); what is left here is
    the tools' own input errors, sign-in failures and anything unclassified."""
    if isinstance(error, WriteError | ActionFailure):
        if outcome is not None and error.outcome is None:
            error.outcome = outcome
        return error
    if isinstance(error, ToolInputError):
        return WriteError("invalid_arguments", error.message, hint=error.hint, outcome=outcome)
    if isinstance(error, AuthError):
        return WriteError(
            "auth_required", error.message, hint=error.hint, retry_safe=True, outcome=outcome
        )
    return ActionFailure(error.message, hint=error.hint, outcome=outcome)
