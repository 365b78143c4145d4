"""What msal (and requests beneath it) raise, as ``AuthError``s a person can act on.

msal reports IdP answers as dicts (``auth.errors``) but raises for everything else: no
network, a proxy that refuses, a certificate the trust store rejects, an unknown tenant, a
broken answer. The message never carries the exception's text (it may hold URLs or response
bodies); a certificate failure names the certificate problem, which is not secret.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TypeVar

from mfconnector.auth.config import AuthConfig
from mfconnector.auth.errors import network_error
from mfconnector.errors import AuthError
from mfconnector.limits import Limits
from mfconnector.net.settings import NetworkSettings
from mfconnector.net.tls import TLS_HINT, certificate_problem

__all__ = ["call_msal", "network_problem", "translate_exception"]

log = logging.getLogger("mfconnector.auth")

T = TypeVar("T")


def _requests_error(exc: BaseException, config: AuthConfig) -> AuthError | None:
    return network_problem(exc, config.cloud.authority_host, config.network, config.limits)


def network_problem(
    exc: BaseException, host: str, network: NetworkSettings, limits: Limits
) -> AuthError | None:
    """What a requests failure talking to the sign-in service ``host`` means (TLS, proxy,
    no answer); None for any other exception."""
    import requests  # a declared dependency; imported when msal has already loaded it

    if not isinstance(exc, requests.exceptions.RequestException):
        return None
    problem = certificate_problem(exc, reason_chars=limits.tls_reason_chars)
    if problem is not None:
        return AuthError(
            f"the TLS certificate of the sign-in service ({host}) was not accepted: {problem}",
            hint=TLS_HINT,
            code="tls_certificate",
        )
    proxy = network.proxy
    if isinstance(exc, requests.exceptions.ProxyError) and proxy is not None:
        return AuthError(
            f"the proxy {proxy.display} did not open a connection to the sign-in service ({host})",
            hint="check --proxy / MFC_PROXY (address, credentials) and that the proxy allows "
            f"{host}",
            code="proxy",
        )
    return network_error(host, timed_out=isinstance(exc, requests.exceptions.Timeout))


def translate_exception(exc: BaseException, config: AuthConfig) -> AuthError | None:
    """An ``AuthError`` for what msal raised; None if it is not ours to map."""
    if isinstance(exc, AuthError):
        return exc
    mapped = _requests_error(exc, config)
    if mapped is not None:
        return mapped
    host = config.cloud.authority_host
    name = type(exc).__name__
    if name == "BrowserInteractionTimeoutError":
        return AuthError(
            "sign-in in the browser did not finish in time",
            hint="run `mfconnector login` again, or `mfconnector login --device-code`",
            code="browser_timeout",
        )
    if name == "MsalServiceError":  # a 5xx from the sign-in service
        return AuthError(
            f"the sign-in service ({host}) had an internal error",
            hint="retry in a minute",
            code="service_unavailable",
        )
    if isinstance(exc, ValueError):
        text = str(exc)
        if "authority configuration" in text or "OIDC Discovery" in text:
            return AuthError(
                f"the sign-in service does not know tenant {config.tenant!r} in the "
                f"{config.cloud.name} cloud",
                hint="check --tenant / MFC_TENANT and --cloud / MFC_CLOUD",
                code="tenant_not_found",
            )
        if isinstance(exc, json.JSONDecodeError):
            return AuthError(
                f"the sign-in service ({host}) sent an answer that is not JSON",
                hint="a proxy may be intercepting the connection; retry later",
                code="service_unavailable",
            )
        return AuthError(
            "msal refused the sign-in settings",
            hint="check the client id, tenant and credentials (docs/AUTH.md)",
            code="config",
        )
    return None


def call_msal(config: AuthConfig, fn: Callable[[], T]) -> T:
    """Run one blocking msal step, turning every library exception into an ``AuthError``."""
    try:
        return fn()
    except AuthError:
        raise
    except Exception as exc:
        mapped = translate_exception(exc, config)
        if mapped is None:
            # Only the type: the text of a library exception may quote a response body.
            log.warning("msal raised %s", type(exc).__name__)
            mapped = AuthError(
                f"sign-in failed unexpectedly ({type(exc).__name__})",
                hint="retry; if it persists, run `mfconnector login` again",
                code="internal",
            )
        raise mapped from None
