"""One proxy setting and one trust decision for sign-in (requests under msal) and Graph (httpx).

Real parts: a loopback CONNECT proxy that counts its tunnels (``connect_proxy.py``), a
loopback HTTPS server with a certificate from a test CA (``tls_certs.py``), msal's own code
signing in through them, and the Graph client. ``HTTPS_PROXY`` is set in the process
environment throughout, so a client that read the environment by itself would be caught.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mfconnector.auth import StaticTokenProvider, commands
from mfconnector.auth.config import AuthConfig, auth_config_from_args
from mfconnector.auth.msal_provider import build_token_provider
from mfconnector.errors import GraphError
from mfconnector.graph.client import GraphClient
from mfconnector.net.settings import (
    NetworkSettings,
    NetworkSettingsError,
    network_settings_from_args,
)
from mfconnector.net.signin_session import signin_session
from tests.support.connect_proxy import ConnectProxy
from tests.support.idp_fake import FakeIdP
from tests.support.idp_https import serve_idp
from tests.support.loopback import LoopbackServer, Reply
from tests.support.tls_certs import ServerCertificate, make_ca_and_server, make_self_signed

CLIENT_ID = "11111111-2222-3333-4444-555555555555"
LOGIN_HOST = "login.microsoftonline.com"
GRAPH_HOST = "graph.microsoft.com"
PROBE = "/v1.0/probe"


def settings(env: dict[str, str], **flags: str) -> NetworkSettings:
    args = argparse.Namespace(**{f"net_{k}": v for k, v in flags.items()})
    return network_settings_from_args(args, env)


pytestmark = pytest.mark.usefixtures("no_keyring")


@dataclass
class Site:
    """An HTTPS server standing in for the sign-in service and Graph, and its CA."""

    server: LoopbackServer
    certificate: ServerCertificate


def _server_context(certificate: ServerCertificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert_file, certificate.key_file)
    return context


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    certificate = make_ca_and_server(tmp_path / "pki", ["127.0.0.1", LOGIN_HOST, GRAPH_HOST])
    with LoopbackServer(tls=_server_context(certificate)) as server:
        server.route("GET", PROBE, Reply.json({"ok": True}))
        yield Site(server, certificate)


@pytest.fixture
def proxy(site: Site) -> Iterator[ConnectProxy]:
    with ConnectProxy(("127.0.0.1", site.server.port)) as running:
        yield running


@pytest.fixture
def decoy(site: Site, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConnectProxy]:
    """A proxy named only by the environment: nobody may use it unless told to."""
    with ConnectProxy(("127.0.0.1", site.server.port)) as running:
        monkeypatch.setenv("HTTPS_PROXY", running.url)
        monkeypatch.setenv("https_proxy", running.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        yield running


# --- the setting --------------------------------------------------------------------------


def test_without_a_setting_the_environment_proxy_is_ignored() -> None:
    chosen = settings({"HTTPS_PROXY": "http://proxy.corp:3128"})
    assert chosen.proxy is None
    assert chosen.describe()["proxySource"] == "none (environment proxy variables ignored)"


def test_a_proxy_url_keeps_its_credentials_out_of_sight() -> None:
    chosen = settings({}, proxy="http://alice:s3cr3t-pw@proxy.corp:3128")
    assert chosen.proxy is not None
    assert chosen.proxy.url == "http://alice:s3cr3t-pw@proxy.corp:3128"
    assert chosen.proxy.display == "http://proxy.corp:3128"
    shown = json.dumps(chosen.describe()) + repr(chosen)
    assert "s3cr3t-pw" not in shown and "alice" not in shown
    assert chosen.describe()["proxyCredentials"] == "set (not shown)"
    from_env = settings({"MFC_PROXY": "proxy.corp:8080"})
    assert from_env.proxy is not None and from_env.proxy.display == "http://proxy.corp:8080"
    assert from_env.proxy.source == "MFC_PROXY"


def test_proxy_env_takes_https_proxy_and_no_proxy() -> None:
    env = {
        "MFC_PROXY": "env",
        "HTTPS_PROXY": "http://proxy.corp:3128",
        "NO_PROXY": "localhost, .contoso.example,10.0.0.0/8,*.sharepoint.com",
    }
    chosen = settings(env)
    proxy = chosen.proxy
    assert proxy is not None and proxy.source == "environment"
    assert proxy.applies_to(GRAPH_HOST) and proxy.applies_to(LOGIN_HOST)
    for bypassed in ("localhost", "files.contoso.example", "10.1.2.3", "x.sharepoint.com"):
        assert not proxy.applies_to(bypassed), bypassed
    assert settings({"MFC_PROXY": "env"}).proxy is None  # nothing in the environment
    assert settings({"MFC_PROXY": "env", "HTTPS_PROXY": "http://p:1"}, proxy="none").proxy is None


@pytest.mark.parametrize(
    "value", ["socks5://proxy:1080", "http://", "http://proxy:99999", "http://proxy:8080/path"]
)
def test_a_proxy_that_cannot_work_is_named(value: str) -> None:
    with pytest.raises(NetworkSettingsError) as caught:
        settings({}, proxy=value)
    assert "--proxy" in caught.value.message and caught.value.code == "config"


def test_a_missing_ca_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(NetworkSettingsError) as caught:
        settings({"MFC_CA_FILE": str(tmp_path / "corp-ca.pem")})
    assert "corp-ca.pem" in caught.value.message


def test_the_flags_reach_the_sign_in_configuration(tmp_path: Path) -> None:
    from mfconnector.cli import build_parser

    args = build_parser().parse_args(["status", "--proxy", "http://proxy.corp:3128"])
    config = auth_config_from_args(args, {"MFC_CACHE_PATH": str(tmp_path / "c.json")})
    assert config.network.proxy is not None
    assert config.network.proxy.display == "http://proxy.corp:3128"


# --- both clients go through the proxy exactly when configured -----------------------------


async def _graph_probe(site: Site, network: NetworkSettings) -> None:
    client = GraphClient(
        token_provider=StaticTokenProvider("t"), root=f"{site.server.url}/v1.0", network=network
    )
    async with client:
        answer = await client.get_json("probe")
    assert answer.body == {"ok": True}


def _signin_probe(site: Site, network: NetworkSettings) -> None:
    with signin_session(network, timeout_seconds=10) as session:
        response = session.get(f"{site.server.url}{PROBE}")
    assert response.status_code == 200 and response.json() == {"ok": True}


@pytest.mark.parametrize(
    ("flag", "no_proxy", "tunnels"),
    [
        (None, None, 0),  # no setting: HTTPS_PROXY is in the environment and ignored
        ("configured", None, 2),  # --proxy URL
        ("env", None, 2),  # --proxy env
        ("env", "127.0.0.1", 0),  # --proxy env, and NO_PROXY names the host
        ("none", None, 0),
    ],
)
async def test_both_clients_use_the_proxy_exactly_when_configured(
    site: Site,
    proxy: ConnectProxy,
    decoy: ConnectProxy,
    monkeypatch: pytest.MonkeyPatch,
    flag: str | None,
    no_proxy: str | None,
    tunnels: int,
) -> None:
    import os

    if no_proxy:
        monkeypatch.setenv("NO_PROXY", no_proxy)
    flags = {"ca_file": str(site.certificate.ca_file)}
    if flag == "configured":
        flags["proxy"] = proxy.url
    elif flag is not None:
        flags["proxy"] = flag
    network = settings(dict(os.environ), **flags)
    await _graph_probe(site, network)
    _signin_probe(site, network)
    used = proxy.hosts() + decoy.hosts()
    assert len(used) == tunnels
    if flag == "configured":
        assert decoy.hosts() == []  # the environment's proxy stays unused
    assert all(host == f"127.0.0.1:{site.server.port}" for host in used)
    assert len(site.server.requests_to(PROBE)) == 2


# --- sign-in and Graph end to end through an authenticating proxy ---------------------------


@pytest.mark.slow
async def test_sign_in_and_graph_go_through_the_configured_proxy_with_credentials(
    site: Site, decoy: ConnectProxy, tmp_path: Path
) -> None:
    idp = FakeIdP(client_id=CLIENT_ID)
    serve_idp(site.server, idp)
    profile = {"id": "u1", "displayName": "Adele Vance"}
    site.server.route("GET", "/v1.0/me", Reply.json(profile))
    expected = "Basic " + base64.b64encode(b"alice:s3cr3t-pw").decode("ascii")
    with ConnectProxy(("127.0.0.1", site.server.port), require_auth=expected) as proxy:
        address = proxy.url.replace("http://", "http://alice:s3cr3t-pw@")
        network = settings({}, proxy=address, ca_file=str(site.certificate.ca_file))
        config = AuthConfig(
            client_id=CLIENT_ID,
            cache_path=tmp_path / "cache" / "token_cache.json",
            allow_plaintext_cache=True,
            call_timeout_seconds=20.0,
            network=network,
        )
        out = io.StringIO()
        # No http_client: msal uses the production session (proxy, trust store).
        assert commands.login(config, method="device-code", stream=out) == 0, out.getvalue()
        provider = build_token_provider(config)
        client = GraphClient(
            token_provider=provider, root=f"https://{GRAPH_HOST}/v1.0", network=network
        )
        async with client:
            answer = await client.get_json("me")
        facts = await provider.describe()
        status = io.StringIO()
        assert commands.status(config, stream=status) == 0
        hosts = proxy.hosts()
    assert answer.body == profile
    assert f"{LOGIN_HOST}:443" in hosts and f"{GRAPH_HOST}:443" in hosts
    assert set(proxy.auth_headers) == {expected}  # both stacks sent the credentials
    assert decoy.hosts() == []
    assert facts["network"]["proxy"] == proxy.url and facts["network"]["proxySource"] == "--proxy"
    words = status.getvalue()
    assert (
        "proxy:" in words and f"{proxy.url} (from --proxy), with credentials (not shown)" in words
    )
    for shown in (json.dumps(facts), words, out.getvalue()):
        assert "s3cr3t-pw" not in shown
        assert not any(secret in shown for secret in idp.secrets())


# --- certificate failures are named ------------------------------------------------------------


@pytest.fixture
def untrusted(tmp_path: Path) -> Iterator[LoopbackServer]:
    certificate = make_self_signed(tmp_path / "self", ["127.0.0.1", LOGIN_HOST, GRAPH_HOST])
    with LoopbackServer(tls=_server_context(certificate)) as server:
        server.route("GET", PROBE, Reply.json({"ok": True}))
        yield server


async def test_graph_names_a_refused_certificate(untrusted: LoopbackServer) -> None:
    client = GraphClient(token_provider=StaticTokenProvider("t"), root=f"{untrusted.url}/v1.0")
    async with client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("probe")
    error = caught.value
    assert "TLS certificate was not accepted: self-signed certificate" in error.message
    assert error.hint is not None and "--ca-file" in error.hint and "trust store" in error.hint
    assert error.retry_safe is False
    untrusted.close()  # joins the handler threads: the count is final
    assert untrusted.requests == [] and untrusted.tls_failures == 1


def test_sign_in_names_a_refused_certificate(untrusted: LoopbackServer, tmp_path: Path) -> None:
    with ConnectProxy(("127.0.0.1", untrusted.port)) as proxy:
        config = AuthConfig(
            client_id=CLIENT_ID,
            cache_path=tmp_path / "cache" / "token_cache.json",
            allow_plaintext_cache=True,
            network=settings({}, proxy=proxy.url),
        )
        out = io.StringIO()
        assert commands.login(config, method="device-code", stream=out) == 1
    text = out.getvalue()
    assert (
        f"error: the TLS certificate of the sign-in service ({LOGIN_HOST}) was not accepted: "
        "self-signed certificate" in text
    )
    assert "--ca-file" in text
    assert untrusted.requests == []


async def test_a_proxy_that_refuses_is_named_by_both_clients(site: Site, tmp_path: Path) -> None:
    """A proxy that wants credentials it did not get: both errors name the proxy setting."""
    with ConnectProxy(("127.0.0.1", site.server.port), require_auth="Basic eA==") as proxy:
        network = settings({}, proxy=proxy.url, ca_file=str(site.certificate.ca_file))
        client = GraphClient(
            token_provider=StaticTokenProvider("t"), root=f"{site.server.url}/v1.0", network=network
        )
        async with client:
            with pytest.raises(GraphError) as caught:
                await client.get_json("probe")
        config = AuthConfig(
            client_id=CLIENT_ID,
            cache_path=tmp_path / "cache" / "token_cache.json",
            allow_plaintext_cache=True,
            network=network,
        )
        out = io.StringIO()
        assert commands.login(config, method="device-code", stream=out) == 1
        refused = list(proxy.refused)
    assert f"the proxy {proxy.url} did not open a connection" in caught.value.message
    assert "--proxy" in (caught.value.hint or "")
    assert f"the proxy {proxy.url} did not open a connection to the sign-in service" in (
        out.getvalue()
    )
    assert len(refused) >= 2 and site.server.requests == []


async def test_an_unreachable_proxy_is_named(site: Site) -> None:
    with ConnectProxy(("127.0.0.1", site.server.port)) as gone:
        address = gone.url  # closed when the block ends: nothing listens there any more
    network = settings({}, proxy=address, ca_file=str(site.certificate.ca_file))
    client = GraphClient(
        token_provider=StaticTokenProvider("t"), root=f"{site.server.url}/v1.0", network=network
    )
    async with client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("probe")
    assert f"could not connect through the proxy {address}" in caught.value.message
    assert "--proxy" in (caught.value.hint or "")
    assert site.server.requests == []
