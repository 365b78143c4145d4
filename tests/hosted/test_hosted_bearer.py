"""Bearer tokens in hosted mode: what a resource server must accept and refuse.

Tokens are real JWS from ``LocalIssuer``; its JWKS and discovery document come over real
HTTP, so each test also shows how many times the issuer was asked.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from hypothesis import given, settings
from hypothesis import strategies as st

from mfconnector.hosted.bearer import BearerVerifier, InsufficientScope, TokenRejected
from mfconnector.hosted.jwks import JwksCache
from mfconnector.hosted.resource import ResourceSettings
from mfconnector.limits import DEFAULT_LIMITS, Limits
from tests.support.loopback import LoopbackServer, Reply
from tests.support.oauth_issuer import (
    OTHER_TENANT,
    SCOPE,
    TENANT,
    LocalIssuer,
    hmac_signed,
    with_header,
)

PUBLIC_URL = "https://mail.example.com/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def issuer(server: LoopbackServer) -> LocalIssuer:
    local = LocalIssuer(server)
    local.publish()
    return local


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(trust_env=False) as http:
        yield http


def make_verifier(
    issuer: LocalIssuer,
    client: httpx.AsyncClient,
    *,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock | None = None,
    discovery: bool = False,
    **settings: str,
) -> tuple[BearerVerifier, JwksCache]:
    resource = ResourceSettings.build(
        public_url=PUBLIC_URL,
        issuer=settings.pop("issuer_url", issuer.issuer),
        scope=SCOPE,
        jwks_url=None if discovery else issuer.jwks_url,
        **settings,
    )
    keys = JwksCache(resource, client, limits, clock or Clock())
    return BearerVerifier(resource, keys, limits), keys


def jwks_requests(issuer: LocalIssuer) -> int:
    return len(issuer.server.requests_to(issuer.jwks_path))


async def refused(verifier: BearerVerifier, token: str) -> TokenRejected:
    with pytest.raises(TokenRejected) as caught:
        await verifier.verify(f"Bearer {token}")
    return caught.value


async def test_a_valid_rs256_token_gives_the_entra_subject(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client)
    subject = await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL)}")
    assert (subject.tenant, subject.object_id) == (TENANT, "00000000-0000-0000-0000-0000000000a1")
    assert SCOPE in subject.scopes
    assert subject.token not in repr(subject)
    again = await verifier.verify(f"bearer {issuer.token(PUBLIC_URL, sub='another-app-sub')}")
    assert again.key == subject.key, "one person across apps: tid + oid, not the per-app sub"
    assert jwks_requests(issuer) == 1


async def test_a_valid_es256_token_is_accepted_and_keys_come_from_discovery(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client, discovery=True)
    subject = await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL, algorithm='ES256')}")
    assert subject.tenant == TENANT
    assert [r.path for r in issuer.server.requests] == [
        f"/{TENANT}/v2.0/.well-known/openid-configuration",
        issuer.jwks_path,
    ]


async def test_alg_none_and_hmac_are_refused_before_any_key_is_fetched(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client)
    unsigned = jwt.encode(
        issuer.claims(PUBLIC_URL), None, algorithm="none", headers={"kid": "rsa-1"}
    )
    assert "algorithm 'none'" in str(await refused(verifier, unsigned + "AAAA"))
    public_pem = issuer.rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    forged = hmac_signed(issuer.claims(PUBLIC_URL), public_pem, kid="rsa-1")
    assert "algorithm 'HS256'" in str(await refused(verifier, forged))
    assert jwks_requests(issuer) == 0


async def test_an_algorithm_that_does_not_fit_the_key_is_refused(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client)
    rsa_signed_as_ec_key = issuer.token(PUBLIC_URL, algorithm="RS256", kid="ec-1")
    assert "does not match its signing key" in str(await refused(verifier, rsa_signed_as_ec_key))
    es384_on_p256 = with_header(
        issuer.token(PUBLIC_URL, algorithm="ES256"), {"alg": "ES384", "kid": "ec-1"}
    )
    assert "does not match" in str(await refused(verifier, es384_on_p256))


async def test_an_unknown_kid_refreshes_once_and_then_waits(issuer, client) -> None:
    clock = Clock()
    verifier, keys = make_verifier(issuer, client, clock=clock)
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL)}")
    for attempt in range(5):
        error = await refused(verifier, issuer.token(PUBLIC_URL, kid=f"made-up-{attempt}"))
        assert "does not publish" in str(error)
    assert keys.fetches == 2, "one forced refresh for the first unknown kid, none for the rest"
    clock.now += DEFAULT_LIMITS.jwks_refresh_min_seconds - 1
    await refused(verifier, issuer.token(PUBLIC_URL, kid="made-up-late"))
    assert keys.fetches == 2
    clock.now += 1
    await refused(verifier, issuer.token(PUBLIC_URL, kid="made-up-later"))
    assert keys.fetches == 3


async def test_a_rotated_key_is_picked_up_by_the_refresh(issuer, client) -> None:
    verifier, keys = make_verifier(issuer, client)
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL)}")
    rotated = LocalIssuer(issuer.server)
    rotated_jwk = rotated.jwks()["keys"][0] | {"kid": "rsa-2"}
    issuer.extra_keys.append(rotated_jwk)
    token = jwt.encode(
        issuer.claims(PUBLIC_URL), rotated.rsa_key, algorithm="RS256", headers={"kid": "rsa-2"}
    )
    assert (await verifier.verify(f"Bearer {token}")).tenant == TENANT
    assert keys.fetches == 2


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": "https://other.example.com/mcp"}, "another audience"),
        ({"iss": "https://login.microsoftonline.com/other/v2.0"}, "another issuer"),
        ({"exp": None}, "lacks the exp claim"),
        ({"sub": None}, "lacks the sub claim"),
    ],
)
async def test_tokens_for_someone_else_are_refused(issuer, client, claims, reason) -> None:
    verifier, _ = make_verifier(issuer, client)
    assert reason in str(await refused(verifier, issuer.token(PUBLIC_URL, **claims)))


async def test_expiry_and_not_before_hold_at_the_leeway(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client)
    leeway = DEFAULT_LIMITS.token_leeway_seconds
    now = int(time.time())
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL, exp=now - leeway + 5)}")
    assert "expired" in str(await refused(verifier, issuer.token(PUBLIC_URL, exp=now - leeway - 5)))
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL, nbf=now + leeway - 5)}")
    early = issuer.token(PUBLIC_URL, nbf=now + leeway + 30)
    assert "not valid yet" in str(await refused(verifier, early))


async def test_a_token_without_the_scope_asks_for_a_step_up(issuer, client) -> None:
    verifier, _ = make_verifier(issuer, client)
    with pytest.raises(InsufficientScope) as caught:
        await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL, scp='openid Mail.Read')}")
    assert (caught.value.status, caught.value.error, caught.value.scope) == (
        403,
        "insufficient_scope",
        SCOPE,
    )


async def test_tenants_outside_the_allow_list_are_refused(issuer, client) -> None:
    template = issuer.issuer.replace(TENANT, "{tenantid}")
    verifier, _ = make_verifier(issuer, client, issuer_url=template, allowed_tenants=TENANT)
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL)}")
    foreign = issuer.token(
        PUBLIC_URL, tid=OTHER_TENANT, iss=template.replace("{tenantid}", OTHER_TENANT)
    )
    assert "tenant is not allowed" in str(await refused(verifier, foreign))
    open_verifier, _ = make_verifier(issuer, client, issuer_url=template)
    assert (await open_verifier.verify(f"Bearer {foreign}")).tenant == OTHER_TENANT
    mismatched = issuer.token(PUBLIC_URL, tid=OTHER_TENANT)  # iss names the first tenant
    assert "another issuer" in str(await refused(open_verifier, mismatched))


@pytest.mark.parametrize(
    "header",
    [None, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearer a.b", "Bearer a.b.c.d", "Bearer a.b!.c"],
)
async def test_malformed_headers_are_refused_in_our_words(issuer, client, header) -> None:
    verifier, _ = make_verifier(issuer, client)
    with pytest.raises(TokenRejected) as caught:
        await verifier.verify(header)
    assert str(caught.value).startswith(("no bearer", "the Authorization", "the token"))
    assert jwks_requests(issuer) == 0


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_bearer_token_bytes_at_the_limit(issuer, client, delta) -> None:
    limit = DEFAULT_LIMITS.bearer_token_bytes
    verifier, _ = make_verifier(issuer, client)
    token = "e30." + "a" * (limit + delta - 6) + ".b"
    assert len(token) == limit + delta
    error = str(await refused(verifier, token))
    if delta > 0:
        assert f"longer than {limit} bytes" in error
    else:
        assert "longer than" not in error


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_jwks_body_bytes_at_the_limit(issuer, client, delta) -> None:
    body = json.dumps(issuer.jwks()).encode()
    cap = len(body) + 10
    padded = body + b" " * (cap + delta - len(body))
    issuer.server.route("GET", issuer.jwks_path, Reply(200, (), padded))
    verifier, _ = make_verifier(
        issuer, client, limits=dataclasses.replace(DEFAULT_LIMITS, jwks_body_bytes=cap)
    )
    token = issuer.token(PUBLIC_URL)
    if delta > 0:
        assert f"larger than {cap} bytes" in str(await refused(verifier, token))
    else:
        assert (await verifier.verify(f"Bearer {token}")).tenant == TENANT


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_jwks_keys_at_the_limit(issuer, client, delta) -> None:
    limit = 4
    spare = issuer.jwks()["keys"][0]
    issuer.extra_keys.extend(spare | {"kid": f"spare-{n}"} for n in range(limit + delta - 2))
    verifier, _ = make_verifier(
        issuer, client, limits=dataclasses.replace(DEFAULT_LIMITS, jwks_keys=limit)
    )
    token = issuer.token(PUBLIC_URL)
    if delta > 0:
        assert f"more than {limit} keys" in str(await refused(verifier, token))
    else:
        await verifier.verify(f"Bearer {token}")


async def test_an_issuer_that_is_down_is_asked_once_per_interval(issuer, client) -> None:
    issuer.server.route("GET", issuer.jwks_path, Reply.json({"error": "down"}, 500))
    clock = Clock()
    verifier, _ = make_verifier(issuer, client, clock=clock)
    for _ in range(3):
        assert "answered HTTP 500" in str(await refused(verifier, issuer.token(PUBLIC_URL)))
    assert jwks_requests(issuer) == 1
    issuer.publish()
    clock.now += DEFAULT_LIMITS.jwks_refresh_min_seconds
    await verifier.verify(f"Bearer {issuer.token(PUBLIC_URL)}")


@pytest.mark.parametrize(
    "body",
    [b'{"keys": [], "keys": []}', b"[1, 2]", b"not json", b'{"no": "keys"}'],
)
async def test_a_broken_key_set_is_refused(issuer, client, body) -> None:
    issuer.server.route("GET", issuer.jwks_path, Reply(200, (), body))
    verifier, _ = make_verifier(issuer, client)
    assert "signing keys are not available" in str(
        await refused(verifier, issuer.token(PUBLIC_URL))
    )


async def test_discovery_naming_another_issuer_is_refused(issuer, client) -> None:
    issuer.server.route(
        "GET",
        f"/{TENANT}/v2.0/.well-known/openid-configuration",
        Reply.json({"issuer": "https://evil.example.com", "jwks_uri": issuer.jwks_url}),
    )
    verifier, _ = make_verifier(issuer, client, discovery=True)
    assert "another issuer" in str(await refused(verifier, issuer.token(PUBLIC_URL)))
    assert jwks_requests(issuer) == 0


@pytest.mark.slow
@settings(max_examples=40)
@given(position=st.integers(min_value=0), replacement=st.sampled_from("AQgw-_x"))
async def test_any_altered_token_is_refused_cleanly(position: int, replacement: str) -> None:
    with LoopbackServer() as server:
        issuer = LocalIssuer(server)
        issuer.publish()
        async with httpx.AsyncClient(trust_env=False) as http:
            verifier, _ = make_verifier(issuer, http)
            token = issuer.token(PUBLIC_URL)
            index = position % len(token)
            if token[index] in {".", replacement}:
                return
            altered = token[:index] + replacement + token[index + 1 :]
            with pytest.raises(TokenRejected):
                await verifier.verify(f"Bearer {altered}")
