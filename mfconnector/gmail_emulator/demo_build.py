"""Writes the demo's messages as real RFC 5322 bytes, deterministically.

The stdlib ``email`` package picks random multipart boundaries; here every boundary is
derived from the message's Message-ID, so the same demo gives the same bytes (and the same
sizes and ids) on every run. Replies carry In-Reply-To and References, so they join their
thread by Gmail's own rules when filed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from mfconnector.gmail_emulator.store import Mailbox, Message

__all__ = ["Attachment", "DemoWriter", "forwarded"]

_WIRE = policy.default.clone(linesep="\r\n")


@dataclass(frozen=True)
class Attachment:
    filename: str
    mime_type: str
    data: bytes | EmailMessage
    inline_cid: str | None = None
    """Set for an image the HTML body shows through ``cid:``."""


@dataclass
class DemoWriter:
    mailbox: Mailbox
    domain: str = "demo-mail.example"
    written: int = field(default=0)

    def raw(
        self,
        *,
        sender: str,
        to: Sequence[str],
        subject: str,
        when: datetime,
        text: str | None = None,
        html: str | None = None,
        cc: Sequence[str] = (),
        attachments: Sequence[Attachment] = (),
        parent: Message | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> bytes:
        self.written += 1
        message = EmailMessage(policy=_WIRE)
        message["From"] = sender
        message["To"] = ", ".join(to)
        if cc:
            message["Cc"] = ", ".join(cc)
        message["Subject"] = subject
        message["Date"] = format_datetime(when)
        digest = hashlib.sha256(f"{self.written}:{subject}".encode()).hexdigest()[:16]
        message["Message-ID"] = f"<{digest}.{self.written}@{self.domain}>"
        if parent is not None:
            parent_id = parent.parsed.message_id
            earlier = parent.parsed.header("References").split()
            message["In-Reply-To"] = parent_id
            message["References"] = " ".join([*earlier, parent_id])
        for name, value in headers:
            message[name] = value
        message.set_content(text if text is not None else "")
        if html is not None:
            if text is None:
                message.set_content(html, subtype="html")
            else:
                message.add_alternative(html, subtype="html")
        for attachment in attachments:
            self._attach(message, attachment)
        self._fix_boundaries(message, digest)
        return message.as_bytes(policy=_WIRE)

    def _attach(self, message: EmailMessage, attachment: Attachment) -> None:
        if isinstance(attachment.data, EmailMessage):
            message.add_attachment(attachment.data, filename=attachment.filename)
            return
        maintype, _, subtype = attachment.mime_type.partition("/")
        if attachment.inline_cid is not None:
            body = message.get_body(("html",))
            assert isinstance(body, EmailMessage)
            body.add_related(
                attachment.data,
                maintype,
                subtype,
                cid=f"<{attachment.inline_cid}>",
                filename=attachment.filename,
                disposition="inline",
            )
            return
        message.add_attachment(attachment.data, maintype, subtype, filename=attachment.filename)

    @staticmethod
    def _fix_boundaries(message: EmailMessage, seed: str) -> None:
        for number, part in enumerate(message.walk()):
            if part.is_multipart():
                part.set_boundary(f"=_part{number}_{seed}")

    def file(self, labels: Sequence[str], when: datetime, **fields: Any) -> Message:
        """Writes one message and files it in the mailbox with ``labels``."""
        raw = self.raw(when=when, **fields)
        return self.mailbox.add_message(raw, labels, internal=when)


def forwarded(sender: str, to: str, subject: str, text: str, when: datetime) -> EmailMessage:
    """A message to attach as ``message/rfc822`` (an .eml file)."""
    inner = EmailMessage(policy=_WIRE)
    inner["From"] = sender
    inner["To"] = to
    inner["Subject"] = subject
    inner["Date"] = format_datetime(when)
    inner["Message-ID"] = f"<{hashlib.sha256(subject.encode()).hexdigest()[:20]}@partner.example>"
    inner.set_content(text)
    return inner
