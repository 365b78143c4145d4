"""A local OAuth issuer for tests: RSA and EC keys, minted JWTs, a JWKS on loopback.

A fake at a seam (the authorization server), never in place of our own code: the tokens
are real JWS signed with real keys, and the JWKS and discovery document are served over
real HTTP by ``LoopbackServer``, so the verifier's fetch, caps and cache all run.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from tests.support.loopback import LoopbackServer, Reply

TENANT = "8f1c2a4e-0000-4000-8000-00000000aaaa"
OTHER_TENANT = "8f1c2a4e-0000-4000-8000-00000000bbbb"
SCOPE = "Mail.Connector"


@functools.cache
def shared_rsa_key() -> rsa.RSAPrivateKey:
    """One 2048-bit key per test run: generating one takes a tenth of a second."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@functools.cache
def shared_ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def with_header(token: str, header: dict[str, Any]) -> str:
    """The same payload and signature under another header: what a forger can send."""
    _, payload, signature = token.split(".")
    return ".".join((b64(json.dumps(header).encode()), payload, signature))


def hmac_signed(claims: dict[str, Any], secret: bytes, kid: str) -> str:
    """An HS256 token keyed with ``secret`` (the confusion attack uses the public key)."""
    signing_input = ".".join(
        (
            b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode()),
            b64(json.dumps(claims).encode()),
        )
    )
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"


@dataclass
class LocalIssuer:
    """Mints tokens the way Entra v2 does (``tid``, ``oid``, ``scp``) for one loopback issuer."""

    server: LoopbackServer
    rsa_key: rsa.RSAPrivateKey = field(default_factory=shared_rsa_key)
    ec_key: ec.EllipticCurvePrivateKey = field(default_factory=shared_ec_key)
    extra_keys: list[dict[str, Any]] = field(default_factory=list)
    issuer_host: str | None = None
    """Mint tokens as ``https://{issuer_host}/{TENANT}/v2.0`` (an Entra cloud's issuer)
    while the keys stay on loopback (give the server ``--oauth-jwks-url``)."""

    @property
    def issuer(self) -> str:
        if self.issuer_host is not None:
            return f"https://{self.issuer_host}/{TENANT}/v2.0"
        return f"{self.server.url}/{TENANT}/v2.0"

    @property
    def jwks_path(self) -> str:
        return f"/{TENANT}/discovery/v2.0/keys"

    @property
    def jwks_url(self) -> str:
        return self.server.url + self.jwks_path

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa_key.public_key()))
        ec_jwk = json.loads(ECAlgorithm.to_jwk(self.ec_key.public_key()))
        rsa_jwk.update(kid="rsa-1", use="sig")
        ec_jwk.update(kid="ec-1", use="sig")
        return {"keys": [rsa_jwk, ec_jwk, *self.extra_keys]}

    def publish(self) -> None:
        """Serve the discovery document and the JWKS at Entra's paths."""
        discovery = {"issuer": self.issuer, "jwks_uri": self.jwks_url}
        self.server.route(
            "GET", f"/{TENANT}/v2.0/.well-known/openid-configuration", Reply.json(discovery)
        )
        self.server.route("GET", self.jwks_path, lambda _request: Reply.json(self.jwks()))

    def claims(self, audience: str, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
            "sub": "per-app-subject-1",
            "oid": "00000000-0000-0000-0000-0000000000a1",
            "tid": TENANT,
            "scp": f"openid {SCOPE}",
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(
        self,
        audience: str,
        *,
        algorithm: str = "RS256",
        kid: str | None = None,
        headers: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> str:
        """A signed token; ``kid`` defaults to the key that matches the algorithm."""
        key: Any = self.ec_key if algorithm.startswith("ES") else self.rsa_key
        default_kid = "ec-1" if algorithm.startswith("ES") else "rsa-1"
        header = {"kid": kid or default_kid, **(headers or {})}
        return jwt.encode(
            self.claims(audience, **overrides), key, algorithm=algorithm, headers=header
        )
