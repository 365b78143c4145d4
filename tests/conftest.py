"""Fixtures shared by the test modules that talk to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from loopback import LoopbackServer


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
