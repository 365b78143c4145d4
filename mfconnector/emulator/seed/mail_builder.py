"""Folders, messages and attachments for one demo mailbox, with ids of real length.

Dates fall in each folder's span of days before the demo's "now", drawn from the
mailbox's one generator, so the order of ``add`` calls fixes the whole mailbox.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from mfconnector.emulator import ids
from mfconnector.emulator.model import Attachment, Folder, Mailbox, Message, Recipient
from mfconnector.emulator.seed.facts import DEMO_NOW
from mfconnector.emulator.seed.prose import Writer, html_page

__all__ = ["SPANS", "MailBuilder"]

SPANS = {
    "Archive": (30.0, 150.0),
    "Deleted Items": (0.1, 20.0),
    "Junk Email": (0.1, 10.0),
    "Drafts": (0.1, 5.0),
}
"""(days before "now" where a folder's mail starts, days it spans); others (0.05, 60)."""


class MailBuilder:
    def __init__(self, mailbox: Mailbox, rng: random.Random) -> None:
        self.mailbox = mailbox
        self.rng = rng
        self.write = Writer(rng)
        self.count = 0

    def folder(
        self, key: str, name: str, parent: str | None, well_known: str | None = None
    ) -> Folder:
        parent_id = self.mailbox.well_known.get(parent or "", parent or "")
        folder = Folder(ids.folder_id(f"{self.mailbox.mail}:{key}"), name, parent_id, well_known)
        return self.mailbox.add_folder(folder)

    def when(self, folder: str) -> datetime:
        """A moment in the folder's span of days before "now", spread at random."""
        name = self.mailbox.folders[folder].display_name
        start, span = SPANS.get(name, (0.05, 60.0))
        days = start + span * self.rng.random()
        return (DEMO_NOW - timedelta(days=days)).replace(microsecond=0)

    def add(
        self,
        folder: Folder,
        sender: Recipient,
        to: Sequence[Recipient],
        subject: str,
        paragraphs: Sequence[str] | None = None,
        *,
        html: str | None = None,
        text: str | None = None,
        received: datetime | None = None,
        conversation: str | None = None,
        unique: str | None = None,
        **extra: Any,
    ) -> Message:
        self.count += 1
        label = f"{self.mailbox.mail}:m{self.count:04d}"
        moment = received or self.when(folder.id)
        if text is not None:
            body, body_type = text, "text"
        else:
            body, body_type = html or html_page(paragraphs or []), "html"
        domain = sender[1].rsplit("@", 1)[1]
        message = Message(
            label=label,
            immutable_id=ids.immutable_message_id(label),
            folder_id=folder.id,
            subject=subject,
            body=body,
            body_type=body_type,
            sender=sender,
            to=list(to),
            received=moment,
            sent=moment - timedelta(seconds=3 + self.count % 40),
            conversation_id=ids.conversation_id(conversation or label),
            internet_message_id=f"<{ids.guid(label).replace('-', '')[:24].upper()}@{domain}>",
            unique_body=unique,
            created=moment,
            modified=moment + timedelta(seconds=2),
            **extra,
        )
        message.headers = [
            ("Received", f"from mail.{domain} by EX1PR01MB.prod.outlook.com"),
            ("From", f"{sender[0]} <{sender[1]}>"),
            ("To", ", ".join(f"{n} <{a}>" for n, a in to)),
            ("Subject", subject),
            ("Message-ID", message.internet_message_id),
            ("MIME-Version", "1.0"),
            ("Content-Type", "text/html; charset=utf-8" if body_type == "html" else "text/plain"),
        ]
        return self.mailbox.add_message(message)

    def attach(
        self,
        message: Message,
        name: str,
        content_type: str | None,
        data: Callable[[], bytes] | None,
        *,
        kind: str = "file",
        inline: bool = False,
        item: Message | None = None,
        size: int | None = None,
    ) -> Attachment:
        index = len(message.attachments)
        cached = functools.cache(data) if data is not None else None
        attachment = Attachment(
            id=ids.attachment_id(message.label, index),
            name=name,
            content_type=content_type,
            kind=kind,
            declared_size=size,
            modified=message.received - timedelta(minutes=5),
            data=cached,
            is_inline=inline,
            content_id=f"image{index:03d}.png@01DA0000.00000000" if inline else None,
            item=item,
            source_url=(
                "https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/"
                f"Documents/{name}"
                if kind == "reference"
                else None
            ),
        )
        message.attachments.append(attachment)
        return attachment
