"""One server state per user: built on a user's first request, kept in a bounded LRU.

A hosted process serves many people, and nothing one of them does may be seen by another:
each Subject (``Subject.key``) gets its own tool context (its Graph client, its send store,
with ``--demo`` its own in-memory mailbox). How a context is built is the wiring's
business (``mfconnector.hosted.serve``); this module only keeps them, at most
``http_subjects`` at once, and closes the one it drops, never while a request uses it.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mfconnector.hosted.bearer import Subject
from mfconnector.hosted.obo import REQUEST_SUBJECT
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
    """``use(subject)``: that user's Tenant for one request, built on first use. Past
    ``capacity`` the least recently used tenant that no request is using is closed and
    forgotten (while every one is in use the pool runs over, by at most the requests in
    flight, which ``http_requests`` bounds)."""

    def __init__(self, build: Callable[[Subject], Tenant], capacity: int) -> None:
        self._build = build
        self._capacity = capacity
        self._tenants: OrderedDict[str, Tenant] = OrderedDict()
        self._in_use: Counter[str] = Counter()
        self.on_drop: Callable[[str], object] = lambda key: None
        """Told the key of each user whose state is dropped (their sessions go with it)."""

    def __len__(self) -> int:
        return len(self._tenants)

    @asynccontextmanager
    async def use(self, subject: Subject) -> AsyncIterator[Tenant]:
        key = subject.key
        self._in_use[key] += 1
        current = REQUEST_SUBJECT.set(subject)
        try:
            yield await self._get(key, subject)
        finally:
            REQUEST_SUBJECT.reset(current)
            self._in_use[key] -= 1
            if not self._in_use[key]:
                del self._in_use[key]
            await self._trim()

    async def _get(self, key: str, subject: Subject) -> Tenant:
        tenant = self._tenants.get(key)
        if tenant is not None:
            self._tenants.move_to_end(key)
            return tenant
        tenant = self._build(subject)
        self._tenants[key] = tenant
        await self._trim()
        return tenant

    async def _trim(self) -> None:
        while len(self._tenants) > self._capacity:
            idle = next((k for k in self._tenants if k not in self._in_use), None)
            if idle is None:
                return
            dropped = self._tenants.pop(idle)
            log.info("user state %s dropped (more than %d users)", idle, self._capacity)
            self.on_drop(idle)
            await dropped.close()

    async def aclose(self) -> None:
        while self._tenants:
            _, tenant = self._tenants.popitem()
            await tenant.close()
