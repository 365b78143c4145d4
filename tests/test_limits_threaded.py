"""Every reader of a limit takes the limits its server was built with, never ``DEFAULT_LIMITS``.

Each behaviour test builds the real component (the Graph client against a loopback
server, the sign-in configuration, the fixture loader, a tool call through a session)
with one limit made small by ``dataclasses.replace`` and checks the small value holds at
L and L+1: a reader that went back to the default would let L+1 through. The static check
keeps it so: outside ``limits.py`` ``DEFAULT_LIMITS`` may appear only on the lines of
``ALLOWED``, each with the reason it is not a read of a running server's limit.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import gzip
import json
import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mfconnector.auth import StaticTokenProvider
from mfconnector.auth.cache import open_token_store
from mfconnector.auth.config import AuthConfig
from mfconnector.auth.pem import client_credential
from mfconnector.entry.signin import sign_in_config
from mfconnector.errors import AuthError, GraphError, GraphThrottledError
from mfconnector.graph.client import GraphClient
from mfconnector.graph.fixtures import FixtureError, load_fixtures
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.net.capped_body import Inflater
from mfconnector.shaping import Skipped, strip_secrets
from mfconnector.writes.gates import Gates
from tests.support.app_certs import write_app_certificate
from tests.support.loopback import LoopbackServer, Reply
from tests.support.tls_certs import make_self_signed

SOURCE = Path(__file__).resolve().parent.parent / "mfconnector"


def small(**values: Any) -> Limits:
    return dataclasses.replace(DEFAULT_LIMITS, **values)


# --- the static check ---------------------------------------------------------------------

ALLOWED = {
    ("jsonrpc.py", "integer_digits: int = DEFAULT_LIMITS.request_integer_digits,"): (
        "a pure parser also used standalone; session.py and hosted/http_app.py pass theirs"
    ),
    ("textconv.py", "max_tags: int = DEFAULT_LIMITS.html_tags,"): (
        "a pure converter; every reader of a body passes limits.html_tags"
    ),
    ("tools/cursors.py", "max_chars: int = DEFAULT_LIMITS.cursor_chars,"): (
        "ToolContext and the hosted wiring pass limits.cursor_chars"
    ),
    ("tools/validation.py", "listed: int = DEFAULT_LIMITS.argument_errors_listed,"): (
        "a pure helper; server.py passes its context's argument_errors_listed"
    ),
    (
        "graph/fixture_schema.py",
        "FIXTURE_SCHEMA: dict[str, Any] = fixture_schema(DEFAULT_LIMITS)",
    ): ("the published file format; the loader checks with fixture_schema(its limits)"),
    (
        "documents/worker.py",
        'limits = dataclasses.replace(DEFAULT_LIMITS, **job.get("limits", {}))',
    ): "the worker process gets every document_/archive_/html_ limit it reads in the job",
    (
        "documents/worker.py",
        "memory = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_LIMITS.document_memory_bytes",
    ): "the runner always passes its memory limit; the default is for a worker run by hand",
}
"""Lines naming DEFAULT_LIMITS other than imports and ``limits: Limits = DEFAULT_LIMITS``
defaults (the roots and standalone entry points a server passes its limits to)."""

_DEFAULT_PARAMETER = re.compile(r"\blimits: Limits = DEFAULT_LIMITS\b")


def direct_reads() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(SOURCE.rglob("*.py")):
        name = path.relative_to(SOURCE).as_posix()
        if name == "limits.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.strip()
            if "DEFAULT_LIMITS" not in code or code.startswith(("from ", "import ", "#")):
                continue
            if _DEFAULT_PARAMETER.search(code):
                continue
            found.add((name, code))
    return found


def test_no_reader_takes_default_limits_outside_the_allow_list() -> None:
    unexpected = sorted(direct_reads() - set(ALLOWED))
    assert unexpected == [], (
        "these read DEFAULT_LIMITS directly: take the limits the server was given "
        f"(or add the line to ALLOWED with the reason it is no read): {unexpected}"
    )


def test_the_allow_list_holds_only_lines_that_exist() -> None:
    assert sorted(set(ALLOWED) - direct_reads()) == []


# --- Graph answers -------------------------------------------------------------------------


@pytest.fixture
def graph() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def client_of(server: LoopbackServer, limits: Limits) -> GraphClient:
    return GraphClient(
        token_provider=StaticTokenProvider("t"), limits=limits, root=f"{server.url}/v1.0"
    )


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_graph_error_message_chars(graph: LoopbackServer, delta: int) -> None:
    limit = 40
    text = "m" * (limit + delta)
    graph.route(
        "GET", "/v1.0/me", Reply.json({"error": {"code": "BadThing", "message": text}}, 400)
    )
    async with client_of(graph, small(graph_error_message_chars=limit)) as client:
        with pytest.raises(GraphError) as caught:
            await client.get_json("me")
    shown = caught.value.message.removeprefix("Microsoft Graph answered 400 BadThing: ")
    assert shown == (text if delta <= 0 else "m" * (limit - 1) + "…")


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_retry_after_reported_max_seconds(graph: LoopbackServer, delta: int) -> None:
    limit = 50.0
    graph.route("GET", "/v1.0/me", Reply(429, (("Retry-After", str(limit + delta)),)))
    limits = small(retry_after_reported_max_seconds=limit, graph_retries=0)
    async with client_of(graph, limits) as client:
        with pytest.raises(GraphThrottledError) as caught:
            await client.get_json("me")
    assert caught.value.retry_after_seconds == min(limit, limit + delta)
    assert f"retry in {int(min(limit, limit + delta))} s" in caught.value.message


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_challenge_header_chars(graph: LoopbackServer, delta: int) -> None:
    """A token-shaped refusal (``error="invalid_token"``) earns one refresh only when the
    challenge header, cut to ``challenge_header_chars``, still says so."""
    limit = 120
    tail = ', error="invalid_token"'
    head = 'Bearer realm="'
    header = head + "r" * (limit + delta - len(head) - len(tail) - 1) + '"' + tail
    assert len(header) == limit + delta
    refusal = {"error": {"code": "AccessDenied", "message": "no"}}
    graph.route("GET", "/v1.0/me", Reply.json(refusal, 401, (("WWW-Authenticate", header),)))
    async with client_of(graph, small(challenge_header_chars=limit)) as client:
        with pytest.raises(GraphError):
            await client.get_json("me")
    graph.close()
    assert len(graph.requests) == (2 if delta <= 0 else 1)


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_claims_challenge_chars(graph: LoopbackServer, delta: int) -> None:
    """Conditional Access's claims reach the token provider only within the limit."""
    claims = json.dumps({"access_token": {"acrs": {"essential": True, "value": "c1"}}})
    encoded = base64.b64encode(claims.encode()).decode()
    header = f'Bearer error="insufficient_claims", claims="{encoded}"'
    refusal = {"error": {"code": "AccessDenied", "message": "no"}}
    graph.route("GET", "/v1.0/me", Reply.json(refusal, 403, (("WWW-Authenticate", header),)))
    asked: list[str | None] = []

    class Tokens(StaticTokenProvider):
        async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
            asked.append(claims)
            return "t"

    limits = small(claims_challenge_chars=len(encoded) - delta)
    client = GraphClient(token_provider=Tokens("t"), limits=limits, root=f"{graph.url}/v1.0")
    async with client:
        with pytest.raises(GraphError):
            await client.get_json("me")
    assert asked == [None, claims if delta <= 0 else None]


@pytest.mark.parametrize("chars", [4, 11, 12])
async def test_tls_reason_chars(tmp_path: Path, chars: int) -> None:
    certificate = make_self_signed(tmp_path / "self", ["127.0.0.1"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert_file, certificate.key_file)
    with LoopbackServer(tls=context) as server:
        server.route("GET", "/v1.0/me", Reply.json({}))
        async with client_of(server, small(tls_reason_chars=chars)) as client:
            with pytest.raises(GraphError) as caught:
                await client.get_json("me")
    reason = "self-signed certificate"
    assert caught.value.message.endswith(f"was not accepted: {reason[:chars]}")


@pytest.mark.parametrize("step", [1_000, 4_096])
def test_graph_inflate_step_bytes(step: int) -> None:
    """A gzip answer is inflated in pieces of at most the step (the reader's own
    ``Inflater``, as ``read_capped`` and the download spooler make it from their limits)."""
    original = bytes(range(256)) * 400
    inflater = Inflater(
        "gzip", step_bytes=small(graph_inflate_step_bytes=step).graph_inflate_step_bytes
    )
    pieces = inflater.feed(gzip.compress(original), room=len(original))
    assert b"".join(pieces) == original and inflater.finish()
    assert max(len(piece) for piece in pieces) == step


# --- sign-in files --------------------------------------------------------------------------


@pytest.mark.usefixtures("no_keyring")
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_token_cache_bytes(tmp_path: Path, delta: int) -> None:
    """The cache file, through the sign-in configuration the server builds."""
    limit = 2_000
    cache = tmp_path / "cache" / "token_cache.json"
    cache.parent.mkdir(mode=0o700)
    data = '{"AccessToken": {}, "pad": "' + "x" * (limit + delta - 30) + '"}'
    assert len(data) == limit + delta
    cache.write_text(data)
    cache.chmod(0o600)
    args = argparse.Namespace(auth_cache_path=str(cache), auth_allow_plaintext_cache=True)
    config = sign_in_config(args, {}, gates=Gates(), limits=small(token_cache_bytes=limit))
    persistence = open_token_store(config).persistence
    if delta <= 0:
        assert persistence.read()[0] == data
    else:
        with pytest.raises(AuthError, match="too large to be a token cache"):
            persistence.read()


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_cert_file_bytes(tmp_path: Path, delta: int) -> None:
    path = tmp_path / "app.pem"
    write_app_certificate(path)
    size = path.stat().st_size
    config = AuthConfig(
        client_id="c",
        tenant="t.example",
        app_only=True,
        user="u",
        client_cert_path=path,
        limits=small(cert_file_bytes=size - delta),
    )
    if delta <= 0:
        assert "private_key" in client_credential(config)
    else:
        with pytest.raises(AuthError, match=f"larger than the {size - delta:,}-byte limit"):
            client_credential(config)


# --- fixture files --------------------------------------------------------------------------


def fixture_file(tmp_path: Path, response: dict[str, Any]) -> Path:
    path = tmp_path / "fixtures.json"
    entry = {"request": {"method": "GET", "path": "/me"}, "response": response}
    path.write_text(json.dumps({"responses": [entry]}))
    return path


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_fixture_delay_max_ms(tmp_path: Path, delta: int) -> None:
    limit = 500
    path = fixture_file(tmp_path, {"status": 200, "json": {}, "delayMs": limit + delta})
    limits = small(fixture_delay_max_ms=limit)
    if delta <= 0:
        assert load_fixtures(path, limits=limits).entries[0].response.delay_ms == limit + delta
    else:
        with pytest.raises(FixtureError, match=f"an integer 0-{limit}"):
            load_fixtures(path, limits=limits)


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_fixture_json_depth(tmp_path: Path, delta: int) -> None:
    limit = 5
    body: Any = {}
    for _ in range(limit + delta):
        body = {"a": body}
    path = fixture_file(tmp_path, {"status": 200, "json": body})
    limits = small(fixture_json_depth=limit)
    if delta <= 0:
        load_fixtures(path, limits=limits)
    else:
        with pytest.raises(FixtureError, match=f"nested deeper than {limit} levels"):
            load_fixtures(path, limits=limits)


# --- results ------------------------------------------------------------------------------


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_skipped_paths_listed(delta: int) -> None:
    """Download URLs are never returned; a result names at most ``skipped_paths_listed`` of
    them (each tool makes its ``Skipped`` from its context's limits: the field is required)."""
    limit = 3
    items = [
        {"id": f"item-{n}", "@microsoft.graph.downloadUrl": f"https://dl.example/{n}?tempauth=S"}
        for n in range(limit + delta)
    ]
    skipped = Skipped(small(skipped_paths_listed=limit).skipped_paths_listed)
    kept = strip_secrets({"value": items}, skipped, "items")
    result = skipped.apply({"items": kept})
    removed = result["skipped"]["removed"]
    assert removed["count"] == limit + delta
    assert removed["paths"] == [
        f"items.value[{n}].@microsoft.graph.downloadUrl" for n in range(min(limit, limit + delta))
    ]
    assert "tempauth" not in json.dumps(result)
