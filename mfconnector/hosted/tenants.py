"""One server state per user: built on a user's first request, kept in a bounded LRU.

A hosted process serves many people, and nothing one of them does may be seen by another:
each Subject (``Subject.key``) gets its own tool context (its Graph client, its send store,
with ``--demo`` its own in-memory mailbox). How a context is built is the wiring's
business (``mfconnector.hosted.serve``); this module only keeps them, at most
``http_subjects`` at once, and closes the one it drops.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mfconnector.hosted.bearer import Subject
from mfconnector.server import McpServer

__all__ = ["Tenant", "TenantPool"]

log = logging.getLogger("mfconnector.hosted.tenants")


@dataclass
class Tenant:
    """What one user's requests are served with."""

    server: McpServer
    """For 2026-07-28 requests, which carry everything in ``_meta`` and hold no state."""
    new_server: Callable[[], McpServer]
    """A fresh router over the same context, for a 2025 session (it keeps the handshake)."""
    close: Callable[[], Awaitable[None]]


class TenantPool:
    """``get(subject)``: that user's Tenant, built on first use; the least recently used
    is closed and forgotten past ``capacity``."""

    def __init__(self, build: Callable[[Subject], Tenant], capacity: int) -> None:
        self._build = build
        self._capacity = capacity
        self._tenants: OrderedDict[str, Tenant] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tenants)

    async def get(self, subject: Subject) -> Tenant:
        tenant = self._tenants.get(subject.key)
        if tenant is not None:
            self._tenants.move_to_end(subject.key)
            return tenant
        tenant = self._build(subject)
        self._tenants[subject.key] = tenant
        while len(self._tenants) > self._capacity:
            key, dropped = self._tenants.popitem(last=False)
            log.info("user state %s dropped (more than %d users)", key, self._capacity)
            await dropped.close()
        return tenant

    async def aclose(self) -> None:
        while self._tenants:
            _, tenant = self._tenants.popitem()
            await tenant.close()
