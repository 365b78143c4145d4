"""Where bearer tokens come from. The Graph client only sees ``TokenProvider``.

The msal implementation lives in ``mfconnector.auth.msal_provider`` and is imported only
in live mode, so demo and fixture mode never load msal.
"""

from __future__ import annotations

from typing import Any, Protocol

from mfconnector.errors import AuthError

__all__ = ["StaticTokenProvider", "TokenProvider", "UnavailableTokenProvider"]


class TokenProvider(Protocol):
    """Gives the Graph client a bearer token, and says who is signed in."""

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        """Return an access token for Graph.

        ``force_refresh`` asks for a new token after Graph answered 401; ``claims`` passes a
        decoded claims challenge from a ``WWW-Authenticate`` header. Raises ``AuthError``
        with a hint (for example "run `mfconnector login`") when no token can be had.
        """
        ...

    async def describe(self) -> dict[str, Any]:
        """Account facts for ``account_status``: never a token or cache contents."""
        ...


class StaticTokenProvider:
    """A fixed token: fixture and demo mode, and tests. ``None`` means not signed in."""

    def __init__(self, token: str | None, *, account: str | None = None) -> None:
        self._token = token
        self._account = account

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        if self._token is None:
            raise AuthError("not signed in", hint="run `mfconnector login` in a terminal")
        return self._token

    async def describe(self) -> dict[str, Any]:
        if self._token is None:
            return {"signedIn": False}
        return {"signedIn": True, "account": self._account}


class UnavailableTokenProvider:
    """Sign-in cannot work as configured: every call says why, and the server keeps serving."""

    def __init__(self, error: AuthError) -> None:
        self._error = error

    @property
    def error(self) -> AuthError:
        """Why sign-in cannot work (said at start-up and by every call)."""
        return self._error

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        raise self._error

    async def describe(self) -> dict[str, Any]:
        return {"signedIn": False, "error": self._error.message, "hint": self._error.hint}
