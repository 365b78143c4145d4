"""The shared backend conformance suite (tests/mail/conformance.py) for GmailMailBackend,
against the Gmail emulator over real HTTP on 127.0.0.1.

The seeder files mail with Gmail's own ``messages.import`` and ``labels.create`` over HTTP
(independent of the backend under test); deliveries are counted in the emulator's store.
"""

from __future__ import annotations

import base64
import email.policy
import email.utils
from collections.abc import AsyncIterator, Sequence
from email.message import EmailMessage

import httpx
import pytest

from mfconnector.gmail_emulator import GmailEmulator, LoopbackGmail
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.model import Folder, Person
from tests.support.gmail_loopback import ME, TOKEN, account_for, empty_emulator, served
from tests.support.mail_conformance import CHECKS, Check, Conformance, SeedMessage, check_id

pytestmark = pytest.mark.slow

ROLE_LABELS = {
    "inbox": "INBOX",
    "sent": "SENT",
    "drafts": "DRAFT",
    "trash": "TRASH",
    "junk": "SPAM",
}
API = "/gmail/v1/users/me"


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


class GmailSeeder:
    def __init__(
        self, emulator: GmailEmulator, server: LoopbackGmail, backend: MailBackend
    ) -> None:
        self.emulator = emulator
        self.backend = backend
        self.recipient = ME  # Gmail files mail to oneself in INBOX too: a delivery to count
        self._http = httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _import(self, labels: Sequence[str], messages: Sequence[SeedMessage]) -> None:
        for message in messages:
            extra = (["UNREAD"] if message.unread else []) + (
                ["STARRED"] if message.flagged else []
            )
            raw = base64.urlsafe_b64encode(seed_bytes(message)).decode()
            reply = await self._http.post(
                f"{API}/messages/import",
                json={"raw": raw, "labelIds": [*labels, *extra]},
            )
            assert reply.status_code == 200, reply.text

    async def put(self, role: str, messages: Sequence[SeedMessage]) -> None:
        await self._import([ROLE_LABELS[role]], messages)

    async def fresh_folder(self, name: str, messages: Sequence[SeedMessage]) -> Folder:
        reply = await self._http.post(f"{API}/labels", json={"name": name})
        assert reply.status_code == 200, reply.text
        await self._import([reply.json()["id"]], messages)
        return await self.backend.resolve_folder(name, "folder")

    async def deliveries(self, message_id: str) -> int | None:
        wanted = message_id.strip("<>")
        return sum(
            1
            for m in self.emulator.mailbox.messages.values()
            if "INBOX" in m.label_ids and m.parsed.message_id.strip("<>") == wanted
        )


@pytest.fixture(params=["full", "no-delete"])
async def env(request: pytest.FixtureRequest) -> AsyncIterator[Conformance]:
    emulator = empty_emulator()
    gates = {"writes", "send", "delete"} if request.param == "full" else {"writes", "send"}
    with served(emulator) as server:
        backend = account_for(server, gates=gates).mail
        foreign = account_for(server, gates=gates, name="another").mail
        seeder = GmailSeeder(emulator, server, backend)
        try:
            yield Conformance(backend, seeder, foreign)
        finally:
            await seeder.aclose()


@pytest.mark.parametrize("check", CHECKS, ids=check_id)
async def test_conformance(check: Check, env: Conformance) -> None:
    await check(env)
