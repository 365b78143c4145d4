"""IMAP failures as the neutral action failures (``mail.failures``), in our words.

A read that fails may be repeated (``retry_safe``); a change whose connection broke or
timed out after the command left may have happened (``Ambiguous``, never repeated for the
assistant). Response codes (RFC 5530) decide the rest: NONEXISTENT and TRYCREATE are
``NotFound``, LIMIT, INUSE and UNAVAILABLE ``Throttled``, OVERQUOTA a clear refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mfconnector.imap.errors import (
    ImapCommandError,
    ImapConnectionError,
    ImapError,
    ImapLimitError,
    ImapProtocolError,
    ImapStaleReferenceError,
    ImapTimeoutError,
    ImapUnsupportedError,
    MailSettingsError,
)
from mfconnector.mail.failures import (
    ActionFailure,
    Ambiguous,
    NotFound,
    StaleReference,
    Throttled,
    Unsupported,
)

__all__ = ["classified"]

_DETAILS = {"provider": "imap"}


@contextmanager
def classified(doing: str, *, changes: bool = False) -> Iterator[None]:
    """Run an IMAP exchange; its failures leave as ``mail.failures`` naming ``doing``."""
    try:
        yield
    except ImapError as error:
        raise as_failure(error, doing, changes=changes) from None
    except MailSettingsError as error:
        raise ActionFailure(f"{doing}: {error}", details=dict(_DETAILS)) from None


def as_failure(error: ImapError, doing: str, *, changes: bool) -> ActionFailure:
    details: dict[str, object] = dict(_DETAILS)
    if isinstance(error, ImapStaleReferenceError):
        return StaleReference(
            str(error), hint="list the folder again and use the new ids", details=details
        )
    if isinstance(error, ImapUnsupportedError):
        return Unsupported(f"{doing}: {error}", details={**details, "capability": error.capability})
    if isinstance(error, ImapCommandError):
        return _refused(error, doing, details)
    if isinstance(error, ImapLimitError):
        details.update(limit=error.limit)
    if isinstance(error, (ImapConnectionError, ImapTimeoutError, ImapProtocolError)):
        if changes:
            return Ambiguous(
                f"{doing}: {error}; it may or may not have happened",
                hint="read the message or folder again to see whether it changed; "
                "nothing was repeated",
                details=details,
            )
        return ActionFailure(
            f"{doing}: {error}", retry_safe=True, details=details, hint="try again"
        )
    return ActionFailure(f"{doing}: {error}", details=details)


def _refused(error: ImapCommandError, doing: str, details: dict[str, object]) -> ActionFailure:
    code = (error.code or "").upper()
    details = {**details, "status": error.status, **({"provider_code": code} if code else {})}
    text = (
        f"{doing}: the server said {error.status}{f' [{code}]' if code else ''} {error.text[:300]}"
    )
    if code in ("NONEXISTENT", "TRYCREATE"):
        return NotFound(text.strip(), details=details)
    if code in ("LIMIT", "INUSE", "UNAVAILABLE"):
        return Throttled(text.strip(), details=details)
    if code == "ALREADYEXISTS":
        return ActionFailure(text.strip(), details=details, hint="choose another name")
    return ActionFailure(text.strip(), details=details)
