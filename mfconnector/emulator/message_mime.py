"""A message as raw MIME (``GET .../$value``): headers, the text and HTML alternatives,
and its file attachments."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import format_datetime

from mfconnector.emulator.call import Answer
from mfconnector.emulator.model import Message

__all__ = ["mime_answer"]


def mime_answer(message: Message) -> Answer:
    mime = EmailMessage()
    sender = message.from_ or message.sender
    mime["From"] = f"{sender[0]} <{sender[1]}>"
    if message.to:
        mime["To"] = ", ".join(f"{n} <{a}>" for n, a in message.to)
    if message.cc:
        mime["Cc"] = ", ".join(f"{n} <{a}>" for n, a in message.cc)
    mime["Subject"] = message.subject
    mime["Date"] = format_datetime(message.sent or message.received)
    mime["Message-ID"] = message.internet_message_id
    if message.body_type == "html":
        mime.set_content(message.texts()[0])
        mime.add_alternative(message.body, subtype="html")
    else:
        mime.set_content(message.body)
    for attachment in message.attachments:
        if attachment.kind != "file":
            continue
        maintype, _, subtype = (attachment.content_type or "application/octet-stream").partition(
            "/"
        )
        mime.add_attachment(
            attachment.content(),
            maintype=maintype,
            subtype=subtype or "octet-stream",
            filename=attachment.name,
        )
    return Answer(200, content=mime.as_bytes(), headers={"Content-Type": "text/plain"})
