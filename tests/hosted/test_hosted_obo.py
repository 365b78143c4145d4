"""On-behalf-of: each hosted user's Graph token comes from Entra, never from the client.

msal talks to ``FakeIdP`` through its ``http_client`` seam, so the real
ConfidentialClientApplication builds and sends the JWT-bearer grant.
"""

from __future__ import annotations

import base64
import json

import pytest

from mfconnector.errors import AuthError
from mfconnector.hosted.bearer import Subject
from mfconnector.hosted.obo import OBO_EXPIRY_MARGIN_SECONDS, OnBehalfOf, SubjectTokenProvider
from tests.support.idp_fake import OBO_GRANT, FakeIdP

CLIENT_ID = "5b1f3c8e-1111-4222-8333-444455556666"
SECRET = "s3cret-value-never-logged"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
SCOPES = ["https://graph.microsoft.com/Mail.Read"]


def user_token(oid: str, marker: str = "a") -> str:
    """What the client sent us: a token whose audience is the connector, not Graph."""

    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return ".".join((part({"alg": "RS256"}), part({"oid": oid, "tid": TENANT, "m": marker}), "sig"))


def subject(oid: str, marker: str = "a") -> Subject:
    return Subject(
        issuer="https://issuer",
        tenant=TENANT,
        object_id=oid,
        subject="s",
        scopes=frozenset({"Mail.Connector"}),
        token=user_token(oid, marker),
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def exchange(idp: FakeIdP, clock: Clock | None = None) -> OnBehalfOf:
    return OnBehalfOf(
        client_id=CLIENT_ID,
        client_credential=SECRET,
        authority=f"https://login.microsoftonline.com/{TENANT}",
        scopes=SCOPES,
        http_client=idp,
        clock=clock or Clock(),
    )


@pytest.fixture
def idp() -> FakeIdP:
    return FakeIdP(client_id=CLIENT_ID, client_secret=SECRET)


def graph_claims(token: str) -> dict[str, str]:
    return json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))


async def test_the_users_token_is_exchanged_never_passed_through(idp) -> None:
    alice = subject("oid-alice")
    token = await SubjectTokenProvider(exchange(idp), alice).get_token()
    assert token != alice.token
    assert graph_claims(token)["oid"] == "oid-alice"
    [request] = idp.token_requests(OBO_GRANT)
    assert request.data["assertion"] == alice.token
    assert request.data["requested_token_use"] == "on_behalf_of"
    assert "Mail.Read" in request.data["scope"]


async def test_tokens_are_cached_per_user_until_shortly_before_expiry(idp) -> None:
    clock = Clock()
    obo = exchange(idp, clock)
    alice, bob = subject("oid-alice"), subject("oid-bob")
    first = await obo.graph_token(alice)
    assert await obo.graph_token(alice) == first
    bob_token = await obo.graph_token(bob)
    assert graph_claims(bob_token)["oid"] == "oid-bob"
    assert obo.exchanges == 2
    clock.now += idp.access_token_lifetime - OBO_EXPIRY_MARGIN_SECONDS - 1
    assert await obo.graph_token(alice) == first
    clock.now += 1
    assert await obo.graph_token(alice) != first
    assert obo.exchanges == 3


async def test_a_new_assertion_force_refresh_and_claims_each_go_to_entra(idp) -> None:
    obo = exchange(idp)
    await obo.graph_token(subject("oid-alice", "a"))
    await obo.graph_token(subject("oid-alice", "b"))
    await obo.graph_token(subject("oid-alice", "b"), force_refresh=True)
    await obo.graph_token(
        subject("oid-alice", "b"), claims='{"access_token":{"nbf":{"essential":true}}}'
    )
    assert obo.exchanges == 4


@pytest.mark.parametrize(
    ("error", "says"),
    [
        ("consent_required", "has not consented"),
        ("mfa_required", "complete a sign-in step"),
        ("bad_secret", "own client credentials were refused"),
    ],
)
async def test_entra_refusals_are_explained(idp, error, says) -> None:
    idp.obo_error = error
    with pytest.raises(AuthError) as caught:
        await exchange(idp).graph_token(subject("oid-alice"))
    assert says in caught.value.message
    assert SECRET not in caught.value.message + (caught.value.hint or "")


async def test_a_wrong_client_secret_is_refused_by_the_identity_provider() -> None:
    idp = FakeIdP(client_id=CLIENT_ID, client_secret="another")
    with pytest.raises(AuthError, match="client credentials"):
        await exchange(idp).graph_token(subject("oid-alice"))
