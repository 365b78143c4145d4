"""Live mode end to end: msal's real code (fake identity provider at its ``http_client`` seam)
signs in, the real Graph client talks to a real HTTP server on 127.0.0.1, and a 401 from
Graph costs one forced refresh and one retry, never a prompt."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mfconnector.auth import commands
from mfconnector.auth.config import AuthConfig
from mfconnector.auth.msal_provider import build_token_provider
from mfconnector.graph.client import GraphClient
from mfconnector.limits import DEFAULT_LIMITS, Limits
from tests.support.harness import client_context, open_session, request, rows
from tests.support.idp_fake import FakeIdP
from tests.support.loopback import LoopbackServer, Reply

CLIENT_ID = "5f7e9c1a-3b2d-4e6f-8a9b-0c1d2e3f4a5b"
MESSAGES_PATH = "/v1.0/me/mailFolders/inbox/messages"
PAGE = {"value": [{"id": "AAMkAGI2live0001=", "subject": "Hello from live mode"}]}
EXPIRED = {
    "error": {
        "code": "InvalidAuthenticationToken",
        "message": "Access token has expired or is not yet valid.",
        "innerError": {"request-id": "5b7e3c1d-0000-4000-8000-000000000001"},
    }
}
CLAIMS = "eyJhY2Nlc3NfdG9rZW4iOnsiYWNycyI6eyJlc3NlbnRpYWwiOnRydWUsInZhbHVlIjoiY3AxIn19fQ=="


pytestmark = pytest.mark.usefixtures("no_keyring")


@pytest.fixture
def config(tmp_path: Path) -> AuthConfig:
    return AuthConfig(
        client_id=CLIENT_ID,
        cache_path=tmp_path / "cache" / "token_cache.json",
        allow_plaintext_cache=True,
        call_timeout_seconds=10.0,
    )


@pytest.fixture
def idp(config: AuthConfig) -> FakeIdP:
    fake = FakeIdP(client_id=CLIENT_ID)
    out = io.StringIO()
    assert commands.login(config, method="device-code", http_client=fake, stream=out) == 0, (
        out.getvalue()
    )
    return fake


@asynccontextmanager
async def live_session(
    config: AuthConfig, idp: FakeIdP, server: LoopbackServer, limits: Limits = DEFAULT_LIMITS
) -> AsyncIterator[Any]:
    provider = build_token_provider(config, http_client=idp)
    client = GraphClient(token_provider=provider, limits=limits, root=f"{server.url}/v1.0")
    context = client_context(client, limits, mode="live", tokens=provider)
    try:
        async with open_session(context=context) as session:
            yield session
    finally:
        await client.aclose()


def bearer(recorded: Any) -> str:
    header = recorded.header("authorization") or ""
    assert header.startswith("Bearer ")
    return str(header.removeprefix("Bearer "))


async def test_a_401_costs_one_forced_refresh_and_one_retry(
    config: AuthConfig, idp: FakeIdP
) -> None:
    with LoopbackServer() as server:
        server.route("GET", MESSAGES_PATH, Reply.json(EXPIRED, status=401), Reply.json(PAGE))
        async with live_session(config, idp, server) as session:
            reply = await session.call(request(1, "tools/call", {"name": "mail_list"}))
        sent = server.requests_to(MESSAGES_PATH)
    result = reply["result"]
    assert result["isError"] is False
    assert rows(result["structuredContent"])[0]["subject"] == "Hello from live mode"
    assert len(sent) == 2
    assert len(idp.token_requests("refresh_token")) == 1
    first, second = bearer(sent[0]), bearer(sent[1])
    assert first != second and second == idp.access_tokens[-1]
    wire = json.dumps(reply)
    assert not any(secret in wire for secret in idp.secrets())


async def test_a_claims_challenge_is_passed_back_to_msal(config: AuthConfig, idp: FakeIdP) -> None:
    challenge = (
        'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/'
        f'authorize", error="insufficient_claims", claims="{CLAIMS}"'
    )
    with LoopbackServer() as server:
        server.route(
            "GET",
            MESSAGES_PATH,
            Reply(401, (("WWW-Authenticate", challenge),), b""),
            Reply.json(PAGE),
        )
        async with live_session(config, idp, server) as session:
            reply = await session.call(request(1, "tools/call", {"name": "mail_list"}))
    assert reply["result"]["isError"] is False
    refreshes = idp.token_requests("refresh_token")
    assert len(refreshes) == 1
    claims = json.loads(refreshes[0].data["claims"])
    assert claims["access_token"]["acrs"] == {"essential": True, "value": "cp1"}


async def test_a_second_401_is_an_actionable_error_not_a_loop(
    config: AuthConfig, idp: FakeIdP
) -> None:
    with LoopbackServer() as server:
        server.route("GET", MESSAGES_PATH, Reply.json(EXPIRED, status=401))
        async with live_session(config, idp, server) as session:
            reply = await session.call(request(1, "tools/call", {"name": "mail_list"}))
        sent = server.requests_to(MESSAGES_PATH)
    assert len(sent) == 2
    error = json.loads(reply["result"]["content"][0]["text"])["error"]
    assert reply["result"]["isError"] is True
    assert error["status"] == 401 and "mfconnector login" in error["hint"]


async def test_account_status_names_the_signed_in_person(config: AuthConfig, idp: FakeIdP) -> None:
    profile = {"id": "u1", "displayName": "Adele Vance", "mail": "adelev@contoso.example"}
    with LoopbackServer() as server:
        server.route("GET", "/v1.0/me", Reply.json(profile))
        async with live_session(config, idp, server) as session:
            reply = await session.call(request(1, "tools/call", {"name": "account_status"}))
    status = reply["result"]["structuredContent"]
    assert status["mode"] == "live" and status["signed_in"] is True
    assert status["profile"]["name"] == "Adele Vance"
    assert status["account"]["cache_encrypted"] is False
    assert status["account"]["network"]["proxy"] is None  # no proxy unless configured
    assert status["account"]["network"]["trust"] == "operating system trust store"
    assert not any(secret in json.dumps(reply) for secret in idp.secrets())


async def test_a_slow_sign_in_service_is_named_as_such(config: AuthConfig, idp: FakeIdP) -> None:
    """A deadline spent waiting on the token is a sign-in timeout, not "Graph was slow"."""
    limits = dataclasses.replace(DEFAULT_LIMITS, graph_request_seconds=0.5)
    idp.delay_seconds = 1.5
    with LoopbackServer() as server:
        server.route("GET", MESSAGES_PATH, Reply.json(EXPIRED, status=401))
        async with live_session(config, idp, server, limits) as session:
            reply = await session.call(request(1, "tools/call", {"name": "mail_list"}))
    error = json.loads(reply["result"]["content"][0]["text"])["error"]
    assert error["error_code"] == "auth_required" and error["reason"] == "signin_timeout"
    assert "sign-in service" in error["message"]
