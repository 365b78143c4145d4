"""Drafts to write and the frozen message a confirmation sends, exactly once.

Freezing is the backend's: Graph's frozen message is the draft itself (re-read and
re-digested at confirm, so an edit in between is a ``Conflict``); SMTP's and Gmail's is the
exact MIME bytes and the envelope. The digest covers everything the person was shown:
every recipient, the subject, the whole text and each attachment's name, size and SHA-256.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mfconnector.errors import ToolInputError
from mfconnector.mail.model import Attachment, Person
from mfconnector.mail.refs import Reference

__all__ = [
    "DraftAttachment",
    "DraftContent",
    "DraftMade",
    "DraftRevision",
    "FrozenOutgoing",
    "ReplyKind",
    "SendResult",
    "quoted_original",
    "resolved_attachment",
]

ReplyKind = Literal["reply", "reply_all", "forward"]
QUOTE_CUT = "\n[... the rest of the original is not quoted]"
"""What follows a quote cut at ``reply_quote_chars``."""


@dataclass(frozen=True, slots=True)
class DraftAttachment:
    """An attachment to put on a draft: bytes the tools already checked and bounded, or a
    provider object to copy (a drive file, another message's attachment) by reference."""

    name: str
    content_type: str
    data: bytes | None = None
    source: Reference | None = None
    size: int | None = None
    sha256: str | None = None
    container: Reference | None = None
    """Where ``source`` lives: the message of an attachment, the drive of a file (None: the
    account's own drive)."""
    source_kind: Literal["file", "attachment"] = "file"
    """``source`` is a file of a drive, or an attachment of the ``container`` message."""
    version: str | None = None
    """The source's content version as the backend read it (Graph's cTag): a confirmation
    refuses to send when it changed (``MailBackend.source_version``)."""
    named: bool = False
    """``name`` was given by the caller (else the backend fills in the source's own)."""
    typed: bool = False
    """``content_type`` was given by the caller."""


def quoted_original(text: str, quote_chars: int) -> str:
    """At most ``quote_chars`` of the original's text (``reply_quote_chars``) for a reply or
    forward; past it a line says the rest is not quoted, so a cut quote is not taken for the
    whole message. Trailing white space is not counted (nor quoted)."""
    text = text.rstrip()
    if len(text) <= quote_chars:
        return text
    return text[:quote_chars] + QUOTE_CUT


def resolved_attachment(
    attachment: DraftAttachment, found: Attachment, version: str
) -> DraftAttachment:
    """A draft attachment that copies another message's attachment, with the source's own
    name and type where the caller gave none, its size and ``version``. An attached email
    is refused: it is forwarded, not attached as a file."""
    if found.kind != "file":
        raise ToolInputError(
            f"attachment {found.name[:80]!r} is an attached email, not a file; nothing was created",
            hint="forward the message instead (mail_prepare forward)",
        )
    return dataclasses.replace(
        attachment,
        name=attachment.name if attachment.named else found.name,
        content_type=attachment.content_type
        if attachment.typed
        else (found.content_type or "application/octet-stream"),
        size=found.size,
        version=version,
    )


@dataclass(frozen=True, slots=True)
class DraftContent:
    """What a new draft, reply or forward says. Addresses are checked by the tools."""

    to: Sequence[Person] = ()
    cc: Sequence[Person] = ()
    bcc: Sequence[Person] = ()
    subject: str | None = None
    text: str | None = None
    content_type: Literal["text", "html"] = "text"
    attachments: Sequence[DraftAttachment] = ()


@dataclass(frozen=True, slots=True)
class DraftMade:
    """A draft a backend wrote, and each attachment as it was attached: ``size`` and
    ``sha256`` of the bytes that went onto the draft (read by the backend itself)."""

    ref: Reference
    attached: Sequence[DraftAttachment] = ()


@dataclass(frozen=True, slots=True)
class DraftRevision:
    """A revised copy of a draft: the fields named in ``changed`` (to, cc, bcc, subject,
    text, attachments) take ``content``'s values, everything else stays as the draft has it
    (threading, inline images). The original draft is kept."""

    content: DraftContent
    changed: frozenset[str]


@dataclass(frozen=True, slots=True)
class FrozenOutgoing:
    """A message exactly as it will be sent, and the digest a confirmation must match.

    ``record`` is the neutral, canonical description the digest covers and the preview
    shows (recipients, subject, text, attachments by name, size and SHA-256); ``draft`` is
    the provider draft it came from (Graph, Gmail drafts); ``mime`` the exact bytes and
    ``envelope`` the SMTP envelope (IMAP/SMTP, Gmail raw sends).
    """

    record: Mapping[str, Any]
    digest: str
    draft: Reference | None = None
    mime: bytes | None = None
    envelope_from: str | None = None
    envelope_to: Sequence[str] = ()
    message_id: str | None = None
    """The Message-ID header, by which ``verify_sent`` finds the sent copy."""
    native: Mapping[str, Any] = field(default_factory=dict)
    folder_role: str | None = None
    """The role of the folder the draft is in now ("drafts" while it may be sent)."""


@dataclass(frozen=True, slots=True)
class SendResult:
    """What one send attempt did. ``unknown``: the request left and no clear answer came
    back (connection lost after DATA, a timeout, a 5xx): never retried; the tools record it
    and tell the person how to check. ``not_sent``: nothing left this process (the sign-in
    stalled, the connection was refused), so the preparation may still be sent.
    ``error_code`` (rejected, not_sent): the failure's code, for the recorded outcome."""

    outcome: Literal["sent", "rejected", "unknown", "not_sent"]
    detail: str | None = None
    provider_reply: str | None = None
    sent_copy: Literal["filed_by_provider", "appended", "append_failed", "none"] = (
        "filed_by_provider"
    )
    """Where the sent copy is: Graph and Gmail file it themselves; SMTP appends it to Sent
    (``append_sent``); a failed append never turns a sent message into an error."""
    error_code: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """The provider's facts for the recorded outcome (``provider_status``, the HTTP status
    where there is one, so it never reads as the preparation's ``status``; ``provider_code``)."""
