"""On-behalf-of: each hosted user's Graph token comes from Entra, never from the client.

msal talks to ``FakeIdP`` through its ``http_client`` seam, so the real
ConfidentialClientApplication builds and sends the JWT-bearer grant.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from dataclasses import replace
from typing import Any

import pytest
import trio

from mfconnector.errors import AuthError
from mfconnector.hosted.bearer import Subject
from mfconnector.hosted.live import on_behalf_of
from mfconnector.hosted.obo import OBO_EXPIRY_MARGIN_SECONDS, OnBehalfOf, SubjectTokenProvider
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.net.settings import NetworkSettings, parse_proxy_url
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


# --- the exchange's limits (Limits.obo_*) -------------------------------------------------


def limited(idp: FakeIdP, **limits: Any) -> OnBehalfOf:
    return OnBehalfOf(
        client_id=CLIENT_ID,
        client_credential=SECRET,
        authority=f"https://login.microsoftonline.com/{TENANT}",
        scopes=SCOPES,
        http_client=idp,
        clock=Clock(),
        limits=replace(DEFAULT_LIMITS, **limits),
    )


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_cached_tokens_at_l_minus_1_l_and_l_plus_1(idp, delta: int) -> None:
    limit = 3
    obo = limited(idp, obo_cached_tokens=limit)
    users = [subject(f"oid-{n}") for n in range(limit + delta)]
    for user in users:
        await obo.graph_token(user)
    await obo.graph_token(users[0])  # the least recently used: forgotten only past L
    assert obo.exchanges == len(users) + (1 if delta == 1 else 0)


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_exchanges_at_once_at_l_minus_1_l_and_l_plus_1(idp, delta: int) -> None:
    limit = 3
    obo = limited(idp, obo_exchanges=limit)
    await obo.graph_token(subject("oid-warm"))  # msal's app and its discovery, once
    idp.delay_seconds = 0.3
    idp.max_in_flight = 0
    async with trio.open_nursery() as nursery:
        for n in range(limit + delta):
            nursery.start_soon(obo.graph_token, subject(f"oid-{n}"))
    assert idp.max_in_flight == min(limit, limit + delta)
    assert obo.exchanges == 1 + limit + delta


@pytest.mark.slow  # waits out a real deadline: over 1 s
async def test_an_exchange_past_its_deadline_is_an_error_and_the_next_one_works(idp) -> None:
    obo = limited(idp, obo_call_seconds=1.0)
    await obo.graph_token(subject("oid-warm"))
    idp.delay_seconds = 0.5  # inside the deadline
    await obo.graph_token(subject("oid-inside"))
    idp.delay_seconds = 1.5  # past it
    with trio.fail_after(5):
        with pytest.raises(AuthError, match="did not answer the on-behalf-of exchange in time"):
            await obo.graph_token(subject("oid-past"))
    idp.delay_seconds = 0
    assert await obo.graph_token(subject("oid-after"))


class SilentProxy:
    """Accepts connections and never answers: Entra behind a proxy that hangs."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


@pytest.mark.slow  # waits out a real deadline: over 1 s
async def test_each_http_request_to_entra_is_bounded_by_obo_http_seconds() -> None:
    """The production client (``signin_session``) with the limit: a hung request fails
    after ``obo_http_seconds``, long before the whole exchange's deadline."""
    proxy = SilentProxy()
    try:
        network = NetworkSettings(
            proxy=parse_proxy_url(f"http://127.0.0.1:{proxy.port}", source="--proxy")
        )
        env = {"MFC_CLIENT_ID": CLIENT_ID, "MFC_CLIENT_SECRET": SECRET}
        limits = replace(DEFAULT_LIMITS, obo_http_seconds=0.5, obo_call_seconds=20.0)
        obo, _ = on_behalf_of(
            f"https://login.microsoftonline.com/{TENANT}/v2.0", env, network, limits=limits
        )
        started = time.monotonic()
        with pytest.raises(AuthError) as caught:
            await obo.graph_token(subject("oid-alice"))
        elapsed = time.monotonic() - started
        assert 0.4 < elapsed < 5, elapsed
        assert "login.microsoftonline.com" in caught.value.message
        assert SECRET not in caught.value.message + (caught.value.hint or "")
    finally:
        proxy.close()


async def test_each_user_is_named_in_preparations_and_the_audit_trail(idp) -> None:
    """The account a preparation and an audit entry record: one per user (the same for a
    new token of that user), never "unknown account", never the token."""
    first = await SubjectTokenProvider(exchange(idp), subject("oid-alice", "a")).describe()
    again = await SubjectTokenProvider(exchange(idp), subject("oid-alice", "b")).describe()
    other = await SubjectTokenProvider(exchange(idp), subject("oid-bob")).describe()
    assert first["account"] == again["account"] != other["account"]
    assert first["account"].startswith("hosted user ")
    assert subject("oid-alice").token not in json.dumps([first, other])
