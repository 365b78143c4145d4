"""The acting tools on the loopback Graph: gates, argument checks, scopes, and the exact
requests each write sends. Every check that can fail before the mailbox is asserted to
make no Graph request at all."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest

from mfconnector.writes.gates import Gates
from tests.support.acting_harness import (
    ALL_GATES,
    FAST,
    Draft,
    ScopedTokens,
    ScriptedMailbox,
    acting_session,
    native,
    outlook_id,
    ref,
)
from tests.support.loopback import LoopbackServer, Reply

MESSAGE = outlook_id("message")
FOLDER = outlook_id("folder")
BASE = "/v1.0/me"


def body_of(server: LoopbackServer, index: int = -1) -> Any:
    return json.loads(server.requests[index].body)


# --- gates -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gates", "listed"),
    [
        (Gates(), []),
        (Gates(writes=True), ["mail_review", "mail_create", "mail_modify"]),
        (Gates(send=True), ["mail_review", "mail_prepare", "mail_send_confirmed"]),
        (
            ALL_GATES,
            [
                "mail_review",
                "mail_create",
                "mail_modify",
                "mail_delete_permanently",
                "mail_prepare",
                "mail_send_confirmed",
            ],
        ),
    ],
)
async def test_each_gate_lists_its_tools_and_hidden_ones_answer_gate_disabled(
    graph: LoopbackServer, gates: Gates, listed: list[str]
) -> None:
    flags = {
        "mail_create": "--enable-writes",
        "mail_modify": "--enable-writes",
        "mail_delete_permanently": "--enable-delete",
        "mail_prepare": "--enable-send",
        "mail_send_confirmed": "--enable-send",
    }
    async with acting_session(graph, gates=gates) as tools:
        await tools.session.send(
            {
                "jsonrpc": "2.0",
                "id": "list",
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        )
        names = [t["name"] for t in (await tools.session.receive())["result"]["tools"]]
        acting = [n for n in names if n in flags or n == "mail_review"]
        assert acting == listed
        for name, flag in flags.items():
            if name in listed:
                continue
            error = await tools.fail(name, {"anything": None})
            assert error["error_code"] == "gate_disabled"
            assert flag in error["hint"], error
    assert graph.requests == []


# --- arguments: wrong before any request -------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("mail_create", {"action": "folder"}, "needs `name`"),
        (
            "mail_create",
            {"action": "folder", "name": "x", "message_id": ref(MESSAGE)},
            "does not take",
        ),
        ("mail_create", {"action": "folder", "name": None}, "None is not of type"),
        ("mail_create", {"action": "folder", "name": "x", "colour": "red"}, "Additional prop"),
        ("mail_create", {"action": "explode"}, "is not one of"),
        ("mail_create", {"action": "draft", "text": "a", "html": "<p>a</p>"}, "not both"),
        ("mail_create", {"action": "draft", "to": ["not an address"]}, "not an email"),
        ("mail_create", {"action": "draft", "to": [None]}, "is not of type"),
        ("mail_create", {"action": "draft", "attachments": [{"name": "a"}]}, "content_base64"),
        (
            "mail_create",
            {"action": "draft", "attachments": [{"name": "a", "content_base64": "!!"}]},
            "not valid base64",
        ),
        (
            "mail_create",
            {"action": "copy", "message_id": "short", "destination": "inbox"},
            "not a reference",
        ),
        (
            "mail_create",
            {"action": "copy", "message_id": "gzz." + MESSAGE, "destination": "inbox"},
            "another account",
        ),
        (
            "mail_create",
            {"action": "revise_draft", "message_id": ref(MESSAGE), "source_digest": "ABC"},
            "hex",
        ),
        ("mail_modify", {"action": "flags", "message_id": ref(MESSAGE)}, "at least one"),
        (
            "mail_modify",
            {"action": "flags", "message_id": ref(MESSAGE), "flag": "red"},
            "is not one",
        ),
        ("mail_modify", {"action": "rename", "folder": "Inbox", "name": "x"}, "the inbox folder"),
        (
            "mail_modify",
            {"action": "trash", "message_id": ref(MESSAGE), "destination": "x"},
            "does not",
        ),
        ("mail_prepare", {"action": "forward", "message_id": ref(MESSAGE)}, "needs `to`"),
        ("mail_prepare", {"action": "new", "to": []}, "at least one address"),
        (
            "mail_prepare",
            {"action": "forward", "message_id": ref(MESSAGE), "to": []},
            "at least one",
        ),
        (
            "mail_prepare",
            {"action": "new", "to": ["a@b.c"], "message_id": ref(MESSAGE)},
            "does not",
        ),
        ("mail_send_confirmed", {"prepared_id": "x" * 32, "confirmed_digest": "0" * 64}, "hex"),
        ("mail_delete_permanently", {"message_id": ref(MESSAGE), "extra": 1}, "Additional prop"),
        ("mail_review", {"action": "draft", "prepared_id": "0" * 32}, "exactly"),
    ],
)
async def test_bad_arguments_fail_before_any_request_and_serving_continues(
    graph: LoopbackServer, tool: str, arguments: dict[str, Any], says: str
) -> None:
    async with acting_session(graph) as tools:
        error = await tools.fail(tool, arguments)
        assert says in json.dumps(error), error
        assert error["error_code"] in ("invalid_arguments", "unsupported", "stale_reference")
        # A foreign or malformed reference is safe to repeat once corrected: nothing was done.
        assert error["retry_safe"] is (error["error_code"] == "stale_reference")
        graph.route("GET", f"{BASE}/mailFolders/inbox/messages", Reply.json({"value": []}))
        await tools.ok("mail_list", {})
    assert [r.path for r in graph.requests] == [
        f"{BASE}/mailboxSettings",  # the mailbox time zone, read once by the first mail read
        f"{BASE}/mailFolders/inbox/messages",
    ]


async def test_a_token_without_mail_readwrite_gets_the_reconsent_command_and_no_request(
    graph: LoopbackServer,
) -> None:
    tokens = ScopedTokens(scopes=("User.Read", "Mail.Read", "Files.Read"))
    async with acting_session(graph, gates=Gates(writes=True), tokens=tokens) as tools:
        error = await tools.fail("mail_create", {"action": "folder", "name": "Receipts"})
        assert error["error_code"] == "insufficient_scope"
        assert "mfconnector login --enable-writes" in error["hint"]
        assert error["missing_scopes"] == ["Mail.ReadWrite"]
    async with acting_session(graph, tokens=tokens) as tools:
        error = await tools.fail(
            "mail_send_confirmed", {"prepared_id": "0" * 32, "confirmed_digest": "0" * 64}
        )
        assert error["error_code"] == "insufficient_scope"
        assert "mfconnector login --enable-writes --enable-send --enable-delete" in error["hint"]
    assert graph.requests == []


async def test_permanent_delete_outside_the_global_cloud_is_refused_before_any_request(
    graph: LoopbackServer,
) -> None:
    async with acting_session(graph, cloud="usgov") as tools:
        await tools.session.send(
            {
                "jsonrpc": "2.0",
                "id": "list",
                "method": "tools/list",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        )
        listed = (await tools.session.receive())["result"]["tools"]
        error = await tools.fail("mail_delete_permanently", {"message_id": ref(MESSAGE)})
    # Not offered where the provider cannot do it, and refused in our words by name.
    assert "mail_delete_permanently" not in [tool["name"] for tool in listed]
    assert "mail_modify" in [tool["name"] for tool in listed]
    assert error["error_code"] == "unsupported"
    assert "usgov" in error["message"]
    assert graph.requests == []


async def test_what_the_accounts_provider_cannot_do_is_unsupported_before_any_request(
    graph: LoopbackServer,
) -> None:
    from mfconnector.mail.backend import MailCapabilities

    plain = MailCapabilities(provider="graph", search_syntax="kql", copy=False, categories=False)
    message = {"message_id": ref(MESSAGE)}
    async with acting_session(graph, capabilities=plain) as tools:
        refused = [
            await tools.fail("mail_create", {"action": "copy", **message, "destination": "inbox"}),
            await tools.fail(
                "mail_modify", {"action": "flags", **message, "read": True, "unchanged_since": "k"}
            ),
            await tools.fail(
                "mail_modify", {"action": "flags", **message, "categories_add": ["x"]}
            ),
            await tools.fail("mail_delete_permanently", message),
        ]
    assert [error["error_code"] for error in refused] == ["unsupported"] * 4
    assert "unchanged_since" in refused[1]["message"]
    assert all("nothing was requested" in error["message"] for error in refused)
    assert graph.requests == []


# --- exact requests ----------------------------------------------------------------------


async def test_folder_create_at_the_root_and_inside_a_folder(graph: LoopbackServer) -> None:
    created = {"id": FOLDER, "displayName": "Receipts", "parentFolderId": "root"}
    graph.route("POST", f"{BASE}/mailFolders", Reply.json(created, 201))
    graph.route("POST", f"{BASE}/mailFolders/inbox/childFolders", Reply.json(created, 201))
    async with acting_session(graph) as tools:
        top = await tools.ok("mail_create", {"action": "folder", "name": "Receipts"})
        child = await tools.ok(
            "mail_create", {"action": "folder", "name": "Receipts", "parent": "Inbox"}
        )
    # The folder as the model names it (snake_case, references), not Graph's fields.
    assert (
        top == child == {"created": {"id": ref(FOLDER), "name": "Receipts", "parent": ref("root")}}
    )
    assert [(r.method, r.path) for r in graph.requests] == [
        ("POST", f"{BASE}/mailFolders"),
        ("POST", f"{BASE}/mailFolders/inbox/childFolders"),
    ]
    for recorded in graph.requests:
        assert json.loads(recorded.body) == {"displayName": "Receipts"}
        assert recorded.header("content-type") == "application/json"
        assert recorded.header("prefer") == 'IdType="ImmutableId"'


async def test_copy_move_and_trash_send_the_destination(graph: LoopbackServer) -> None:
    moved = {"id": MESSAGE, "parentFolderId": FOLDER, "subject": "s"}
    graph.route("POST", f"{BASE}/messages/{MESSAGE}/copy", Reply.json(moved, 201))
    graph.route("POST", f"{BASE}/messages/{MESSAGE}/move", Reply.json(moved, 201))
    graph.route("GET", f"{BASE}/mailFolders/{FOLDER}", Reply.json({"id": FOLDER}))
    async with acting_session(graph) as tools:
        copied = await tools.ok(
            "mail_create",
            {"action": "copy", "message_id": ref(MESSAGE), "destination": ref(FOLDER)},
        )
        assert copied == {"copied": {"id": ref(MESSAGE), "folder": ref(FOLDER)}}
        await tools.ok(
            "mail_modify", {"action": "move", "message_id": ref(MESSAGE), "destination": "Archive"}
        )
        trashed = await tools.ok("mail_modify", {"action": "trash", "message_id": ref(MESSAGE)})
        assert trashed == {"trashed": {"id": ref(MESSAGE)}}
    assert [json.loads(r.body) for r in graph.requests if r.method == "POST"] == [
        {"destinationId": FOLDER},
        {"destinationId": "archive"},
        {"destinationId": "deleteditems"},
    ]


async def test_draft_with_attachments_is_one_post_then_one_per_attachment(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    files = [("notes.txt", "text/plain", b"hello"), ("data.bin", None, bytes(range(256)))]
    arguments: dict[str, Any] = {
        "action": "draft",
        "to": ["megan@contoso.com"],
        "bcc": ["audit@contoso.com"],
        "subject": "Numbers",
        "text": "See attached.",
        "attachments": [
            {"name": n, "content_base64": base64.b64encode(d).decode()}
            | ({"content_type": t} if t else {})
            for n, t, d in files
        ],
    }
    async with acting_session(graph) as tools:
        data = await tools.ok("mail_create", arguments)
    draft_id = native(data["draft"]["id"])
    assert data["draft"]["attachments"] == 2
    create, first, second = graph.requests
    assert json.loads(create.body) == {
        "toRecipients": [{"emailAddress": {"address": "megan@contoso.com"}}],
        "bccRecipients": [{"emailAddress": {"address": "audit@contoso.com"}}],
        "subject": "Numbers",
        "body": {"contentType": "text", "content": "See attached."},
    }
    assert first.path == second.path == f"{BASE}/messages/{draft_id}/attachments"
    assert json.loads(second.body) == {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "name": "data.bin",
        "contentType": "application/octet-stream",
        "contentBytes": base64.b64encode(bytes(range(256))).decode(),
    }
    assert [a[2] for a in mailbox.drafts[draft_id].attachments] == [b"hello", bytes(range(256))]


@pytest.mark.parametrize(
    ("status", "code", "retry_safe"),
    [(500, "outcome_unknown", False), (400, "provider_error", True)],
)
async def test_a_failed_attachment_reports_what_was_done_and_what_was_not(
    graph: LoopbackServer, status: int, code: str, retry_safe: bool
) -> None:
    mailbox = ScriptedMailbox(graph)
    failure = Reply.json({"error": {"code": "ErrorInternalServerError", "message": "no"}}, status)
    mailbox.attach_reply = lambda count: failure if count == 2 else None
    attachments = [
        {"name": name, "content_base64": base64.b64encode(b"x").decode()}
        for name in ("a.txt", "b.txt", "c.txt")
    ]
    async with acting_session(graph) as tools:
        error = await tools.fail("mail_create", {"action": "draft", "attachments": attachments})
    (draft_id,) = mailbox.drafts
    assert error["error_code"] == code
    assert error["retry_safe"] is retry_safe
    assert error["outcome"] == {
        "done": ["create the draft", "attach a.txt"],
        "not_done": ["attach b.txt", "attach c.txt"],
        "draft_id": ref(draft_id),
    }
    assert len(graph.requests) == 3


async def test_flags_patch_exactly_what_was_asked(graph: LoopbackServer) -> None:
    path = f"{BASE}/messages/{MESSAGE}"
    graph.route("PATCH", path, Reply.json({"id": MESSAGE, "isRead": True, "changeKey": "k2"}))
    graph.route("GET", path, Reply.json({"categories": ["Blue", "Old"], "changeKey": "k1"}))
    async with acting_session(graph) as tools:
        await tools.ok("mail_modify", {"action": "flags", "message_id": ref(MESSAGE), "read": True})
        await tools.ok(
            "mail_modify", {"action": "flags", "message_id": ref(MESSAGE), "flag": "done"}
        )
        await tools.ok(
            "mail_modify",
            {
                "action": "flags",
                "message_id": ref(MESSAGE),
                "categories_add": ["Red", "Blue"],
                "categories_remove": ["Old"],
            },
        )
    patches = [json.loads(r.body) for r in graph.requests if r.method == "PATCH"]
    assert patches == [
        {"isRead": True},
        {"flag": {"flagStatus": "complete"}},
        {"categories": ["Blue", "Red"]},
    ]
    assert [r.method for r in graph.requests] == ["PATCH", "PATCH", "GET", "PATCH"]
    assert all(r.header("if-match") is None for r in graph.requests)


async def test_unchanged_since_refuses_a_changed_message_and_guards_the_patch(
    graph: LoopbackServer,
) -> None:
    path = f"{BASE}/messages/{MESSAGE}"
    graph.route("GET", path, Reply.json({"categories": [], "changeKey": "k2"}))
    graph.route("PATCH", path, Reply.json({"id": MESSAGE, "isRead": False}))
    arguments = {"action": "flags", "message_id": ref(MESSAGE), "read": False}
    async with acting_session(graph) as tools:
        stale = await tools.fail("mail_modify", {**arguments, "unchanged_since": "k1"})
        assert stale["error_code"] == "conflict" and stale["current_change_token"] == "k2"
        assert [r.method for r in graph.requests] == ["GET"], "nothing was written"
        await tools.ok("mail_modify", {**arguments, "unchanged_since": "k2"})
        assert graph.requests[-1].header("if-match") == 'W/"k2"'
        graph.route(
            "PATCH",
            path,
            Reply.json({"error": {"code": "ErrorIrresolvableConflict", "message": "x"}}, 412),
        )
        raced = await tools.fail("mail_modify", {**arguments, "unchanged_since": "k2"})
    assert raced["error_code"] == "conflict" and raced["retry_safe"] is True


async def test_rename_refuses_well_known_folders_by_name_and_by_id(
    graph: LoopbackServer,
) -> None:
    inbox_id = outlook_id("inbox")
    graph.route("GET", f"{BASE}/mailFolders/inbox", Reply.json({"id": inbox_id}))
    graph.route("GET", f"{BASE}/mailFolders/{inbox_id}", Reply.json({"id": inbox_id}))
    graph.route("GET", f"{BASE}/mailFolders/{FOLDER}", Reply.json({"id": FOLDER}))
    graph.route("PATCH", f"{BASE}/mailFolders/{FOLDER}", Reply.json({"id": FOLDER}))
    async with acting_session(graph) as tools:
        by_name = await tools.fail(
            "mail_modify", {"action": "rename", "folder": "sentitems", "name": "x"}
        )
        assert graph.requests == []
        by_id = await tools.fail(
            "mail_modify", {"action": "rename", "folder": ref(inbox_id), "name": "x"}
        )
        lookups = len(graph.requests)
        await tools.ok("mail_modify", {"action": "rename", "folder": ref(FOLDER), "name": "Taxes"})
    assert by_name["error_code"] == by_id["error_code"] == "unsupported"
    assert all(r.method == "GET" for r in graph.requests[:lookups])
    assert len(graph.requests) == lookups + 2, "well-known ids are looked up once"
    assert json.loads(graph.requests[-1].body) == {"displayName": "Taxes"}


async def test_permanent_delete_echoes_what_it_deleted(graph: LoopbackServer) -> None:
    path = f"{BASE}/messages/{MESSAGE}"
    item = {
        "id": MESSAGE,
        "subject": "Old newsletter",
        "from": {"emailAddress": {"name": "News", "address": "news@fabrikam.com"}},
        "receivedDateTime": "2026-03-01T10:00:00Z",
    }
    graph.route("GET", path, Reply.json(item))
    graph.route("POST", f"{path}/permanentDelete", Reply(204))
    async with acting_session(graph) as tools:
        data = await tools.ok("mail_delete_permanently", {"message_id": ref(MESSAGE)})
    assert data == {
        "deleted": {
            "id": ref(MESSAGE),
            "subject": "Old newsletter",
            "from": "news@fabrikam.com",
            "received": "2026-03-01T10:00:00Z",
        },
        "recoverable": False,
        "confirmed_by": "assistant",  # this client declared no elicitation
    }
    assert graph.requests[-1].body == b""
    assert graph.requests[-1].header("content-length") == "0"


async def test_a_missing_message_is_not_found(graph: LoopbackServer) -> None:
    graph.route(
        "POST",
        f"{BASE}/messages/{MESSAGE}/move",
        Reply.json({"error": {"code": "ErrorItemNotFound", "message": "gone"}}, 404),
    )
    async with acting_session(graph) as tools:
        error = await tools.fail("mail_modify", {"action": "trash", "message_id": ref(MESSAGE)})
    assert error["error_code"] == "not_found" and error["provider_code"] == "ErrorItemNotFound"


async def test_throttled_write_is_not_retried(graph: LoopbackServer) -> None:
    graph.route(
        "POST",
        f"{BASE}/mailFolders",
        Reply.json({"error": {"code": "TooManyRequests"}}, 429, (("Retry-After", "7"),)),
    )
    async with acting_session(graph) as tools:
        error = await tools.fail("mail_create", {"action": "folder", "name": "x"})
    assert error["error_code"] == "throttled" and error["retry_safe"] is True
    assert error["retry_after_seconds"] == 7
    assert len(graph.requests) == 1


async def test_revise_draft_with_a_stale_digest_writes_nothing(graph: LoopbackServer) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("draft"), attachments=[("a.txt", "text/plain", b"A")]))
    async with acting_session(graph) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        draft.subject = "Changed in Outlook"
        stale = await tools.fail(
            "mail_create",
            {
                "action": "revise_draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
                "subject": "Mine",
            },
        )
        assert stale["error_code"] == "conflict"
        assert all(r.method == "GET" for r in graph.requests)
        fresh = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        revised = await tools.ok(
            "mail_create",
            {
                "action": "revise_draft",
                "message_id": ref(draft.id),
                "source_digest": fresh["source_digest"],
                "cc": ["lee@contoso.com"],
            },
        )
    new = mailbox.drafts[native(revised["revision"]["id"])]
    assert revised["original_retained"] is True and draft.subject == "Changed in Outlook"
    assert draft.cc == [], "the source draft is untouched"
    assert (new.subject, new.cc, new.to, new.body) == (
        "Changed in Outlook",
        ["lee@contoso.com"],
        ["megan@contoso.com"],
        draft.body,
    )
    assert new.attachments == [("a.txt", "text/plain", b"A")]
    copy, patch = [r for r in graph.requests if r.method != "GET"]
    assert (copy.method, copy.path) == ("POST", f"{BASE}/messages/{draft.id}/copy")
    assert json.loads(copy.body) == {"destinationId": "drafts"}
    assert (patch.method, patch.path) == ("PATCH", f"{BASE}/messages/{new.id}")
    assert json.loads(patch.body) == {
        "ccRecipients": [{"emailAddress": {"address": "lee@contoso.com"}}]
    }


# --- limits at L-1, L and L+1 --------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_attachment_count_limit(graph: LoopbackServer, delta: int) -> None:
    ScriptedMailbox(graph)
    count = FAST.draft_attachments + delta
    files = [{"name": f"f{i}.txt", "content_base64": b64(b"x")} for i in range(count)]
    async with acting_session(graph) as tools:
        result = await tools.call("mail_create", {"action": "draft", "attachments": files})
    assert result["isError"] is (delta > 0)
    assert len(graph.requests) == (0 if delta > 0 else 1 + count)


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_attachment_bytes_limit(graph: LoopbackServer, delta: int) -> None:
    mailbox = ScriptedMailbox(graph)
    total = FAST.draft_attachments_bytes + delta
    files = [
        {"name": "a.bin", "content_base64": b64(b"a" * (total // 2))},
        {"name": "b.bin", "content_base64": b64(b"b" * (total - total // 2))},
    ]
    limits = dataclasses.replace(FAST, line_bytes=5_000_000, tool_arguments_bytes=5_000_000)
    async with acting_session(graph, limits=limits) as tools:
        result = await tools.call("mail_create", {"action": "draft", "attachments": files})
    assert result["isError"] is (delta > 0)
    if delta > 0:
        assert graph.requests == [] and "3,000,000 bytes" in result["content"][0]["text"]
    else:
        (draft,) = mailbox.drafts.values()
        assert sum(len(data) for _, _, data in draft.attachments) == total


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_recipient_limit(graph: LoopbackServer, delta: int) -> None:
    ScriptedMailbox(graph)
    people = [f"p{i}@contoso.com" for i in range(FAST.draft_recipients + delta)]
    thirds = len(people) // 3
    arguments = {
        "action": "draft",
        "to": people[:thirds],
        "cc": people[thirds : 2 * thirds],
        "bcc": people[2 * thirds :],
    }
    async with acting_session(graph) as tools:
        result = await tools.call("mail_create", arguments)
    assert result["isError"] is (delta > 0)
    assert len(graph.requests) == (0 if delta > 0 else 1)


@pytest.mark.parametrize("slack", [-1, 0, 1])
async def test_folder_names_are_taken_up_to_their_limit(graph: LoopbackServer, slack: int) -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    name = "R" * (DEFAULT_LIMITS.display_name_chars + slack)
    created = {"id": FOLDER, "displayName": name, "parentFolderId": "root"}
    graph.route("POST", f"{BASE}/mailFolders", Reply.json(created, 201))
    async with acting_session(graph) as tools:
        if slack <= 0:
            assert await tools.ok("mail_create", {"action": "folder", "name": name}) == {
                "created": {"id": ref(FOLDER), "name": name, "parent": ref("root")}
            }
        else:
            error = await tools.fail("mail_create", {"action": "folder", "name": name})
            assert error["error_code"] == "invalid_arguments"
            assert f"1-{DEFAULT_LIMITS.display_name_chars} printable" in error["message"], error
    sent = [json.loads(r.body) for r in graph.requests]
    assert sent == ([{"displayName": name}] if slack <= 0 else [])


@pytest.mark.parametrize("slack", [-1, 0, 1])
async def test_list_entries_are_taken_up_to_their_limit(graph: LoopbackServer, slack: int) -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    category = "C" * (DEFAULT_LIMITS.action_list_item_chars + slack)
    path = f"{BASE}/messages/{MESSAGE}"
    graph.route("GET", path, Reply.json({"categories": [], "changeKey": "k1"}))
    graph.route("PATCH", path, Reply.json({"id": MESSAGE, "changeKey": "k2"}))
    arguments = {"action": "flags", "message_id": ref(MESSAGE), "categories_add": [category]}
    async with acting_session(graph) as tools:
        if slack <= 0:
            await tools.ok("mail_modify", arguments)
        else:
            error = await tools.fail("mail_modify", arguments)
            assert error["error_code"] == "invalid_arguments"
            limit = DEFAULT_LIMITS.action_list_item_chars
            says = f"`categories_add[0]` must be a non-empty string of at most {limit}"
            assert says in error["message"], error
    patches = [json.loads(r.body) for r in graph.requests if r.method == "PATCH"]
    assert patches == ([{"categories": [category]}] if slack <= 0 else [])
    assert [r.method for r in graph.requests] == (["GET", "PATCH"] if slack <= 0 else [])
