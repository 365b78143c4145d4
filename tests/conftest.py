"""Fixtures and settings shared by the test modules (a loopback Graph on 127.0.0.1, hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.loopback import LoopbackServer

# Properties assert behaviour, never wall-clock time: on a loaded 2-core CI machine a single
# example can take longer than hypothesis's default 200 ms deadline without anything being
# wrong, so the suite runs without deadlines (hang guards stay, as trio.fail_after).
settings.register_profile(
    "mfconnector", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("mfconnector")


@pytest.fixture
def graph() -> Iterator[LoopbackServer]:
    """A loopback server standing in for Microsoft Graph."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def files() -> Iterator[LoopbackServer]:
    """A second server standing in for the pre-authenticated download host."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every platform's encrypted token store is unavailable, as on this headless machine, so
    sign-in tests behave alike everywhere and never touch a developer's real keyring."""
    import msal_extensions

    def unavailable(location: str, **kwargs: Any) -> Any:
        raise ImportError("Unable to import module 'gi'")

    for store in (
        "FilePersistenceWithDataProtection",
        "KeychainPersistence",
        "LibsecretPersistence",
    ):
        monkeypatch.setattr(msal_extensions, store, unavailable)
