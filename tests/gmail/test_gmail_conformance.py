"""The shared backend conformance suite (tests/mail/conformance.py) for GmailMailBackend,
against the Gmail emulator over real HTTP on 127.0.0.1.

The seeder files mail with Gmail's own ``messages.import`` and ``labels.create`` over HTTP
(independent of the backend under test); deliveries are counted in the emulator's store.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence

import httpx
import pytest

from mfconnector.gmail_emulator import GmailEmulator, LoopbackGmail
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.model import Folder
from tests.support.gmail_loopback import ME, TOKEN, account_for, empty_emulator, served
from tests.support.mail_conformance import CHECKS, Check, Conformance, SeedMessage, check_id
from tests.support.seed_mime import seed_bytes

pytestmark = pytest.mark.slow

ROLE_LABELS = {
    "inbox": "INBOX",
    "sent": "SENT",
    "drafts": "DRAFT",
    "trash": "TRASH",
    "junk": "SPAM",
}
API = "/gmail/v1/users/me"


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
