"""The person confirms where the client can ask (issue 17 section 4), on the real server
stack over a loopback Graph, with raw JSON-RPC so every wire field is checked against the
official schemas: 2026-07-28 ``input_required`` with a signed ``requestState``, and 2025
``elicitation/create`` sent by the server and answered by the client. Send requests are
counted at the loopback Graph: a decline, a cancel or a forged state sends nothing."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
from typing import Any

import pytest
import trio
from acting import FAST, Draft, ScriptedMailbox, acting_session, outlook_id, ref
from harness import MODERN, initialize, modern_meta
from loopback import LoopbackServer, Reply
from mcp_schemas import assert_valid

PDF = b"%PDF-1.7 numbers"
ELICITING = {"elicitation": {"form": {}}}


def board_draft(graph: LoopbackServer) -> tuple[ScriptedMailbox, Draft]:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(
        Draft(
            outlook_id("board"),
            subject="Board pack",
            body={"contentType": "html", "content": "<p>Hi Megan, here are the numbers.</p>"},
            cc=["lee@contoso.com"],
            attachments=[("numbers.pdf", "application/pdf", PDF)],
        )
    )
    return mailbox, draft


class Wire:
    """Raw JSON-RPC over the in-process session, modern or after a legacy handshake."""

    def __init__(self, session: Any, capabilities: dict[str, Any]) -> None:
        self.session = session
        self.capabilities = capabilities
        self.ids = 0

    def call_message(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        self.ids += 1
        meta = {**modern_meta(), "io.modelcontextprotocol/clientCapabilities": self.capabilities}
        params = {"_meta": meta, "name": name, "arguments": arguments, **extra}
        return {"jsonrpc": "2.0", "id": self.ids, "method": "tools/call", "params": params}

    async def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        message = self.call_message(name, arguments, **extra)
        await self.session.send(message)
        reply: dict[str, Any] = await self.session.receive(timeout=30)
        assert reply["id"] == message["id"]
        assert_valid(MODERN, "CallToolResultResponse", reply)
        result: dict[str, Any] = reply["result"]
        return result


async def prepared_call(wire: Wire, draft: Draft) -> dict[str, Any]:
    """mail_review draft then mail_prepare draft: the send_confirmed arguments."""
    read = await wire.call("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    digest = read["structuredContent"]["source_digest"]
    prepared = await wire.call(
        "mail_prepare", {"action": "draft", "message_id": ref(draft.id), "source_digest": digest}
    )
    data = prepared["structuredContent"]
    return {"prepared_id": data["prepared_id"], "confirmed_digest": data["digest"]}


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True, result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


def answer(action: str, decision: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"action": action}
    if decision is not None:
        result["content"] = {"decision": decision}
    return result


# --- 2026-07-28: input_required, requestState, inputResponses ---------------------------


async def test_modern_send_asks_the_person_and_sends_only_on_their_accept(
    graph: LoopbackServer,
) -> None:
    mailbox, draft = board_draft(graph)
    async with acting_session(graph) as tools:
        wire = Wire(tools.session, ELICITING)
        arguments = await prepared_call(wire, draft)
        asked = await wire.call("mail_send_confirmed", arguments)
        assert_valid(MODERN, "InputRequiredResult", asked)
        assert asked["resultType"] == "input_required" and "ttlMs" not in asked
        assert mailbox.sends() == [], "asking sends nothing"
        request = asked["inputRequests"]["confirm"]
        assert_valid(MODERN, "ElicitRequest", request)
        text = request["params"]["message"]
        for shown in ("megan@contoso.com", "lee@contoso.com", "Board pack", "numbers.pdf"):
            assert shown in text, text
        assert "Hi Megan, here are the numbers." in text, "a short body excerpt"
        assert request["params"]["requestedSchema"]["properties"]["decision"]["enum"] == [
            "Send",
            "Cancel",
        ]
        sent = await wire.call(
            "mail_send_confirmed",
            arguments,
            requestState=asked["requestState"],
            inputResponses={"confirm": answer("accept", "Send")},
        )
        again = await wire.call("mail_send_confirmed", arguments)
    data = sent["structuredContent"]
    assert sent["isError"] is False and data["status"] == "verified"
    assert data["confirmed_by"] == "person"
    assert again["structuredContent"]["resent"] is False, "a repeat reports, never re-asks"
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize(
    ("response", "code", "says"),
    [
        (answer("decline"), "declined", "the person declined"),
        (answer("cancel"), "declined", "dismissed"),
        (answer("accept", "Cancel"), "declined", "declined"),
        (answer("accept"), "confirmation_invalid", "not a choice"),
        ({"action": "sure"}, "confirmation_invalid", "not a choice"),
    ],
)
async def test_modern_anything_but_an_accept_of_send_sends_nothing(
    graph: LoopbackServer, response: dict[str, Any], code: str, says: str
) -> None:
    mailbox, draft = board_draft(graph)
    async with acting_session(graph) as tools:
        wire = Wire(tools.session, ELICITING)
        arguments = await prepared_call(wire, draft)
        asked = await wire.call("mail_send_confirmed", arguments)
        refused = await wire.call(
            "mail_send_confirmed",
            arguments,
            requestState=asked["requestState"],
            inputResponses={"confirm": response},
        )
        error = error_of(refused)
        assert error["error_code"] == code and says in error["message"], error
        assert "nothing was sent" in error["message"]
        assert mailbox.sends() == []
        asked_again = await wire.call("mail_send_confirmed", arguments)
    assert asked_again["resultType"] == "input_required", "the preparation is still usable"


def forge(state: str) -> list[tuple[str, str]]:
    claims, mac = state.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    later = base64.urlsafe_b64encode(
        json.dumps({**decoded, "exp": decoded["exp"] + 86_400}).encode()
    ).rstrip(b"=")
    flipped = mac[:-2] + ("AA" if not mac.endswith("AA") else "BB")
    return [
        ("a later expiry", f"{later.decode()}.{mac}"),
        ("a changed signature", f"{claims}.{flipped}"),
        ("not a state", "hello"),
    ]


async def test_modern_a_forged_or_foreign_request_state_is_refused_and_nothing_is_sent(
    graph: LoopbackServer,
) -> None:
    mailbox, draft = board_draft(graph)
    other = mailbox.add(dataclasses.replace(draft, id=outlook_id("other")))
    accept = {"confirm": answer("accept", "Send")}
    async with acting_session(graph) as tools:
        wire = Wire(tools.session, ELICITING)
        arguments = await prepared_call(wire, draft)
        other_arguments = await prepared_call(wire, other)
        asked = await wire.call("mail_send_confirmed", arguments)
        other_asked = await wire.call("mail_send_confirmed", other_arguments)
        for case, state in [
            *forge(asked["requestState"]),
            ("another preparation's state", other_asked["requestState"]),
        ]:
            refused = await wire.call(
                "mail_send_confirmed", arguments, requestState=state, inputResponses=accept
            )
            error = error_of(refused)
            assert error["error_code"] == "confirmation_invalid", (case, error)
            assert "requestState" in error["message"], (case, error)
        no_state = error_of(
            await wire.call("mail_send_confirmed", arguments, inputResponses=accept)
        )
        assert no_state["error_code"] == "confirmation_invalid"
        assert mailbox.sends() == []
        sent = await wire.call(
            "mail_send_confirmed",
            arguments,
            requestState=asked["requestState"],
            inputResponses=accept,
        )
    assert sent["structuredContent"]["confirmed_by"] == "person", "serving continued"
    assert len(mailbox.sends()) == 1


async def test_an_expired_request_state_is_refused(graph: LoopbackServer) -> None:
    mailbox, draft = board_draft(graph)
    clock = [1_800_000_000.0]
    limits = dataclasses.replace(FAST, confirm_wait_seconds=60.0)
    async with acting_session(graph, clock=lambda: clock[0], limits=limits) as tools:
        wire = Wire(tools.session, ELICITING)
        arguments = await prepared_call(wire, draft)
        asked = await wire.call("mail_send_confirmed", arguments)
        clock[0] += 61
        refused = await wire.call(
            "mail_send_confirmed",
            arguments,
            requestState=asked["requestState"],
            inputResponses={"confirm": answer("accept", "Send")},
        )
    assert "expired" in error_of(refused)["message"]
    assert mailbox.sends() == []


@pytest.mark.parametrize(
    ("confirm", "capabilities", "outcome"),
    [
        ("auto", {}, "assistant"),
        ("assistant", ELICITING, "assistant"),
        ("user", {}, "confirmation_required"),
        ("user", {"elicitation": {"url": {}}}, "confirmation_required"),
    ],
)
async def test_the_confirm_setting_decides_who_confirms_when_nobody_is_asked(
    graph: LoopbackServer, confirm: str, capabilities: dict[str, Any], outcome: str
) -> None:
    mailbox, draft = board_draft(graph)
    async with acting_session(graph, confirm=confirm) as tools:
        wire = Wire(tools.session, capabilities)
        arguments = await prepared_call(wire, draft)
        result = await wire.call("mail_send_confirmed", arguments)
    if outcome == "assistant":
        assert result["structuredContent"]["confirmed_by"] == "assistant"
        assert len(mailbox.sends()) == 1
    else:
        error = error_of(result)
        assert error["error_code"] == outcome and "--confirm user" in error["message"]
        assert mailbox.sends() == []


def deletable(graph: LoopbackServer) -> tuple[str, str]:
    message_id = outlook_id("newsletter")
    path = f"/v1.0/me/messages/{message_id}"
    item = {
        "id": message_id,
        "subject": "Old newsletter",
        "from": {"emailAddress": {"name": "News", "address": "news@fabrikam.com"}},
        "receivedDateTime": "2026-03-01T10:00:00Z",
    }
    graph.route("GET", path, Reply.json(item))
    graph.route("POST", f"{path}/permanentDelete", Reply(204))
    return message_id, f"{path}/permanentDelete"


@pytest.mark.parametrize("decision", ["Delete", "Cancel"])
async def test_modern_permanent_deletion_asks_the_person(
    graph: LoopbackServer, decision: str
) -> None:
    message_id, delete_path = deletable(graph)
    async with acting_session(graph) as tools:
        wire = Wire(tools.session, ELICITING)
        asked = await wire.call("mail_delete_permanently", {"message_id": ref(message_id)})
        request = asked["inputRequests"]["confirm"]
        assert "Old newsletter" in request["params"]["message"]
        assert "news@fabrikam.com" in request["params"]["message"]
        done = await wire.call(
            "mail_delete_permanently",
            {"message_id": ref(message_id)},
            requestState=asked["requestState"],
            inputResponses={"confirm": answer("accept", decision)},
        )
    deletes = [r for r in graph.requests if r.path == delete_path]
    if decision == "Delete":
        assert done["structuredContent"]["confirmed_by"] == "person"
        assert len(deletes) == 1
    else:
        assert "nothing was deleted" in error_of(done)["message"]
        assert deletes == []


# --- 2025-11-25 / 2025-06-18: elicitation/create from the server ------------------------


async def legacy_wire(session: Any, version: str, capabilities: dict[str, Any]) -> None:
    handshake = initialize(0, version)
    handshake["params"]["capabilities"] = capabilities
    reply = await session.call(handshake)
    assert reply["result"]["protocolVersion"] == version
    await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def legacy_call(session: Any, request_id: int, name: str, arguments: Any) -> None:
    await session.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


async def legacy_prepare(session: Any, draft: Draft) -> dict[str, Any]:
    await legacy_call(session, 1, "mail_review", {"action": "draft", "message_id": ref(draft.id)})
    digest = (await session.receive())["result"]["structuredContent"]["source_digest"]
    await legacy_call(
        session,
        2,
        "mail_prepare",
        {"action": "draft", "message_id": ref(draft.id), "source_digest": digest},
    )
    data = (await session.receive(timeout=30))["result"]["structuredContent"]
    return {"prepared_id": data["prepared_id"], "confirmed_digest": data["digest"]}


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_legacy_the_server_asks_with_elicitation_create_and_sends_on_accept(
    graph: LoopbackServer, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    mailbox, draft = board_draft(graph)
    caplog.set_level(logging.WARNING, "mfconnector.asking")
    async with acting_session(graph) as tools:
        session = tools.session
        await legacy_wire(session, version, {"elicitation": {}})
        arguments = await legacy_prepare(session, draft)
        await legacy_call(session, 3, "mail_send_confirmed", arguments)
        asked = await session.receive(timeout=30)
        assert_valid(version, "ElicitRequest", asked)
        assert asked["method"] == "elicitation/create" and isinstance(asked["id"], str)
        assert ("mode" in asked["params"]) is (version != "2025-06-18")
        assert "numbers.pdf" in asked["params"]["message"]
        # The reader is not blocked while the person thinks: a ping is answered at once.
        pong = await session.call({"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert pong == {"jsonrpc": "2.0", "id": 4, "result": {}}
        forged = {"jsonrpc": "2.0", "id": "mfc-elicit-999", "result": answer("accept", "Send")}
        await session.send_raw((json.dumps(forged) + "\n").encode() * 300)
        pong = await session.call({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert pong["id"] == 6, "a flood of unsolicited answers changes nothing"
        assert mailbox.sends() == [], "an unsolicited answer is ignored"
        accept = {"jsonrpc": "2.0", "id": asked["id"], "result": answer("accept", "Send")}
        assert_valid(version, "ElicitResult", accept["result"])
        await session.send(accept)
        sent = await session.receive(timeout=30)
        await session.send(accept)  # a duplicate: ignored
        pong = await session.call({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert sent["id"] == 3 and sent["result"]["structuredContent"]["confirmed_by"] == "person"
    assert_valid(version, "CallToolResult", sent["result"])
    assert pong["id"] == 5
    assert len(mailbox.sends()) == 1
    ignored = [r for r in caplog.records if "ignored a client response" in r.getMessage()]
    assert len(ignored) == 301, "every unsolicited and the duplicate answer are logged"


@pytest.mark.parametrize(
    "reply",
    [
        {"result": answer("decline")},
        {"result": answer("cancel")},
        {"error": {"code": -32603, "message": "no UI"}},
        None,  # no answer within confirm_wait_seconds
    ],
)
async def test_legacy_a_decline_an_error_or_silence_sends_nothing(
    graph: LoopbackServer, reply: dict[str, Any] | None
) -> None:
    mailbox, draft = board_draft(graph)
    limits = dataclasses.replace(FAST, confirm_wait_seconds=0.5)
    async with acting_session(graph, limits=limits) as tools:
        session = tools.session
        await legacy_wire(session, "2025-11-25", {"elicitation": {"form": {}}})
        arguments = await legacy_prepare(session, draft)
        await legacy_call(session, 3, "mail_send_confirmed", arguments)
        asked = await session.receive(timeout=30)
        if reply is not None:
            await session.send({"jsonrpc": "2.0", "id": asked["id"], **reply})
        with trio.fail_after(30):
            refused = await session.receive(timeout=30)
            if reply is None:
                assert refused["method"] == "notifications/cancelled", "the question is withdrawn"
                assert refused["params"]["requestId"] == asked["id"]
                assert_valid("2025-11-25", "CancelledNotification", refused)
                refused = await session.receive(timeout=30)
    result = refused["result"]
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["error_code"] == "declined" and "nothing was sent" in error["message"]
    assert mailbox.sends() == []


async def test_legacy_without_elicitation_the_assistant_confirms(graph: LoopbackServer) -> None:
    mailbox, draft = board_draft(graph)
    async with acting_session(graph) as tools:
        await legacy_wire(tools.session, "2025-11-25", {})
        arguments = await legacy_prepare(tools.session, draft)
        await legacy_call(tools.session, 3, "mail_send_confirmed", arguments)
        sent = await tools.session.receive(timeout=30)
    assert sent["result"]["structuredContent"]["confirmed_by"] == "assistant"
    assert len(mailbox.sends()) == 1
