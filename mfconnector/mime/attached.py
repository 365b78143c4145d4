"""An attached email (``message/rfc822``) as the mail model's ``Message``: one mapping of
its parsed headers for every backend that reads one from bytes (IMAP, Gmail).

Each string is cut to ``field_chars`` and each address list to ``list_field_items``; the
header values themselves are already bounded by the reader (``mime_header_bytes``). The
body is the backend's own (how it converts HTML and what it notes), passed in.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import getaddresses, parsedate_to_datetime

from mfconnector.limits import Limits
from mfconnector.mail.model import Body, Message, Person
from mfconnector.mail.refs import Reference
from mfconnector.mime.reader import MimeMessage

__all__ = ["attached_message", "header_date"]


def attached_message(parsed: MimeMessage, ref: Reference, body: Body, limits: Limits) -> Message:
    """The attached email's headers and ``body``; ``received`` is its Date (it has no
    arrival of its own in this mailbox). It says whether it has attachments of its own,
    never their bytes."""
    headers = parsed.headers

    def group(name: str) -> tuple[Person, ...]:
        return _people(headers.get(name), limits)

    senders = group("from")
    sent = header_date(headers.get("date"))
    return Message(
        ref=ref,
        subject=_clip(headers.get("subject"), limits),
        sender=senders[0] if senders else None,
        received=sent,
        unread=False,
        to=group("to"),
        cc=group("cc"),
        reply_to=group("reply-to"),
        sent=sent,
        internet_message_id=_clip(headers.get("message-id"), limits),
        body=body,
        has_attachments=bool(parsed.attachments),
    )


def _people(value: str | None, limits: Limits) -> tuple[Person, ...]:
    if not value:
        return ()
    return tuple(
        Person(name[: limits.field_chars], address[: limits.field_chars])
        for name, address in getaddresses([value])[: limits.list_field_items]
        if address
    )


def header_date(value: str | None) -> datetime | None:
    """The Date header in UTC (a date without a zone read as UTC); None when unreadable."""
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value[:200])
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _clip(value: str | None, limits: Limits) -> str | None:
    return value[: limits.field_chars] if value is not None else None
