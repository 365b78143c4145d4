"""prepare -> confirm -> send on the loopback Graph: the preview, the digest, the one-time
claim, each outcome (verified, sent, rejected, unknown), and what a second call does."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from acting import (
    ACCOUNT,
    FAST,
    Draft,
    ScopedTokens,
    ScriptedMailbox,
    acting_session,
    native,
    outlook_id,
    ref,
)
from loopback import LoopbackServer, Reply

from mfconnector.tools.base import wire_bytes
from mfconnector.writes.store import SendStore

PDF = b"%PDF-1.7 quarterly numbers " * 40


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def full_draft(server: LoopbackServer) -> tuple[ScriptedMailbox, Draft]:
    mailbox = ScriptedMailbox(server)
    draft = mailbox.add(
        Draft(
            outlook_id("draft"),
            cc=["lee@contoso.com"],
            bcc=["audit@contoso.com"],
            attachments=[("numbers.pdf", "application/pdf", PDF)],
        )
    )
    return mailbox, draft


async def prepare(tools: Any, draft: Draft) -> dict[str, Any]:
    read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    prepared: dict[str, Any] = await tools.ok(
        "mail_prepare",
        {"action": "draft", "message_id": ref(draft.id), "source_digest": read["source_digest"]},
    )
    assert prepared["digest"] == read["source_digest"]
    return prepared


def confirm(prepared: dict[str, Any]) -> dict[str, Any]:
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


async def test_a_draft_changed_since_it_was_read_is_not_prepared(graph: LoopbackServer) -> None:
    _, draft = full_draft(graph)
    async with acting_session(graph, clock=Clock()) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        draft.subject = "Changed in Outlook"
        stale = await tools.fail(
            "mail_prepare",
            {
                "action": "draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
            },
        )
        assert stale["error_code"] == "conflict" and stale["retry_safe"] is True
        assert "nothing was prepared" in stale["message"]
        assert stale["current_digest"] != read["source_digest"]
        assert all(r.method == "GET" for r in graph.requests)
        prepared = await prepare(tools, draft)  # read again, then it prepares
    assert prepared["message"]["subject"] == "Changed in Outlook"


async def test_the_preview_is_the_complete_message_with_its_digest(
    graph: LoopbackServer,
) -> None:
    _, draft = full_draft(graph)
    clock = Clock()
    async with acting_session(graph, clock=clock) as tools:
        prepared = await prepare(tools, draft)
    message = prepared["message"]
    assert message["bcc"] == [{"name": "audit", "address": "audit@contoso.com"}]
    assert message["from"] == {"name": "Adele Vance", "address": ACCOUNT}
    assert message["body"] == {"content_type": "html", "content": "<p>Hi Megan</p>"}
    assert message["text"].strip() == "Hi Megan"
    assert message["attachments"] == [
        {
            "name": "numbers.pdf",
            "content_type": "application/pdf",
            "size": len(PDF),
            "sha256": hashlib.sha256(PDF).hexdigest(),
            "inline": False,
            "content_id": "",
        }
    ]
    assert len(prepared["prepared_id"]) == 32 and prepared["status"] == "prepared"
    assert prepared["expires_at"] == "2027-01-15T08:15:00Z"  # 15 minutes after the clock
    assert all(r.method == "GET" for r in graph.requests), "preparing a draft writes nothing"


async def test_confirm_sends_once_verifies_and_a_second_call_returns_the_outcome(
    graph: LoopbackServer,
) -> None:
    mailbox, draft = full_draft(graph)
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
        again = await tools.ok("mail_send_confirmed", confirm(prepared))
        status = await tools.ok(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
    assert sent["status"] == "verified" and sent["in_sent_items"] is True
    assert again["status"] == "verified" and again["resent"] is False
    assert status["status"] == "verified" and status["in_sent_items"] is True
    (send,) = mailbox.sends()
    assert send.path == f"/v1.0/me/messages/{draft.id}/send"
    assert send.body == b"" and send.header("content-length") == "0"
    assert mailbox.sent == [(draft.id, draft.json())]


async def test_accepted_but_not_yet_in_sent_items_is_sent(graph: LoopbackServer) -> None:
    mailbox, draft = full_draft(graph)
    mailbox.send_reply = lambda recorded: Reply(202)
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
    assert sent["status"] == "sent" and sent["in_sent_items"] is False


async def test_checks_that_fail_before_the_mailbox_make_no_request(
    graph: LoopbackServer,
) -> None:
    mailbox, draft = full_draft(graph)
    clock = Clock()
    async with acting_session(graph, clock=clock) as tools:
        prepared = await prepare(tools, draft)
        before = len(graph.requests)
        wrong = await tools.fail(
            "mail_send_confirmed", {**confirm(prepared), "confirmed_digest": "0" * 64}
        )
        missing = await tools.fail(
            "mail_send_confirmed", {**confirm(prepared), "prepared_id": "0" * 32}
        )
        clock.now += FAST.preparation_seconds
        expired = await tools.fail("mail_send_confirmed", confirm(prepared))
        assert len(graph.requests) == before
    assert wrong["error_code"] == "conflict"
    assert missing["error_code"] == "not_found"
    assert expired["error_code"] == "expired"
    assert mailbox.sends() == []


@pytest.mark.parametrize("elapsed", [-1, 0, 1])
async def test_a_preparation_lives_exactly_its_limit(graph: LoopbackServer, elapsed: int) -> None:
    mailbox, draft = full_draft(graph)
    clock = Clock()
    async with acting_session(graph, clock=clock) as tools:
        prepared = await prepare(tools, draft)
        clock.now += FAST.preparation_seconds + elapsed
        result = await tools.call("mail_send_confirmed", confirm(prepared))
    assert len(mailbox.sends()) == (1 if elapsed < 0 else 0)
    assert result["isError"] is (elapsed >= 0)


async def test_another_account_cannot_see_or_send_a_preparation(graph: LoopbackServer) -> None:
    mailbox, draft = full_draft(graph)
    store = SendStore(None, limits=FAST)
    async with acting_session(graph, store=store) as tools:
        prepared = await prepare(tools, draft)
    other = ScopedTokens(account="megan@contoso.com")
    async with acting_session(graph, store=store, tokens=other) as tools:
        before = len(graph.requests)
        error = await tools.fail("mail_send_confirmed", confirm(prepared))
        assert len(graph.requests) == before
    assert error["error_code"] == "not_found" and mailbox.sends() == []


async def test_a_draft_changed_after_preparing_is_not_sent(graph: LoopbackServer) -> None:
    mailbox, draft = full_draft(graph)
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        draft.bcc.append("someone-else@fabrikam.com")
        error = await tools.fail("mail_send_confirmed", confirm(prepared))
        draft.bcc.pop()
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
    assert error["error_code"] == "conflict" and "nothing was sent" in error["message"]
    assert sent["status"] == "verified"
    assert len(mailbox.sends()) == 1


async def test_a_lost_answer_is_unknown_with_one_send_and_never_resent(
    graph: LoopbackServer,
) -> None:
    mailbox, draft = full_draft(graph)
    # The loopback server reads the request, then closes the connection without a word.
    mailbox.send_reply = lambda recorded: Reply(raw=b"")
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        first = await tools.fail("mail_send_confirmed", confirm(prepared))
        second = await tools.fail("mail_send_confirmed", confirm(prepared))
        status = await tools.ok(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
    assert first["error_code"] == second["error_code"] == "outcome_unknown"
    assert first["outcome"]["status"] == "unknown" and "Sent Items" in first["hint"]
    assert first["retry_safe"] is False
    assert second["outcome"]["resent"] is False
    assert status["status"] == "unknown" and status["in_sent_items"] is False
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Reply.json({"error": {"code": "ErrorInvalidRecipients", "message": "bad"}}, 400), 400),
        (Reply.json({"error": {"code": "TooManyRequests"}}, 429, (("Retry-After", "1"),)), 429),
    ],
)
async def test_a_refused_send_is_rejected_and_stays_rejected(
    graph: LoopbackServer, reply: Reply, code: int
) -> None:
    mailbox, draft = full_draft(graph)
    mailbox.send_reply = lambda recorded: reply
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        first = await tools.fail("mail_send_confirmed", confirm(prepared))
        second = await tools.fail("mail_send_confirmed", confirm(prepared))
    assert first["outcome"]["status"] == second["outcome"]["status"] == "rejected"
    assert first["error_code"] == ("throttled" if code == 429 else "provider_error")
    assert "nothing was sent" in first["message"]
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize("status", [500, 503])
async def test_a_server_error_on_send_is_unknown(graph: LoopbackServer, status: int) -> None:
    mailbox, draft = full_draft(graph)
    mailbox.send_reply = lambda recorded: Reply.json({"error": {"code": "x"}}, status)
    async with acting_session(graph) as tools:
        prepared = await prepare(tools, draft)
        error = await tools.fail("mail_send_confirmed", confirm(prepared))
    assert error["error_code"] == "outcome_unknown"
    assert error["outcome"]["status"] == "unknown"
    assert len(mailbox.sends()) == 1


async def test_prepare_new_creates_the_draft_then_freezes_it(graph: LoopbackServer) -> None:
    mailbox = ScriptedMailbox(graph)
    async with acting_session(graph) as tools:
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "new",
                "to": ["megan@contoso.com"],
                "bcc": ["audit@contoso.com"],
                "subject": "Lunch",
                "text": "Noon?",
            },
        )
        sent = await tools.ok("mail_send_confirmed", confirm(prepared))
    create = graph.requests[0]
    assert (create.method, create.path) == ("POST", "/v1.0/me/messages")
    assert json.loads(create.body) == {
        "toRecipients": [{"emailAddress": {"address": "megan@contoso.com"}}],
        "bccRecipients": [{"emailAddress": {"address": "audit@contoso.com"}}],
        "subject": "Lunch",
        "body": {"contentType": "text", "content": "Noon?"},
    }
    assert prepared["message"]["text"] == "Noon?"
    assert sent["status"] == "verified"
    assert [d for d, _ in mailbox.sent] == [native(prepared["message"]["id"])]


@pytest.mark.parametrize(
    ("action", "extra", "endpoint", "body", "to", "cc"),
    [
        ("reply", {}, "createReply", {"comment": "Yes."}, ["ben@fabrikam.com"], []),
        (
            "reply_all",
            {"cc": ["lee@contoso.com"]},
            "createReplyAll",
            {
                "comment": "Yes.",
                "message": {"ccRecipients": [{"emailAddress": {"address": "lee@contoso.com"}}]},
            },
            ["ben@fabrikam.com", "adele@contoso.com"],
            ["lee@contoso.com"],
        ),
        (
            "forward",
            {"to": ["kim@contoso.com"]},
            "createForward",
            {
                "comment": "Yes.",
                "message": {"toRecipients": [{"emailAddress": {"address": "kim@contoso.com"}}]},
            },
            ["kim@contoso.com"],
            [],
        ),
    ],
)
async def test_replies_and_forwards_use_graphs_own_threading(
    graph: LoopbackServer,
    action: str,
    extra: dict[str, Any],
    endpoint: str,
    body: dict[str, Any],
    to: list[str],
    cc: list[str],
) -> None:
    mailbox = ScriptedMailbox(graph)
    source = outlook_id("received")
    mailbox.add_source(source, "ben@fabrikam.com", [ACCOUNT], ["old@contoso.com"])
    async with acting_session(graph) as tools:
        prepared = await tools.ok(
            "mail_prepare",
            {"action": action, "message_id": ref(source), "comment": "Yes.", **extra},
        )
    create = graph.requests[0]
    assert create.path == f"/v1.0/me/messages/{source}/{endpoint}"
    assert json.loads(create.body) == body
    assert [a["address"] for a in prepared["message"]["to"]] == to
    assert [a["address"] for a in prepared["message"]["cc"]] == cc


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_the_preview_limit_refuses_whole_never_clips(
    graph: LoopbackServer, delta: int
) -> None:
    _, draft = full_draft(graph)
    async with acting_session(graph) as tools:
        size = wire_bytes(
            await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        )
    limits = dataclasses.replace(FAST, preview_bytes=size + delta)
    async with acting_session(graph, limits=limits) as tools:
        result = await tools.call("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    assert result["isError"] is (delta < 0)
    if delta < 0:
        assert "never cut" in result["content"][0]["text"]


async def test_a_crash_between_claim_and_outcome_reads_unknown_after_restart(
    graph: LoopbackServer, tmp_path: Path
) -> None:
    import sys

    import trio

    mailbox, draft = full_draft(graph)
    path = tmp_path / "state.sqlite3"
    async with acting_session(graph, store=SendStore(path, limits=FAST)) as tools:
        prepared = await prepare(tools, draft)
    # Another process claims it and dies before recording an outcome.
    script = (
        "import os, sys; from pathlib import Path; from mfconnector.writes.store import SendStore;"
        "s = SendStore(Path(sys.argv[1]));"
        "c = s.claim(sys.argv[2], sys.argv[3], '/me', sys.argv[4]);"
        "assert c.status == 'claimed', c; os._exit(3)"
    )
    done = await trio.run_process(
        [
            sys.executable,
            "-c",
            script,
            str(path),
            prepared["prepared_id"],
            ACCOUNT,
            prepared["digest"],
        ],
        check=False,
    )
    assert done.returncode == 3
    async with acting_session(graph, store=SendStore(path, limits=FAST)) as tools:
        error = await tools.fail("mail_send_confirmed", confirm(prepared))
    assert error["error_code"] == "outcome_unknown"
    assert "stopped before recording" in error["outcome"]["reason"]
    assert mailbox.sends() == []
