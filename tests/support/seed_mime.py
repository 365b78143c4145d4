"""The MIME bytes of a conformance ``SeedMessage`` (tests/support/mail_conformance.py),
built with the stdlib (independent of the backends under test): what the IMAP seeder
APPENDs and the Gmail seeder imports."""

from __future__ import annotations

import email.policy
import email.utils
from email.message import EmailMessage

from mfconnector.mail.model import Person
from tests.support.mail_conformance import SeedMessage

__all__ = ["seed_bytes"]


def _shown(person: Person) -> str:
    return email.utils.formataddr((person.name, person.address))


def seed_bytes(message: SeedMessage) -> bytes:
    """The message as a mail client would send it: headers, text and/or HTML, attachments."""
    out = EmailMessage(policy=email.policy.SMTP)
    out["From"] = _shown(message.sender)
    out["To"] = ", ".join(_shown(p) for p in message.to)
    if message.reply_to:
        out["Reply-To"] = ", ".join(_shown(p) for p in message.reply_to)
    out["Subject"] = message.subject
    out["Date"] = email.utils.format_datetime(message.received)
    out["Message-ID"] = message.message_id or email.utils.make_msgid(domain="seed.example.org")
    if message.in_reply_to:
        out["In-Reply-To"] = message.in_reply_to
        out["References"] = message.in_reply_to
    if message.html is not None:
        if message.text:
            out.set_content(message.text)
            out.add_alternative(message.html, subtype="html")
        else:
            out.set_content(message.html, subtype="html")
    else:
        out.set_content(message.text)
    for name, content_type, data in message.attachments:
        main, _, sub = content_type.partition("/")
        if main == "text":
            out.add_attachment(data.decode(), subtype=sub, filename=name)
        else:
            out.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return out.as_bytes()
