"""Where the Gmail API lives, and the one rule for sending the token there.

The default root is Google's (``https://gmail.googleapis.com``). ``--gmail-api-root``
(``MFC_GMAIL_API_ROOT``) points the backend at an emulator or a proxy: any https URL, or
plain http only to a loopback address, so a token never crosses a network in clear. The
token is attached only to URLs this package builds under that root (``under_root``).
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from mfconnector.net.hosts import is_loopback_host

__all__ = [
    "API_PATH",
    "DEFAULT_GMAIL_API_ROOT",
    "ApiRootError",
    "api_url",
    "checked_api_root",
    "under_root",
]

DEFAULT_GMAIL_API_ROOT = "https://gmail.googleapis.com"
API_PATH = "/gmail/v1/users/me"
"""Every call is about the signed-in user's own mailbox (``me``)."""


class ApiRootError(ValueError):
    """An API root the token must not be sent to; the message is in our words."""


def checked_api_root(url: str) -> str:
    """``url`` without a final slash, or ``ApiRootError`` saying why it is refused."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise ApiRootError(f"--gmail-api-root {text[:80]!r} is not a URL") from None
    if parts.scheme not in ("https", "http") or not host:
        raise ApiRootError(
            f"--gmail-api-root {text[:80]!r} must be an https:// URL (or http:// on loopback)"
        )
    if parts.scheme == "http" and not is_loopback_host(host):
        raise ApiRootError(
            f"--gmail-api-root {text[:80]!r}: plain http is allowed only to a loopback "
            "address (127.0.0.1, ::1, localhost); use https"
        )
    if parts.username is not None or parts.password is not None:
        raise ApiRootError("--gmail-api-root must not carry a user name or password")
    if parts.query or parts.fragment:
        raise ApiRootError("--gmail-api-root must not carry a query or a fragment")
    return text.rstrip("/")


def api_url(root: str, *segments: str) -> str:
    """``root`` + ``/gmail/v1/users/me`` + each segment percent-encoded (no ``/`` inside)."""
    return root + API_PATH + "".join("/" + quote(segment, safe="") for segment in segments)


def under_root(url: str, root: str) -> bool:
    """Whether ``url`` is the API root itself or below it (scheme, host, port and path)."""
    return url == root or url.startswith(root + "/")
