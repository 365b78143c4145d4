"""FETCH answers as neutral message summaries and messages (pure).

Flags map as IMAP defines them: no ``\\Seen`` is unread, ``\\Flagged`` is flagged,
``\\Draft`` a draft; keywords (flags without a backslash) are the categories, except the
few that clients set for their own bookkeeping. The MODSEQ (CONDSTORE) is the change token
``unchanged_since`` compares. Received is the INTERNALDATE (when the server took the
message), sent the Date header.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from mfconnector.imap.refs import MessageAddress, attachment_reference, message_reference
from mfconnector.imap.results import Address, BodyPart, FetchedMessage
from mfconnector.mail.model import Attachment, Body, Message, MessageSummary, Person
from mfconnector.mail.refs import AccountTag, Reference
from mfconnector.mime.attached import header_date

__all__ = [
    "SUMMARY_ITEMS",
    "attachments_of",
    "internal_date",
    "message_of",
    "people",
    "summary_of",
]

SUMMARY_ITEMS = ("UID", "FLAGS", "RFC822.SIZE", "INTERNALDATE", "ENVELOPE", "BODYSTRUCTURE")
"""What a listing fetches per message (MODSEQ added where CONDSTORE is on)."""
_BOOKKEEPING = frozenset(
    {"$forwarded", "$mdnsent", "$junk", "$notjunk", "$phishing", "$submitpending", "$submitted",
     "nonjunk", "junk", "$hasattachment", "$hasnoattachment", "$answered"}
)  # fmt: skip
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
)}  # fmt: skip


def internal_date(value: str | None) -> datetime | None:
    """``17-Jul-1996 02:44:25 -0700`` (RFC 3501 date-time) as an aware UTC datetime."""
    if not value:
        return None
    try:
        day_part, clock, zone = value.strip().split(" ")
        day, month, year = day_part.split("-")
        hours, minutes, seconds = (int(x) for x in clock.split(":"))
        sign = -1 if zone[0] == "-" else 1
        offset = sign * (int(zone[1:3]) * 60 + int(zone[3:5]))
        local = datetime(int(year), _MONTHS[month.lower()], int(day), hours, minutes, seconds)
    except (ValueError, KeyError, IndexError):
        return None
    from datetime import timedelta

    return (local - timedelta(minutes=offset)).replace(tzinfo=UTC)


def people(addresses: Iterable[Address]) -> tuple[Person, ...]:
    return tuple(
        Person(address.name or "", address.email or "")
        for address in addresses
        if address.email or address.name
    )


def _categories(flags: frozenset[str]) -> tuple[str, ...]:
    return tuple(
        sorted(f for f in flags if not f.startswith("\\") and f.lower() not in _BOOKKEEPING)
    )


def attachments_of(
    tag: AccountTag, where: MessageAddress, parts: Sequence[BodyPart] | None
) -> tuple[Attachment, ...]:
    """The attachments BODYSTRUCTURE lists (file parts and attached messages)."""
    out = []
    for part in parts or ():
        is_message = part.mime_type == "message/rfc822"
        if not (part.is_attachment or is_message):
            continue
        inline = part.disposition == "inline"
        out.append(
            Attachment(
                ref=attachment_reference(tag, where, part.path),
                name=part.filename or ("attached message.eml" if is_message else "attachment"),
                content_type=part.mime_type,
                size=part.size,
                kind="message" if is_message else "file",
                inline=inline,
            )
        )
    return tuple(out)


def summary_of(
    tag: AccountTag,
    folder: str,
    uidvalidity: int,
    fetched: FetchedMessage,
    folder_ref: Reference | None = None,
) -> MessageSummary:
    where = MessageAddress(folder, uidvalidity, fetched.uid)
    envelope = fetched.envelope
    flags = fetched.flags or frozenset()
    senders = people(envelope.from_) if envelope else ()
    return MessageSummary(
        ref=message_reference(tag, folder, uidvalidity, fetched.uid),
        subject=envelope.subject if envelope else None,
        sender=senders[0] if senders else None,
        received=internal_date(fetched.internal_date),
        unread="\\Seen" not in flags,
        flag="flagged" if "\\Flagged" in flags else "none",
        has_attachments=bool(attachments_of(tag, where, fetched.parts)),
        is_draft="\\Draft" in flags,
        categories=_categories(flags),
        folder=folder_ref,
        folder_name=folder,
        to=people(envelope.to) if envelope else (),
        cc=people(envelope.cc) if envelope else (),
        change_token=str(fetched.modseq) if fetched.modseq is not None else None,
        native=_native(fetched),
    )


def _native(fetched: FetchedMessage) -> dict[str, object]:
    native: dict[str, object] = {"uid": fetched.uid}
    if fetched.size is not None:
        native["size"] = fetched.size
    if fetched.modseq is not None:
        native["modseq"] = fetched.modseq
    return native


def message_of(
    summary: MessageSummary,
    fetched: FetchedMessage,
    attachments: tuple[Attachment, ...],
    body: Body | None,
    references: str | None,
    folder_ref: Reference | None,
) -> Message:
    envelope = fetched.envelope
    sender = people(envelope.sender) if envelope else ()
    on_behalf = sender[0] if sender and summary.sender and sender[0] != summary.sender else None
    native = dict(summary.native)
    if envelope and envelope.in_reply_to:
        native["in_reply_to"] = envelope.in_reply_to[:1000]
    if references:
        native["references"] = references[:4000]
    return Message(
        ref=summary.ref,
        subject=summary.subject,
        sender=summary.sender,
        received=summary.received,
        unread=summary.unread,
        flag=summary.flag,
        has_attachments=bool(attachments),
        is_draft=summary.is_draft,
        categories=summary.categories,
        folder=folder_ref,
        folder_name=summary.folder_name,
        to=summary.to,
        cc=summary.cc,
        change_token=summary.change_token,
        native=native,
        bcc=people(envelope.bcc) if envelope else (),
        reply_to=people(envelope.reply_to) if envelope else (),
        on_behalf=on_behalf,
        sent=header_date(envelope.date) if envelope else None,
        internet_message_id=(envelope.message_id or None) if envelope else None,
        body=body,
        attachments=attachments,
    )
