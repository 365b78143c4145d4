"""Content a hostile sender controls (mail bodies, Graph error text) cannot stall or crash
the server: every pass over it is linear, and malformed markup still reads as text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from harness import client_context, open_session, request

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.graph.errors import bearer_challenge, clean_text
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.shaping import Skipped, redact_text, strip_secrets
from mfconnector.textconv import html_to_text

# Each of these took from seconds to minutes with the quadratic versions (a 2 MB body is
# allowed); a generous bound catches a return of that without timing anything finely.
NO_STALL_SECONDS = 30
HOSTILE_HTML = {
    "unclosed tags": "<a" * 300_000,
    "unclosed comments": "<!--" * 150_000,
    "bad marked section": "<p>hello <![ world</p>" * 20_000,
    "unclosed quotes": '<a b="' * 100_000,
    "unclosed CDATA": "<![CDATA[>" * 190_000,
    "conditional sections": "<![if x>" * 240_000,
}
HOSTILE_TEXT = "a" * 500_000 + " see http://example.com/x"


@pytest.mark.parametrize("name", list(HOSTILE_HTML))
def test_hostile_html_converts_without_error(name: str) -> None:
    text = html_to_text(HOSTILE_HTML[name])
    assert isinstance(text, str)


def test_malformed_markup_keeps_its_words() -> None:
    # A declaration that is not a doctype is a bogus comment up to the next ">" (HTML5).
    assert html_to_text("<p>hello <![ world</p>") == "hello"
    assert html_to_text("<p>a</p><![if !supportLists]>- <![endif]>item") == "a\n- item"
    assert html_to_text("<![CDATA[ a < b ]]>shown") == "shown"
    assert html_to_text("<b>x</b> &amp; <a<b>y") == "x & <ay"
    assert html_to_text("<!-- hidden --><p>shown</p><script>evil()</script>") == "shown"


def test_graph_error_text_and_challenges_are_cut_before_any_pattern_runs() -> None:
    assert len(clean_text("x" * 2_000_000)) <= 500
    assert clean_text("see https://host/a?tempauth=SECRET") == "see https://host/a"
    assert bearer_challenge({"www-authenticate": "a" * 100_000}) == {}
    assert bearer_challenge({"www-authenticate": 'Bearer error="insufficient_claims"'}) == {
        "error": "insufficient_claims"
    }


def test_redaction_handles_long_runs_and_encoded_links() -> None:
    redacted, count = redact_text(HOSTILE_TEXT + " https://h/x?tempauth=S")
    assert count == 1 and "tempauth" not in redacted
    encoded = "link: https%3A%2F%2Fcontoso.sharepoint.com%2Fa%3Ftempauth%3DSECRET"
    skipped = Skipped()
    assert strip_secrets({"subject": encoded}, skipped, "m") == {
        "subject": "link: [pre-authenticated link removed]"
    }
    assert skipped.removed == ["m.subject"]


def message(body: dict[str, str]) -> dict[str, Any]:
    return {"id": "AAMkAGI2hostile0001=", "subject": "hi", "hasAttachments": False, "body": body}


@asynccontextmanager
async def session_serving(doc: dict[str, Any]) -> AsyncIterator[Any]:
    entry = {
        "request": {"method": "GET", "path": "/me/messages/AAMkAGI2hostile0001="},
        "response": {"json": doc},
    }
    fixtures = parse_fixtures(json.dumps({"responses": [entry]}).encode())
    tokens = StaticTokenProvider("t")
    client = GraphClient(token_provider=tokens, transport=FixtureTransport(fixtures))
    async with client, open_session(context=client_context(client, tokens=tokens)) as session:
        yield session


@pytest.mark.parametrize(
    "body",
    [
        {"contentType": "html", "content": HOSTILE_HTML["unclosed tags"]},
        {"contentType": "text", "content": HOSTILE_TEXT},
    ],
    ids=["html", "text"],
)
async def test_a_hostile_body_is_read_and_other_requests_are_served(body: dict[str, str]) -> None:
    read = request(
        1, "tools/call", {"name": "mail_read", "arguments": {"message_id": message(body)["id"]}}
    )
    with trio.fail_after(NO_STALL_SECONDS):
        async with session_serving(message(body)) as session:
            await session.send(read)
            await session.send(request(2, "server/discover"))
            replies = {
                reply["id"]: reply
                for reply in [await session.receive(NO_STALL_SECONDS) for _ in range(2)]
            }
    assert "supportedVersions" in replies[2]["result"]
    result = replies[1]["result"]
    assert result["isError"] is True  # clipped at 10,000 characters: incomplete
    assert result["structuredContent"]["skipped"]["text"]["nextOffset"] == DEFAULT_LIMITS.body_chars


@pytest.mark.parametrize(
    "text",
    [
        "body https%3A%2F%2Fcontoso.sharepoint.com%2Fd.aspx%3FId%3D1%26tempauth%3DSECRET end",
        "see https://h/x?x='a'&tempauth=SECRET ok",
        "go https://nam.safelinks.protection.outlook.com/?url=https%3A%2F%2Fh%2Fa%3Ftempauth%3DSECRET&d=x",
        "token: access_token=SECRET;",
    ],
)
def test_credentials_in_body_text_are_removed_however_they_are_written(text: str) -> None:
    redacted, count = redact_text(text)
    assert count >= 1 and "SECRET" not in redacted
