"""A saved e-mail (.eml, RFC 5322) as text: its headers, its body, its attachments' names."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage, Message

from mfconnector.documents.text import TextBuilder
from mfconnector.textconv import convert_html

__all__ = ["eml_text"]

HEADERS = ("From", "To", "Cc", "Date", "Subject")


def _body(message: EmailMessage, builder: TextBuilder, max_tags: int) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset, broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() != "html":
        return content
    converted = convert_html(content, max_tags=max_tags)
    if converted.limit is not None:
        builder.note(
            f"past {max_tags:,} HTML tags ({converted.limit}) the body is shown as plain words"
        )
    return converted.text


def _header(message: Message, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, IndexError, TypeError):  # a header the policy cannot parse
        value = message.get_all(name, failobj=[""])[0] if hasattr(message, "get_all") else ""
    return " ".join(str(value or "").split())


def eml_text(path: str, builder: TextBuilder, max_tags: int) -> None:
    """The message's headers, body (HTML converted within ``max_tags``) and attachments."""
    with open(path, "rb") as handle:
        message = email.message_from_binary_file(handle, policy=email.policy.default)
    if not isinstance(message, EmailMessage):
        return
    for name in HEADERS:
        value = _header(message, name)
        if value:
            builder.line(f"{name}: {value}")
    builder.add("\n" + _body(message, builder, max_tags).strip() + "\n")
    attachments = []
    for part in message.iter_attachments():
        filename = " ".join(str(part.get_filename() or "unnamed").split())
        attachments.append(f"- {filename} ({part.get_content_type()})")
    if attachments:
        builder.line("\nAttachments:")
        for line in attachments:
            builder.line(line)
