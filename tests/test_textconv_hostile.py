"""Content a hostile sender controls (mail bodies, Graph error text) cannot stall or crash
the server: every pass over it is linear, and malformed markup still reads as text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.graph.errors import bearer_challenge, clean_text
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.shaping import Skipped, redact_text, strip_secrets
from mfconnector.textconv import html_to_text
from tests.support.harness import client_context, open_session, ref, request

# Each of these took from seconds to minutes with quadratic converters (a 2 MB body is
# allowed, and every HTML5 parser checks scope over the open elements at each tag); a
# generous bound catches a return of that without timing anything finely.
NO_STALL_SECONDS = 30
DEPTH = 256
HOSTILE_HTML: dict[str, tuple[str, str]] = {
    # name: (markup, the text a reader gets)
    "unclosed tags": ("<a" * 300_000, "<a" * 300_000),
    "unclosed comments": ("<!--" * 150_000, ""),
    "bad marked section": ("<p>hello <![ world</p>" * 20_000, "\n\n".join(["hello"] * 20_000)),
    "unclosed quotes": ('<a b="' * 100_000, '<a b="' * 100_000),
    "unclosed CDATA": ("<![CDATA[>" * 190_000, ""),
    "conditional sections": ("<![if x>" * 240_000, ""),
    "deep nesting": ("<div>" * 100_000 + "deep" + "</div>" * 100_000, "deep"),
    "1 MB of <": ("<" * 1_000_000, "<" * 1_000_000),
    "many attributes": ("<p " + 'a="1" ' * 150_000 + ">text</p>", "text"),
    "unclosed formatting": ("<b><i><u>x" * 50_000, "x" * 50_000),  # inline: no breaks
    "nested tables": ("<table><tr><td>" * 30_000 + "cell", "cell"),
    "deep, then wide": ("<div>" * DEPTH + "<div>x</div>" * 90_000, "\n".join(["x"] * 90_000)),
}

HOSTILE_TEXT = "a" * 500_000 + " see http://example.com/x"


@pytest.mark.parametrize("name", list(HOSTILE_HTML))
async def test_hostile_html_reads_as_its_text_without_stalling(name: str) -> None:
    markup, expected = HOSTILE_HTML[name]
    with trio.fail_after(NO_STALL_SECONDS):  # a hang guard, not a timing
        text = await trio.to_thread.run_sync(html_to_text, markup, abandon_on_cancel=True)
    assert text == expected


def test_malformed_markup_keeps_its_words() -> None:
    # Declarations that are not a doctype are bogus comments up to the next ">" (HTML5).
    assert html_to_text("<p>hello <![ world</p>") == "hello"
    assert html_to_text("<p>a</p><![if !supportLists]>- <![endif]>item") == "a\n\n- item"
    assert html_to_text("<![CDATA[ a < b ]]>shown") == "shown"
    assert html_to_text("<b>x</b> &amp; <a<b>y") == "x & y"  # "<a<b>" is one tag in HTML5
    assert html_to_text("<!-- hidden --><p>shown</p><script>evil()</script>") == "shown"
    assert html_to_text("a < b, c <= d") == "a < b, c <= d"


def test_links_lists_and_tables_stay_readable() -> None:
    markup = (
        '<p>Read <a href="https://contoso.com/plan?a=1&amp;b=2">the plan</a>, write to '
        '<a href="mailto:adele@contoso.com">adele@contoso.com</a> '
        '<a href="#top">(top)</a> <img src="cid:logo" alt="Contoso"></p>'
        "<ul><li>one</li><li>two</li></ul>"
        "<table><tr><th>Region</th><th>Q1</th></tr><tr><td>North</td><td>1,200</td></tr></table>"
        "line<br>break"
    )
    assert html_to_text(markup) == (
        "Read the plan (https://contoso.com/plan?a=1&b=2), write to adele@contoso.com "
        "(top) [Contoso]\n\n- one\n- two\n\nRegion | Q1\nNorth | 1,200\n\nline\nbreak"
    )


def test_nesting_costs_nothing_and_keeps_the_layout() -> None:
    """0.2 read markup nested past 256 levels as plain words; without a tree, depth is free."""
    link = '<a href="https://contoso.com/x">link</a>'
    markup = "<div>" * 100_000 + link + "</div>" * 100_000
    assert html_to_text(markup) == "link (https://contoso.com/x)"


def test_credential_links_in_html_are_shown_then_cut_by_redaction() -> None:
    """Link targets now reach the text, so a pre-authenticated one must be cut there."""
    markup = '<a href="https://contoso.sharepoint.com/d?tempauth=SECRET">the file</a>'
    text, count = redact_text(html_to_text(markup))
    assert count == 1 and "SECRET" not in text and text.startswith("the file (")


def test_graph_error_text_and_challenges_are_cut_before_any_pattern_runs() -> None:
    assert len(clean_text("x" * 2_000_000, DEFAULT_LIMITS.graph_error_message_chars)) <= 500
    assert (
        clean_text("see https://host/a?tempauth=SECRET", DEFAULT_LIMITS.graph_error_message_chars)
        == "see https://host/a"
    )
    assert bearer_challenge({"www-authenticate": "a" * 100_000}, limits=DEFAULT_LIMITS) == {}
    assert bearer_challenge(
        {"www-authenticate": 'Bearer error="insufficient_claims"'}, limits=DEFAULT_LIMITS
    ) == {"error": "insufficient_claims"}


@pytest.mark.slow
def test_redaction_handles_long_runs_and_encoded_links() -> None:
    redacted, count = redact_text(HOSTILE_TEXT + " https://h/x?tempauth=S")
    assert count == 1 and "tempauth" not in redacted
    encoded = "link: https%3A%2F%2Fcontoso.sharepoint.com%2Fa%3Ftempauth%3DSECRET"
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
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


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        {"contentType": "html", "content": HOSTILE_HTML["unclosed tags"][0]},
        {"contentType": "text", "content": HOSTILE_TEXT},
    ],
    ids=["html", "text"],
)
async def test_a_hostile_body_is_read_and_other_requests_are_served(body: dict[str, str]) -> None:
    read = request(
        1,
        "tools/call",
        {"name": "mail_read", "arguments": {"message_id": ref(message(body)["id"])}},
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
    assert (
        result["structuredContent"]["skipped"]["text"]["next_offset"] == DEFAULT_LIMITS.body_chars
    )


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
