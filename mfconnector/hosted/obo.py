"""Graph tokens for each hosted user through Entra's on-behalf-of exchange.

The client's token is for *us* (its audience is the public URL); Graph would refuse it,
and forwarding it would make us a token passthrough, which the MCP authorization rules
forbid. Instead the token becomes the ``assertion`` of an OAuth 2.0 JWT-bearer grant
(``requested_token_use=on_behalf_of``) from our confidential client, and Entra answers
with a Graph token for the same user and the delegated scopes the tenant consented to.

msal's ``acquire_token_on_behalf_of`` always asks Entra (it does not look in its cache),
so the Graph tokens are cached here, in memory, per user and per assertion, until a few
minutes before they expire; the cache is bounded (least recently used goes first). With a
shared state store (``--state-url``) and a seal key, the cache is also kept there, sealed
(``hosted.sealed_tokens``), so another replica serving the same user reuses the token.
msal is blocking: every exchange runs in a worker thread, a few at a time.

Source: Microsoft identity platform, "OAuth 2.0 On-Behalf-Of flow" (Microsoft Learn).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import trio

from mfconnector.errors import AuthError
from mfconnector.hosted.bearer import Subject
from mfconnector.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from mfconnector.hosted.sealed_tokens import SealedTokens
    from mfconnector.net.settings import NetworkSettings

__all__ = ["OBO_EXPIRY_MARGIN_SECONDS", "REQUEST_SUBJECT", "OnBehalfOf", "SubjectTokenProvider"]

REQUEST_SUBJECT: ContextVar[Subject | None] = ContextVar("mfc_request_subject", default=None)
"""Who the request being served acts for, with the bearer token it came with (set by
``TenantPool.use``): a user's state outlives one token, and each request's exchange must
use that request's own token as the assertion."""

# The exchange's bounds (tokens cached, exchanges at once, time-outs) are limits:
# ``Limits.obo_*``. What stays here is policy and protocol, not a bound on anything.
OBO_EXPIRY_MARGIN_SECONDS = 300
"""A cached Graph token is replaced this long before it expires (a long read must not
start with a token that dies half-way). Not a limit: it bounds no resource and no input,
and Entra's tokens live 60-90 minutes, so any margin of a few minutes does."""

CONSENT_ERRORS = {65001, 65004, 50076, 50079, 53003}
"""AADSTS codes that no retry fixes: consent missing or declined, MFA or a
Conditional Access policy the user must satisfy in the client (Entra's error codes)."""


@dataclass(frozen=True, slots=True)
class _Cached:
    token: str
    expires_at: float


def _assertion_id(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


class OnBehalfOf:
    """One confidential client for the server; ``graph_token(subject)`` per request."""

    def __init__(
        self,
        *,
        client_id: str,
        client_credential: str | dict[str, str],
        authority: str,
        scopes: Sequence[str],
        http_client: Any = None,
        clock: Callable[[], float] = time.time,
        shared: SealedTokens | None = None,
        limits: Limits = DEFAULT_LIMITS,
        network: NetworkSettings | None = None,
    ) -> None:
        self._client_id = client_id
        self._credential = client_credential
        self._authority = authority
        self._scopes = list(scopes)
        self._http_client = http_client
        self._clock = clock
        self._shared = shared
        self._limits = limits
        self._network = network
        """The proxy and trust ``http_client`` uses, for the words of a network failure."""
        self._app: Any = None
        self._cache: OrderedDict[tuple[str, str], _Cached] = OrderedDict()
        self._limiter = trio.CapacityLimiter(limits.obo_exchanges)
        self.exchanges = 0
        """Exchanges sent to Entra so far (for status and tests)."""

    async def graph_token(
        self, subject: Subject, *, force_refresh: bool = False, claims: str | None = None
    ) -> str:
        """A Graph token for this user: cached while it lives, else one exchange.

        ``claims`` is a Graph claims challenge (continuous access evaluation): it always
        goes to Entra, never answered from the cache.
        """
        key = (subject.key, _assertion_id(subject.token))
        cached = self._cache.get(key)
        reusable = not force_refresh and claims is None
        if cached is None and reusable and self._shared is not None:
            found = await self._shared.get(*key)
            if found is not None:
                cached = _Cached(*found)
                self._remember(key, cached)
        if (
            cached is not None
            and reusable
            and cached.expires_at - OBO_EXPIRY_MARGIN_SECONDS > self._clock()
        ):
            self._cache.move_to_end(key)
            return cached.token
        try:
            with trio.fail_after(self._limits.obo_call_seconds):
                result = await trio.to_thread.run_sync(
                    self._exchange,
                    subject.token,
                    claims,
                    limiter=self._limiter,
                    abandon_on_cancel=True,
                )
        except trio.TooSlowError:
            raise AuthError(
                "the identity provider did not answer the on-behalf-of exchange in time",
                hint="retry in a moment",
            ) from None
        except Exception as exc:  # msal raises (requests' errors) when Entra cannot be reached
            mapped = self._network_problem(exc)
            if mapped is None:
                raise
            raise mapped from None
        token = result.get("access_token")
        if not isinstance(token, str):
            raise _error_from(result)
        expires_in = result.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float | str) else 0.0
        fresh = _Cached(token, self._clock() + lifetime)
        self._remember(key, fresh)
        if self._shared is not None:
            await self._shared.put(*key, token, fresh.expires_at, lifetime)
        return token

    def _network_problem(self, exc: Exception) -> AuthError | None:
        from mfconnector.auth.translate import network_problem
        from mfconnector.net.settings import NetworkSettings

        host = urlsplit(self._authority).hostname or self._authority
        return network_problem(exc, host, self._network or NetworkSettings(), self._limits)

    def _remember(self, key: tuple[str, str], cached: _Cached) -> None:
        self._cache[key] = cached
        self._cache.move_to_end(key)
        while len(self._cache) > self._limits.obo_cached_tokens:
            self._cache.popitem(last=False)

    def _exchange(self, assertion: str, claims: str | None) -> dict[str, Any]:
        """In a worker thread: build the msal app once, then one OBO request."""
        if self._app is None:
            import msal  # only hosted mode pays for msal's import

            self._app = msal.ConfidentialClientApplication(
                self._client_id,
                client_credential=self._credential,
                authority=self._authority,
                http_client=self._http_client,
                instance_discovery=False if self._http_client is not None else None,
                client_capabilities=["CP1"],
            )
        self.exchanges += 1
        result = self._app.acquire_token_on_behalf_of(
            assertion, self._scopes, claims_challenge=claims
        )
        return result if isinstance(result, dict) else {}


def _error_from(result: dict[str, Any]) -> AuthError:
    codes = result.get("error_codes")
    code = codes[0] if isinstance(codes, list) and codes and isinstance(codes[0], int) else None
    if code in CONSENT_ERRORS or result.get("error") == "interaction_required":
        return AuthError(
            "the organisation has not consented to this connector's Graph permissions, "
            "or the user must complete a sign-in step in the client",
            hint="an administrator grants consent to the connector's app registration "
            "(docs/HOSTING.md), then the user signs in again",
        )
    if result.get("error") == "invalid_grant":
        return AuthError(
            "the identity provider refused the user's token for the on-behalf-of exchange",
            hint="sign in again in the client",
        )
    if result.get("error") in {"invalid_client", "unauthorized_client"}:
        return AuthError(
            "the connector's own client credentials were refused",
            hint="check MFC_CLIENT_ID and MFC_CLIENT_SECRET or MFC_CLIENT_CERT_PATH on the server",
        )
    reason = f" (AADSTS{code})" if code else ""
    return AuthError(f"the on-behalf-of exchange failed{reason}", hint="retry in a moment")


class SubjectTokenProvider:
    """The ``TokenProvider`` one hosted request hands to the Graph client: its user's tokens."""

    def __init__(self, exchange: OnBehalfOf, subject: Subject) -> None:
        self._exchange = exchange
        self._subject = subject

    def _current(self) -> Subject:
        """The request's own subject (its newest token) when it is this user; else the one
        the state was built for."""
        current = REQUEST_SUBJECT.get()
        return (
            current if current is not None and current.key == self._subject.key else self._subject
        )

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        return await self._exchange.graph_token(
            self._current(), force_refresh=force_refresh, claims=claims
        )

    async def describe(self) -> dict[str, Any]:
        """``account`` names whom preparations and audit entries belong to: the user's
        opaque key (the same for every token of that user, never the token itself)."""
        return {
            "signed_in": True,
            "mode": "hosted",
            "tenant": self._subject.tenant,
            "account": f"hosted user {self._subject.key}",
        }
