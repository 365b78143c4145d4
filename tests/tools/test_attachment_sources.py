"""Attachments by reference against a loopback Graph on 127.0.0.1, every request counted.

A drive file or another message's attachment is fetched by the server (the download host
without the token), attached in one request up to ``attachment_simple_upload_bytes`` and
through an upload session above it (chunks of ``upload_chunk_bytes`` to the
pre-authenticated URL, never with the token), within ``draft_attachment_total_bytes``;
what fails without the mailbox, or from metadata alone, fails before the first write.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.acting_harness import (
    FAST,
    Draft,
    ScriptedMailbox,
    acting_session,
    native,
    outlook_id,
    ref,
)
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply

ITEM = "01LOOPBACKBUDGETXLSX"
SOURCE = outlook_id("source")
ATTACHMENT = "AAMkAttachmentId-0001"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SIMPLE = FAST.attachment_simple_upload_bytes
CHUNK = FAST.upload_chunk_bytes


@pytest.fixture
def graph() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


def file_bytes(size: int) -> bytes:
    return (hashlib.sha256(str(size).encode()).digest() * (size // 32 + 1))[:size]


def serve_drive_file(graph: LoopbackServer, data: bytes, *, declared: int | None = None) -> None:
    item = {
        "id": ITEM,
        "name": "Budget 2027.xlsx",
        "size": len(data) if declared is None else declared,
        "file": {"mimeType": XLSX},
    }
    location = f"{graph.url}/dl/download.aspx?UniqueId=1&tempauth=DOWNLOAD-SECRET"
    graph.route("GET", f"/v1.0/me/drive/items/{ITEM}", Reply.json(item))
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{ITEM}/content",
        Reply(302, (("Location", location), ("Content-Length", "0"))),
    )
    graph.route("GET", "/dl/download.aspx", Reply(200, (("Content-Type", XLSX),), data))


def paths(graph: LoopbackServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in graph.requests]


def uploads(graph: LoopbackServer) -> list[RecordedRequest]:
    return [r for r in graph.requests if r.method == "PUT"]


def draft_paths(draft_id: str) -> str:
    return f"/v1.0/me/messages/{draft_id}"


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_attachment_simple_upload_bytes_limit(graph: LoopbackServer, delta: int) -> None:
    """Up to the limit one POST with the bytes; one byte more, an upload session."""
    mailbox = ScriptedMailbox(graph)
    data = file_bytes(SIMPLE + delta)
    serve_drive_file(graph, data)
    async with acting_session(graph) as tools:
        created = await tools.ok(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}]}
        )
    draft_id = native(created["draft"]["id"])
    (attached,) = created["draft"]["attached"]
    assert attached == {
        "name": "Budget 2027.xlsx",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "source": {"item_id": ref(ITEM)},
    }
    assert mailbox.drafts[draft_id].attachments == [("Budget 2027.xlsx", XLSX, data)]
    fetch = [
        ("GET", f"/v1.0/me/drive/items/{ITEM}"),
        ("POST", "/v1.0/me/messages"),
        ("GET", f"/v1.0/me/drive/items/{ITEM}/content"),
        ("GET", "/dl/download.aspx"),
    ]
    if delta <= 0:
        assert paths(graph) == [*fetch, ("POST", f"{draft_paths(draft_id)}/attachments")]
    else:
        assert paths(graph) == [
            *fetch,
            ("POST", f"{draft_paths(draft_id)}/attachments/createUploadSession"),
            ("PUT", f"/upload/{draft_id}"),
        ]


@pytest.mark.slow
async def test_a_large_file_goes_up_in_chunks_without_the_token(graph: LoopbackServer) -> None:
    mailbox = ScriptedMailbox(graph)
    data = file_bytes(2 * CHUNK + 1_000)
    serve_drive_file(graph, data)
    async with acting_session(graph) as tools:
        created = await tools.ok(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}]}
        )
        draft_id = native(created["draft"]["id"])
        review = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft_id)})
    assert mailbox.drafts[draft_id].attachments == [("Budget 2027.xlsx", XLSX, data)]
    session = next(r for r in graph.requests if r.path.endswith("/createUploadSession"))
    assert json.loads(session.body) == {
        "AttachmentItem": {
            "attachmentType": "file",
            "name": "Budget 2027.xlsx",
            "size": len(data),
            "contentType": XLSX,
        }
    }
    puts = uploads(graph)
    assert [p.header("content-range") for p in puts] == [
        f"bytes 0-{CHUNK - 1}/{len(data)}",
        f"bytes {CHUNK}-{2 * CHUNK - 1}/{len(data)}",
        f"bytes {2 * CHUNK}-{len(data) - 1}/{len(data)}",
    ]
    for put in puts:
        assert put.header("authorization") is None and put.header("cookie") is None
    for download in (r for r in graph.requests if r.path == "/dl/download.aspx"):
        assert download.header("authorization") is None
    # the draft's attachment is verified by streaming hash, larger than the 2 MB body cap
    (shown,) = review["message"]["attachments"]
    assert shown["sha256"] == hashlib.sha256(data).hexdigest()
    assert shown["size"] == len(data)
    wire = json.dumps(created) + json.dumps(review)
    for secret in ("UPLOAD-SECRET", "DOWNLOAD-SECRET", "authtoken", "tempauth"):
        assert secret not in wire


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_draft_attachment_total_bytes_limit(graph: LoopbackServer, delta: int) -> None:
    """Declared sizes over the total are refused from the metadata: nothing is written."""
    limits = dataclasses.replace(FAST, draft_attachment_total_bytes=5_000)
    mailbox = ScriptedMailbox(graph)
    data = file_bytes(5_000 + delta - 4)
    serve_drive_file(graph, data)
    inline = {"name": "a.txt", "content_base64": "YWJjZA=="}  # 4 bytes
    async with acting_session(graph, limits=limits) as tools:
        result = await tools.call(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}, inline]}
        )
    if delta > 0:
        assert result["isError"] is True
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["error_code"] == "unsupported"
        assert "5,001 bytes in all, over the 5,000-byte limit" in error["message"]
        assert paths(graph) == [("GET", f"/v1.0/me/drive/items/{ITEM}")]
        assert mailbox.drafts == {}
    else:
        assert result["isError"] is False
        (draft,) = mailbox.drafts.values()
        assert [len(d) for _, _, d in draft.attachments] == [len(data), 4]


async def test_a_file_larger_than_it_declared_is_cut_off_at_the_total(
    graph: LoopbackServer,
) -> None:
    limits = dataclasses.replace(FAST, draft_attachment_total_bytes=5_000)
    ScriptedMailbox(graph)
    serve_drive_file(graph, file_bytes(6_000), declared=100)
    async with acting_session(graph, limits=limits) as tools:
        error = await tools.fail(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}]}
        )
    assert error["error_code"] == "unsupported"
    assert "larger than the 5,000-byte limit" in error["message"]
    assert error["outcome"]["done"] == ["create the draft"]
    assert error["outcome"]["not_done"] == ["attach Budget 2027.xlsx"]
    assert not [r for r in graph.requests if r.path.endswith("/attachments")]


async def test_a_message_attachment_by_reference(graph: LoopbackServer) -> None:
    mailbox = ScriptedMailbox(graph)
    data = b"col1,col2\n1,2\n"
    base = f"/v1.0/me/messages/{SOURCE}/attachments/{ATTACHMENT}"
    graph.route(
        "GET",
        base,
        Reply.json(
            {
                "@odata.type": "#microsoft.graph.fileAttachment",
                "id": ATTACHMENT,
                "name": "numbers.csv",
                "contentType": "text/csv",
                "size": 220,
            }
        ),
    )
    graph.route("GET", f"{base}/$value", Reply(200, (("Content-Type", "text/csv"),), data))
    entry = {"message_id": ref(SOURCE), "attachment_id": ref(ATTACHMENT), "name": "renamed.csv"}
    async with acting_session(graph) as tools:
        created = await tools.ok("mail_create", {"action": "draft", "attachments": [entry]})
    (draft,) = mailbox.drafts.values()
    assert draft.attachments == [("renamed.csv", "text/csv", data)]
    assert created["draft"]["attached"][0]["source"] == {
        "message_id": ref(SOURCE),
        "attachment_id": ref(ATTACHMENT),
    }
    assert paths(graph)[0] == ("GET", base)


async def test_an_attached_email_or_a_folder_is_refused_before_any_write(
    graph: LoopbackServer,
) -> None:
    ScriptedMailbox(graph)
    base = f"/v1.0/me/messages/{SOURCE}/attachments/{ATTACHMENT}"
    graph.route(
        "GET",
        base,
        Reply.json({"@odata.type": "#microsoft.graph.itemAttachment", "name": "Fwd: hi"}),
    )
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{ITEM}",
        Reply.json({"id": ITEM, "name": "Docs", "folder": {}}),
    )
    async with acting_session(graph) as tools:
        item = await tools.fail(
            "mail_create",
            {
                "action": "draft",
                "attachments": [{"message_id": ref(SOURCE), "attachment_id": ref(ATTACHMENT)}],
            },
        )
        folder = await tools.fail(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}]}
        )
    assert "is a itemAttachment, not a file" in item["message"]
    assert "is a folder, not a file" in folder["message"]
    assert [r.method for r in graph.requests] == ["GET", "GET"]


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"item_id": ref(ITEM), "message_id": ref(SOURCE)}, "has keys"),
        ({"message_id": ref(SOURCE)}, "one of these sets of keys"),
        ({"drive_id": "b!x"}, "one of these sets of keys"),
        ({"item_id": ref(ITEM), "colour": "red"}, "has keys"),
        ({"item_id": ""}, "non-empty string"),
        ({"item_id": "01AB?select=*"}, "is not an id"),
        ({"item_id": 7}, "non-empty string"),
        ("just a name", "has keys []"),
    ],
)
async def test_bad_entries_are_refused_in_our_words_with_no_request(
    graph: LoopbackServer, entry: Any, says: str
) -> None:
    ScriptedMailbox(graph)
    folder = {"id": "folder-1", "displayName": "Still serving"}
    graph.route("POST", "/v1.0/me/mailFolders", Reply.json(folder, 201))
    async with acting_session(graph) as tools:
        error = await tools.fail("mail_create", {"action": "draft", "attachments": [entry]})
        again = await tools.ok("mail_create", {"action": "folder", "name": "Still serving"})
    assert says in error["message"]
    assert error["error_code"] == "invalid_arguments"
    assert again["created"]["name"] == "Still serving"
    assert paths(graph) == [("POST", "/v1.0/me/mailFolders")]


async def test_prepare_forward_attaches_a_drive_file_and_previews_its_digest(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    mailbox.add_source(SOURCE, "lee@contoso.com", [], [])
    data = file_bytes(10_000)
    serve_drive_file(graph, data)
    async with acting_session(graph) as tools:
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "forward",
                "message_id": ref(SOURCE),
                "to": ["megan@contoso.com"],
                "attachments": [{"item_id": ref(ITEM)}],
            },
        )
        inline = await tools.fail(
            "mail_prepare",
            {
                "action": "new",
                "to": ["megan@contoso.com"],
                "attachments": [{"name": "a.txt", "content_base64": "YQ=="}],
            },
        )
    (shown,) = prepared["message"]["attachments"]
    assert (shown["name"], shown["size"]) == ("Budget 2027.xlsx", len(data))
    assert shown["sha256"] == hashlib.sha256(data).hexdigest()
    assert "item_id | message_id + attachment_id" in inline["message"]


def versioned_item(c_tag: str, size: int) -> Reply:
    return Reply.json(
        {
            "id": ITEM,
            "name": "Budget 2027.xlsx",
            "size": size,
            "file": {"mimeType": XLSX},
            "cTag": c_tag,
        }
    )


@pytest.mark.parametrize("changed", [False, True])
async def test_a_file_changed_between_prepare_and_confirm_is_a_conflict(
    graph: LoopbackServer, changed: bool
) -> None:
    """The user approved one version of the drive file; if the drive now holds another,
    nothing is sent (the file's cTag is read again, one request, before the claim)."""
    mailbox = ScriptedMailbox(graph)
    data = file_bytes(2_000)
    serve_drive_file(graph, data)
    later = '"c:{B2},2"' if changed else '"c:{B2},1"'
    graph.route(
        "GET",
        f"/v1.0/me/drive/items/{ITEM}",
        versioned_item('"c:{B2},1"', len(data)),
        versioned_item(later, len(data)),
    )
    async with acting_session(graph) as tools:
        prepared = await tools.ok(
            "mail_prepare",
            {"action": "new", "to": ["lynne@contoso.com"], "attachments": [{"item_id": ref(ITEM)}]},
        )
        before = len(graph.requests)
        confirm = {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}
        result = await tools.call("mail_send_confirmed", confirm)
    rechecks = [r for r in graph.requests[before:] if r.path == f"/v1.0/me/drive/items/{ITEM}"]
    assert len(rechecks) == 1
    if changed:
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["error_code"] == "conflict"
        assert (
            "'Budget 2027.xlsx' changed on the drive since the message was prepared"
            in error["message"]
        )
        assert mailbox.sends() == []
    else:
        assert result["isError"] is False
        assert len(mailbox.sends()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_upload_chunk_bytes_limit(graph: LoopbackServer, delta: int) -> None:
    """A file of one chunk's size goes up in one PUT; one byte more takes a second."""
    mailbox = ScriptedMailbox(graph)
    data = file_bytes(CHUNK + delta)
    serve_drive_file(graph, data)
    async with acting_session(graph) as tools:
        created = await tools.ok(
            "mail_create", {"action": "draft", "attachments": [{"item_id": ref(ITEM)}]}
        )
    assert mailbox.drafts[native(created["draft"]["id"])].attachments == [
        ("Budget 2027.xlsx", XLSX, data)
    ]
    assert [len(put.body) for put in uploads(graph)] == ([len(data)] if delta <= 0 else [CHUNK, 1])


async def test_revise_draft_replaces_the_attachments_with_a_drive_file(
    graph: LoopbackServer,
) -> None:

    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(
        Draft(outlook_id("revise"), attachments=[("old.txt", "text/plain", b"old")])
    )
    data = file_bytes(1_234)
    serve_drive_file(graph, data)
    async with acting_session(graph) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        revised = await tools.ok(
            "mail_create",
            {
                "action": "revise_draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
                "attachments": [{"item_id": ref(ITEM)}],
            },
        )
    new = mailbox.drafts[native(revised["revision"]["id"])]
    assert draft.attachments == [("old.txt", "text/plain", b"old")]  # the original is kept
    assert revised["revision"]["attached"][0]["sha256"] == hashlib.sha256(data).hexdigest()
    assert [name for name, _, _ in new.attachments] == ["Budget 2027.xlsx"]
