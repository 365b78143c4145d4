"""What one emulator holds between requests: the tenant, its clock, search indexes,
upload sessions in progress and per-message caches.

The routes take an ``EmulatorState``, never the dispatcher (``core.Emulator``, which is
one), so they sit below it and nothing imports the dispatcher back.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.kql import SearchIndex
from mfconnector.emulator.model import Drive, Mailbox, Message, Tenant
from mfconnector.emulator.seed.facts import DEMO_NOW
from mfconnector.emulator.seed.tenant import build_tenant

__all__ = ["EmulatorState", "UploadSession"]


@dataclass
class UploadSession:
    """An attachment upload in progress: the chunks so far, and what they must add up to."""

    mailbox: Mailbox
    message: Message
    name: str
    size: int
    content_type: str
    token: str
    data: bytearray = field(default_factory=bytearray)


class EmulatorState:
    """The live state behind one emulator. ``tenant`` is built on first use."""

    def __init__(self, tenant_factory: Callable[[], Tenant] = build_tenant) -> None:
        self._factory = tenant_factory
        self._tenant: Tenant | None = None
        self.requests = 0
        self._ticks = itertools.count(1)
        self.indexes: dict[str, SearchIndex] = {}
        self.uploads: dict[str, UploadSession] = {}
        self.filter_views: dict[str, tuple[int, dict[str, Any]]] = {}

    @property
    def tenant(self) -> Tenant:
        if self._tenant is None:
            self._tenant = self._factory()
        return self._tenant

    def now(self) -> datetime:
        """The emulator's clock: the demo's "now", one second further at each write."""
        return DEMO_NOW + timedelta(seconds=next(self._ticks))

    def index(self, mailbox: Mailbox) -> SearchIndex:
        return self.indexes.setdefault(mailbox.user_id, SearchIndex())

    def me(self) -> Mailbox:
        found = self.tenant.mailbox("me")
        assert found is not None
        return found

    def drive_of(self, mailbox: Mailbox) -> Drive:
        drive_id = self.tenant.personal_drive.get(mailbox.user_id)
        if drive_id is None:
            raise GraphHttpError(
                404, "itemNotFound", "The user's OneDrive has not been provisioned."
            )
        return self.tenant.drives[drive_id]
