"""Where the bearer token may go, and where a download redirect may lead.

The token goes only to URLs under the configured Graph root, and only when ``urlsplit`` and
httpx would read the URL the same way (no whitespace or control characters, which urlsplit
drops silently). A ``/content`` redirect must be absolute http(s) with a real host name or
IP address and no credentials; https unless the Graph root itself is plain http (loopback
tests). The pre-authenticated URL it names is wrapped in ``Location``, whose ``repr`` never
shows it.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import httpx

from mfconnector.errors import GraphError, ToolInputError
from mfconnector.graph.urls import is_graph_url

__all__ = ["Location", "checked_graph_url", "checked_redirect"]

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f]")
"""Whitespace and controls: urlsplit silently drops some that httpx would refuse."""


class Location:
    """A pre-authenticated download URL: usable, never printable."""

    __slots__ = ("url",)

    def __init__(self, url: httpx.URL) -> None:
        self.url = url

    def __repr__(self) -> str:
        return "<download location>"


def _valid_host(host: str) -> bool:
    """A DNS name or an IP address: httpx's lenient join lets ``%5bbad`` through."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return bool(_HOSTNAME_RE.match(host))
    return True


def checked_graph_url(url: str, root: str) -> str:
    """``url`` if the bearer token may go there, else a refusal that sent nothing."""
    if not isinstance(url, str) or _UNSAFE_URL_CHARS.search(url) or not is_graph_url(url, root):
        raise ToolInputError(
            "refused: that link does not point into Microsoft Graph "
            f"({urlsplit(root).netloc}); nothing was sent. Pass a `cursor` "
            "or id from a previous result unchanged",
        )
    return url


def checked_redirect(response: httpx.Response, root: str) -> Location:
    """Validate a redirect target: absolute http(s) with a host; https unless on loopback."""
    raw = response.headers.get("location", "")
    try:
        target = response.request.url.join(raw.strip()) if raw.strip() else None
    except (httpx.InvalidURL, ValueError):
        target = None
    allowed = {"https", urlsplit(root).scheme}
    if (
        target is None
        or target.scheme not in allowed
        or not _valid_host(target.host)
        or target.userinfo
    ):
        raise GraphError(
            "Graph redirected the download to an address this client refuses "
            "(missing, not https, or carrying credentials)",
            status=response.status_code,
            hint="retry later; if it persists, the file cannot be downloaded here",
        )
    return Location(target)
