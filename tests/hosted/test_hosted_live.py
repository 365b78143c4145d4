"""``serve-http`` without ``--demo``: live Graph with each user's on-behalf-of token.

The real server process; the user's JWT from ``LocalIssuer``, issued as an Entra cloud's
issuer (``https://login.microsoftonline.com/TENANT/v2.0`` by default) with its keys on
loopback; Entra and Graph behind one loopback TLS server reached through a CONNECT proxy
(``--proxy``, ``--ca-file``), as a deployment behind an egress proxy would reach
login.microsoftonline.com and graph.microsoft.com (or a national cloud's hosts).
``FakeIdP`` answers the exchange, checking the client secret or the certificate's signed
client assertion; the Graph routes record what the server sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.app_certs import app_key, write_app_certificate
from tests.support.hosted_live import (
    GLOBAL,
    MESSAGES,
    SECRET,
    CloudHosts,
    Live,
    call_tool,
    claims_of,
    list_tools,
    live_servers,
)
from tests.support.idp_fake import GRAPH_APP_ID
from tests.support.loopback import RecordedRequest, Reply
from tests.support.oauth_issuer import TENANT
from tests.support.redis_server import RedisServer, redis_server

pytestmark = pytest.mark.slow


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as server:
        yield server


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Live]:
    with live_servers(tmp_path) as one:
        yield one


def call_mail_list(
    live: Live, token: str, arguments: dict[str, Any] | None = None, replica: int = 0
) -> dict[str, Any]:
    return call_tool(live, token, "mail_list", arguments or {"limit": 1}, replica)


def test_mail_list_reaches_graph_with_the_obo_token_never_the_clients(live: Live) -> None:
    token = live.server.token("a1")
    reply = call_mail_list(live, token)
    assert reply["result"].get("isError") is not True, reply
    sent = live.graph_requests()
    assert sent, "no request reached Graph"
    assert [e.data.get("assertion") for e in live.exchanges()] == [token]
    for request in sent:
        authorization = request.header("authorization") or ""
        assert token not in authorization
        assert authorization == f"Bearer {live.idp.access_tokens[0]}"
        assert claims_of(authorization)["aud"] == GRAPH_APP_ID
    assert "graph.microsoft.com:443" in live.proxy.hosts()
    assert "login.microsoftonline.com:443" in live.proxy.hosts()
    stderr = live.server.stderr()
    assert SECRET not in stderr and token not in stderr
    assert not any(secret in stderr for secret in live.idp.secrets())


def test_the_exchange_is_cached_and_a_new_bearer_is_a_new_assertion(live: Live) -> None:
    first = live.server.token("a1")
    call_mail_list(live, first)
    call_mail_list(live, first)
    assert len(live.exchanges()) == 1
    second = live.server.token("a1", jti="another-token")
    assert second != first
    call_mail_list(live, second)
    assert [e.data.get("assertion") for e in live.exchanges()] == [first, second]


def test_two_users_reach_graph_each_with_their_own_token(live: Live) -> None:
    call_mail_list(live, live.server.token("a1"))
    call_mail_list(live, live.server.token("b2"))
    oids = [claims_of(r.header("authorization") or "")["oid"] for r in live.graph_requests()]
    assert oids[0].endswith("a1") and oids[-1].endswith("b2")
    assert len({r.header("authorization") for r in live.graph_requests()}) == 2


@pytest.mark.parametrize(
    ("refusal", "hint"),
    [("grant_expired", "sign in again"), ("consent_required", "administrator grants consent")],
)
def test_an_idp_refusal_is_auth_required_and_serving_continues(
    live: Live, refusal: str, hint: str
) -> None:
    live.idp.obo_error = refusal
    reply = call_mail_list(live, live.server.token("a1"))
    result = reply["result"]
    assert result["isError"] is True
    text = json.dumps(result)
    assert "auth_required" in text
    assert hint in text
    assert "Traceback" not in text
    assert not live.graph_requests()
    live.idp.obo_error = None
    again = call_mail_list(live, live.server.token("a1", jti="after-refusal"))
    assert again["result"].get("isError") is not True, again
    assert live.graph_requests()


def graph_message(number: int) -> dict[str, Any]:
    return {
        "id": f"AAMkAGUAAAwTW09AA{number}=",
        "subject": f"Quarterly figures {number}",
        "receivedDateTime": f"2026-11-0{number}T09:00:00Z",
        "from": {"emailAddress": {"name": "Megan", "address": "megan@contoso.example"}},
    }


def test_one_users_cursor_is_refused_to_another_and_continues_for_its_owner(
    live: Live,
) -> None:
    first_page = {
        "value": [graph_message(1), graph_message(2), graph_message(3)],
        "@odata.nextLink": "https://graph.microsoft.com/v1.0/me/messages?%24skip=3",
    }
    for path in MESSAGES:
        live.graph.route("GET", path, Reply.json(first_page))
    listed = call_mail_list(live, live.server.token("a1"), {"limit": 2})["result"]
    cursor = listed["structuredContent"]["skipped"]["items"]["cursor"]

    def next_pages() -> list[RecordedRequest]:
        return [r for r in live.graph_requests() if "skip" in r.query]

    refused = call_mail_list(live, live.server.token("b2"), {"cursor": cursor, "limit": 2})
    assert refused["result"]["isError"] is True
    said = json.loads(refused["result"]["content"][0]["text"])["error"]
    assert said["error_code"] == "invalid_arguments", said
    assert "Quarterly figures" not in json.dumps(refused)
    assert not next_pages(), "b2 read nothing of a1's listing"
    continued = call_mail_list(live, live.server.token("a1"), {"cursor": cursor, "limit": 2})
    assert continued["result"]["structuredContent"]["messages"], continued
    assert "Quarterly figures 3" in json.dumps(continued["result"]["structuredContent"])


SEAL_KEY = "5f" * 32


def test_replicas_on_one_redis_share_the_sealed_graph_token(
    tmp_path: Path, redis: RedisServer
) -> None:
    extra = ("--state-url", redis.url)
    env = {"MFC_TOKEN_CACHE_KEY": SEAL_KEY}
    with live_servers(tmp_path, *extra, replicas=2, env=env) as two:
        token = two.server.token("a1")
        call_mail_list(two, token, replica=0)
        call_mail_list(two, token, replica=1)
        assert len(two.exchanges()) == 1, "the second replica found the sealed token"
        graph_token = two.idp.access_tokens[0]
        authorizations = {r.header("authorization") for r in two.graph_requests()}
        assert authorizations == {f"Bearer {graph_token}"}
        slots = redis.command("--scan", "--pattern", "*:token:*").split()
        assert len(slots) == 1, "one sealed token for one user and one assertion"
        sealed = redis.command("--no-raw", "get", slots[0])
        assert sealed and graph_token not in sealed and token not in sealed


# --- the app registration's certificate (MFC_CLIENT_CERT_PATH) ------------------------


@pytest.mark.parametrize("passphrase", [None, "correct horse battery"])
def test_a_certificate_signs_the_exchange_and_no_secret_is_sent(
    tmp_path: Path, passphrase: str | None
) -> None:
    app = write_app_certificate(tmp_path / "app.pem", passphrase=passphrase)
    env = {"MFC_CLIENT_CERT_PATH": str(app.path)}
    if passphrase:
        env["MFC_CLIENT_CERT_PASSPHRASE"] = passphrase
    with live_servers(tmp_path, env=env, certificate=app.certificate) as live:
        token = live.server.token("a1")
        reply = call_mail_list(live, token)
        assert reply["result"].get("isError") is not True, reply
        [exchange] = live.exchanges()
        assert "client_secret" not in exchange.data
        assert exchange.data["assertion"] == token
        [header] = live.idp.client_assertion_headers  # FakeIdP checked signature and x5t
        assert header["alg"] == "PS256" and "x5t#S256" in header
        authorization = {r.header("authorization") for r in live.graph_requests()}
        assert authorization == {f"Bearer {live.idp.access_tokens[0]}"}
        stderr = live.server.stderr()
        assert "PRIVATE KEY" not in stderr and token not in stderr
        assert not passphrase or passphrase not in stderr


def test_a_certificate_the_app_registration_does_not_have_is_refused_by_entra(
    tmp_path: Path,
) -> None:
    """FakeIdP knows another certificate: the signed assertion fails Entra's check, and
    the user is told the connector's own credentials were refused; serving continues."""
    app = write_app_certificate(tmp_path / "app.pem")
    registered = write_app_certificate(tmp_path / "registered.pem", key=app_key(1))
    env = {"MFC_CLIENT_CERT_PATH": str(app.path)}
    with live_servers(tmp_path, env=env, certificate=registered.certificate) as live:
        reply = call_mail_list(live, live.server.token("a1"))
        assert reply["result"]["isError"] is True
        text = json.dumps(reply["result"])
        assert "client credentials were refused" in text and "MFC_CLIENT_CERT_PATH" in text
        assert not live.idp.client_assertion_headers and not live.graph_requests()
        again = call_mail_list(live, live.server.token("a1", jti="again"))
        assert again["result"]["isError"] is True, "still refused, still serving"


# --- the issuer's cloud decides the authority, the Graph root and the capabilities ----


@pytest.mark.parametrize(
    ("hosts", "env", "permanent_delete"),
    [
        (GLOBAL, {}, True),
        (
            CloudHosts("login.microsoftonline.us", "graph.microsoft.us"),
            {"MFC_CLOUD": "usgov"},
            False,
        ),
        (
            CloudHosts("login.microsoftonline.us", "dod-graph.microsoft.us"),
            {"MFC_CLOUD": "dod"},
            False,
        ),
        (CloudHosts("login.chinacloudapi.cn", "microsoftgraph.chinacloudapi.cn"), {}, False),
        (
            CloudHosts("login.partner.microsoftonline.cn", "microsoftgraph.chinacloudapi.cn"),
            {},
            False,
        ),
    ],
    ids=["global", "usgov", "dod", "china", "china-partner"],
)
def test_the_issuers_cloud_picks_the_authority_and_the_graph_root(
    tmp_path: Path, hosts: CloudHosts, env: dict[str, str], permanent_delete: bool
) -> None:
    with live_servers(tmp_path, "--enable-writes", "--enable-delete", env=env, hosts=hosts) as live:
        token = live.server.token("a1")
        reply = call_mail_list(live, token)
        assert reply["result"].get("isError") is not True, reply
        [exchange] = live.exchanges()
        assert exchange.host == hosts.login
        assert exchange.path == f"/{TENANT}/oauth2/v2.0/token"
        assert exchange.data["scope"].split()[0] == f"https://{hosts.graph}/.default"
        assert live.graph_requests(), "the mail list reached Graph"
        assert {h.rpartition(":")[0] for h in live.proxy.hosts()} == {hosts.login, hosts.graph}
        status = call_tool(live, token, "account_status", {})["result"]["structuredContent"]
        [account] = status["accounts"]
        assert account["capabilities"]["permanent_delete"] is permanent_delete
        if not permanent_delete:
            assert "no permanent deletion" in account["capabilities"]["missing"]["permanent_delete"]
        offered = {tool["name"] for tool in list_tools(live, token)}
        assert ("mail_delete_permanently" in offered) is permanent_delete
        assert "mail_delete" in offered or "mail_modify" in offered
