"""Issue 10's reads against a real HTTP stand-in for Graph on 127.0.0.1.

Compact and full views, threads, batch reads under a byte budget, triage, attachments, the
mailbox's time zone, folders by name or path, shared mailboxes and other drives. Ids have
the length of real Outlook immutable ids (about 150 characters), so sizes here predict a
real mailbox. The server stack is the real one (Runtime + McpServer, modern era, results
validated against the MCP schema); the Graph client is the real GraphClient over sockets.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote

import pytest

from mfconnector.limits import DEFAULT_LIMITS
from tests.support.harness import ref, rows
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.tools.test_tools_loopback import graph_collection, query_of, tools_on

LIMITS = DEFAULT_LIMITS
MIN_BUDGET = LIMITS.batch_response_bytes_min
MAX_BUDGET = LIMITS.batch_response_bytes_max


def long_id(kind: str, index: int) -> str:
    """An id shaped like an Outlook immutable id: 152 URL-safe base64 characters."""
    seed = hashlib.sha256(f"{kind}-{index}".encode()).digest() * 4
    return "AAMkAGI2" + base64.urlsafe_b64encode(seed)[:143].decode() + "="


def segment(value: str) -> str:
    """How the client writes an id into a path (the loopback records the raw target)."""
    return quote(value, safe="!$&'()*+,;=:@-._~")


INBOX_ID = long_id("folder", 0)
PROJECTS_ID = long_id("folder", 1)
CONTOSO_ID = long_id("folder", 2)
ARCHIVE_CONTOSO_ID = long_id("folder", 3)
ARCHIVE_ID = long_id("folder", 4)
CONVERSATION = long_id("conversation", 0)


def message(index: int, **extra: Any) -> dict[str, Any]:
    """A message as Graph lists it with every field the tools may select."""
    doc: dict[str, Any] = {
        "id": long_id("message", index),
        "subject": f"Quarterly budget review, part {index}",
        "from": {"emailAddress": {"name": "Megan Bowen", "address": "meganb@contoso.com"}},
        "toRecipients": [
            {"emailAddress": {"name": "Adele Vance", "address": "adelev@contoso.com"}}
        ],
        "receivedDateTime": f"2026-03-{1 + index % 28:02d}T09:30:00Z",
        "isRead": index % 3 != 0,
        "importance": ["normal", "high", "low"][index % 3],
        "hasAttachments": index % 4 == 0,
        "flag": {"flagStatus": ["notFlagged", "flagged", "complete"][index % 3]},
        "categories": ["Budget"] if index % 5 == 0 else [],
        "conversationId": CONVERSATION,
        "parentFolderId": INBOX_ID,
        "bodyPreview": "Hi Adele, here are the figures for the quarter.",
    }
    doc.update(extra)
    return doc


def select_view(server: LoopbackServer, path: str, items: list[dict[str, Any]]) -> None:
    """Serve ``items`` at ``path`` as Graph does: only the ``$select``ed fields."""

    def answer(recorded: RecordedRequest) -> Reply:
        fields = query_of(recorded).get("$select", "").split(",")
        top = int(query_of(recorded).get("$top", "10"))
        return Reply.json(
            {"value": [{k: v for k, v in i.items() if k in fields} for i in items][:top]}
        )

    server.route("GET", path, answer)


def text_bytes(result: dict[str, Any]) -> int:
    """What a client hands the model: the UTF-8 bytes of the text block."""
    return len(result["content"][0]["text"].encode("utf-8"))


# --- compact and full ------------------------------------------------------------------------


async def test_compact_is_a_table_that_names_what_it_leaves_out(graph: LoopbackServer) -> None:
    items = [message(i) for i in range(25)]
    select_view(graph, "/v1.0/me/mailFolders/inbox/messages", items)
    async with tools_on(graph) as tools:
        compact = await tools.call("mail_list", {"limit": 25})
        full = await tools.data("mail_list", {"limit": 25, "detail": "full"})
    data = compact["structuredContent"]
    assert data["columns"][:5] == ["id", "subject", "from", "received", "flags"]
    assert [row["id"] for row in rows(data)] == [ref(m["id"]) for m in items]
    assert data["omitted"] == {
        "fields": ["to", "thread", "folder", "preview", "change_token"],
        "get": 'detail: "full"',
    }
    assert data["time_zone"] == "UTC"
    compact_select = query_of(graph.requests[0])["$select"].split(",")
    assert not {"toRecipients", "bodyPreview", "conversationId"} & set(compact_select), (
        "compact asks Graph only for what it shows"
    )
    assert full["messages"] == [neutral(m) for m in items]
    assert "omitted" not in full
    assert text_bytes(compact) <= 8_000, "25 compact messages with real-length ids"


def neutral(doc: dict[str, Any]) -> dict[str, Any]:
    """A listed Graph message as ``detail: "full"`` shows it (in UTC, this module's zone)."""

    def person(value: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": value["emailAddress"].get("name"),
            "address": value["emailAddress"]["address"],
        }

    flag = {"flagged": "flagged", "complete": "done"}.get(doc["flag"]["flagStatus"], "none")
    return {
        "id": ref(doc["id"]),
        "subject": doc["subject"],
        "from": person(doc["from"]),
        "to": [person(p) for p in doc["toRecipients"]],
        "received": doc["receivedDateTime"].replace("Z", "+00:00"),
        "unread": doc["isRead"] is False,
        "flag": flag,
        "importance": doc["importance"],
        "has_attachments": doc["hasAttachments"],
        "categories": doc["categories"],
        "folder": ref(doc["parentFolderId"]),
        "thread": doc["conversationId"],
        "preview": doc["bodyPreview"],
        "change_token": doc.get("changeKey"),
    }


def full_field_is_in_compact(name: str, value: Any, row: dict[str, Any]) -> bool:
    """Whether the compact row carries full's ``name: value`` (under its compact form)."""
    flags = (row.get("flags") or "").split()
    if name == "id":
        return row["id"] == value
    if name == "subject":
        return row.get("subject") == value or (
            isinstance(value, str) and row.get("subject", "").rstrip("…") == value[:160]
        )
    if name == "from":
        return all(part in (row.get("from") or "") for part in value.values() if part)
    if name == "received":
        return row.get("received") == value[:16]
    if name == "unread":
        return ("unread" in flags) is value
    if name == "has_attachments":
        return ("attachments" in flags) is value
    if name == "importance":
        return value == "normal" or f"{value}-importance" in flags
    if name == "flag":
        shown = {"flagged": "flagged", "done": "done"}.get(value)
        return (shown in flags) if shown else not ({"flagged", "done"} & set(flags))
    if name == "categories":
        return row.get("categories", []) == value
    return False


def assert_compact_loses_nothing(full: dict[str, Any], compact: dict[str, Any]) -> None:
    omitted = set(compact.get("omitted", {}).get("fields", []))
    for full_row, row in zip(full["messages"], rows(compact), strict=True):
        for name, value in full_row.items():
            if name in omitted or value is None:  # None: the message has none to lose
                continue
            if name == "native":
                assert {f"native.{k}" for k in value} <= omitted, (value, omitted)
                continue
            assert full_field_is_in_compact(name, value, row), (name, value, row)


async def test_full_and_compact_of_the_same_page_lose_nothing(graph: LoopbackServer) -> None:
    items = [message(i) for i in range(12)]
    items[1]["flag"] = {
        "flagStatus": "flagged",
        "dueDateTime": {"dateTime": "2026-03-09T00:00:00", "timeZone": "UTC"},
    }
    items[2]["subject"] = "x" * 400
    select_view(graph, "/v1.0/me/mailFolders/inbox/messages", items)
    async with tools_on(graph) as tools:
        compact = await tools.data("mail_list", {})
        full = await tools.data("mail_list", {"detail": "full"})
    assert "native.flag_due" in compact["omitted"]["fields"]
    assert compact["omitted"]["subjects_cut"] == {"count": 1, "kept_chars": 160}
    assert_compact_loses_nothing(full, compact)


async def test_compact_read_drops_rare_headers_and_names_them(graph: LoopbackServer) -> None:
    doc = message(
        1,
        body={"contentType": "text", "content": "Hello"},
        sender={"emailAddress": {"address": "assistant@contoso.com"}},
        internetMessageId="<x@contoso.com>",
        webLink="https://outlook.office.com/owa/?ItemID=1",
    )
    path = f"/v1.0/me/messages/{segment(doc['id'])}"

    def answer(recorded: RecordedRequest) -> Reply:
        fields = query_of(recorded)["$select"].split(",")
        return Reply.json({k: v for k, v in doc.items() if k in fields})

    graph.route("GET", path, answer)
    async with tools_on(graph) as tools:
        compact = await tools.data("mail_read", {"message_id": ref(doc["id"])})
        full = await tools.data("mail_read", {"message_id": ref(doc["id"]), "detail": "full"})
    message_view = compact["message"]
    assert message_view["body"] == "Hello"
    assert message_view["to"] == ["Adele Vance <adelev@contoso.com>"]
    assert message_view["flags"] == "flagged high-importance"
    for dropped in ("on_behalf", "internet_message_id", "web_link", "thread"):
        assert dropped in compact["omitted"]["fields"]
        assert dropped not in message_view
    assert full["message"]["on_behalf"] == {"name": "", "address": "assistant@contoso.com"}
    assert full["message"]["internet_message_id"] == "<x@contoso.com>"
    assert full["message"]["body"] == {"text": "Hello", "total_chars": 5}


# --- threads -------------------------------------------------------------------------------


async def test_thread_of_lists_the_conversation_across_folders_oldest_first(
    graph: LoopbackServer,
) -> None:
    anchor = message(3)
    graph.route(
        "GET",
        f"/v1.0/me/messages/{segment(anchor['id'])}",
        Reply.json({"id": anchor["id"], "conversationId": CONVERSATION}),
    )
    thread = [message(i, parentFolderId=[INBOX_ID, ARCHIVE_ID][i % 2]) for i in range(51)]
    graph_collection(graph, "/v1.0/me/messages", thread)
    graph.route(
        "GET", f"/v1.0/me/mailFolders/{segment(INBOX_ID)}", Reply.json({"displayName": "Inbox"})
    )
    graph.route(
        "GET", f"/v1.0/me/mailFolders/{segment(ARCHIVE_ID)}", Reply.json({"displayName": "Archive"})
    )
    async with tools_on(graph) as tools:
        first = await tools.data("mail_list", {"thread_of": ref(anchor["id"])})
        rest = await tools.data("mail_list", {"cursor": first["skipped"]["items"]["cursor"]})
        again = await tools.data("mail_list", {"thread_of": ref(anchor["id"]), "limit": 2})
    listing = graph.requests_to("/v1.0/me/messages")[0]
    query = query_of(listing)
    assert query["$orderby"] == "receivedDateTime asc"
    assert query["$filter"] == (
        f"receivedDateTime ge 1900-01-01T00:00:00Z and conversationId eq '{CONVERSATION}'"
    )
    assert first["order"] == "oldest first"
    assert [r["folder"] for r in rows(first)][:2] == ["Inbox", "Archive"]
    assert [r["id"] for r in rows(first) + rows(rest)] == [ref(m["id"]) for m in thread]
    folder_lookups = [r for r in graph.requests if "/mailFolders/" in r.path]
    assert len(folder_lookups) == 2, "each folder's name is looked up once per process"
    assert len(rows(again)) == 2


async def test_thread_of_refuses_folder_and_filters_before_any_request(
    graph: LoopbackServer,
) -> None:
    async with tools_on(graph) as tools:
        error = await tools.error(
            "mail_list", {"thread_of": ref(long_id("m", 1)), "unread_only": True}
        )
    assert "unread_only" in error["message"]
    assert graph.requests == []


async def test_unique_body_asks_for_unique_body_and_returns_only_it(graph: LoopbackServer) -> None:
    doc = message(2, uniqueBody={"contentType": "text", "content": "Yes, Friday works."})
    path = f"/v1.0/me/messages/{segment(doc['id'])}"
    graph.route("GET", path, Reply.json({k: v for k, v in doc.items() if k != "hasAttachments"}))
    async with tools_on(graph) as tools:
        data = await tools.data("mail_read", {"message_id": ref(doc["id"]), "unique_body": True})
    selected = query_of(graph.requests[0])["$select"].split(",")
    assert "uniqueBody" in selected and "body" not in selected
    assert data["message"]["unique_body"] == "Yes, Friday works."
    assert "body" not in data["message"]


# --- batch read ------------------------------------------------------------------------------


class Concurrency:
    """Counts requests in flight at the loopback server (each held for a moment)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def hold(self, reply: Callable[[RecordedRequest], Reply]) -> Callable[[RecordedRequest], Reply]:
        def answer(recorded: RecordedRequest) -> Reply:
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            try:
                time.sleep(0.05)
                return reply(recorded)
            finally:
                with self.lock:
                    self.now -= 1

        return answer


def serve_messages(
    graph: LoopbackServer, docs: list[dict[str, Any]], concurrency: Concurrency | None = None
) -> None:
    for doc in docs:

        def reply(recorded: RecordedRequest, doc: dict[str, Any] = doc) -> Reply:
            fields = query_of(recorded)["$select"].split(",")
            return Reply.json({k: v for k, v in doc.items() if k in fields})

        source = concurrency.hold(reply) if concurrency else reply
        graph.route("GET", f"/v1.0/me/messages/{segment(doc['id'])}", source)


def bodied(index: int, chars: int) -> dict[str, Any]:
    return message(
        index,
        hasAttachments=False,
        body={"contentType": "text", "content": ("Budget line. " * (chars // 13 + 1))[:chars]},
    )


@pytest.mark.parametrize(
    ("budget", "count"),
    [
        (MIN_BUDGET, 3),
        (MIN_BUDGET + 1, 4),
        (16_384, 10),
        (LIMITS.batch_response_bytes_default, 10),
        (MAX_BUDGET, 10),
    ],
)
async def test_a_batch_never_exceeds_its_budget_and_names_every_id_once(
    graph: LoopbackServer, budget: int, count: int
) -> None:
    docs = [bodied(i, 3_000 * (1 + i % 3)) for i in range(count)]
    serve_messages(graph, docs)
    ids = [ref(d["id"]) for d in docs]
    async with tools_on(graph) as tools:
        reply_bytes: list[int] = []
        result = await tools.call("mail_read", {"message_ids": ids, "max_response_bytes": budget})
        reply_bytes.append(len(json.dumps(result).encode()))
        data = result["structuredContent"]
    assert [item["id"] for item in data["items"]] == ids
    statuses = [item["status"] for item in data["items"]]
    assert set(statuses) <= {"ok", "error", "not_returned", "not_read"}
    assert statuses[0] == "ok", "a batch always makes progress"
    assert data["response_bytes"] <= budget
    assert max(reply_bytes) <= budget
    if "next_index" in data:
        assert data["stop_reason"] == "response_limit"
        assert statuses[data["next_index"]] in ("not_returned", "not_read")
        assert all(s == "ok" for s in statuses[: data["next_index"]])
        assert all(s != "ok" for s in statuses[data["next_index"] :])
    else:
        assert statuses == ["ok"] * count


async def test_a_budget_too_small_for_the_item_list_is_refused_before_reading(
    graph: LoopbackServer,
) -> None:
    ids = [ref(long_id("message", i)) for i in range(10)]
    async with tools_on(graph) as tools:
        error = await tools.error(
            "mail_read", {"message_ids": ids, "max_response_bytes": MIN_BUDGET}
        )
    assert "max_response_bytes" in error["message"] and error["hint"]
    assert graph.requests == []


async def test_a_failing_message_is_its_own_error_and_the_batch_goes_on(
    graph: LoopbackServer,
) -> None:
    docs = [bodied(i, 200) for i in range(3)]
    serve_messages(graph, [docs[0], docs[2]])
    graph.route(
        "GET",
        f"/v1.0/me/messages/{segment(docs[1]['id'])}",
        Reply.json({"error": {"code": "ErrorItemNotFound", "message": "not found"}}, 404),
    )
    async with tools_on(graph) as tools:
        result = await tools.call("mail_read", {"message_ids": [ref(d["id"]) for d in docs]})
    data = result["structuredContent"]
    assert [i["status"] for i in data["items"]] == ["ok", "error", "ok"]
    assert data["items"][1]["error"]["provider_code"] == "ErrorItemNotFound"
    assert data["items"][2]["message"]["body"] == docs[2]["body"]["content"]
    assert result["isError"] is False and "next_index" not in data


async def test_a_batch_keeps_at_most_four_graph_requests_in_flight(graph: LoopbackServer) -> None:
    docs = [bodied(i, 100) for i in range(10)]
    concurrency = Concurrency()
    serve_messages(graph, docs, concurrency)
    async with tools_on(graph) as tools:
        data = await tools.data("mail_read", {"message_ids": [ref(d["id"]) for d in docs]})
    assert [i["status"] for i in data["items"]] == ["ok"] * 10
    assert 1 < concurrency.peak <= LIMITS.graph_concurrency


async def test_the_first_message_is_shrunk_to_fit_a_small_budget(graph: LoopbackServer) -> None:
    docs = [bodied(0, LIMITS.body_chars), bodied(1, 50)]
    serve_messages(graph, docs)
    async with tools_on(graph) as tools:
        data = await tools.data(
            "mail_read",
            {"message_ids": [ref(d["id"]) for d in docs], "max_response_bytes": MIN_BUDGET},
        )
    first = data["items"][0]
    assert first["status"] == "ok"
    assert 0 < len(first["message"]["body"]) < LIMITS.body_chars
    assert first["skipped"]["text"]["next_offset"] == len(first["message"]["body"])
    assert data["response_bytes"] <= MIN_BUDGET


@pytest.mark.parametrize(
    ("budget", "valid"),
    [
        (MIN_BUDGET - 1, False),
        (MIN_BUDGET, True),
        (MIN_BUDGET + 1, True),
        (MAX_BUDGET - 1, True),
        (MAX_BUDGET, True),
        (MAX_BUDGET + 1, False),
    ],
)
async def test_max_response_bytes_limits(graph: LoopbackServer, budget: int, valid: bool) -> None:
    doc = bodied(0, 100)
    serve_messages(graph, [doc])
    async with tools_on(graph) as tools:
        result = await tools.call(
            "mail_read", {"message_ids": [ref(doc["id"])], "max_response_bytes": budget}
        )
    assert result["isError"] is (not valid)
    if not valid:
        assert "max_response_bytes" in result["content"][0]["text"]
        assert graph.requests == []


@pytest.mark.parametrize(
    "count", [LIMITS.batch_read_ids - 1, LIMITS.batch_read_ids, LIMITS.batch_read_ids + 1]
)
async def test_message_ids_limit(graph: LoopbackServer, count: int) -> None:
    docs = [bodied(i, 10) for i in range(count)]
    serve_messages(graph, docs)
    async with tools_on(graph) as tools:
        result = await tools.call("mail_read", {"message_ids": [ref(d["id"]) for d in docs]})
    assert result["isError"] is (count > LIMITS.batch_read_ids)
    if count > LIMITS.batch_read_ids:
        assert graph.requests == []


async def test_one_id_or_many_never_both(graph: LoopbackServer) -> None:
    async with tools_on(graph) as tools:
        both = await tools.error(
            "mail_read",
            {"message_id": ref(long_id("m", 1)), "message_ids": [ref(long_id("m", 2))]},
        )
        neither = await tools.error("mail_read", {})
    assert "message_ids" in both["message"] and "message_ids" in neither["message"]
    assert graph.requests == []


# --- triage ----------------------------------------------------------------------------------


async def test_triage_filters_unread_or_flagged_and_counts_the_page(graph: LoopbackServer) -> None:
    items = [message(i) for i in range(9)]
    select_view(graph, "/v1.0/me/mailFolders/inbox/messages", items)
    async with tools_on(graph) as tools:
        data = await tools.data("mail_list", {"triage": True})
        full = await tools.data("mail_list", {"triage": True, "detail": "full"})
    assert query_of(graph.requests[0])["$filter"] == (
        "receivedDateTime ge 1900-01-01T00:00:00Z and "
        "(isRead eq false or flag/flagStatus eq 'flagged')"
    )
    unread = sum(1 for m in items if not m["isRead"])
    flagged = sum(1 for m in items if m["flag"]["flagStatus"] == "flagged")
    expected = {
        "messages": 9,
        "unread": unread,
        "flagged": flagged,
        "unread_and_flagged": 0,
        "covers": "this page only",
    }
    assert data["page_counts"] == expected and full["page_counts"] == expected


# --- attachments -----------------------------------------------------------------------------


ATTACHMENTS = {
    "notes": {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "id": long_id("attachment", 1),
        "name": "notes.md",
        "contentType": "text/markdown",
        "size": 30,
        "isInline": False,
    },
    "binary": {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "id": long_id("attachment", 2),
        "name": "photo.jpg",
        "contentType": "image/jpeg",
        "size": 3000,
        "isInline": False,
    },
    "email": {
        "@odata.type": "#microsoft.graph.itemAttachment",
        "id": long_id("attachment", 3),
        "name": "Forwarded: plan",
        "contentType": None,
        "size": 4000,
        "isInline": False,
    },
}


async def test_attachments_are_listed_and_read_as_text_or_as_a_message(
    graph: LoopbackServer,
) -> None:
    owner = long_id("message", 40)
    base = f"/v1.0/me/messages/{segment(owner)}/attachments"
    graph.route("GET", base, Reply.json({"value": list(ATTACHMENTS.values())}))
    for doc in ATTACHMENTS.values():
        graph.route("GET", f"{base}/{segment(doc['id'])}", Reply.json(doc))
    notes = ATTACHMENTS["notes"]["id"]
    graph.route(
        "GET",
        f"{base}/{segment(notes)}/$value",
        Reply(200, (), "# Notes\n\nShip it — Friday.".encode()),
    )
    email = ATTACHMENTS["email"]
    expanded = {
        **email,
        "item": {
            "subject": "The plan",
            "from": {"emailAddress": {"name": "Alex", "address": "alexw@contoso.com"}},
            "receivedDateTime": "2026-03-02T08:00:00Z",
            "body": {"contentType": "html", "content": "<p>Step <b>one</b></p>"},
        },
    }

    def email_answer(recorded: RecordedRequest) -> Reply:
        if "$expand" in query_of(recorded):
            return Reply.json(expanded)
        return Reply.json(email)

    graph.route("GET", f"{base}/{segment(email['id'])}", email_answer)
    async with tools_on(graph) as tools:
        listed = await tools.data("mail_attachment", {"message_id": ref(owner)})
        text = await tools.data(
            "mail_attachment", {"message_id": ref(owner), "attachment_id": ref(notes)}
        )
        binary = await tools.data(
            "mail_attachment",
            {"message_id": ref(owner), "attachment_id": ref(ATTACHMENTS["binary"]["id"])},
        )
        mail = await tools.data(
            "mail_attachment", {"message_id": ref(owner), "attachment_id": ref(email["id"])}
        )
    assert [a["id"] for a in listed["attachments"]] == [ref(a["id"]) for a in ATTACHMENTS.values()]
    assert [a["kind"] for a in listed["attachments"]] == ["file", "file", "message"]
    assert text["content"] == {
        "returned": True,
        "text": "# Notes\n\nShip it — Friday.",
        "chars_read": 26,
    }
    assert binary["content"]["returned"] is False
    assert "not readable as text yet" in binary["content"]["reason"]
    assert not [
        r
        for r in graph.requests
        if r.path.endswith(segment(ATTACHMENTS["binary"]["id"]) + "/$value")
    ]
    assert mail["message"]["subject"] == "The plan"
    assert mail["message"]["body"] == "Step one"
    for recorded in graph.requests:
        assert "contentBytes" not in recorded.query


async def test_a_long_text_attachment_reads_on_with_offset(graph: LoopbackServer) -> None:
    owner = long_id("message", 41)
    doc = ATTACHMENTS["notes"]
    path = f"/v1.0/me/messages/{segment(owner)}/attachments/{segment(doc['id'])}"
    text = "abcdefghij" * 1_001
    graph.route("GET", path, Reply.json(doc))
    graph.route("GET", f"{path}/$value", Reply(200, (), text.encode()))
    async with tools_on(graph) as tools:
        first = await tools.call(
            "mail_attachment", {"message_id": ref(owner), "attachment_id": ref(doc["id"])}
        )
        rest = await tools.data(
            "mail_attachment",
            {
                "message_id": ref(owner),
                "attachment_id": ref(doc["id"]),
                "offset": LIMITS.body_chars,
            },
        )
    data = first["structuredContent"]
    assert first["isError"] is True and data["skipped"]["text"]["next_offset"] == LIMITS.body_chars
    assert data["content"]["text"] + rest["content"]["text"] == text


# --- time zones ------------------------------------------------------------------------------


async def test_the_mailbox_zone_is_read_once_sent_shown_and_used_for_dates(
    graph: LoopbackServer,
) -> None:
    graph.route(
        "GET", "/v1.0/me/mailboxSettings", Reply.json({"timeZone": "W. Europe Standard Time"})
    )
    select_view(graph, "/v1.0/me/mailFolders/inbox/messages", [message(1)])
    async with tools_on(graph, time_zone=None) as tools:
        first = await tools.data("mail_list", {"since": "2026-03-01", "before": "2026-03-02T12:00"})
        second = await tools.data("mail_list", {})
        status = await tools.data("account_status", {})
    assert len(graph.requests_to("/v1.0/me/mailboxSettings")) == 1
    listing = graph.requests_to("/v1.0/me/mailFolders/inbox/messages")
    assert query_of(listing[0])["$filter"] == (
        "receivedDateTime ge 2026-02-28T23:00:00Z and receivedDateTime lt 2026-03-02T11:00:00Z"
    )
    assert listing[0].header("prefer") == 'IdType="ImmutableId"', "times come back in UTC"
    assert first["time_zone"] == second["time_zone"] == "W. Europe Standard Time"
    assert rows(second)[0]["received"] == "2026-03-02T10:30"  # 09:30Z in CET
    assert status["capabilities"]["time_zone"] == {
        "name": "W. Europe Standard Time",
        "source": "mailbox settings",
    }


async def test_an_unreadable_zone_falls_back_to_utc_and_says_why(graph: LoopbackServer) -> None:
    graph.route(
        "GET",
        "/v1.0/me/mailboxSettings",
        Reply.json({"error": {"code": "ErrorAccessDenied", "message": "denied"}}, 403),
    )
    select_view(graph, "/v1.0/me/mailFolders/inbox/messages", [message(1)])
    async with tools_on(graph, time_zone=None) as tools:
        data = await tools.data("mail_list", {})
        status = await tools.data("account_status", {})
    assert data["time_zone"] == "UTC"
    assert "--time-zone" in status["capabilities"]["time_zone"]["source"]


async def test_a_bad_filter_date_is_an_error_before_any_request(graph: LoopbackServer) -> None:
    async with tools_on(graph) as tools:
        error = await tools.error("mail_list", {"since": "2026-02-30"})
    assert "since" in error["message"] and graph.requests == []


# --- folders by name or path -----------------------------------------------------------------


def folder_tree(graph: LoopbackServer) -> None:
    top = [
        {"id": INBOX_ID, "displayName": "Inbox", "childFolderCount": 0},
        {"id": PROJECTS_ID, "displayName": "Projects", "childFolderCount": 1},
        {"id": ARCHIVE_ID, "displayName": "Old", "childFolderCount": 1},
    ]
    graph.route("GET", "/v1.0/me/mailFolders", Reply.json({"value": top}))
    graph.route(
        "GET",
        f"/v1.0/me/mailFolders/{segment(PROJECTS_ID)}/childFolders",
        Reply.json(
            {"value": [{"id": CONTOSO_ID, "displayName": "Contoso", "childFolderCount": 0}]}
        ),
    )
    graph.route(
        "GET",
        f"/v1.0/me/mailFolders/{segment(ARCHIVE_ID)}/childFolders",
        Reply.json(
            {"value": [{"id": ARCHIVE_CONTOSO_ID, "displayName": "Contoso", "childFolderCount": 0}]}
        ),
    )
    for folder in (CONTOSO_ID, ARCHIVE_CONTOSO_ID):
        graph.route(
            "GET", f"/v1.0/me/mailFolders/{segment(folder)}/messages", Reply.json({"value": []})
        )


async def test_a_folder_path_is_walked_once_and_remembered(graph: LoopbackServer) -> None:
    folder_tree(graph)
    async with tools_on(graph) as tools:
        await tools.data("mail_list", {"folder": "Projects/Contoso"})
        await tools.data("mail_list", {"folder": "projects/contoso"})
    walked = [r.path for r in graph.requests if not r.path.endswith("/messages")]
    assert walked == [
        "/v1.0/me/mailFolders",
        f"/v1.0/me/mailFolders/{segment(PROJECTS_ID)}/childFolders",
    ]
    assert len(graph.requests_to(f"/v1.0/me/mailFolders/{segment(CONTOSO_ID)}/messages")) == 2


async def test_a_folder_reference_with_a_slash_is_an_id_not_a_path(graph: LoopbackServer) -> None:
    folder = long_id("folder", 9)[:60] + "/" + long_id("folder", 10)[:60]
    graph.route(
        "GET", f"/v1.0/me/mailFolders/{segment(folder)}/messages", Reply.json({"value": []})
    )
    async with tools_on(graph) as tools:
        data = await tools.data("mail_list", {"folder": ref(folder)})
        bare = await tools.error("mail_list", {"folder": long_id("folder", 11)})
    assert data["messages"] == []
    assert [r.path for r in graph.requests] == [f"/v1.0/me/mailFolders/{segment(folder)}/messages"]
    assert bare["error_code"] == "stale_reference", "a bare 0.2 id is refused before any request"


async def test_an_ambiguous_name_lists_the_candidates(graph: LoopbackServer) -> None:
    folder_tree(graph)
    async with tools_on(graph) as tools:
        error = await tools.error("mail_list", {"folder": "Contoso"})
        by_path = await tools.data("mail_list", {"folder": "Old/Contoso"})
    assert "Projects/Contoso" in error["message"] and "Old/Contoso" in error["message"]
    assert "path" in error["hint"]
    assert by_path["messages"] == []


async def test_the_name_search_is_bounded(graph: LoopbackServer) -> None:
    """A wide tree ends the search at the request budget with a clear error."""
    parents = [long_id("wide", i) for i in range(30)]
    graph.route(
        "GET",
        "/v1.0/me/mailFolders",
        Reply.json(
            {
                "value": [
                    {"id": p, "displayName": f"F{i}", "childFolderCount": 1}
                    for i, p in enumerate(parents)
                ]
            }
        ),
    )
    for parent in parents:
        graph.route(
            "GET", f"/v1.0/me/mailFolders/{segment(parent)}/childFolders", Reply.json({"value": []})
        )
    async with tools_on(graph) as tools:
        error = await tools.error("mail_list", {"folder": "Nowhere"})
    assert len(graph.requests) == LIMITS.folder_scan_requests
    assert "Nowhere" in error["message"] and "searched" in error["message"]
    assert "Projects/Contoso" in error["hint"]


@pytest.mark.parametrize(
    ("position", "found"),
    [
        (LIMITS.folder_scan_requests - 1, True),
        (LIMITS.folder_scan_requests, True),
        (LIMITS.folder_scan_requests + 1, False),
    ],
)
async def test_folder_scan_requests_limit(
    graph: LoopbackServer, position: int, found: bool
) -> None:
    """The folder sought sits under the parent the search reaches with request ``position``."""
    parents = [long_id("wide", i) for i in range(30)]
    target = long_id("target", position)
    graph.route(
        "GET",
        "/v1.0/me/mailFolders",
        Reply.json(
            {
                "value": [
                    {"id": p, "displayName": f"F{i}", "childFolderCount": 1}
                    for i, p in enumerate(parents)
                ]
            }
        ),
    )
    for index, parent in enumerate(parents):
        children = []
        if index + 2 == position:  # request 1 lists the top level, request k+2 parent k
            children = [{"id": target, "displayName": "Needle", "childFolderCount": 0}]
        graph.route(
            "GET",
            f"/v1.0/me/mailFolders/{segment(parent)}/childFolders",
            Reply.json({"value": children}),
        )
    graph.route(
        "GET", f"/v1.0/me/mailFolders/{segment(target)}/messages", Reply.json({"value": []})
    )
    async with tools_on(graph) as tools:
        result = await tools.call("mail_list", {"folder": "Needle"})
    assert result["isError"] is (not found)
    folder_requests = [r for r in graph.requests if not r.path.endswith("/messages")]
    assert len(folder_requests) <= LIMITS.folder_scan_requests


# --- shared mailboxes and other drives -------------------------------------------------------


SHARED = "support@contoso.com"


async def test_a_shared_mailbox_is_read_under_users_and_keeps_its_cursors(
    graph: LoopbackServer,
) -> None:
    shared_path = f"/v1.0/users/{SHARED}/mailFolders/inbox/messages"
    graph_collection(graph, shared_path, [message(i) for i in range(60)])
    graph_collection(graph, "/v1.0/me/mailFolders/inbox/messages", [message(i) for i in range(60)])
    async with tools_on(graph) as tools:
        shared = await tools.data("mail_list", {"mailbox": SHARED})
        cursor = shared["skipped"]["items"]["cursor"]
        mine = await tools.error("mail_list", {"cursor": cursor})
        other = await tools.error("mail_list", {"cursor": cursor, "mailbox": "hr@contoso.com"})
        more = await tools.data("mail_list", {"cursor": cursor, "mailbox": SHARED})
        own = await tools.data("mail_list", {})
        refused = await tools.error(
            "mail_list", {"cursor": own["skipped"]["items"]["cursor"], "mailbox": SHARED}
        )
    assert shared["mailbox"] == SHARED
    for error in (mine, other, refused):
        assert error["error_code"] == "invalid_arguments" and "cursor" in error["message"]
    assert len(graph.requests_to(shared_path)) == 2 and len(rows(more)) == 10
    assert len(graph.requests_to("/v1.0/me/mailFolders/inbox/messages")) == 1


async def test_the_server_mailbox_is_the_default(graph: LoopbackServer) -> None:
    graph.route("GET", f"/v1.0/users/{SHARED}/mailFolders", Reply.json({"value": []}))
    async with tools_on(graph, mailbox=SHARED) as tools:
        data = await tools.data("mail_folders", {})
    assert data["mailbox"] == SHARED
    assert [r.path for r in graph.requests] == [f"/v1.0/users/{SHARED}/mailFolders"]


async def test_a_malformed_mailbox_is_refused_before_any_request(graph: LoopbackServer) -> None:
    async with tools_on(graph) as tools:
        error = await tools.error("mail_list", {"mailbox": "../me/drive"})
    assert "mailbox" in error["message"] and graph.requests == []


DRIVE = "b!" + long_id("drive", 1)[:60]


async def test_other_drives_need_all_files(graph: LoopbackServer) -> None:
    async with tools_on(graph) as tools:
        by_id = await tools.error("files_list", {"drive_id": DRIVE})
        by_site = await tools.error("files_search", {"query": "x", "site": "Marketing"})
    for error in (by_id, by_site):
        assert "--all-files" in error["hint"]
    assert graph.requests == []


async def test_a_drive_by_id_and_its_cursors_stay_on_that_drive(graph: LoopbackServer) -> None:
    items = [{"id": f"01DRIVE{i:04d}", "name": f"f{i}.txt", "file": {}} for i in range(60)]
    graph_collection(graph, f"/v1.0/drives/{DRIVE}/root/children", items)
    graph_collection(graph, "/v1.0/me/drive/root/children", items)
    async with tools_on(graph, all_files=True) as tools:
        first = await tools.data("files_list", {"drive_id": DRIVE})
        cursor = first["skipped"]["items"]["cursor"]
        own = await tools.error("files_list", {"cursor": cursor})
        again = await tools.data("files_list", {"drive_id": DRIVE, "cursor": cursor})
    assert first["drive"] == DRIVE and len(again["items"]) == 10
    assert own["error_code"] == "invalid_arguments"
    assert len(graph.requests_to(f"/v1.0/drives/{DRIVE}/root/children")) == 2
    assert graph.requests_to("/v1.0/me/drive/root/children") == []


async def test_a_sharepoint_library_by_site_and_name(graph: LoopbackServer) -> None:
    site = "contoso.sharepoint.com,1111,2222"
    graph.route(
        "GET",
        "/v1.0/sites",
        Reply.json(
            {
                "value": [
                    {"id": site, "displayName": "Marketing", "name": "marketing"},
                    {"id": "other", "displayName": "Marketing Archive", "name": "mkt-old"},
                ]
            }
        ),
    )
    graph.route(
        "GET",
        f"/v1.0/sites/{segment(site)}/drives",
        Reply.json(
            {"value": [{"id": DRIVE, "name": "Campaigns"}, {"id": "b!x", "name": "Documents"}]}
        ),
    )
    graph.route("GET", f"/v1.0/drives/{DRIVE}/root/children", Reply.json({"value": []}))
    async with tools_on(graph, all_files=True) as tools:
        data = await tools.data("files_list", {"site": "Marketing/Campaigns"})
        await tools.data("files_list", {"site": "marketing/campaigns"})
        missing = await tools.error("files_list", {"site": "Marketing/Nope"})
    assert data["drive"] == "Marketing/Campaigns"
    assert query_of(graph.requests_to("/v1.0/sites")[0])["search"] == "Marketing"
    assert len(graph.requests_to("/v1.0/sites")) == 2, "the second call used the cache"
    assert "Campaigns" in missing["message"] and "Documents" in missing["message"]


async def test_account_status_lists_capabilities(graph: LoopbackServer) -> None:
    graph.route("GET", "/v1.0/me", Reply.json({"id": "1", "mail": "adelev@contoso.com"}))
    async with tools_on(graph, all_files=True) as tools:
        data = await tools.data("account_status", {})
    capabilities = data["capabilities"]
    assert capabilities["other_drives"] is True
    assert capabilities["mailbox"] == "me"
    assert capabilities["time_zone"] == {"name": "UTC", "source": "--time-zone"}
    assert data["profile"] == {"address": "adelev@contoso.com", "id": "1"}
    assert data["limits"]["batch_response_bytes_max"] == MAX_BUDGET
    assert unquote("x") == "x"
