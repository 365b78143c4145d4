"""Google sign-in for Gmail accounts: the installed-app OAuth flow, the stored refresh
token, silent refresh.

Google's own libraries do the OAuth work (``google-auth-oauthlib``'s ``InstalledAppFlow``:
authorization code with PKCE on a loopback redirect; ``google-auth``'s ``Credentials``
refreshes); they are imported inside functions, so a server for another provider never
loads them. The refresh token lives in the same encrypted store as the Microsoft token
cache (a separate item: OS keyring, DPAPI or Keychain; a 0600 plaintext file only with
the same explicit opt-in). Access tokens live in memory only.

``MFC_GMAIL_ACCESS_TOKEN`` is an access token the operator manages (emulators, tests,
deployments that mint tokens elsewhere): used as given, never refreshed, never logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mfconnector.errors import AuthError
from mfconnector.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "GOOGLE_AUTH_URI",
    "GOOGLE_TOKEN_URI",
    "GoogleSettings",
    "GoogleTokenProvider",
    "StoredGoogleToken",
    "google_login",
    "google_logout",
    "google_settings",
    "google_status",
    "token_store_path",
]

_log = logging.getLogger("mfconnector.auth")
GOOGLE_AUTH_URI = "https://accounts.google.com/o/oauth2/auth"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
STORE_ITEM = "gmail_token"
EXPIRY_MARGIN_SECONDS = 60.0
"""An access token this close to its expiry is refreshed before use."""


@dataclass(frozen=True, slots=True)
class GoogleSettings:
    """The operator's Google Cloud app, the scopes the gates need, where tokens live."""

    client_id: str
    client_secret: str | None
    scopes: tuple[str, ...]
    store_path: Path
    allow_plaintext: bool
    login_command: str
    auth_uri: str = GOOGLE_AUTH_URI
    token_uri: str = GOOGLE_TOKEN_URI
    timeout_seconds: float = 60.0
    limits: Limits = DEFAULT_LIMITS
    """The server's limits (the token store's size)."""


def token_store_path(cache_path: Path) -> Path:
    """Next to the Microsoft token cache: ``<cache>.gmail.json``."""
    return cache_path.with_name(cache_path.stem + ".gmail.json")


def google_settings(
    env: Mapping[str, str],
    *,
    scopes: tuple[str, ...],
    cache_path: Path,
    allow_plaintext: bool,
    login_command: str,
    limits: Limits = DEFAULT_LIMITS,
) -> GoogleSettings:
    """From ``MFC_GOOGLE_CLIENT_ID`` / ``MFC_GOOGLE_CLIENT_SECRET``; ``AuthError`` without an id."""
    client_id = env.get("MFC_GOOGLE_CLIENT_ID", "").strip()
    if not client_id:
        raise AuthError(
            "no Google OAuth client configured for Gmail",
            hint="create a Desktop app client in Google Cloud (docs/GMAIL.md) and set "
            "MFC_GOOGLE_CLIENT_ID and MFC_GOOGLE_CLIENT_SECRET",
            code="no_client_id",
        )
    secret = env.get("MFC_GOOGLE_CLIENT_SECRET", "").strip() or None
    return GoogleSettings(
        client_id=client_id,
        client_secret=secret,
        scopes=scopes,
        store_path=token_store_path(cache_path),
        allow_plaintext=allow_plaintext,
        login_command=login_command,
        limits=limits,
    )


class StoredGoogleToken:
    """The refresh token and its granted scopes, in the encrypted store (blocking)."""

    def __init__(self, settings: GoogleSettings) -> None:
        from mfconnector.auth.persistence import ensure_private_dir, open_persistence

        ensure_private_dir(settings.store_path.parent)
        self._persistence = open_persistence(
            settings.store_path,
            allow_plaintext=settings.allow_plaintext,
            max_bytes=settings.limits.token_cache_bytes,
            item=STORE_ITEM,
        )

    @property
    def description(self) -> str:
        return self._persistence.description

    @property
    def location(self) -> str:
        return self._persistence.location

    def load(self) -> dict[str, Any] | None:
        text, _ = self._persistence.read()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("refresh_token"), str):
            return None
        return value

    def save(self, record: dict[str, Any]) -> None:
        self._persistence.write(json.dumps(record))

    def clear(self) -> None:
        self._persistence.write("")


def _client_config(settings: GoogleSettings) -> dict[str, Any]:
    installed: dict[str, Any] = {
        "client_id": settings.client_id,
        "auth_uri": settings.auth_uri,
        "token_uri": settings.token_uri,
        "redirect_uris": ["http://127.0.0.1"],
    }
    if settings.client_secret:
        installed["client_secret"] = settings.client_secret
    return {"installed": installed}


class _Lines:
    """Where the flow's prompt goes: each line to ``show`` (stdout stays untouched)."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                self._show(line)
        return len(text)

    def flush(self) -> None:
        pass


def google_login(
    settings: GoogleSettings,
    *,
    open_browser: bool,
    show: Callable[[str], None],
    timeout_seconds: float,
) -> dict[str, Any]:
    """The installed-app flow: the browser (or the person, shown the URL) signs in, Google
    redirects to a one-shot server on 127.0.0.1, the code is exchanged with PKCE. Keeps
    the refresh token; returns what was granted (never a token)."""
    import contextlib

    from google_auth_oauthlib.flow import InstalledAppFlow

    flow = InstalledAppFlow.from_client_config(
        _client_config(settings), list(settings.scopes), autogenerate_code_verifier=True
    )
    try:
        with contextlib.redirect_stdout(_Lines(show)):
            credentials = flow.run_local_server(
                host="127.0.0.1",
                port=0,
                open_browser=open_browser,
                authorization_prompt_message="Sign in to Google in your browser: {url}",
                success_message="mfconnector is signed in to Gmail. You may close this window.",
                timeout_seconds=int(timeout_seconds),
                access_type="offline",
                prompt="consent",
                include_granted_scopes="true",
            )
    except Exception as exc:  # the library's errors carry URLs and codes: say it our way
        reason = type(exc).__name__
        raise AuthError(
            f"Google sign-in did not complete ({reason})",
            hint=f"run `{settings.login_command}` again",
            code="signin_failed",
        ) from None
    if not credentials.refresh_token:
        raise AuthError(
            "Google gave no refresh token",
            hint="remove mfconnector's access at myaccount.google.com/permissions, then "
            f"run `{settings.login_command}` again",
            code="signin_failed",
        )
    granted = sorted(set(credentials.granted_scopes or credentials.scopes or settings.scopes))
    StoredGoogleToken(settings).save(
        {
            "refresh_token": credentials.refresh_token,
            "client_id": settings.client_id,
            "scopes": granted,
            "signed_in_at": int(time.time()),
        }
    )
    return {"signed_in": True, "scopes": granted}


def google_logout(settings: GoogleSettings) -> bool:
    """Forgets the refresh token; whether one was kept."""
    store = StoredGoogleToken(settings)
    had = store.load() is not None
    store.clear()
    return had


def google_status(settings: GoogleSettings) -> dict[str, Any]:
    """What ``status`` shows: never a token."""
    store = StoredGoogleToken(settings)
    record = store.load()
    missing = sorted(set(settings.scopes) - set(record.get("scopes", []))) if record else []
    return {
        "signed_in": record is not None,
        "client_id": settings.client_id,
        "scopes": record.get("scopes", []) if record else [],
        "missing_scopes": missing,
        "store": f"{store.description} ({store.location})",
    }


class GoogleTokenProvider:
    """Access tokens for Gmail from the stored refresh token, refreshed silently.

    ``get_token`` blocks only in a worker thread (``google-auth`` uses ``requests``);
    one refresh at a time, the token kept in memory until shortly before it expires.
    """

    def __init__(self, settings: GoogleSettings) -> None:
        self._settings = settings
        self._token: str | None = None
        self._expires = 0.0
        self._lock: Any = None

    def _refresh_blocking(self) -> tuple[str, float]:
        import google.auth.exceptions
        from google.auth.transport.requests import Request
        from google.oauth2.credentials import Credentials

        settings = self._settings
        record = StoredGoogleToken(settings).load()
        if record is None:
            raise AuthError(
                "not signed in to Gmail",
                hint=f"run `{settings.login_command}` in a terminal",
                code="not_signed_in",
            )
        missing = set(settings.scopes) - set(record.get("scopes", []))
        if missing:
            raise AuthError(
                "the Gmail sign-in lacks a permission the enabled tools need",
                hint=f"run `{settings.login_command}` in a terminal, then retry",
                code="consent_required",
            )
        credentials = Credentials(  # type: ignore[no-untyped-call]
            token=None,
            refresh_token=record["refresh_token"],
            token_uri=settings.token_uri,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            scopes=list(record.get("scopes", settings.scopes)),
        )
        import requests

        session = requests.Session()
        session.trust_env = False
        try:
            credentials.refresh(Request(session))  # type: ignore[no-untyped-call]
        except google.auth.exceptions.RefreshError:
            raise AuthError(
                "Google refused the stored sign-in (revoked, or expired: an app in "
                "'testing' status keeps refresh tokens for 7 days)",
                hint=f"run `{settings.login_command}` in a terminal",
                code="refresh_failed",
            ) from None
        except google.auth.exceptions.TransportError:
            raise AuthError(
                "cannot reach Google's sign-in service",
                hint="check the network path to oauth2.googleapis.com, then retry",
                code="signin_unreachable",
            ) from None
        finally:
            session.close()
        expiry = credentials.expiry
        lifetime = (expiry.timestamp() - time.time()) if expiry else 3_000.0
        if expiry is not None and expiry.tzinfo is None:  # google-auth keeps naive UTC
            from datetime import UTC

            lifetime = expiry.replace(tzinfo=UTC).timestamp() - time.time()
        return str(credentials.token), time.monotonic() + max(lifetime, 0.0)

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        import trio

        if self._lock is None:
            self._lock = trio.Lock()
        async with self._lock:
            fresh = time.monotonic() < self._expires - EXPIRY_MARGIN_SECONDS
            if self._token is None or force_refresh or not fresh:
                self._token, self._expires = await trio.to_thread.run_sync(self._refresh_blocking)
            assert self._token is not None
            return self._token

    async def describe(self) -> dict[str, Any]:
        import trio

        status = await trio.to_thread.run_sync(google_status, self._settings)
        return {"signed_in": status["signed_in"], "provider": "gmail", "scopes": status["scopes"]}
