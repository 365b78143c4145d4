"""Issue 17 section 1: "never twice" per message, not per preparation; cancel; the digest
covers what recipients get; a send the state file could not record; old ids.

Each test reproduces what 0.2.0 got wrong, on the loopback Graph through the real stack."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mfconnector.writes.store import SendStore
from tests.support.acting_harness import (
    DELETED_FOLDER,
    FAST,
    Draft,
    ScriptedMailbox,
    acting_session,
    native,
    outlook_id,
    ref,
)
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply


async def prepare(tools: Any, draft: Draft) -> dict[str, Any]:
    read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    prepared: dict[str, Any] = await tools.ok(
        "mail_prepare",
        {"action": "draft", "message_id": ref(draft.id), "source_digest": read["source_digest"]},
    )
    return prepared


def confirm(prepared: dict[str, Any]) -> dict[str, Any]:
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


async def test_preparing_one_draft_twice_answers_with_the_first_and_sends_once(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("twice")))
    async with acting_session(graph) as tools:
        first, second = await prepare(tools, draft), await prepare(tools, draft)
        sent = await tools.ok("mail_send_confirmed", confirm(first))
        again = await tools.ok("mail_send_confirmed", confirm(second))
        after = await tools.fail(
            "mail_prepare",
            {"action": "draft", "message_id": ref(draft.id), "source_digest": first["digest"]},
        )
    assert second["prepared_id"] == first["prepared_id"] and "already prepared" in second["note"]
    assert sent["status"] == "verified" and again["resent"] is False
    assert len(mailbox.sends()) == 1
    assert "already has a confirmed send" in after["message"]
    assert after["outcome"]["prepared_id"] == first["prepared_id"]


async def test_a_changed_draft_prepared_again_replaces_the_old_preparation(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("replace")))
    async with acting_session(graph) as tools:
        old = await prepare(tools, draft)
        draft.subject = "Quarterly numbers (v2)"
        new = await prepare(tools, draft)
        refused = await tools.fail("mail_send_confirmed", confirm(old))
        sent = await tools.ok("mail_send_confirmed", confirm(new))
    assert new["prepared_id"] != old["prepared_id"]
    assert refused["error_code"] == "conflict" and new["prepared_id"] in refused["message"]
    assert sent["status"] == "verified"
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize("where", [DELETED_FOLDER, outlook_id("junk"), outlook_id("archive")])
async def test_a_prepared_draft_moved_out_of_drafts_is_not_sent(
    graph: LoopbackServer, where: str
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("moved")))
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        draft.folder = where  # trashed or moved in Outlook
        refused = await tools.fail("mail_send_confirmed", confirm(prepared))
        status = await tools.ok(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
    assert refused["error_code"] == "conflict" and "no longer in Drafts" in refused["message"]
    assert mailbox.sends() == [] and status["status"] == "prepared"


async def test_cancel_ends_the_preparation_and_discards_the_draft_it_created(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    async with acting_session(graph) as tools:
        prepared = await tools.ok(
            "mail_prepare", {"action": "new", "to": ["megan@contoso.com"], "text": "Hi"}
        )
        cancelled = await tools.ok(
            "mail_prepare", {"action": "cancel", "prepared_id": prepared["prepared_id"]}
        )
        refused = await tools.fail("mail_send_confirmed", confirm(prepared))
        again = await tools.ok(
            "mail_prepare", {"action": "cancel", "prepared_id": prepared["prepared_id"]}
        )
    draft = mailbox.drafts[native(prepared["message"]["id"])]
    assert cancelled["status"] == "cancelled" and cancelled["sent"] is False
    assert cancelled["draft"] == "moved to Deleted Items" and draft.folder == DELETED_FOLDER
    assert refused["error_code"] == "conflict" and "cancelled" in refused["message"]
    assert again["draft"] == "left where it is (no longer in Drafts)"
    assert mailbox.sends() == []


async def test_cancel_keeps_a_draft_the_person_wrote(graph: LoopbackServer) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("own")))
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        cancelled = await tools.ok(
            "mail_prepare", {"action": "cancel", "prepared_id": prepared["prepared_id"]}
        )
        sent_later = await prepare(tools, draft)  # it may be prepared again
    assert "draft" not in cancelled and draft.folder != DELETED_FOLDER
    assert sent_later["prepared_id"] != prepared["prepared_id"]
    assert not [r for r in graph.requests if r.path.endswith("/move")]


@pytest.mark.parametrize(
    "change",
    [
        {"importance": "high"},
        {"categories": ["Red category"]},
        {"internetMessageId": "<forged@contoso.com>"},
        {"isReadReceiptRequested": True},
        {"isDeliveryReceiptRequested": True},
        {"sender": {"emailAddress": {"name": "CEO", "address": "ceo@contoso.com"}}},
        {"from": {"emailAddress": {"name": "CEO", "address": "ceo@contoso.com"}}},
        {"internetMessageHeaders": [{"name": "x-priority", "value": "1"}]},
        {
            "singleValueExtendedProperties": [
                {"id": "SystemTime 0x3FEF", "value": "2030-01-01T00:00:00Z"}
            ]
        },
        {"singleValueExtendedProperties": [{"id": "String 0x1042", "value": "<other@x>"}]},
    ],
    ids=lambda change: next(iter(change)),
)
async def test_a_change_between_prepare_and_confirm_is_not_sent(
    graph: LoopbackServer, change: dict[str, Any]
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("digest")))
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        draft.extra = change
        refused = await tools.fail("mail_send_confirmed", confirm(prepared))
    assert refused["error_code"] == "conflict" and "changed" in refused["message"]
    assert mailbox.sends() == []


async def test_a_send_the_state_file_could_not_record_reports_the_send_first(
    graph: LoopbackServer, tmp_path: Path
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("unrecorded")))
    path = tmp_path / "state.sqlite3"
    limits = dataclasses.replace(FAST, state_busy_seconds=0.2)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def accepted_then_locked(recorded: RecordedRequest) -> Reply:
        holder.execute("BEGIN IMMEDIATE")  # another process holds the file from now on
        mailbox.in_sent_items.add(draft.id)
        return Reply(202)

    mailbox.send_reply = accepted_then_locked
    async with acting_session(graph, store=SendStore(path, limits=limits), limits=limits) as tools:
        prepared = await prepare(tools, draft)
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
        holder.execute("ROLLBACK")
        again = await tools.ok("mail_send_confirmed", confirm(prepared))
    holder.close()
    assert sent["status"] == "verified" and sent["recorded"] is False
    assert sent["warning"].startswith("the message was sent (verified)")
    assert "move the file aside" not in str(sent) and "keep it as it is" in sent["warning"]
    assert again["resent"] is False and again["status"] == "verified"  # recorded at last
    assert len(mailbox.sends()) == 1


async def test_an_id_past_retention_says_the_outcome_is_no_longer_known(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("old")))
    now = [2_000_000_000.0]
    async with acting_session(graph, clock=lambda: now[0]) as tools:
        prepared = await prepare(tools, draft)
        await tools.ok("mail_send_confirmed", confirm(prepared))
        now[0] += FAST.outcome_retention_seconds + 1  # or the clock jumped
        other = mailbox.add(Draft(outlook_id("other")))
        await prepare(tools, other)  # a new preparation purges old outcomes
        gone = await tools.fail("mail_send_confirmed", confirm(prepared))
        status = await tools.fail(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
    for error in (gone, status):
        assert error["error_code"] == "not_found"
        assert "no longer known" in error["message"] and "Sent Items" in error["hint"]
        assert "mail_prepare again" not in error["hint"]
    assert len(mailbox.sends()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("extra", [-1, 0, 1, 4_900])
async def test_an_outlook_draft_over_the_recipient_limit_is_not_prepared(
    graph: LoopbackServer, extra: int
) -> None:
    mailbox = ScriptedMailbox(graph)
    count = FAST.draft_recipients + extra
    draft = mailbox.add(
        Draft(outlook_id(f"crowd{extra}"), to=[f"p{i}@contoso.com" for i in range(count)])
    )
    async with acting_session(graph) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        result = await tools.call(
            "mail_prepare",
            {
                "action": "draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
            },
        )
    assert result["isError"] is (extra > 0), result["content"][0]["text"][:300]
    if extra > 0:
        assert f"{count} recipients" in result["content"][0]["text"]


@pytest.mark.parametrize(("chars", "fits"), [(190_000, True), (201_000, False)])
async def test_the_documented_largest_previewable_body(
    graph: LoopbackServer, chars: int, fits: bool
) -> None:
    """docs/LIMITS.md: the preview budget counts the body four times (as stored and as
    text, each in both copies), so about 190,000 ASCII bytes of body fit its 800,000."""
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(
        Draft(outlook_id(f"big{chars}"), body={"contentType": "text", "content": "a" * chars})
    )
    async with acting_session(graph) as tools:
        result = await tools.call("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    assert result["isError"] is not fits
    if not fits:
        assert "800,000-byte limit" in result["content"][0]["text"]
