"""The conformance suite's seeder for IMAP: messages APPENDed with the stdlib ``imaplib``
(independent of the client under test), with their flags and INTERNALDATE."""

from __future__ import annotations

import imaplib
import time
from collections.abc import Sequence

import trio

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.mail.model import Folder
from tests.support.mail_conformance import SeedMessage
from tests.support.mailservers import Dovecot
from tests.support.seed_mime import seed_bytes

__all__ = ["ImapSeeder"]

ROLE_FOLDERS = {
    "inbox": "INBOX",
    "sent": "Sent",
    "drafts": "Drafts",
    "trash": "Trash",
    "junk": "Junk",
    "archive": "Archive",
}


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
