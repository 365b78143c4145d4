"""``serve-http`` in live mode (no ``--demo``) for the tests: Entra and Graph on loopback.

The real server processes; the user's JWT from ``LocalIssuer``, issued as an Entra cloud's
issuer (``https://login.microsoftonline.com/TENANT/v2.0`` by default) with its keys on
loopback; Entra and Graph behind one loopback TLS server reached through a CONNECT proxy
(``--proxy``, ``--ca-file``), as a deployment behind an egress proxy would reach
login.microsoftonline.com and graph.microsoft.com (or a national cloud's hosts).
``FakeIdP`` answers the exchange, checking the client secret or the certificate's signed
client assertion; the Graph routes (``Live.graph``) record what each server sent.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from cryptography import x509

from tests.support.connect_proxy import ConnectProxy
from tests.support.hosted_process import HostedServer, started
from tests.support.idp_fake import FakeIdP
from tests.support.idp_https import serve_idp
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.oauth_issuer import TENANT, LocalIssuer
from tests.support.tls_certs import make_ca_and_server

CLIENT_ID = "0c0c0c0c-1111-2222-3333-444444444444"
SECRET = "connector-secret-never-shown"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
MESSAGES = ("/v1.0/me/mailFolders/inbox/messages", "/v1.0/me/messages")
BUSY_RETRY_SECONDS = 0.05
"""A 429 (the user's concurrent-request cap) is retried after this, as a client would."""
BUSY_RETRY_TOTAL_SECONDS = 120.0


@dataclass(frozen=True)
class CloudHosts:
    """The sign-in host (the issuer's) and the Graph host of one Microsoft cloud."""

    login: str = "login.microsoftonline.com"
    graph: str = "graph.microsoft.com"


GLOBAL = CloudHosts()


@dataclass
class Live:
    servers: list[HostedServer]
    idp: FakeIdP
    graph: LoopbackServer
    proxy: ConnectProxy

    @property
    def server(self) -> HostedServer:
        return self.servers[0]

    def graph_requests(self) -> list[RecordedRequest]:
        return [r for r in self.graph.requests if r.path.startswith("/v1.0/")]

    def exchanges(self) -> list[Any]:
        return self.idp.token_requests("urn:ietf:params:oauth:grant-type:jwt-bearer")


@contextmanager
def live_servers(
    tmp_path: Path,
    *extra: str,
    replicas: int = 1,
    env: dict[str, str] | None = None,
    hosts: CloudHosts = GLOBAL,
    certificate: x509.Certificate | None = None,
) -> Iterator[Live]:
    """``replicas`` live serve-http processes trusting one issuer on ``hosts.login``; Entra
    and Graph on one loopback TLS server behind a CONNECT proxy. The app registration has
    the secret, or with ``certificate`` that certificate only (give the servers
    ``MFC_CLIENT_CERT_PATH`` in ``env``)."""
    idp = FakeIdP(
        client_id=CLIENT_ID,
        client_secret=SECRET if certificate is None else None,
        client_certificate=certificate,
        host=hosts.login,
        graph_host=hosts.graph,
    )
    pki = make_ca_and_server(tmp_path / "pki", ["127.0.0.1", hosts.login, hosts.graph])
    assert pki.ca_file is not None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.cert_file, pki.key_file)
    with LoopbackServer() as jwks, LoopbackServer(tls=context) as remote, ExitStack() as stack:
        issuer = LocalIssuer(jwks, issuer_host=hosts.login)
        issuer.publish()
        serve_idp(remote, idp)
        for method, path in (
            ("GET", f"/{TENANT}/v2.0/.well-known/openid-configuration"),
            ("POST", f"/{TENANT}/oauth2/v2.0/token"),
        ):
            remote.route(method, path, lambda request, idp=idp: _idp_answer(idp, request))
        for path in MESSAGES:
            remote.route("GET", path, Reply.json({"value": []}))
        proxy = stack.enter_context(ConnectProxy(("127.0.0.1", remote.port)))
        credential = {"MFC_CLIENT_SECRET": SECRET} if certificate is None else {}
        settings = {"MFC_CLIENT_ID": CLIENT_ID, **credential, **(env or {})}
        network = ("--proxy", proxy.url, "--ca-file", str(pki.ca_file))
        servers = [
            stack.enter_context(
                started(
                    issuer,
                    tmp_path / f"server{n}",
                    *network,
                    *extra,
                    demo=False,
                    env_extra=settings,
                )
            )
            for n in range(replicas)
        ]
        yield Live(servers, idp, remote, proxy)


def _idp_answer(idp: FakeIdP, request: RecordedRequest) -> Reply:
    host = (request.header("host") or "").split(":")[0]
    response = idp.answer_http(
        request.method, f"https://{host}{request.target}", request.body, dict(request.headers)
    )
    return Reply(response.status_code, tuple(response.headers.items()), response.text.encode())


def call_tool(
    live: Live,
    token: str,
    name: str,
    arguments: dict[str, Any],
    replica: int = 0,
    client: httpx.Client | None = None,
) -> dict[str, Any]:
    """One tools/call with ``token`` to one replica: the JSON-RPC reply. A 429 (too many
    of this user's requests at once on that replica) is retried as a client would."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": META},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    with ExitStack() as stack:
        http = client or stack.enter_context(httpx.Client(timeout=120, trust_env=False))
        deadline = time.monotonic() + BUSY_RETRY_TOTAL_SECONDS
        while True:
            response = http.post(live.servers[replica].url, json=body, headers=headers)
            if response.status_code != 429 or time.monotonic() > deadline:
                break
            time.sleep(BUSY_RETRY_SECONDS)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def list_tools(live: Live, token: str) -> list[dict[str, Any]]:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}
    headers = {
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }
    with httpx.Client(timeout=60, trust_env=False) as client:
        response = client.post(live.server.url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    tools: list[dict[str, Any]] = response.json()["result"]["tools"]
    return tools


def claims_of(bearer: str) -> dict[str, Any]:
    """The claims of a JWT (``Bearer`` prefix or not), unverified: what the test sent."""
    payload = bearer.removeprefix("Bearer ").split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=="))
    return decoded
