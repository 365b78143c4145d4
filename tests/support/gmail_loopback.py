"""The Gmail backend against the Gmail emulator over real HTTP on 127.0.0.1.

``served(emulator)`` starts the emulator's loopback server; ``backend_for`` builds the
account the wiring would (``gmail.account.gmail_account``) with a static token: the
token provider is the seam faked here, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from mfconnector.auth import StaticTokenProvider
from mfconnector.gmail.account import gmail_account
from mfconnector.gmail.backend import GmailMailBackend
from mfconnector.gmail_emulator import ALL_SCOPES, GmailEmulator, LoopbackGmail
from mfconnector.gmail_emulator.store import Mailbox
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.accounts import Account

TOKEN = "loopback-token"
ME = "me@mail.example"
NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@contextmanager
def served(emulator: GmailEmulator) -> Iterator[LoopbackGmail]:
    server = LoopbackGmail(emulator)
    try:
        yield server
    finally:
        server.close()


def demo_emulator(scopes: Iterable[str] = ALL_SCOPES) -> GmailEmulator:
    from mfconnector.gmail_emulator import build_demo_mailbox

    return GmailEmulator(build_demo_mailbox(), tokens={TOKEN: scopes})


def empty_emulator(scopes: Iterable[str] = ALL_SCOPES) -> GmailEmulator:
    return GmailEmulator(Mailbox(address=ME, now=NOW), tokens={TOKEN: scopes})


def account_for(
    server: LoopbackGmail,
    *,
    limits: Limits = DEFAULT_LIMITS,
    gates: Iterable[str] = (),
    token: str = TOKEN,
    name: str = "gmail",
) -> Account:
    return gmail_account(
        name,
        token_provider=StaticTokenProvider(token, account=ME),
        limits=limits,
        gates=frozenset(gates),
        root=server.url,
    )


def backend_for(server: LoopbackGmail, **options: object) -> GmailMailBackend:
    backend = account_for(server, **options).mail  # type: ignore[arg-type]
    assert isinstance(backend, GmailMailBackend)
    return backend
