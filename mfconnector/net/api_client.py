"""How every provider API request is sent (Microsoft Graph, Gmail): straight to the transport.

One set of rules for both: no redirects followed on our own (a redirect's target is checked
before anything is sent to it), nothing from the environment (``NetworkSettings`` already
resolved the proxy and trust store into ``transport``), no cookies, JSON asked for without
content coding, and the connect/read/pool timeouts from the server's limits.

httpx's ``AsyncClient`` would run its auth flow, redirect loop, cookie jar, event hooks and
request log on every request, with each of them turned off here (measured: a one-message
Graph page cost 1.91 M instructions through the client, 1.65 M without it). ``ApiHttp``
builds the ``httpx.Request`` (the same headers, and the timeouts as the request's
extension, as the client would) and hands it to the transport
(``httpx.AsyncBaseTransport.handle_async_request``, httpx's public transport API). A cookie
is then never even parsed, and httpx never logs a URL (a download host's URL is a
credential).
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from mfconnector import __version__
from mfconnector.limits import Limits

__all__ = ["ApiHttp", "api_http_client"]


class ApiHttp:
    """Builds requests with the connector's headers and timeouts, and sends them."""

    def __init__(self, transport: httpx.AsyncBaseTransport, limits: Limits) -> None:
        self._transport = transport
        self._timeout = httpx.Timeout(
            connect=limits.graph_connect_timeout_seconds,
            read=limits.graph_read_timeout_seconds,
            write=limits.graph_read_timeout_seconds,
            pool=limits.graph_connect_timeout_seconds,
        ).as_dict()
        self._headers = (
            ("Accept", "application/json"),
            ("Accept-Encoding", "identity"),
            ("Connection", "keep-alive"),
            ("User-Agent", f"mfconnector/{__version__}"),
        )

    def build_request(
        self,
        method: str,
        url: str | httpx.URL,
        *,
        headers: Mapping[str, str] | None = None,
        params: httpx.QueryParams | None = None,
        content: bytes | None = None,
    ) -> httpx.Request:
        """``method url`` with the connector's headers (``headers`` add to or replace them)."""
        merged = httpx.Headers(self._headers)
        if headers:
            merged.update(headers)
        return httpx.Request(
            method,
            url,
            headers=merged,
            params=params,
            content=content,
            extensions={"timeout": self._timeout},
        )

    async def send(self, request: httpx.Request) -> httpx.Response:
        """The transport's answer, its body not yet read (the caller reads it under its cap
        and closes it): a redirect is answered as it is, never followed."""
        response = await self._transport.handle_async_request(request)
        response.request = request
        return response

    async def aclose(self) -> None:
        await self._transport.aclose()


def api_http_client(transport: httpx.AsyncBaseTransport, limits: Limits) -> ApiHttp:
    """The sender over ``transport`` under ``limits``' timeouts."""
    return ApiHttp(transport, limits)
