"""Fixtures for the IMAP/SMTP tests: a throwaway Dovecot (full and reduced capabilities)
and aiosmtpd relays into it. Tests that need Dovecot skip, saying why, only when it is not
installed (``.ci/run`` installs it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

import pytest

from mfconnector.imap.settings import ServerSettings
from tests.support.mailservers import (
    DOVECOT,
    REDUCED_CAPABILITIES,
    Dovecot,
    Fault,
    SmtpRelay,
    settings_for,
)


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    if DOVECOT is None:
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd dovecot-lmtpd)")
    with Dovecot() as server:
        yield server


@pytest.fixture(scope="module")
def reduced_dovecot() -> Iterator[Dovecot]:
    """A Dovecot that advertises no CONDSTORE, QRESYNC, MOVE or UIDPLUS."""
    if DOVECOT is None:
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd dovecot-lmtpd)")
    with Dovecot(capabilities=REDUCED_CAPABILITIES) as server:
        yield server


@pytest.fixture
def alice(dovecot: Dovecot) -> ServerSettings:
    return settings_for(dovecot)


@pytest.fixture
def smtp_relay(dovecot: Dovecot) -> Iterator[Callable[..., SmtpRelay]]:
    """Start relays on demand (``smtp_relay("close_inside_data")``); all stop at teardown."""
    started: list[SmtpRelay] = []

    def start(fault: Fault = "none", tls: Literal["none", "starttls", "tls"] = "none") -> SmtpRelay:
        relay = SmtpRelay(dovecot, fault, tls=tls).__enter__()
        started.append(relay)
        return relay

    yield start
    for relay in started:
        relay.__exit__(None, None, None)
