"""``result_bytes``: a list stops early, at the limit, and hands out a cursor for the rest."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mfconnector.auth import StaticTokenProvider
from mfconnector.graph.client import GraphClient
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.tools.base import ToolContext, wire_bytes
from mfconnector.tools.mail import mail_list
from tests.support.harness import client_context

MESSAGES = [
    {
        "id": f"AAMkAGI2message{index:04d}=",
        "subject": "Quarterly numbers 四半期の数字",
        "receivedDateTime": f"2026-03-{index + 1:02d}T10:00:00Z",
        "isRead": False,
    }
    for index in range(10)
]


def fixture_file() -> bytes:
    entry = {
        "request": {"method": "GET", "path": "/me/mailFolders/inbox/messages"},
        "response": {"json": {"value": MESSAGES}},
    }
    return json.dumps({"responses": [entry]}).encode()


FULL = {"detail": "full"}
"""Every neutral field of each item (compact rows cost less)."""


@asynccontextmanager
async def context(limits: Limits) -> AsyncIterator[ToolContext]:
    tokens = StaticTokenProvider("t")
    client = GraphClient(
        token_provider=tokens,
        limits=limits,
        transport=FixtureTransport(parse_fixtures(fixture_file())),
    )

    try:
        yield client_context(client, limits, tokens=tokens, time_zone="UTC")
    finally:
        await client.aclose()


async def item_bytes() -> int:
    """What one listed item costs as sent: its structured copy and its text copy, each with
    the comma after it (``wire_bytes`` counts the text copy's two JSON-string quotes, the
    same two bytes). All ten are the same size, so ``result_bytes`` of n holds exactly n."""
    async with context(DEFAULT_LIMITS) as ctx:
        listed = await mail_list(ctx, FULL)
    sizes = {wire_bytes(item) for item in listed["messages"]}
    assert len(sizes) == 1
    return sizes.pop()


@pytest.mark.parametrize(("extra", "shown"), [(-1, 2), (0, 3), (1, 3)])
async def test_a_list_stops_at_the_result_size_limit(extra: int, shown: int) -> None:
    budget = 3 * await item_bytes() + extra
    limits = dataclasses.replace(DEFAULT_LIMITS, result_bytes=budget)
    async with context(limits) as ctx:
        first = await mail_list(ctx, FULL)
        rest = await mail_list(ctx, {**FULL, "cursor": first["skipped"]["items"]["cursor"]})
    assert len(first["messages"]) == shown
    assert first["incomplete"] is True
    assert first["skipped"]["items"]["why"] == "the result size limit"
    assert first["skipped"]["items"]["count"] == len(MESSAGES) - shown
    assert rest["messages"][0]["id"].endswith("." + MESSAGES[shown]["id"])


async def test_one_item_is_always_shown_even_past_the_limit() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, result_bytes=1)
    async with context(limits) as ctx:
        first = await mail_list(ctx, FULL)
    assert len(first["messages"]) == 1
    assert first["skipped"]["items"]["count"] == len(MESSAGES) - 1


async def test_everything_fits_under_the_default_limit() -> None:
    async with context(DEFAULT_LIMITS) as ctx:
        result: dict[str, Any] = await mail_list(ctx, FULL)
    assert len(result["messages"]) == len(MESSAGES)
    assert "incomplete" not in result and "skipped" not in result


async def test_quotes_and_cjk_are_counted_as_they_are_sent() -> None:
    """A reply whose strings escape badly (quotes, CJK) still fits: fewer items, a cursor."""
    heavy = [
        {"id": f"AAMkAGI2heavy{index:04d}=", "subject": '"' * 1000, "bodyPreview": "日" * 1000}
        for index in range(50)
    ]
    entry = {
        "request": {"method": "GET", "path": "/me/mailFolders/inbox/messages"},
        "response": {"json": {"value": heavy}},
    }
    fixtures = parse_fixtures(json.dumps({"responses": [entry]}).encode())
    tokens = StaticTokenProvider("t")
    limits = dataclasses.replace(DEFAULT_LIMITS, result_bytes=100_000)
    async with GraphClient(token_provider=tokens, transport=FixtureTransport(fixtures)) as client:
        result = await mail_list(
            client_context(client, limits, tokens=tokens, time_zone="UTC"), FULL
        )
    shown = len(result["messages"])
    assert 0 < shown < 50
    assert wire_bytes(result["messages"]) <= limits.result_bytes
    assert result["skipped"]["items"]["count"] == 50 - shown
