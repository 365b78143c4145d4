"""The conformance suite's seeder for IMAP: messages APPENDed with the stdlib ``imaplib``
(independent of the client under test), with their flags and INTERNALDATE."""

from __future__ import annotations

import email.policy
import email.utils
import imaplib
import time
from collections.abc import Sequence
from email.message import EmailMessage

import trio

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.mail.model import Folder, Person
from tests.support.mail_conformance import SeedMessage
from tests.support.mailservers import Dovecot

__all__ = ["ImapSeeder", "seed_bytes"]

ROLE_FOLDERS = {
    "inbox": "INBOX",
    "sent": "Sent",
    "drafts": "Drafts",
    "trash": "Trash",
    "junk": "Junk",
    "archive": "Archive",
}


def _shown(person: Person) -> str:
    return email.utils.formataddr((person.name, person.address))


def seed_bytes(message: SeedMessage) -> bytes:
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


class ImapSeeder:
    def __init__(self, dovecot: Dovecot, backend: ImapMailBackend, user: str = "alice") -> None:
        self.dovecot = dovecot
        self.backend = backend
        self.user = user
        self.recipient = "bob@example.org"

    def _append(self, folder: str, messages: Sequence[SeedMessage]) -> None:
        imap = self.dovecot.imaplib(self.user)
        try:
            for message in messages:
                flags = []
                if not message.unread:
                    flags.append("\\Seen")
                if message.flagged:
                    flags.append("\\Flagged")
                when = imaplib.Time2Internaldate(
                    time.mktime(message.received.timetuple()) - time.timezone
                )
                status, answer = imap.append(
                    folder, "(" + " ".join(flags) + ")", when, seed_bytes(message)
                )
                assert status == "OK", answer
        finally:
            imap.logout()

    async def put(self, role: str, messages: Sequence[SeedMessage]) -> None:
        await trio.to_thread.run_sync(self._append, ROLE_FOLDERS[role], messages)

    async def fresh_folder(self, name: str, messages: Sequence[SeedMessage]) -> Folder:
        def make() -> None:
            imap = self.dovecot.imaplib(self.user)
            try:
                status, answer = imap.create(name)
                assert status == "OK", answer
            finally:
                imap.logout()
            self._append(name, messages)

        await trio.to_thread.run_sync(make)
        return await self.backend.resolve_folder(name, "folder")

    async def deliveries(self, message_id: str) -> int | None:
        def count() -> int:
            imap = self.dovecot.imaplib("bob")
            try:
                imap.select("INBOX", readonly=True)
                _, data = imap.uid("SEARCH", "HEADER", "Message-ID", message_id)
                return len(data[0].split()) if data and data[0] else 0
            finally:
                imap.logout()

        return await trio.to_thread.run_sync(count)
