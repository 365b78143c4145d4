"""Live-mode tokens from msal: silent in the server, never interactive.

Two halves. The *sessions* (``DelegatedSession``, ``AppOnlySession``) are plain blocking code
that owns one msal application and one token store; the CLI commands use them directly. The
``MsalTokenProvider`` is the trio face the server sees: every session call runs in a worker
thread (``trio.to_thread.run_sync``), one at a time (``CapacityLimiter(1)``: one msal app,
one cache, one HTTP session), under a trio deadline on top of msal's own HTTP ``timeout``.
The msal application is built lazily inside that thread, because its constructor already
talks to the network.

A 401 from Graph makes the Graph client call ``get_token(force_refresh=True, claims=...)``:
that becomes ``acquire_token_silent_with_error(force_refresh=True, claims_challenge=...)``,
and the app declares ``client_capabilities=["CP1"]`` so Graph may send such challenges.

msal is imported only inside functions, and only this module and ``commands`` use it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import trio

from mfconnector.auth.cache import TokenStore, open_token_store
from mfconnector.auth.config import AuthConfig, AuthConfigError, check_scopes
from mfconnector.auth.errors import auth_error_from_result, network_error, not_signed_in
from mfconnector.errors import AuthError

__all__ = [
    "AppOnlySession",
    "DelegatedSession",
    "MsalTokenProvider",
    "Session",
    "build_token_provider",
    "call_msal",
    "guard_msal_logs",
    "make_session",
    "normalize_claims",
    "translate_exception",
]

log = logging.getLogger("mfconnector.auth")

CLIENT_CAPABILITIES = ["CP1"]
"""We handle claims challenges, so Graph may send them (Continuous Access Evaluation)."""
OIDC_SCOPES = frozenset({"openid", "profile", "offline_access", "email"})
MAX_CERT_BYTES = 1_000_000

T = TypeVar("T")


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


_SECRET_FIELD = re.compile(
    r"""(["']?\b(?:code|device_code|refresh_token|access_token|id_token|client_secret|"""
    r"""client_assertion|assertion|password|secret)\b["']?\s*[:=]\s*b?)(["'])[^"']*["']"""
)


class _RedactSecrets(logging.Filter):
    """Scrubs secret-valued fields from msal's own log records.

    msal masks tokens in its cache-event debug log but not ``code``/``device_code``, and a
    device code can be redeemed for the user's tokens while the sign-in is in progress.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken record is the logging system's problem, not ours
            return True
        scrubbed = _SECRET_FIELD.sub(r"\1\2********\2", message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


_REDACTOR = _RedactSecrets()


def guard_msal_logs() -> None:
    """Attach the redacting filter to every msal logger (idempotent; after ``import msal``)."""
    names = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name == "msal" or name.startswith(("msal.", "msal_extensions"))
    ]
    for name in names:
        logger = logging.getLogger(name)
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)


def translate_exception(exc: BaseException, config: AuthConfig) -> AuthError | None:
    """An ``AuthError`` for what msal (or requests beneath it) raised; None if not ours to map.

    The message never carries the exception text: it may hold URLs or response bodies.
    """
    if isinstance(exc, AuthError):
        return exc
    host = config.cloud.authority_host
    try:
        import requests
    except ImportError:  # pragma: no cover - msal depends on requests
        requests = None  # type: ignore[assignment]
    if requests is not None and isinstance(exc, requests.exceptions.RequestException):
        return network_error(host, timed_out=isinstance(exc, requests.exceptions.Timeout))
    name = type(exc).__name__
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


class DelegatedSession:
    """One signed-in person: PublicClientApplication + the persisted cache. Blocking."""

    mode = "delegated"

    def __init__(self, config: AuthConfig, *, http_client: Any = None) -> None:
        self.config = config
        self._http_client = http_client
        self._store: TokenStore | None = None
        self._app: Any = None

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
                    http_client=self._http_client,
                    timeout=self.config.http_timeout_seconds,
                    client_capabilities=CLIENT_CAPABILITIES,
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
        }
        try:
            store = self.store
            facts["cacheLocation"] = store.location
            facts["cacheEncrypted"] = store.encrypted
            store.refresh()
            accounts = self.cached_accounts()
        except AuthError as exc:
            facts.update(_error_fields(exc))
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
        facts["signedIn"] = bool(refresh_tokens)
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


def _error_fields(exc: AuthError) -> dict[str, Any]:
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

    def _credential(self) -> str | dict[str, str]:
        config = self.config
        if config.client_secret:
            return config.client_secret
        path = config.client_cert_path
        if path is None:
            raise AuthConfigError(
                "app-only mode needs a client credential",
                hint="set MFC_CLIENT_SECRET or --client-cert",
            )
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_CERT_BYTES + 1)
        except OSError as exc:
            raise AuthConfigError(
                f"cannot read the client certificate {path}: {exc.strerror or type(exc).__name__}"
            ) from None
        pem = raw.decode("utf-8", "replace")
        if len(raw) > MAX_CERT_BYTES or "PRIVATE KEY-----" not in pem:
            raise AuthConfigError(
                f"{path} holds no PEM private key",
                hint="--client-cert needs a PEM file with the private key (and certificate)",
            )
        if "ENCRYPTED" in pem:
            raise AuthConfigError(
                f"the private key in {path} is passphrase-protected",
                hint="store it unencrypted in a file only this user can read (chmod 600)",
            )
        if config.client_cert_thumbprint:
            return {"private_key": pem, "thumbprint": config.client_cert_thumbprint}
        start = pem.find("-----BEGIN CERTIFICATE-----")
        end = pem.find("-----END CERTIFICATE-----")
        if start < 0 or end < 0:
            raise AuthConfigError(
                f"{path} has no certificate and no thumbprint was given",
                hint="add the certificate to the PEM file or pass --client-cert-thumbprint",
            )
        certificate = pem[start : end + len("-----END CERTIFICATE-----")]
        return {"private_key": pem, "public_certificate": certificate}

    @property
    def app(self) -> Any:
        if self._app is None:
            client_id = self.config.require_client_id()
            credential = self._credential()

            def build() -> Any:
                import msal

                guard_msal_logs()
                return msal.ConfidentialClientApplication(
                    client_id,
                    client_credential=credential,
                    authority=self.config.authority,
                    http_client=self._http_client,
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
            "credential": "secret" if config.client_secret else "certificate",
        }


Session = DelegatedSession | AppOnlySession


def make_session(config: AuthConfig, *, http_client: Any = None) -> Session:
    if config.app_only:
        return AppOnlySession(config, http_client=http_client)
    return DelegatedSession(config, http_client=http_client)


class MsalTokenProvider:
    """``TokenProvider`` for live mode (delegated or app-only, as ``config`` says).

    ``http_client`` is msal's transport seam (an object with requests-like ``get``/``post``);
    tests pass a fake identity provider there. Production passes nothing.
    """

    def __init__(self, config: AuthConfig, *, http_client: Any = None) -> None:
        self.config = config
        self._session = make_session(config, http_client=http_client)
        self._limiter = trio.CapacityLimiter(1)
        self._last_error: AuthError | None = None

    async def _run(self, fn: Callable[[], T]) -> T:
        try:
            with trio.fail_after(self.config.call_timeout_seconds):
                return await trio.to_thread.run_sync(
                    fn,
                    limiter=self._limiter,
                    # A cancelled request returns at once; the thread finishes (bounded by
                    # msal's HTTP timeout) and saves the cache, and the limiter stays held
                    # until it has, so msal still runs one call at a time.
                    abandon_on_cancel=True,
                    thread_name="mfconnector-msal",
                )
        except trio.TooSlowError:
            raise network_error(self.config.cloud.authority_host, timed_out=True) from None

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        try:
            token = await self._run(functools.partial(self._session.token, force_refresh, claims))
        except AuthError as exc:
            self._last_error = exc
            raise
        self._last_error = None
        return token

    async def describe(self) -> dict[str, Any]:
        """Account facts for ``account_status``; never raises for a sign-in problem."""
        try:
            facts = await self._run(self._session.facts)
        except AuthError as exc:
            facts = {
                "signedIn": False,
                "mode": self.config.mode,
                "authority": self.config.authority,
                "cacheLocation": str(self.config.cache_path),
                **_error_fields(exc),
            }
        if self._last_error is not None and "error" not in facts:
            facts.update(_error_fields(self._last_error))
        return facts


def build_token_provider(config: AuthConfig, *, http_client: Any = None) -> MsalTokenProvider:
    """The live-mode provider for ``config`` (delegated or app-only). Builds no msal app yet."""
    return MsalTokenProvider(config, http_client=http_client)
