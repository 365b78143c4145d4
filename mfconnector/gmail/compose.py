"""Drafts as MIME (the stdlib ``email`` package), and a draft frozen as its exact bytes.

A Gmail draft is a message; a send here is ``messages.send`` with the raw bytes that were
frozen, so what the person confirmed is what leaves, byte for byte, even if the draft is
edited in Gmail afterwards (the confirmation's digest then no longer matches the draft,
and the tools refuse). Replies carry ``In-Reply-To`` and ``References`` and are sent with
the original's ``threadId`` (Gmail's "Managing threads" rules: references plus a matching
subject). Every message gets a ``Message-ID`` here, by which ``verify_sent`` finds it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, formataddr, getaddresses, make_msgid
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.limits import Limits
from mfconnector.mail.model import Person
from mfconnector.mail.outgoing import DraftContent, ReplyKind
from mfconnector.mime import read_message

__all__ = [
    "DIGEST_PREFIX",
    "ReplyContext",
    "build_mime",
    "digest_of",
    "frozen_record",
    "reply_recipients",
    "reply_subject",
    "revised_mime",
]

DIGEST_PREFIX = b"mfconnector-gmail-outgoing-v1\0"


def _addresses(people: Sequence[Person]) -> str:
    return ", ".join(formataddr((p.name, p.address)) if p.name else p.address for p in people)


class ReplyContext:
    """What a reply or forward takes from the original message."""

    def __init__(
        self,
        *,
        thread_id: str | None,
        message_id: str | None,
        references: str | None,
        subject: str | None,
        quoted: str | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.message_id = message_id
        self.references = references
        self.subject = subject
        self.quoted = quoted


def reply_subject(kind: ReplyKind, subject: str | None) -> str:
    prefix = "Fwd: " if kind == "forward" else "Re: "
    original = (subject or "").strip()
    if original.lower().startswith(prefix.lower().strip()):
        return original
    return prefix + original


def reply_recipients(
    content: DraftContent, kind: ReplyKind, headers: Mapping[str, str], me: str
) -> DraftContent:
    """A reply's recipients when the caller named none, as Gmail's own Reply and Reply all
    choose them: Reply-To (else From); reply-all adds the original's To and Cc, less the
    signed-in address and anyone already named."""
    if kind == "forward" or content.to:
        return content
    answer = [Person(p["name"], p["address"]) for p in _people(headers.get("reply-to"))]
    to = answer or [Person(p["name"], p["address"]) for p in _people(headers.get("from"))]
    cc = list(content.cc)
    if kind == "reply_all":
        seen = {p.address.lower() for p in [*to, *cc]} | {me.lower()}
        for p in _people(headers.get("to")) + _people(headers.get("cc")):
            if p["address"].lower() not in seen:
                seen.add(p["address"].lower())
                cc.append(Person(p["name"], p["address"]))
    to = [p for p in to if p.address.lower() != me.lower()] or to
    return replace(content, to=tuple(to), cc=tuple(cc))


def build_mime(
    content: DraftContent,
    *,
    sender: str,
    now: datetime | None = None,
    reply: ReplyContext | None = None,
    kind: ReplyKind | None = None,
) -> bytes:
    """RFC 5322 bytes of a new message (CRLF line ends, as Gmail's ``raw`` wants)."""
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    if content.to:
        message["To"] = _addresses(content.to)
    if content.cc:
        message["Cc"] = _addresses(content.cc)
    if content.bcc:
        message["Bcc"] = _addresses(content.bcc)
    subject = content.subject
    if reply is not None and kind is not None and subject is None:
        subject = reply_subject(kind, reply.subject)
    message["Subject"] = subject or ""
    message["Date"] = format_datetime(now or datetime.now(UTC))
    domain = sender.rsplit("@", 1)[-1] if "@" in sender else "mfconnector.invalid"
    message["Message-ID"] = make_msgid(domain=domain)
    if reply is not None and kind != "forward" and reply.message_id:
        message["In-Reply-To"] = reply.message_id
        chain = " ".join(filter(None, [reply.references, reply.message_id]))
        message["References"] = chain
    text = content.text or ""
    if reply is not None and reply.quoted:
        text = f"{text}\n\n{reply.quoted}" if text else reply.quoted
    if content.content_type == "html":
        message.set_content(text, subtype="html")
    else:
        message.set_content(text)
    for attachment in content.attachments:
        if attachment.data is None:
            raise ToolInputError(
                f"attachment {attachment.name!r}: Gmail drafts take attached bytes only "
                "(no drive files or other messages' attachments)"
            )
        main, _, sub = attachment.content_type.partition("/")
        message.add_attachment(
            attachment.data,
            maintype=main or "application",
            subtype=sub or "octet-stream",
            filename=attachment.name,
        )
    return message.as_bytes()


def _people(value: str | None) -> list[dict[str, str]]:
    return [
        {"name": name, "address": address}
        for name, address in getaddresses([value or ""])
        if address
    ]


def frozen_record(raw: bytes, limits: Limits, draft: str = "") -> dict[str, Any]:
    """What the person is shown and the digest covers, in the neutral record every backend
    writes (``id``, ``from``, ``to``, ``cc``, ``bcc``, ``reply_to``, ``subject``, ``body``,
    ``attachments`` with name, type, size and SHA-256, the threading headers, the envelope
    and the bytes' own SHA-256), read from the exact bytes that will be sent.

    Refuses (``ToolInputError``) a draft the bounded MIME reader could not read whole:
    nothing is sent that was not shown in full.
    """
    bounded = read_message(raw, limits)
    if bounded.truncated or bounded.notes:
        raise ToolInputError(
            "this draft cannot be shown in full within the MIME limits, so it is not sent: "
            + "; ".join(bounded.notes[:3])
        )
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    attachments = []
    html = bounded.text is None and bounded.html is not None
    text = bounded.text if bounded.text is not None else (bounded.html or "")
    for part in parsed.walk():
        if part.is_multipart():
            continue
        data = part.get_payload(decode=True)
        data = data if isinstance(data, bytes) else b""
        if part.get_filename() or part.get_content_disposition() == "attachment":
            attachments.append(
                {
                    "name": part.get_filename() or "",
                    "content_type": part.get_content_type(),
                    "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "inline": part.get_content_disposition() == "inline",
                    "content_id": str(part.get("Content-ID") or ""),
                }
            )
    senders = _people(parsed.get("From"))
    to, cc, bcc = _people(parsed.get("To")), _people(parsed.get("Cc")), _people(parsed.get("Bcc"))
    sender = senders[0] if senders else {"name": "", "address": ""}
    return {
        "id": draft,
        "from": sender,
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "reply_to": _people(parsed.get("Reply-To")),
        "subject": str(parsed.get("Subject") or ""),
        "body": {"content_type": "html" if html else "text", "content": text},
        "attachments": attachments,
        "internet_message_id": str(parsed.get("Message-ID") or "").strip(),
        "in_reply_to": str(parsed.get("In-Reply-To") or ""),
        "references": str(parsed.get("References") or ""),
        "envelope": {
            "from": sender["address"],
            "to": list(dict.fromkeys(p["address"] for p in [*to, *cc, *bcc])),
        },
        "mime_sha256": hashlib.sha256(raw).hexdigest(),
        "mime_bytes": len(raw),
    }


def digest_of(record: Mapping[str, Any]) -> str:
    """SHA-256 of the record's canonical JSON (it includes the bytes' own SHA-256)."""
    data = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(DIGEST_PREFIX + data.encode()).hexdigest()


REVISABLE = frozenset({"to", "cc", "bcc", "subject", "text", "attachments"})


def revised_mime(raw: bytes, content: DraftContent, changed: frozenset[str]) -> bytes:
    """A new message from a draft's bytes: the ``changed`` fields take ``content``'s values,
    everything else stays (From, In-Reply-To, References: the threading), with a new
    Date and Message-ID (it is a new message). The source draft is not touched."""
    unknown = changed - REVISABLE
    if unknown:
        raise ToolInputError("cannot revise " + ", ".join(sorted(unknown)))
    source = BytesParser(policy=policy.default).parsebytes(raw)
    body = source.get_body(preferencelist=("plain", "html"))
    old_text = body.get_content() if body is not None else ""
    html = body is not None and body.get_content_type() == "text/html"
    old_files = [part for part in source.iter_attachments() if isinstance(part, EmailMessage)]

    def people(name: str) -> Sequence[Person]:
        return [Person(n, a) for n, a in getaddresses([str(source.get(name) or "")]) if a]

    merged = DraftContent(
        to=content.to if "to" in changed else people("To"),
        cc=content.cc if "cc" in changed else people("Cc"),
        bcc=content.bcc if "bcc" in changed else people("Bcc"),
        subject=content.subject if "subject" in changed else str(source.get("Subject") or ""),
        text=content.text if "text" in changed else old_text,
        content_type=content.content_type if "text" in changed else ("html" if html else "text"),
        attachments=content.attachments if "attachments" in changed else (),
    )
    reply = None
    if source.get("In-Reply-To"):
        reply = ReplyContext(
            thread_id=None,
            message_id=str(source["In-Reply-To"]),
            references=None,
            subject=merged.subject,
        )
    out = build_mime(merged, sender=str(source.get("From") or ""), reply=reply, kind="reply")
    if reply is not None and source.get("References"):  # keep the whole chain as it was
        message = BytesParser(policy=policy.SMTP).parsebytes(out)
        del message["References"]
        message["References"] = str(source["References"])
        out = message.as_bytes()
    if "attachments" not in changed and old_files:
        message = BytesParser(policy=policy.SMTP).parsebytes(out)
        if not message.is_multipart():
            message.make_mixed()
        for part in old_files:
            message.attach(part)
        out = message.as_bytes()
    return out
