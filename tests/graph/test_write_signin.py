"""A write shares the read path's token handling (issue 18 §2).

A sign-in that stalls while a write waits for its token is named as a sign-in timeout,
and nothing was sent: 0.2 called it "may have been sent", recorded the send ``unknown``
and so made that preparation unsendable for ever. A token-shaped refusal before the write
is answered by one forced refresh (with the claims challenge), as reads do.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest
import trio

from mfconnector.errors import AuthError
from mfconnector.graph.client import GraphClient
from tests.support.acting_harness import (
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

QUICK = dataclasses.replace(FAST, graph_request_seconds=1.0)
"""A one-second deadline, so a stalled sign-in is over quickly."""


class StallingTokens(ScopedTokens):
    """A signed-in account whose token service stops answering once ``stall`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.stall = threading.Event()
        self.asked: list[tuple[bool, str | None]] = []

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        self.asked.append((force_refresh, claims))
        if self.stall.is_set():
            await trio.sleep_forever()
        return "t"


@pytest.mark.slow  # waits out a real deadline: over 1 s
async def test_a_write_whose_sign_in_stalls_sends_nothing_and_says_so(
    graph: LoopbackServer,
) -> None:
    tokens = StallingTokens()
    tokens.stall.set()
    graph.route("POST", "/v1.0/me/mailFolders", Reply.json({"id": "f"}, 201))
    async with GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens, limits=QUICK) as client:
        with pytest.raises(AuthError) as caught:
            await client.write_json("POST", "/me/mailFolders", body={"displayName": "x"})
    assert caught.value.code == "signin_timeout"
    assert "nothing was sent" in caught.value.message
    assert graph.requests == []


async def test_a_claims_challenge_before_a_write_gets_one_refresh_with_the_claims(
    graph: LoopbackServer,
) -> None:
    tokens = StallingTokens()
    challenge = 'Bearer error="insufficient_claims", claims="eyJhY2Nlc3NfdG9rZW4iOnt9fQ=="'
    graph.route(
        "POST",
        "/v1.0/me/mailFolders",
        Reply.json(
            {"error": {"code": "InvalidAuthenticationToken"}},
            401,
            (("WWW-Authenticate", challenge),),
        ),
        Reply.json({"id": "f"}, 201),
    )
    async with GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens, limits=FAST) as client:
        answer = await client.write_json("POST", "/me/mailFolders", body={"displayName": "x"})
    assert answer.body == {"id": "f"}
    assert tokens.asked == [(False, None), (True, '{"access_token":{}}')]
    assert len(graph.requests) == 2


async def test_a_refusal_that_is_not_about_the_token_is_not_repeated(
    graph: LoopbackServer,
) -> None:
    tokens = StallingTokens()
    graph.route(
        "POST",
        "/v1.0/me/mailFolders",
        Reply.json({"error": {"code": "MailboxNotEnabledForRESTAPI", "message": "no"}}, 401),
    )
    async with GraphClient(root=f"{graph.url}/v1.0", token_provider=tokens, limits=FAST) as client:
        with pytest.raises(Exception, match="no"):
            await client.write_json("POST", "/me/mailFolders", body={"displayName": "x"})
    assert len(graph.requests) == 1 and len(tokens.asked) == 1


@pytest.mark.slow
async def test_a_send_whose_sign_in_stalls_is_not_sent_and_stays_sendable(
    graph: LoopbackServer,
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("stalled send")))
    tokens = StallingTokens()
    confirming = threading.Event()

    def attachments(_request: Any) -> Reply:
        # The confirmation's last read before the send: from here the sign-in stalls.
        if confirming.is_set():
            tokens.stall.set()
        return mailbox._attachments(draft.id)

    graph.route("GET", f"/v1.0/me/messages/{draft.id}/attachments", attachments)
    async with acting_session(graph, tokens=tokens, limits=QUICK) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
            },
        )
        confirm = {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}
        confirming.set()
        stalled = await tools.fail("mail_send_confirmed", confirm)
        assert tokens.stall.is_set(), "the sign-in stalled at the send itself"
        assert mailbox.sent == [], "no send request left"
        assert stalled["error_code"] == "auth_required"
        assert "nothing was sent" in stalled["message"]
        assert "sign-in service did not answer" in stalled["message"]
        assert stalled["retry_safe"] is True
        assert stalled["outcome"]["status"] == "prepared"
        status = await tools.ok(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
        assert status["status"] == "prepared", "the claim was given back"

        confirming.clear()
        tokens.stall.clear()
        sent = await tools.ok("mail_send_confirmed", confirm)
        again = await tools.ok("mail_send_confirmed", confirm)
        recorded = await tools.ok(
            "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
        )
    assert sent["status"] == "verified"
    # Graph's 202 is kept as the provider's status, apart from the preparation's own.
    assert recorded["status"] == "verified" and recorded["outcome"]["provider_status"] == 202
    assert again["resent"] is False
    assert [d for d, _ in mailbox.sent] == [native(prepared["message"]["id"])]
