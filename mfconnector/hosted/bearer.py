"""Bearer tokens checked as a resource server must: ours, current, signed, scoped.

Each refusal has its own reason, in our words, because the 401's ``error_description``
is what an operator reads when a client cannot connect. The order of checks is the
order of cost: size and shape, the header's algorithm (``none`` and every HMAC algorithm
are refused before any key is looked up: an HMAC "signed" with our public key is the
classic confusion attack), the key, the signature with ``iss``/``aud``/``exp``/``nbf``,
then tenant and scope.

The token is never sent anywhere: Graph tokens come from the on-behalf-of exchange, which
takes the token as its assertion inside the identity provider's own request.

Sources: RFC 8725 (JWT best current practice: algorithm allow-lists, audience), RFC 9068
(access-token claims: ``scope``), Microsoft identity platform "Access tokens" (``scp``,
``tid``, ``oid``, issuer per tenant), RFC 6750 §3.1 (error codes).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jwt

from mfconnector.hosted.jwks import JwksCache, KeySetError
from mfconnector.hosted.resource import ResourceSettings
from mfconnector.limits import Limits

__all__ = ["ALLOWED_ALGORITHMS", "BearerVerifier", "InsufficientScope", "Subject", "TokenRejected"]

ALLOWED_ALGORITHMS = {
    "RS256": "RSA",
    "RS384": "RSA",
    "RS512": "RSA",
    "PS256": "RSA",
    "PS384": "RSA",
    "PS512": "RSA",
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
}
"""Asymmetric algorithms only, each with the key type it must be verified with."""
TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


class TokenRejected(Exception):
    """401 ``invalid_token``: the message says why, and is safe to show and log."""

    status = 401
    error = "invalid_token"


class InsufficientScope(TokenRejected):
    """403 ``insufficient_scope``: a valid token without the scope this server needs."""

    status = 403
    error = "insufficient_scope"

    def __init__(self, message: str, scope: str) -> None:
        super().__init__(message)
        self.scope = scope


@dataclass(frozen=True, slots=True)
class Subject:
    """Who the request acts for: the key that namespaces every user's state."""

    issuer: str
    tenant: str | None
    object_id: str | None
    subject: str
    scopes: frozenset[str]
    token: str
    """The raw token, kept only to be the on-behalf-of assertion; never logged."""

    @property
    def key(self) -> str:
        """A stable, opaque id: Entra's ``tid`` + ``oid`` when present, else ``iss`` + ``sub``.

        ``oid`` is the user's id across every app in the tenant; ``sub`` differs per app,
        so for Entra tokens the pair tid/oid is what stays the same person.
        """
        if self.tenant and self.object_id:
            basis = f"entra\x00{self.tenant}\x00{self.object_id}"
        else:
            basis = f"oidc\x00{self.issuer}\x00{self.subject}"
        return hashlib.sha256(basis.encode()).hexdigest()[:32]

    def __repr__(self) -> str:  # never print the token
        return f"Subject(key={self.key!r}, tenant={self.tenant!r})"


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for name in ("scp", "scope"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(v for v in value if isinstance(v, str))
    return frozenset(found)


class BearerVerifier:
    """``verify(authorization_header)`` → the request's Subject, or a TokenRejected."""

    def __init__(
        self,
        settings: ResourceSettings,
        keys: JwksCache,
        limits: Limits,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        self._keys = keys
        self._limits = limits
        self._clock = clock

    async def verify(self, authorization: str | None) -> Subject:
        token = self._token_from_header(authorization)
        header = self._header(token)
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in ALLOWED_ALGORITHMS:
            raise TokenRejected(f"the token's algorithm {str(algorithm)[:20]!r} is not accepted")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise TokenRejected("the token names no signing key (kid)")
        try:
            key = await self._keys.key(kid[:200])
        except KeySetError as exc:
            raise TokenRejected(f"the issuer's signing keys are not available: {exc}") from None
        if key is None:
            raise TokenRejected("the token is signed with a key the issuer does not publish")
        if not _key_fits(key, algorithm):
            raise TokenRejected("the token's algorithm does not match its signing key")
        claims = self._decode(token, key, algorithm)
        tenant = claims.get("tid") if isinstance(claims.get("tid"), str) else None
        self._check_issuer(claims, tenant)
        if (
            self._settings.allowed_tenants
            and (tenant or "").lower() not in self._settings.allowed_tenants
        ):
            raise TokenRejected("the token's tenant is not allowed on this server")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise TokenRejected("the token has no subject (sub)")
        scopes = _scopes(claims)
        if self._settings.scope not in scopes:
            raise InsufficientScope(
                f"the token lacks the scope {self._settings.scope}", self._settings.scope
            )
        object_id = claims.get("oid") if isinstance(claims.get("oid"), str) else None
        return Subject(
            issuer=str(claims["iss"]),
            tenant=tenant,
            object_id=object_id,
            subject=subject,
            scopes=scopes,
            token=token,
        )

    def _token_from_header(self, authorization: str | None) -> str:
        if authorization is None:
            raise TokenRejected("no bearer token was sent")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise TokenRejected("the Authorization header is not a Bearer token")
        if len(token) > self._limits.bearer_token_bytes:
            raise TokenRejected(f"the token is longer than {self._limits.bearer_token_bytes} bytes")
        if not set(token) <= TOKEN_CHARACTERS or token.count(".") != 2:
            raise TokenRejected("the token is not a signed JWT (three base64url parts)")
        return token

    @staticmethod
    def _header(token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise TokenRejected("the token's header cannot be read") from None
        if header.get("crit"):
            raise TokenRejected(
                "the token has critical header parameters this server does not know"
            )
        return header

    def _decode(self, token: str, key: jwt.PyJWK, algorithm: str) -> dict[str, Any]:
        try:
            return jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                audience=list(self._settings.audience),
                leeway=self._limits.token_leeway_seconds,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_iss": False},
            )
        except jwt.ExpiredSignatureError:
            raise TokenRejected("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenRejected("the token is not valid yet (nbf or iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise TokenRejected("the token was issued for another audience") from None
        except jwt.MissingRequiredClaimError as exc:
            raise TokenRejected(f"the token lacks the {exc.claim} claim") from None
        except jwt.InvalidSignatureError:
            raise TokenRejected("the token's signature does not verify") from None
        except jwt.PyJWTError:
            raise TokenRejected("the token is malformed") from None

    def _check_issuer(self, claims: dict[str, Any], tenant: str | None) -> None:
        expected = self._settings.expected_issuer(tenant)
        if expected is None or claims.get("iss") != expected:
            raise TokenRejected("the token was issued by another issuer")


def _key_fits(key: jwt.PyJWK, algorithm: str) -> bool:
    """The JWK's own type (and EC curve) must fit the header's ``alg``, the attacker's choice."""
    if key.key_type != ALLOWED_ALGORITHMS[algorithm]:
        return False
    return key.key_type != "EC" or key.algorithm_name == algorithm
