"""The shared backend conformance suite (tests/support/mail_conformance.py) against
``ImapMailBackend`` on a real Dovecot: once with every capability, once with CONDSTORE,
QRESYNC, MOVE and UIDPLUS switched off (``imap_capability``), where the same checks expect
``Unsupported`` instead. Sends go through an aiosmtpd relay that delivers into Dovecot."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.model import Person
from mfconnector.mail.refs import account_tag
from tests.support.imap_seeding import ImapSeeder
from tests.support.mail_conformance import CHECKS, Check, Conformance, check_id
from tests.support.mailservers import (
    DOVECOT,
    REDUCED_CAPABILITIES,
    Dovecot,
    SmtpRelay,
    settings_for,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["full", "reduced"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[Dovecot, SmtpRelay]]:
    if DOVECOT is None:
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd dovecot-lmtpd)")
    capabilities = None if request.param == "full" else REDUCED_CAPABILITIES
    with Dovecot(capabilities=capabilities) as dovecot, SmtpRelay(dovecot) as relay:
        yield dovecot, relay


def backend_for(dovecot: Dovecot, relay: SmtpRelay, user: str, account: str) -> ImapMailBackend:
    smtp = ServerSettings("127.0.0.1", relay.port, "plain", "", "")
    return ImapMailBackend(
        account_tag("imap", account),
        settings_for(dovecot, user=user),
        DEFAULT_LIMITS,
        smtp=smtp,
        sender=Person("Alice", f"{user}@example.org"),
    )


@pytest.fixture
async def env(server: tuple[Dovecot, SmtpRelay]) -> AsyncIterator[Conformance]:
    dovecot, relay = server
    backend = backend_for(dovecot, relay, "alice", "work")
    foreign = backend_for(dovecot, relay, "bob", "home")
    await backend.start()
    try:
        yield Conformance(backend, ImapSeeder(dovecot, backend), foreign)
    finally:
        await backend.aclose()
        await foreign.aclose()


@pytest.mark.parametrize("check", CHECKS, ids=check_id)
async def test_conformance(check: Check, env: Conformance) -> None:
    await check(env)


async def test_the_reduced_server_really_lacks_what_the_unsupported_paths_need(
    server: tuple[Dovecot, SmtpRelay], env: Conformance
) -> None:
    caps = env.backend.capabilities
    missing = dict(caps.missing)
    if server[0].capabilities is None:
        assert caps.conditional_flags and caps.permanent_delete and caps.move
        assert "CONDSTORE" not in missing
    else:
        assert not caps.conditional_flags and not caps.permanent_delete and not caps.move
        assert "unsupported" in missing["CONDSTORE"]
        assert "permanent deletion is unsupported" in missing["UIDPLUS"]
