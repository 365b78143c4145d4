"""The httpx transport for Graph and download hosts: the configured proxy, the OS trust store.

httpx's own ``proxy=`` applies to every host; ``NO_PROXY`` (with ``--proxy env``) needs a
choice per request, so a small router holds two pools (through the proxy, direct) and picks
one by the request's host. The client keeps ``trust_env=False``: nothing here comes from the
environment except what ``NetworkSettings`` already resolved.
"""

from __future__ import annotations

from types import TracebackType

import httpx

from mfconnector.net.settings import NetworkSettings
from mfconnector.net.tls import verifying_context

__all__ = ["ProxyRouter", "graph_transport"]


class ProxyRouter(httpx.AsyncBaseTransport):
    """Sends each request through the proxy pool or the direct pool, by host."""

    def __init__(self, settings: NetworkSettings) -> None:
        if settings.proxy is None:
            raise ValueError("a proxy router needs a proxy")
        context = verifying_context(settings.ca_file)
        self._proxy = settings.proxy
        self._through = httpx.AsyncHTTPTransport(
            verify=context, trust_env=False, proxy=httpx.Proxy(settings.proxy.url)
        )
        self._direct = httpx.AsyncHTTPTransport(verify=context, trust_env=False)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        pool = self._through if self._proxy.applies_to(request.url.host) else self._direct
        return await pool.handle_async_request(request)

    async def aclose(self) -> None:
        await self._through.aclose()
        await self._direct.aclose()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        await self.aclose()


def graph_transport(settings: NetworkSettings) -> httpx.AsyncBaseTransport:
    """Direct with the OS trust store, or routed through the configured proxy."""
    if settings.proxy is None:
        return httpx.AsyncHTTPTransport(verify=verifying_context(settings.ca_file), trust_env=False)
    return ProxyRouter(settings)
