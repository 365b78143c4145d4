"""Drafts as MIME and the frozen message a confirmation sends (pure).

Drafts are built with the stdlib ``email`` package under ``policy.SMTP`` (CRLF lines,
RFC 5322 headers, encoded words where needed), with a fresh Message-ID and, for replies,
In-Reply-To and References (RFC 5322 section 3.6.4). Freezing reads the draft's exact
bytes (after the bounded reader has checked its depth, parts and headers, so the stdlib
parser meets nothing it chokes on), drops Bcc from the headers (it goes in the envelope
only) and serialises again: those bytes and the envelope are what SMTP sends. The digest
covers both: the record has the neutral shape every backend freezes to (``id``, ``from``,
``to``, ``cc``, ``bcc``, ``reply_to``, ``subject``, ``body`` with its ``content_type``,
``attachments`` by name, type, size and SHA-256) plus the threading headers, the envelope
and the SHA-256 of the MIME bytes themselves, digested by ``mail.digest`` like every
backend's: a byte changed anywhere is another digest.
"""

from __future__ import annotations

import email.message
import email.policy
import email.utils
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from mfconnector.mail.digest import digest_of
from mfconnector.mail.model import Person
from mfconnector.mail.outgoing import DraftContent, FrozenOutgoing, ReplyKind, quoted_original
from mfconnector.mail.refs import Reference

__all__ = [
    "Original",
    "build_draft",
    "freeze_bytes",
    "reply_content",
]

_POLICY = email.policy.SMTP
_PREFIX = re.compile(r"^\s*((re|aw|sv|fwd?|wg)\s*:\s*)+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Original:
    """What a reply or forward takes from the message it answers."""

    message_id: str | None
    references: str | None
    subject: str | None
    sender: Person | None
    reply_to: Sequence[Person]
    to: Sequence[Person]
    cc: Sequence[Person]
    text: str
    raw: bytes | None = None
    """The whole original, for a forward (attached as message/rfc822)."""


def _address(person: Person) -> str:
    return email.utils.formataddr((person.name, person.address)) if person.name else person.address


def _domain(address: str) -> str:
    return address.rsplit("@", 1)[-1] if "@" in address else "localhost"


def build_draft(
    content: DraftContent,
    sender: Person,
    *,
    attachments: Sequence[tuple[str, str, bytes]] = (),
    in_reply_to: str | None = None,
    references: str | None = None,
    attached_message: bytes | None = None,
) -> EmailMessage:
    """A new draft's MIME. ``attachments``: (name, content type, bytes), already bounded."""
    message = EmailMessage(policy=_POLICY)
    message["From"] = _address(sender)
    for header, group in (("To", content.to), ("Cc", content.cc), ("Bcc", content.bcc)):
        if group:
            message[header] = ", ".join(_address(p) for p in group)
    message["Subject"] = content.subject or ""
    message["Date"] = email.utils.formatdate(localtime=False)
    message["Message-ID"] = email.utils.make_msgid(domain=_domain(sender.address))
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    if references:
        message["References"] = references
    message["MIME-Version"] = "1.0"
    text = content.text or ""
    if content.content_type == "html":
        message.set_content(text, subtype="html", cte="quoted-printable")
    else:
        message.set_content(text, cte="quoted-printable")
    for name, content_type, data in attachments:
        main, _, sub = content_type.partition("/")
        message.add_attachment(data, maintype=main, subtype=sub or "octet-stream", filename=name)
    if attached_message is not None:
        # The caller has bounded the original with the MIME reader: safe for the stdlib.
        forwarded = email.message_from_bytes(attached_message, policy=_POLICY)
        message.add_attachment(forwarded, filename="forwarded message.eml")
    return message


def reply_content(
    original: Original, kind: ReplyKind, content: DraftContent, me: str, *, quote_chars: int
) -> tuple[DraftContent, str | None, str | None]:
    """The reply's recipients, subject and quoted text (at most ``quote_chars`` of the
    original, ``reply_quote_chars``); and its In-Reply-To, References."""
    subject = _PREFIX.sub("", original.subject or "")
    quoted = quoted_original(original.text, quote_chars)
    if kind == "forward":
        intro = "---------- Forwarded message ----------"
        to, cc = list(content.to), list(content.cc)
        subject = "Fwd: " + subject
        body = (content.text or "") + f"\n\n{intro}\n" + _header_lines(original) + "\n" + quoted
    else:
        answer = list(original.reply_to) or ([original.sender] if original.sender else [])
        to = list(content.to) or answer
        cc = list(content.cc)
        if kind == "reply_all" and not content.to:
            seen = {p.address.lower() for p in to} | {me.lower()}
            for person in [*original.to, *original.cc]:
                if person.address and person.address.lower() not in seen:
                    seen.add(person.address.lower())
                    cc.append(person)
        subject = "Re: " + subject
        who = original.sender.shown() if original.sender else "the sender"
        body = (
            (content.text or "")
            + f"\n\n{who} wrote:\n"
            + "\n".join("> " + line for line in quoted.splitlines())
        )
    references = None
    if original.message_id:
        references = " ".join(x for x in (original.references or "", original.message_id) if x)
    made = DraftContent(
        to=tuple(to),
        cc=tuple(cc),
        bcc=tuple(content.bcc),
        subject=content.subject or subject,
        text=body,
        content_type="text",
        attachments=content.attachments,
    )
    return made, original.message_id, references


def _header_lines(original: Original) -> str:
    lines = []
    if original.sender:
        lines.append(f"From: {original.sender.shown()}")
    if original.subject:
        lines.append(f"Subject: {original.subject}")
    if original.to:
        lines.append("To: " + ", ".join(p.shown() for p in original.to))
    return "\n".join(lines) + "\n"


def _people(message: EmailMessage, header: str) -> list[dict[str, str]]:
    values = message.get_all(header) or []
    return [
        {"name": name, "address": address}
        for name, address in email.utils.getaddresses([str(v) for v in values])
        if address
    ]


def _part_bytes(part: EmailMessage) -> bytes:
    """An attachment's decoded bytes; an attached message's own bytes."""
    if part.get_content_maintype() == "message":
        inner = part.get_payload(0) if part.is_multipart() else None
        return inner.as_bytes(policy=_POLICY) if isinstance(inner, email.message.Message) else b""
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


def freeze_bytes(raw: bytes, envelope_from: str, draft: Reference) -> FrozenOutgoing:
    """The draft ``raw`` (checked by the bounded reader first) as it will be sent."""
    parsed = email.message_from_bytes(raw, policy=_POLICY)
    assert isinstance(parsed, EmailMessage)
    to, cc, bcc = _people(parsed, "To"), _people(parsed, "Cc"), _people(parsed, "Bcc")
    del parsed["Bcc"]
    if parsed["Message-ID"] is None:
        parsed["Message-ID"] = email.utils.make_msgid(domain=_domain(envelope_from))
    if parsed["Date"] is None:
        parsed["Date"] = email.utils.formatdate(localtime=False)
    mime = parsed.as_bytes(policy=_POLICY)
    body = parsed.get_body(("plain", "html"))
    text = body.get_content() if isinstance(body, EmailMessage) else ""
    content_type = (
        "html"
        if isinstance(body, EmailMessage) and body.get_content_subtype() == "html"
        else "text"
    )
    attachments = []
    for part in parsed.iter_attachments():
        assert isinstance(part, EmailMessage)
        data = _part_bytes(part)
        attachments.append(
            {
                "name": part.get_filename() or "attachment",
                "content_type": part.get_content_type(),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "inline": part.get_content_disposition() == "inline",
                "content_id": str(part["Content-ID"] or ""),
            }
        )
    envelope_to = list(dict.fromkeys(p["address"] for p in [*to, *cc, *bcc]))
    message_id = str(parsed["Message-ID"]).strip()
    senders = _people(parsed, "From")
    record: dict[str, Any] = {
        "id": str(draft),
        "from": senders[0] if senders else {"name": "", "address": envelope_from},
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "reply_to": _people(parsed, "Reply-To"),
        "subject": str(parsed["Subject"] or ""),
        "body": {"content_type": content_type, "content": text.replace("\r\n", "\n")},
        "attachments": attachments,
        "internet_message_id": message_id,
        "in_reply_to": str(parsed["In-Reply-To"] or ""),
        "references": str(parsed["References"] or ""),
        "envelope": {"from": envelope_from, "to": envelope_to},
        "mime_bytes": len(mime),
        "mime_sha256": hashlib.sha256(mime).hexdigest(),
    }
    return FrozenOutgoing(
        record=record,
        digest=digest_of(record),
        draft=draft,
        mime=mime,
        envelope_from=envelope_from,
        envelope_to=tuple(envelope_to),
        message_id=message_id,
    )
