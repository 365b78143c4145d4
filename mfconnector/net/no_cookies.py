"""A cookie jar that never holds a cookie: the providers' APIs authenticate every request
with a bearer token, and a cookie kept from one answer (a download host's session cookie)
must never ride along on another request. Pure code over the standard library.

httpx offers no switch to turn cookies off; a jar whose policy refuses everything still
parses every ``Set-Cookie`` and wraps every request and response for ``urllib`` (about a
tenth of a 50-message listing's client-side cost), so this one skips both steps.
"""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

__all__ = ["NoCookies"]


class NoCookies(CookieJar):
    """Refuses every cookie without reading it, and adds none to a request."""

    def __init__(self) -> None:
        super().__init__(policy=DefaultCookiePolicy(allowed_domains=[]))

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None

    def set_cookie(self, cookie: Any) -> None:
        return None
