"""The httpx client every provider API is called through (Microsoft Graph, Gmail).

One set of rules for both: no redirects followed on our own (a redirect's target is checked
before anything is sent to it), nothing from the environment (``NetworkSettings`` already
resolved the proxy and trust store into ``transport``), no cookies kept, JSON asked for
without content coding, and the connect/read/pool timeouts from the server's limits.
"""

from __future__ import annotations

import httpx

from mfconnector import __version__
from mfconnector.limits import Limits
from mfconnector.net.no_cookies import NoCookies

__all__ = ["api_http_client"]


def api_http_client(transport: httpx.AsyncBaseTransport, limits: Limits) -> httpx.AsyncClient:
    """A client over ``transport`` under ``limits``' timeouts."""
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=False,
        trust_env=False,
        cookies=NoCookies(),  # never holds a cookie: nothing is ever sent back
        timeout=httpx.Timeout(
            connect=limits.graph_connect_timeout_seconds,
            read=limits.graph_read_timeout_seconds,
            write=limits.graph_read_timeout_seconds,
            pool=limits.graph_connect_timeout_seconds,
        ),
        headers={
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "User-Agent": f"mfconnector/{__version__}",
        },
    )
