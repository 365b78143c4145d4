"""Properties of issue 10's reads, for any input hypothesis can think of.

- Compact loses nothing: for any message, every field of the full view is carried by the
  compact row or named in ``omitted`` (the same shaping functions the tools run).
- A batch never exceeds ``max_response_bytes`` as sent, and every requested id comes back
  exactly once with exactly one status (the real server over a loopback Graph).
- A cursor issued for one mailbox or drive is refused for any other, before any request.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mfconnector.graph.mail_model import summary_of
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.refs import account_tag
from mfconnector.shaping import Skipped
from mfconnector.timezones import UTC_ZONE
from mfconnector.tools.mail_view import (
    COMPACT_LIST_OMITS,
    Bounds,
    full_summary,
    message_row,
    omitted_record,
    table_columns,
)
from tests.support.harness import ref, rows
from tests.support.loopback import LoopbackServer, Reply
from tests.tools.test_reads_loopback import (
    assert_compact_loses_nothing,
    bodied,
    long_id,
    segment,
    serve_messages,
)
from tests.tools.test_tools_loopback import graph_collection, tools_on

LIMITS = DEFAULT_LIMITS
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)
person = st.fixed_dictionaries(
    {},
    optional={
        "emailAddress": st.fixed_dictionaries(
            {}, optional={"name": text, "address": st.emails().map(str)}
        )
    },
)
flag = st.fixed_dictionaries(
    {"flagStatus": st.sampled_from(["notFlagged", "flagged", "complete"])},
    optional={
        "dueDateTime": st.just({"dateTime": "2026-03-09T00:00:00", "timeZone": "UTC"}),
        "startDateTime": st.just({"dateTime": "2026-03-06T00:00:00", "timeZone": "UTC"}),
    },
)
graph_message = st.fixed_dictionaries(
    {"id": st.integers(0, 10_000).map(lambda n: long_id("message", n))},
    optional={
        "subject": text,
        "from": person,
        "toRecipients": st.lists(person, max_size=3),
        "receivedDateTime": st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2099, 1, 1)
        ).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
        "isRead": st.booleans(),
        "importance": st.sampled_from(["low", "normal", "high"]),
        "hasAttachments": st.booleans(),
        "flag": flag,
        "categories": st.lists(st.sampled_from(["Budget", "Launch", "Red"]), max_size=2),
        "conversationId": st.just(long_id("conversation", 1)),
        "parentFolderId": st.just(long_id("folder", 1)),
        "bodyPreview": text,
    },
)


@pytest.mark.slow
@given(st.lists(graph_message, min_size=1, max_size=5))
def test_every_full_field_is_in_compact_or_named_as_left_out(
    messages: list[dict[str, Any]],
) -> None:
    """Through the functions the backend and the tools run: Graph -> model -> both views."""
    summaries = [summary_of(m, account_tag("graph", "default")) for m in messages]
    bounds = Bounds(LIMITS, Skipped(DEFAULT_LIMITS.skipped_paths_listed))
    full = {"messages": [full_summary(s, UTC_ZONE, bounds, "m") for s in summaries]}
    columns = table_columns(summaries, spans_folders=False)
    compact: dict[str, Any] = {
        "columns": columns,
        "messages": [
            message_row(
                s,
                UTC_ZONE,
                bounds,
                "m",
                subject_chars=LIMITS.compact_subject_chars,
                columns=columns,
            )
            for s in summaries
        ],
    }
    omitted = omitted_record(COMPACT_LIST_OMITS, summaries)
    if omitted:
        compact["omitted"] = omitted
    assert_compact_loses_nothing(full, compact)


@pytest.mark.slow
@SETTINGS
@given(
    budget=st.integers(LIMITS.batch_response_bytes_min, LIMITS.batch_response_bytes_max),
    sizes=st.lists(st.integers(0, 14_000), min_size=1, max_size=LIMITS.batch_read_ids),
    failing=st.sets(st.integers(0, LIMITS.batch_read_ids - 1), max_size=3),
)
async def test_a_batch_never_exceeds_its_budget_and_answers_every_id_once(
    budget: int, sizes: list[int], failing: set[int]
) -> None:
    docs = [bodied(index, size) for index, size in enumerate(sizes)]
    natives = [doc["id"] for doc in docs]
    ids = [ref(native) for native in natives]
    with LoopbackServer() as graph:
        serve_messages(graph, [d for i, d in enumerate(docs) if i not in failing])
        for index in failing & set(range(len(docs))):
            graph.route(
                "GET",
                f"/v1.0/me/messages/{segment(natives[index])}",
                Reply.json({"error": {"code": "ErrorItemNotFound", "message": "gone"}}, 404),
            )
        async with tools_on(graph) as tools:
            result = await tools.call(
                "mail_read", {"message_ids": ids, "max_response_bytes": budget}
            )
    assert len(json.dumps(result).encode()) <= budget, "the result as sent"
    if "structuredContent" not in result:  # the item list alone cannot fit: refused
        assert "max_response_bytes" in result["content"][0]["text"]
        return
    data = result["structuredContent"]
    assert [item["id"] for item in data["items"]] == ids
    for index, item in enumerate(data["items"]):
        assert item["status"] in ("ok", "error", "not_returned", "not_read")
        if item["status"] == "ok":
            assert index not in failing
        if item["status"] == "error":
            assert index in failing and item["error"]["provider_code"] == "ErrorItemNotFound"
    if data["items"][0]["status"] not in ("ok", "error"):  # not even one message fits
        assert data["next_index"] == 0
        assert "raise max_response_bytes" in data["skipped"]["items"]["how"]
    if "next_index" in data:
        statuses = [item["status"] for item in data["items"]]
        assert all(s in ("ok", "error") for s in statuses[: data["next_index"]])
        assert all(s in ("not_returned", "not_read") for s in statuses[data["next_index"] :])


PLACES = ["me", "support@contoso.com", "hr@contoso.com"]
DRIVES = ["me", "b!drive-one-0123456789", "b!drive-two-0123456789"]


def mailbox_arguments(place: str) -> dict[str, Any]:
    return {} if place == "me" else {"mailbox": place}


def drive_arguments(place: str) -> dict[str, Any]:
    return {} if place == "me" else {"drive_id": place}


@pytest.mark.slow
@SETTINGS
@given(
    issued=st.sampled_from(range(3)),
    used=st.sampled_from(range(3)),
    drives=st.booleans(),
    tool=st.sampled_from(["list", "search"]),
)
async def test_a_cursor_works_only_where_it_was_issued(
    issued: int, used: int, drives: bool, tool: str
) -> None:
    with LoopbackServer() as graph:
        if drives:
            name = "files_list" if tool == "list" else "files_search"
            arguments = drive_arguments
            suffix = "/root/children" if tool == "list" else "/root/search(q='x')"
            places = DRIVES
            key = "items"
            items = [{"id": f"01ITEM{i:04d}", "name": f"f{i}"} for i in range(60)]
            for place in DRIVES:
                base = "/v1.0/me/drive" if place == "me" else f"/v1.0/drives/{place}"
                graph_collection(graph, base + suffix, items)
        else:
            name = "mail_list" if tool == "list" else "mail_search"
            arguments = mailbox_arguments
            suffix = "/mailFolders/inbox/messages" if tool == "list" else "/messages"
            places = PLACES
            key = "messages"
            items = [{"id": long_id("message", i), "subject": "s"} for i in range(60)]
            for place in PLACES:
                base = "/v1.0/me" if place == "me" else f"/v1.0/users/{place}"
                graph_collection(graph, base + suffix, items)
        extra = {"query": "x"} if tool == "search" else {}
        async with tools_on(graph, all_files=True) as tools:
            first = await tools.data(name, {**extra, **arguments(places[issued])})
            cursor = first["skipped"]["items"]["cursor"]
            before = len(graph.requests)
            result = await tools.call(name, {**extra, "cursor": cursor, **arguments(places[used])})
        if issued == used:
            assert result["isError"] is False
            assert len(rows(result["structuredContent"], key)) == 10
            assert len(graph.requests) == before + 1
        else:
            assert result["isError"] is True and "structuredContent" not in result
            assert "cursor" in result["content"][0]["text"]
            assert len(graph.requests) == before, "nothing is sent for a foreign cursor"
