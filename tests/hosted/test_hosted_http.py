"""Hosted mode over real HTTP: the real ``serve-http --demo`` process, raw requests.

Every refusal a client or an attacker can provoke, each answered with its HTTP status and
(where the spec wants one) a JSON-RPC error validated against the official schema, and
each followed by a request that still works. Tokens are real JWS from ``LocalIssuer``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from mfconnector.limits import DEFAULT_LIMITS
from tests.support.hosted_process import PUBLIC_URL, HostedServer, hosted_server
from tests.support.mcp_schemas import assert_valid
from tests.support.oauth_issuer import SCOPE

pytestmark = pytest.mark.slow

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
METADATA_URL = "https://mail.example.test/.well-known/oauth-protected-resource/mcp"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedServer]:
    with hosted_server(tmp_path_factory.mktemp("hosted"), "--enable-writes") as running:
        yield running


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30, trust_env=False) as http:
        yield http


def modern(method: str, request_id: int = 1, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": META},
    }


def modern_headers(
    server: HostedServer, method: str, name: str | None = None, user: str = "a1"
) -> dict[str, str]:
    headers = {**server.auth(user), "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def call(
    client: httpx.Client,
    server: HostedServer,
    name: str,
    arguments: dict[str, Any],
    user: str = "a1",
) -> dict[str, Any]:
    response = client.post(
        server.url,
        json=modern("tools/call", name=name, arguments=arguments),
        headers=modern_headers(server, "tools/call", name, user),
    )
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    assert_valid(MODERN, "CallToolResultResponse", reply)
    return reply


def still_serves(client: httpx.Client, server: HostedServer) -> None:
    response = client.post(
        server.url, json=modern("tools/list", 99), headers=modern_headers(server, "tools/list")
    )
    assert response.status_code == 200, response.text
    assert_valid(MODERN, "ListToolsResultResponse", response.json())


def initialize(client: httpx.Client, server: HostedServer, user: str = "a1") -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    response = client.post(server.url, json=body, headers=server.auth(user))
    assert response.status_code == 200, response.text
    assert_valid(LEGACY, "JSONRPCResponse", response.json())
    session_id = response.headers["mcp-session-id"]
    assert len(session_id) >= 32
    return session_id


def legacy_list(
    client: httpx.Client, server: HostedServer, session_id: str | None, user: str = "a1"
) -> httpx.Response:
    headers = server.auth(user)
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return client.post(
        server.url, json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, headers=headers
    )


# --- OAuth -----------------------------------------------------------------------------


def test_metadata_document_is_served_without_a_token(
    client: httpx.Client, server: HostedServer
) -> None:
    base = server.url.removesuffix("/mcp")
    response = client.get(base + "/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == PUBLIC_URL
    assert document["authorization_servers"] == [server.issuer.issuer]
    assert document["scopes_supported"] == [SCOPE]


def test_no_token_is_401_pointing_at_the_metadata(
    client: httpx.Client, server: HostedServer
) -> None:
    response = client.post(
        server.url,
        json=modern("tools/list"),
        headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
    )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{METADATA_URL}"' in challenge
    still_serves(client, server)


@pytest.mark.parametrize(
    "claims",
    [
        {"aud": "https://other.example.test/mcp"},
        {"exp": 1_000},
        {"iss": "https://evil.example.test/v2.0"},
    ],
    ids=["wrong-audience", "expired", "wrong-issuer"],
)
def test_bad_token_is_401_invalid_token(
    client: httpx.Client, server: HostedServer, claims: dict[str, Any]
) -> None:
    token = server.issuer.token(PUBLIC_URL, **claims)
    headers = {**modern_headers(server, "tools/list"), "Authorization": f"Bearer {token}"}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert token not in server.stderr()
    still_serves(client, server)


def test_tampered_signature_is_401(client: httpx.Client, server: HostedServer) -> None:
    token = server.token()
    head, payload, signature = token.split(".")
    forged = ".".join((head, payload, ("A" if signature[0] != "A" else "B") + signature[1:]))
    headers = {**modern_headers(server, "tools/list"), "Authorization": f"Bearer {forged}"}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 401


def test_missing_scope_is_403_insufficient_scope(
    client: httpx.Client, server: HostedServer
) -> None:
    headers = {**modern_headers(server, "tools/list"), **server.auth(scp="openid")}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert f'scope="{SCOPE}"' in challenge
    assert f'resource_metadata="{METADATA_URL}"' in challenge


# --- 2026-07-28 header rules ------------------------------------------------------------


@pytest.mark.parametrize(
    "override",
    [
        {"MCP-Protocol-Version": "2025-11-25"},
        {"Mcp-Method": "tools/list"},
        {"Mcp-Name": "mail_search"},
        {"Mcp-Method": ""},
    ],
    ids=["version", "method", "name", "empty-method"],
)
def test_header_body_mismatch_is_400_header_mismatch(
    client: httpx.Client, server: HostedServer, override: dict[str, str]
) -> None:
    headers = {**modern_headers(server, "tools/call", "mail_list"), **override}
    body = modern("tools/call", 7, name="mail_list", arguments={"limit": 1})
    response = client.post(server.url, json=body, headers=headers)
    assert response.status_code == 400
    reply = response.json()
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32020
    assert_valid(MODERN, "JSONRPCErrorResponse", reply)
    still_serves(client, server)


def test_missing_version_header_is_a_mismatch(client: httpx.Client, server: HostedServer) -> None:
    headers = {**server.auth(), "Mcp-Method": "tools/list"}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


def test_modern_call_runs_a_tool(client: httpx.Client, server: HostedServer) -> None:
    reply = call(client, server, "mail_list", {"limit": 2})
    assert reply["result"]["structuredContent"]["incomplete"] is True  # the inbox has more
    assert len(reply["result"]["structuredContent"]["messages"]) == 2


def test_client_that_takes_only_sse_gets_one_event(
    client: httpx.Client, server: HostedServer
) -> None:
    headers = {**modern_headers(server, "tools/list"), "Accept": "text/event-stream"}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    events = [block for block in response.text.split("\n\n") if block]
    assert len(events) == 1
    event, data = events[0].split("\n")
    assert event == "event: message"
    assert_valid(MODERN, "ListToolsResultResponse", json.loads(data.removeprefix("data: ")))


def test_accept_that_allows_neither_is_406(client: httpx.Client, server: HostedServer) -> None:
    headers = {**modern_headers(server, "tools/list"), "Accept": "text/html"}
    assert client.post(server.url, json=modern("tools/list"), headers=headers).status_code == 406


def test_unknown_modern_method_is_404_method_not_found(
    client: httpx.Client, server: HostedServer
) -> None:
    response = client.post(
        server.url, json=modern("prompts/list"), headers=modern_headers(server, "prompts/list")
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601


# --- Origin, methods, bodies -----------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "null", "http://mail.example.test", "https://mail.example.test:8443"],
)
def test_foreign_origin_is_403(client: httpx.Client, server: HostedServer, origin: str) -> None:
    headers = {**modern_headers(server, "tools/list"), "Origin": origin}
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == 403
    still_serves(client, server)


@pytest.mark.parametrize("origin", ["https://mail.example.test", "HTTPS://Mail.Example.Test:443"])
def test_the_public_origin_is_accepted(
    client: httpx.Client, server: HostedServer, origin: str
) -> None:
    headers = {**modern_headers(server, "tools/list"), "Origin": origin}
    assert client.post(server.url, json=modern("tools/list"), headers=headers).status_code == 200


def test_get_is_405_no_server_stream(client: httpx.Client, server: HostedServer) -> None:
    response = client.get(server.url, headers={**server.auth(), "Accept": "text/event-stream"})
    assert response.status_code == 405
    assert "POST" in response.headers["allow"]


def test_other_paths_are_404(client: httpx.Client, server: HostedServer) -> None:
    response = client.post(
        server.url + "/x", json=modern("tools/list"), headers=modern_headers(server, "tools/list")
    )
    assert response.status_code == 404


def test_malformed_json_is_parse_error_and_serving_continues(
    client: httpx.Client, server: HostedServer
) -> None:
    headers = {**modern_headers(server, "tools/list"), "Content-Type": "application/json"}
    response = client.post(
        server.url, content=b'{"jsonrpc": "2.0", "id": 1, "method": ', headers=headers
    )
    assert response.status_code == 400
    reply = response.json()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert "Traceback" not in response.text
    # id null as on stdio (JSON-RPC 2.0 §5; DESIGN's choice): the schema checks the error
    assert_valid(MODERN, "ParseError", reply["error"])
    still_serves(client, server)


def test_batch_is_invalid_request(client: httpx.Client, server: HostedServer) -> None:
    response = client.post(
        server.url, json=[modern("tools/list")], headers=modern_headers(server, "tools/list")
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_wrong_content_type_is_415(client: httpx.Client, server: HostedServer) -> None:
    headers = {**modern_headers(server, "tools/list"), "Content-Type": "text/plain"}
    response = client.post(server.url, content=json.dumps(modern("tools/list")), headers=headers)
    assert response.status_code == 415


# --- connections -------------------------------------------------------------------------


def raw_head(server: HostedServer, headers: dict[str, str], length: int) -> bytes:
    url = urlsplit(server.url)
    lines = [f"POST {url.path} HTTP/1.1", f"Host: {url.netloc}", f"Content-Length: {length}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(conn: socket.socket) -> tuple[str, dict[str, str], bytes]:
    """One response (status line, lower-cased headers, its Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65_536)
        assert chunk, f"the server closed the connection without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    while len(body) < int(fields.get("content-length", "0")):
        body += conn.recv(65_536)
    return status, fields, body


def test_a_refusal_before_the_body_is_read_closes_the_connection_and_says_so(
    client: httpx.Client, server: HostedServer
) -> None:
    """A client keeping the connection for its retry (a 401, a 429) would otherwise send
    it into a socket the server is closing, and never know whether it was served."""
    body = json.dumps(modern("tools/list")).encode()
    headers = {
        "Authorization": "Bearer not-a-jwt",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }
    url = urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as conn:
        conn.sendall(raw_head(server, headers, len(body)))  # the body is still to come
        status, fields, _ = read_response(conn)
        assert status.split()[1] == "401"
        assert fields.get("connection") == "close", fields
        assert conn.recv(65_536) == b"", "the server closed it"
    still_serves(client, server)


def test_an_answered_request_keeps_its_connection_for_the_next(server: HostedServer) -> None:
    body = json.dumps(modern("tools/list")).encode()
    headers = {**modern_headers(server, "tools/list"), "Content-Type": "application/json"}
    url = urlsplit(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=30) as conn:
        for _ in range(2):
            conn.sendall(raw_head(server, headers, len(body)) + body)
            status, fields, answer = read_response(conn)
            assert status.split()[1] == "200" and "connection" not in fields, fields
            assert_valid(MODERN, "ListToolsResultResponse", json.loads(answer))


def padded_body(size: int) -> bytes:
    """A valid tools/list request of exactly ``size`` bytes (the padding is one string)."""
    base = json.dumps(modern("tools/list", pad="")).encode()
    assert len(base) <= size
    body = json.dumps(modern("tools/list", pad="x" * (size - len(base)))).encode()
    assert len(body) == size
    return body


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_body_cap_is_line_bytes(client: httpx.Client, server: HostedServer, delta: int) -> None:
    limit = DEFAULT_LIMITS.line_bytes
    headers = {**modern_headers(server, "tools/list"), "Content-Type": "application/json"}
    response = client.post(server.url, content=padded_body(limit + delta), headers=headers)
    if delta <= 0:
        assert response.status_code == 200, response.text
        assert_valid(MODERN, "ListToolsResultResponse", response.json())
    else:
        assert response.status_code == 413
        reply = response.json()
        assert reply["error"]["code"] == -32600
        assert "1,000,000-byte limit" in reply["error"]["message"]
        still_serves(client, server)


def test_body_cap_holds_without_content_length(client: httpx.Client, server: HostedServer) -> None:
    body = padded_body(DEFAULT_LIMITS.line_bytes + 1)
    headers = {**modern_headers(server, "tools/list"), "Content-Type": "application/json"}
    response = client.post(
        server.url, content=iter([body[:500_000], body[500_000:]]), headers=headers
    )
    assert response.status_code == 413


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_header_block_cap(client: httpx.Client, server: HostedServer, delta: int) -> None:
    headers = {**modern_headers(server, "tools/list"), "X-Pad": ""}
    request = client.build_request("POST", server.url, json=modern("tools/list"), headers=headers)
    size = sum(len(k) + len(v) + 4 for k, v in request.headers.raw)
    headers["X-Pad"] = "p" * (DEFAULT_LIMITS.http_header_bytes + delta - size)
    response = client.post(server.url, json=modern("tools/list"), headers=headers)
    assert response.status_code == (431 if delta > 0 else 200), response.text


def test_notification_is_202_without_body(client: httpx.Client, server: HostedServer) -> None:
    body = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 3, "_meta": META},
    }
    response = client.post(
        server.url, json=body, headers=modern_headers(server, "notifications/cancelled")
    )
    assert response.status_code == 202
    assert response.content == b""


# --- 2025 sessions ----------------------------------------------------------------------


def test_legacy_session_lifecycle(client: httpx.Client, server: HostedServer) -> None:
    session_id = initialize(client, server)
    listed = legacy_list(client, server, session_id)
    assert listed.status_code == 200
    assert_valid(LEGACY, "JSONRPCResponse", listed.json())
    assert "resultType" not in listed.json()["result"]
    ended = client.delete(server.url, headers={**server.auth(), "Mcp-Session-Id": session_id})
    assert ended.status_code == 204
    assert legacy_list(client, server, session_id).status_code == 404
    again = client.delete(server.url, headers={**server.auth(), "Mcp-Session-Id": session_id})
    assert again.status_code == 404


@pytest.mark.parametrize("version", ["2025-11-25", None, "2025-06-18", "2026-07-28"])
def test_legacy_version_header_must_be_the_sessions(
    client: httpx.Client, server: HostedServer, version: str | None
) -> None:
    session_id = initialize(client, server)
    headers = {**server.auth(), "Mcp-Session-Id": session_id}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    response = client.post(server.url, json=body, headers=headers)
    assert response.status_code == (200 if version in ("2025-11-25", None) else 400)


def test_legacy_request_without_session_is_400(client: httpx.Client, server: HostedServer) -> None:
    response = legacy_list(client, server, None)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_made_up_session_id_is_404(client: httpx.Client, server: HostedServer) -> None:
    assert legacy_list(client, server, "not-a-session").status_code == 404
    assert legacy_list(client, server, "x" * 10_000).status_code == 404


def test_initialize_on_an_existing_session_is_400(
    client: httpx.Client, server: HostedServer
) -> None:
    session_id = initialize(client, server)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw"}},
    }
    response = client.post(
        server.url, json=body, headers={**server.auth(), "Mcp-Session-Id": session_id}
    )
    assert response.status_code == 400
    assert legacy_list(client, server, session_id).status_code == 200


def test_another_users_session_id_is_404(client: httpx.Client, server: HostedServer) -> None:
    session_id = initialize(client, server, user="a1")
    assert legacy_list(client, server, session_id, user="b2").status_code == 404
    ended = client.delete(server.url, headers={**server.auth("b2"), "Mcp-Session-Id": session_id})
    assert ended.status_code == 404
    assert legacy_list(client, server, session_id, user="a1").status_code == 200


def test_a_client_response_on_another_users_session_is_404(
    client: httpx.Client, server: HostedServer
) -> None:
    """Nobody can answer another user's confirmation question: the session id is not theirs."""
    session_id = initialize(client, server, user="a1")
    answer = {"jsonrpc": "2.0", "id": "mfc-elicit-1", "result": {"action": "accept"}}
    foreign = {**server.auth("b2"), "Mcp-Session-Id": session_id}
    assert client.post(server.url, json=answer, headers=foreign).status_code == 404
    own = {**server.auth("a1"), "Mcp-Session-Id": session_id}
    response = client.post(server.url, json=answer, headers=own)
    assert response.status_code == 202  # nothing was waiting: ignored, and said so in the log
    assert response.content == b""


# --- users are isolated -----------------------------------------------------------------


def draft_subjects(client: httpx.Client, server: HostedServer, user: str) -> list[str]:
    reply = call(client, server, "mail_list", {"folder": "drafts", "limit": 50}, user=user)
    content = reply["result"]["structuredContent"]
    columns = content["columns"]
    return [row[columns.index("subject")] for row in content["messages"]]


def test_users_see_only_their_own_mailbox(client: httpx.Client, server: HostedServer) -> None:
    subject = "Only for user A 7f3e"
    created = call(
        client,
        server,
        "mail_create",
        {"action": "draft", "to": ["megan@fabrikam.example"], "subject": subject, "text": "hi"},
        user="a1",
    )
    assert created["result"]["isError"] is False, created
    assert subject in draft_subjects(client, server, "a1")
    assert subject not in draft_subjects(client, server, "b2")


def test_no_token_reaches_the_log(client: httpx.Client, server: HostedServer) -> None:
    still_serves(client, server)
    log = server.stderr()
    assert "bearer token refused" in log  # the refusals above were logged ...
    assert "eyJ" not in log  # ... and no JWT (base64url of '{"') appears anywhere


def sse_messages(text: str) -> list[dict[str, Any]]:
    found = []
    for block in text.split("\n\n"):
        if block:
            event, data = block.split("\n")
            assert event == "event: message"
            found.append(json.loads(data.removeprefix("data: ")))
    return found


def test_progress_streams_before_the_result(client: httpx.Client, server: HostedServer) -> None:
    document = {"path": "Documents/Contract – Fabrikam MSA.pdf"}
    body = modern("tools/call", 11, name="files_read", arguments=document)
    body["params"]["_meta"] = {**META, "progressToken": "p-11"}
    headers = {
        **modern_headers(server, "tools/call", "files_read"),
        "Accept": "application/json, text/event-stream",
    }
    response = client.post(server.url, json=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    *notes, last = sse_messages(response.text)
    assert notes, "no progress before the result"
    for note in notes:
        assert_valid(MODERN, "ProgressNotification", note)
        assert note["params"]["progressToken"] == "p-11"
    assert_valid(MODERN, "CallToolResultResponse", last)
    assert last["id"] == 11
    # without a token the same call is answered in one JSON body
    del body["params"]["_meta"]["progressToken"]
    plain = client.post(server.url, json=body, headers=headers)
    assert plain.headers["content-type"] == "application/json"
    assert_valid(MODERN, "CallToolResultResponse", plain.json())
