"""The HTTP client msal uses for sign-in: a ``requests.Session`` that obeys our settings.

Left to itself msal builds a session that reads ``HTTPS_PROXY``, ``REQUESTS_CA_BUNDLE`` and
``.netrc`` from the environment and verifies against ``certifi``. This one ignores the
environment (``trust_env=False``), verifies with the OS trust store (``tls``), routes through
the configured proxy except for ``NO_PROXY`` hosts, retries a failed connection once and puts
msal's timeout on every request (msal applies its ``timeout`` only to a session it built).
msal is given this as ``http_client``; requests is imported only when one is built.

Why requests: msal's ``http_client`` is "your implementation of msal.oauth2cli.http's
HttpClient; defaults to a requests session", and msal itself depends on requests, so
subclassing ``requests.Session`` adds no package and keeps msal on the client it is built
and tested against. Because we import it ourselves, pyproject.toml declares it.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from mfconnector.net.settings import NetworkSettings
from mfconnector.net.tls import verifying_context

__all__ = ["SignInSession", "signin_session"]


class _TrustStoreAdapter(HTTPAdapter):
    """Connection pools built on our context; requests' certifi bundle is never loaded."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        super().__init__(max_retries=1)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self._context
        super().init_poolmanager(*args, **kwargs)

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        kwargs["ssl_context"] = self._context
        return super().proxy_manager_for(proxy, **kwargs)

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        # requests would load certifi's bundle into our context here; verification stays
        # on (CERT_REQUIRED comes from the context), the trust comes from the context alone.
        super().cert_verify(conn, url, False, cert)
        if url.lower().startswith("https"):
            conn.cert_reqs = "CERT_REQUIRED"


class SignInSession(requests.Session):
    """A requests session with a fixed proxy choice, trust store and timeout."""

    def __init__(self, settings: NetworkSettings, *, timeout_seconds: float) -> None:
        super().__init__()
        self.trust_env = False
        self._settings = settings
        self._timeout = timeout_seconds
        adapter = _TrustStoreAdapter(verifying_context(settings.ca_file))
        self.mount("https://", adapter)
        self.mount("http://", adapter)

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", self._timeout)
        return super().request(method, url, *args, **kwargs)

    def merge_environment_settings(
        self,
        url: str | bytes | None,
        proxies: Mapping[str, str] | None,
        stream: bool | None,
        verify: bool | str | None,
        cert: Any,
    ) -> dict[str, Any]:
        """The proxy for this URL from our settings alone; verification always on."""
        proxy = self._settings.proxy
        target = url.decode() if isinstance(url, bytes) else (url or "")
        chosen: dict[str, str] = {}
        if proxy is not None and proxy.applies_to(urlsplit(target).hostname or ""):
            chosen = {"http": proxy.url, "https": proxy.url}
        return {"proxies": chosen, "stream": stream, "verify": True, "cert": cert}


def signin_session(settings: NetworkSettings, *, timeout_seconds: float) -> SignInSession:
    return SignInSession(settings, timeout_seconds=timeout_seconds)
