"""The demo tenant behind ``--demo``: the in-memory Graph emulator, no account, no files.

The emulator's data is generated in the package (``mfconnector/emulator/seed/``, from the
text corpus shipped beside it), so a wheel needs nothing else for the demo, and every start
serves the same mailbox. Nothing
is imported here until the first tool call builds the Graph client.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mfconnector.emulator.transport import EmulatorTransport

__all__ = ["DEMO_ACCOUNT", "DEMO_SOURCE", "DemoClock", "demo_transport"]

DEMO_ACCOUNT = "demo account (emulator)"
DEMO_SOURCE = "built-in Graph emulator (mfconnector.emulator)"


def demo_transport() -> EmulatorTransport:
    """A fresh emulator at the httpx transport seam: its state lives as long as it does."""
    from mfconnector.emulator.transport import EmulatorTransport

    return EmulatorTransport()


class DemoClock:
    """The demo's time, for what the server dates itself (a preparation's ``expires_at``):
    the emulator's "now" plus the real seconds since the server started. The mail and the
    expiry then read on one clock, and a preparation still expires in real time.

    ``epoch``: the wall-clock moment the demo's time began, when several processes share
    one state store (``--state-url``): every replica then reads the same demo time, so a
    preparation made on one does not look expired, or a live claim stale, on another
    that started earlier."""

    def __init__(self, epoch: float | None = None) -> None:
        self._epoch = epoch
        self._started = time.monotonic()

    def __call__(self) -> float:
        from mfconnector.emulator.seed.facts import DEMO_NOW  # loaded by the first tool call anyway

        if self._epoch is not None:
            return DEMO_NOW.timestamp() + (time.time() - self._epoch)
        return DEMO_NOW.timestamp() + (time.monotonic() - self._started)
