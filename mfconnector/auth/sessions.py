"""Blocking sign-in sessions: one msal application and one token store each.

``DelegatedSession`` is a signed-in person (PublicClientApplication + the persisted cache);
``AppOnlySession`` is an unattended client credential (ConfidentialClientApplication, tokens
in memory). The CLI commands use them directly; the server reaches them only through
``MsalTokenProvider``, in a worker thread. The msal application is built on first use,
because its constructor already talks to the network, with our own HTTP session
(``net.signin_session``: the configured proxy, the OS trust store, no environment) unless a
test passes ``http_client``. On Windows, with ``pymsalruntime`` installed (``msal[broker]``),
the delegated app uses the Windows account broker (WAM).

msal is imported only inside functions.
"""

from __future__ import annotations

import base64
import binascii
import importlib.util
import json
import logging
import sys
import time
from datetime import UTC, datetime
from typing import Any

from mfconnector.auth.cache import TokenStore, open_token_store
from mfconnector.auth.config import AuthConfig, check_scopes
from mfconnector.auth.errors import auth_error_from_result, not_signed_in
from mfconnector.auth.pem import client_credential
from mfconnector.auth.redaction import guard_msal_logs
from mfconnector.auth.translate import call_msal
from mfconnector.errors import AuthError

__all__ = [
    "CLIENT_CAPABILITIES",
    "OIDC_SCOPES",
    "AppOnlySession",
    "DelegatedSession",
    "Session",
    "broker_available",
    "error_fields",
    "make_session",
    "normalize_claims",
]

log = logging.getLogger("mfconnector.auth")

CLIENT_CAPABILITIES = ["CP1"]
"""We handle claims challenges, so Graph may send them (Continuous Access Evaluation)."""
OIDC_SCOPES = frozenset({"openid", "profile", "offline_access", "email"})


def broker_available(platform: str = sys.platform) -> bool:
    """The Windows account broker (WAM): Windows, with msal's broker runtime installed."""
    return platform == "win32" and importlib.util.find_spec("pymsalruntime") is not None


def _http_client(config: AuthConfig, given: Any) -> Any:
    """The test's fake when one is given; else our session (proxy, trust store, timeout)."""
    if given is not None:
        return given
    from mfconnector.net.signin_session import signin_session

    return signin_session(config.network, timeout_seconds=config.http_timeout_seconds)


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _api_scopes(target: str | None) -> list[str]:
    """Granted scopes without the OIDC ones msal adds, in a stable order."""
    return sorted(s for s in (target or "").split() if s.lower() not in OIDC_SCOPES)


def normalize_claims(claims: str | None) -> str | None:
    """A claims challenge as the JSON text msal wants; accepts it still base64-encoded.

    Graph sends ``claims="<base64 JSON>"`` in ``WWW-Authenticate``; the TokenProvider contract
    says callers pass it decoded, but a still-encoded value is decoded here rather than
    handed to msal to fail on. Anything that is not a JSON object is dropped (logged).
    """
    if claims is None or not claims.strip():
        return None
    text = claims.strip()
    if not text.startswith("{"):
        try:
            padded = text + "=" * (-len(text) % 4)
            text = base64.b64decode(padded.replace("-", "+").replace("_", "/")).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            log.warning("ignoring a claims challenge that is neither JSON nor base64 JSON")
            return None
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        log.warning("ignoring a claims challenge that is not a JSON object")
        return None
    return json.dumps(parsed, separators=(",", ":"))


class DelegatedSession:
    """One signed-in person: PublicClientApplication + the persisted cache. Blocking."""

    mode = "delegated"

    def __init__(self, config: AuthConfig, *, http_client: Any = None) -> None:
        self.config = config
        self._http_client = http_client
        self._store: TokenStore | None = None
        self._app: Any = None
        self.broker = http_client is None and broker_available()
        """Windows account broker: only for the real service (a fake IdP has no broker)."""

    @property
    def store(self) -> TokenStore:
        if self._store is None:
            self._store = open_token_store(self.config)
        return self._store

    @property
    def app(self) -> Any:
        """The msal app, built on first use (its constructor fetches the OpenID config)."""
        if self._app is None:
            client_id = self.config.require_client_id()
            store = self.store

            def build() -> Any:
                import msal

                guard_msal_logs()
                return msal.PublicClientApplication(
                    client_id,
                    authority=self.config.authority,
                    token_cache=store.cache,
                    http_client=_http_client(self.config, self._http_client),
                    timeout=self.config.http_timeout_seconds,
                    client_capabilities=CLIENT_CAPABILITIES,
                    enable_broker_on_windows=self.broker,
                )

            self._app = call_msal(self.config, build)
        return self._app

    @property
    def scopes(self) -> list[str]:
        return list(check_scopes(self.config.scopes))

    def cached_accounts(self) -> list[dict[str, Any]]:
        """Accounts in the cache for this cloud, read without touching the network."""
        host = self.config.cloud.authority_host
        return [
            a
            for a in self.store.cache.snapshot("Account")
            if str(a.get("environment", "")).lower() == host
        ]

    def _account(self) -> dict[str, Any]:
        cached = self.cached_accounts()
        if not cached:
            raise not_signed_in()
        homes = {a.get("home_account_id") for a in cached}
        if len(homes) > 1:
            raise AuthError(
                f"the token cache holds {len(homes)} accounts; mfconnector serves one",
                hint="run `mfconnector logout`, then `mfconnector login` with the account to use",
                code="several_accounts",
            )
        app = self.app
        accounts = call_msal(self.config, app.get_accounts)
        for account in accounts:
            if account.get("home_account_id") in homes:
                return dict(account)
        raise not_signed_in()

    def commit_quietly(self) -> None:
        """Save after an msal call that failed: the original error is the one to report."""
        try:
            self.store.commit()
        except AuthError as exc:
            log.warning("could not save the token cache: %s", exc.message)

    def token(self, force_refresh: bool = False, claims: str | None = None) -> str:
        """An access token from the cache, refreshed with the refresh token when needed."""
        store = self.store
        store.refresh()
        account = self._account()
        app = self.app
        challenge = normalize_claims(claims)
        try:
            result = call_msal(
                self.config,
                lambda: app.acquire_token_silent_with_error(
                    self.scopes, account, force_refresh=force_refresh, claims_challenge=challenge
                ),
            )
        except BaseException:
            self.commit_quietly()
            raise
        try:
            store.commit()  # a rotated refresh token reaches the disk before we go on
        except AuthError as exc:
            # The token is good; the unsaved change stays pending and is retried next call.
            log.warning("could not save the token cache: %s", exc.message)
        if result is None:
            raise not_signed_in()
        if "access_token" not in result:
            raise auth_error_from_result(result, action="token refresh")
        log.debug("access token from %s", result.get("token_source", "msal"))
        return str(result["access_token"])

    def facts(self) -> dict[str, Any]:
        """What ``status`` and ``account_status`` show. Never a token; no network."""
        config = self.config
        facts: dict[str, Any] = {
            "signedIn": False,
            "account": None,
            "tenantId": None,
            "authority": config.authority,
            "cloud": config.cloud.name,
            "graphRoot": config.graph_root,
            "clientId": config.client_id,
            "scopes": [],
            "requestedScopes": list(config.scopes),
            "cacheLocation": str(config.cache_path),
            "cacheEncrypted": None,
            "expiresOn": None,
            "mode": "delegated",
            "network": config.network.describe(),
        }
        try:
            store = self.store
            facts["cacheLocation"] = store.location
            facts["cacheEncrypted"] = store.encrypted
            facts["cacheStorage"] = store.description
            store.refresh()
            accounts = self.cached_accounts()
        except AuthError as exc:
            facts.update(error_fields(exc))
            return facts
        if not accounts:
            return facts
        account = accounts[0]
        home = account.get("home_account_id")
        facts["account"] = account.get("username") or None
        facts["tenantId"] = _home_tenant(account)
        if len({a.get("home_account_id") for a in accounts}) > 1:
            facts["accounts"] = len({a.get("home_account_id") for a in accounts})

        def ours(entry: dict[str, Any]) -> bool:
            return entry.get("home_account_id") == home and (
                not config.client_id or entry.get("client_id") == config.client_id
            )

        refresh_tokens = [e for e in store.cache.snapshot("RefreshToken") if ours(e)]
        access_tokens = [e for e in store.cache.snapshot("AccessToken") if ours(e)]
        # The broker keeps the refresh token itself; msal records its account as "broker".
        via_broker = any(a.get("account_source") == "broker" for a in accounts)
        facts["signedIn"] = bool(refresh_tokens) or via_broker
        newest = max(
            refresh_tokens + access_tokens,
            key=lambda e: int(e.get("last_modification_time") or e.get("cached_at") or 0),
            default=None,
        )
        if newest is not None:
            facts["scopes"] = _api_scopes(newest.get("target"))
        expiries = [
            int(e["expires_on"]) for e in access_tokens if str(e.get("expires_on", "")).isdigit()
        ]
        if expiries:
            facts["expiresOn"] = _iso(max(expiries))
        return facts


def _home_tenant(account: dict[str, Any]) -> str | None:
    home = str(account.get("home_account_id") or "")
    if "." in home:
        return home.split(".", 1)[1]
    realm = account.get("realm")
    return str(realm) if realm else None


def error_fields(exc: AuthError) -> dict[str, Any]:
    fields: dict[str, Any] = {"error": exc.message}
    if exc.hint:
        fields["hint"] = exc.hint
    if exc.code:
        fields["errorCode"] = exc.code
    return fields


class AppOnlySession:
    """Unattended: ConfidentialClientApplication with a secret or certificate; no person.

    App tokens live an hour and are re-acquired from the credential, so they stay in msal's
    in-memory cache: nothing secret is written to disk by this mode.
    """

    mode = "app-only"

    def __init__(self, config: AuthConfig, *, http_client: Any = None) -> None:
        self.config = config
        self._http_client = http_client
        self._app: Any = None

    @property
    def app(self) -> Any:
        if self._app is None:
            client_id = self.config.require_client_id()
            credential = client_credential(self.config)

            def build() -> Any:
                import msal

                guard_msal_logs()
                return msal.ConfidentialClientApplication(
                    client_id,
                    client_credential=credential,
                    authority=self.config.authority,
                    http_client=_http_client(self.config, self._http_client),
                    timeout=self.config.http_timeout_seconds,
                    client_capabilities=CLIENT_CAPABILITIES,
                )

            self._app = call_msal(self.config, build)
        return self._app

    def token(self, force_refresh: bool = False, claims: str | None = None) -> str:
        app = self.app
        challenge = normalize_claims(claims)
        if force_refresh and challenge is None:
            # acquire_token_for_client refuses force_refresh; dropping the cached app token
            # has the same effect (a claims challenge skips the cache by itself).
            call_msal(self.config, app.remove_tokens_for_client)
        result = call_msal(
            self.config,
            lambda: app.acquire_token_for_client(
                scopes=list(self.config.scopes), claims_challenge=challenge
            ),
        )
        if not result or "access_token" not in result:
            raise auth_error_from_result(result or {}, action="app-only sign-in")
        return str(result["access_token"])

    def facts(self) -> dict[str, Any]:
        config = self.config
        expires: str | None = None
        if self._app is not None:
            now = time.time()
            entries = self._app.token_cache.search("AccessToken", query={"home_account_id": None})
            expiries = [
                int(e["expires_on"])
                for e in entries
                if str(e.get("expires_on", "")).isdigit() and int(e["expires_on"]) > now
            ]
            expires = _iso(max(expiries)) if expiries else None
        return {
            "signedIn": True,
            "account": config.user,
            "tenantId": config.tenant,
            "authority": config.authority,
            "cloud": config.cloud.name,
            "graphRoot": config.graph_root,
            "clientId": config.client_id,
            "scopes": list(config.scopes),
            "requestedScopes": list(config.scopes),
            "cacheLocation": "memory",
            "cacheEncrypted": None,
            "expiresOn": expires,
            "mode": "app-only",
            "network": config.network.describe(),
            "credential": "secret" if config.client_secret else "certificate",
        }


Session = DelegatedSession | AppOnlySession


def make_session(config: AuthConfig, *, http_client: Any = None) -> Session:
    if config.app_only:
        return AppOnlySession(config, http_client=http_client)
    return DelegatedSession(config, http_client=http_client)
