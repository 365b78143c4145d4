"""The on-behalf-of cache shared through Redis, sealed: a second replica reuses a user's
Graph token without asking Entra, and Redis holds ciphertext that opens only for the same
user, the same assertion and the same key."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from mfconnector.hosted.bearer import Subject
from mfconnector.hosted.obo import OnBehalfOf, _assertion_id
from mfconnector.hosted.sealed_tokens import SealedTokens, SealKeyError, seal_key_of
from mfconnector.writes.redis_store import KEY_PREFIX, RedisState
from tests.hosted.test_hosted_obo import (
    CLIENT_ID,
    SCOPES,
    SECRET,
    TENANT,
    Clock,
    graph_claims,
    subject,
)
from tests.support.idp_fake import OBO_GRANT, FakeIdP
from tests.support.redis_server import RedisServer, free_port, redis_server

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def state(redis: RedisServer) -> Iterator[RedisState]:
    redis.command("FLUSHALL")
    shared = RedisState(redis.url)
    yield shared
    shared.close()


@pytest.fixture
def idp() -> FakeIdP:
    return FakeIdP(client_id=CLIENT_ID, client_secret=SECRET)


def replica(idp: FakeIdP, state: RedisState, key: bytes = KEY) -> OnBehalfOf:
    return OnBehalfOf(
        client_id=CLIENT_ID,
        client_credential=SECRET,
        authority=f"https://login.microsoftonline.com/{TENANT}",
        scopes=SCOPES,
        http_client=idp,
        clock=Clock(),
        shared=SealedTokens(state.store, key),
    )


def stored_values(state: RedisState) -> list[bytes]:
    keys = state.client.keys(f"{KEY_PREFIX}*:token:*")
    return [state.client.get(key) for key in keys]


async def test_a_second_replica_reuses_the_token_without_an_exchange(
    idp: FakeIdP, state: RedisState
) -> None:
    alice = subject("oid-alice")
    first = await replica(idp, state).graph_token(alice)
    second = await replica(idp, state).graph_token(alice)
    assert second == first
    assert len(idp.token_requests(OBO_GRANT)) == 1
    [value] = stored_values(state)
    for part in first.split("."):
        assert part.encode() not in value, "Redis holds no part of the token"
    assert b"eyJ" not in value


async def test_a_sealed_token_moved_to_another_user_does_not_open(
    idp: FakeIdP, state: RedisState
) -> None:
    alice, bob = subject("oid-alice"), subject("oid-bob")
    await replica(idp, state).graph_token(alice)
    await replica(idp, state).graph_token(bob)

    def slot_key(who: Subject) -> str:
        return state.store(who.key)._token(_assertion_id(who.token))

    alices_sealed = state.client.get(slot_key(alice))
    assert alices_sealed is not None
    state.client.set(slot_key(bob), alices_sealed)  # someone with Redis access swaps them
    token = await replica(idp, state).graph_token(bob)
    assert graph_claims(token)["oid"] == "oid-bob", "never alice's token for bob"
    assert len(idp.token_requests(OBO_GRANT)) == 3, "the moved value did not open: exchanged"


async def test_a_replica_with_another_key_cannot_open_them(idp: FakeIdP, state: RedisState) -> None:
    alice = subject("oid-alice")
    await replica(idp, state).graph_token(alice)
    await replica(idp, state, key=bytes(32)).graph_token(alice)
    assert len(idp.token_requests(OBO_GRANT)) == 2


async def test_a_claims_challenge_always_goes_to_entra(idp: FakeIdP, state: RedisState) -> None:
    alice = subject("oid-alice")
    await replica(idp, state).graph_token(alice)
    await replica(idp, state).graph_token(
        alice, claims='{"access_token":{"nbf":{"essential":true}}}'
    )
    await replica(idp, state).graph_token(alice, force_refresh=True)
    assert len(idp.token_requests(OBO_GRANT)) == 3


async def test_redis_unreachable_costs_only_an_exchange(
    idp: FakeIdP, caplog: pytest.LogCaptureFixture
) -> None:
    gone = RedisState(f"redis://127.0.0.1:{free_port()}/0")
    caplog.set_level(logging.WARNING)
    token = await replica(idp, gone).graph_token(subject("oid-alice"))
    assert token and len(idp.token_requests(OBO_GRANT)) == 1
    assert "shared token cache cannot be" in caplog.text
    assert token not in caplog.text
    gone.close()


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("", None),
        ("00" * 32, bytes(32)),
        ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", bytes(range(32))),
    ],
)
def test_the_seal_key_from_the_environment(value: str, key: bytes | None) -> None:
    assert seal_key_of({"MFC_TOKEN_CACHE_KEY": value}) == key


@pytest.mark.parametrize("value", ["00" * 31, "00" * 33, "not a key", "zz" * 32])
def test_a_bad_seal_key_is_refused_in_our_words(value: str) -> None:
    with pytest.raises(SealKeyError) as caught:
        seal_key_of({"MFC_TOKEN_CACHE_KEY": value})
    assert "MFC_TOKEN_CACHE_KEY must be 32 random bytes" in str(caught.value)
