"""A hypothesis state machine over prepare / confirm / status / expiry / edits / restarts /
crashes, against the real tools, the real state file and the loopback Graph.

Whatever the order: no preparation is ever sent twice (across restarts and a process that
dies mid-send), and every send request sends exactly the message that was prepared and
confirmed (the draft's content at the moment of sending equals its content when it was
prepared, and the digest passed was the preparation's own).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from acting import ACCOUNT, FAST, Draft, ScriptedMailbox, acting_session, outlook_id, ref
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
)
from loopback import LoopbackServer, Reply

from mfconnector.writes.store import SendStore

DRAFTS = 3
SEND_BEHAVIOURS = {
    "ok": None,
    "lost": lambda recorded: Reply(raw=b""),
    "refused": lambda recorded: Reply.json({"error": {"code": "ErrorInvalidRecipients"}}, 400),
    "unavailable": lambda recorded: Reply.json({"error": {"code": "x"}}, 500),
}


def dead_pid() -> int:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(finished.stdout)


class SendMachine(RuleBasedStateMachine):
    preparations = Bundle("preparations")

    def __init__(self) -> None:
        super().__init__()
        self.server = LoopbackServer().start()
        self.mailbox = ScriptedMailbox(self.server)
        self.drafts = [self.mailbox.add(Draft(outlook_id(f"machine{i}"))) for i in range(DRAFTS)]
        self.path = DIRECTORY[0] / f"state-{next(RUNS)}.sqlite3"
        self.now = 1_900_000_000.0
        self.store = SendStore(self.path, limits=FAST, clock=self.clock)
        self.prepared: dict[str, dict[str, Any]] = {}
        """prepared_id -> digest, draft id and the draft's content when it was prepared."""
        self.sends_by_preparation: dict[str, int] = {}
        self.behaviour = "ok"
        self.deliverable_by_draft: dict[str, int] = {}
        """Sends of each draft that Graph did not refuse (so may have gone out)."""

    def clock(self) -> float:
        return self.now

    def teardown(self) -> None:
        self.server.close()

    def tools(self, fn: Any) -> Any:
        async def run() -> Any:
            async with acting_session(self.server, store=self.store, clock=self.clock) as tools:
                return await fn(tools)

        return trio.run(run)

    def attribute_sends(self, prepared_id: str, before: int) -> None:
        new = len(self.mailbox.sent) - before
        self.sends_by_preparation[prepared_id] = self.sends_by_preparation.get(prepared_id, 0) + new
        for draft_id, content in self.mailbox.sent[before:]:
            if self.behaviour != "refused":
                self.deliverable_by_draft[draft_id] = self.deliverable_by_draft.get(draft_id, 0) + 1
            expected = self.prepared[prepared_id]
            assert draft_id == expected["draft_id"]
            assert content == expected["content"], "sent a message other than the prepared one"

    @initialize()
    def start(self) -> None:
        self.mailbox.send_reply = None
        self.behaviour = "ok"

    @rule(target=preparations, index=st.integers(0, DRAFTS - 1))
    def prepare(self, index: int) -> Any:
        draft = self.drafts[index]

        async def go(tools: Any) -> Any:
            read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
            return await tools.call(
                "mail_prepare",
                {
                    "action": "draft",
                    "message_id": ref(draft.id),
                    "source_digest": read["source_digest"],
                },
            )

        result = self.tools(go)
        if result["isError"]:
            return multiple()
        data = result["structuredContent"]
        self.prepared[data["prepared_id"]] = {
            "digest": data["digest"],
            "draft_id": draft.id,
            "content": draft.json(),
        }
        return data["prepared_id"]

    @rule(prepared_id=preparations, right_digest=st.booleans())
    def confirm(self, prepared_id: str, right_digest: bool) -> None:
        digest = self.prepared[prepared_id]["digest"] if right_digest else "f" * 64
        before = len(self.mailbox.sent)
        result = self.tools(
            lambda tools: tools.call(
                "mail_send_confirmed", {"prepared_id": prepared_id, "confirmed_digest": digest}
            )
        )
        if not right_digest:
            assert len(self.mailbox.sent) == before
        self.attribute_sends(prepared_id, before)
        if not result["isError"]:
            assert result["structuredContent"]["status"] in ("sent", "verified")

    @rule(prepared_id=preparations)
    def status(self, prepared_id: str) -> None:
        result = self.tools(
            lambda tools: tools.call(
                "mail_review", {"action": "send_status", "prepared_id": prepared_id}
            )
        )
        if self.sends_by_preparation.get(prepared_id) and not result["isError"]:
            assert result["structuredContent"]["status"] not in ("prepared", "expired")

    @rule(index=st.integers(0, DRAFTS - 1), subject=st.sampled_from(["A", "B"]))
    def edit_draft(self, index: int, subject: str) -> None:
        self.drafts[index].subject = subject

    @rule(behaviour=st.sampled_from(sorted(SEND_BEHAVIOURS)))
    def graph_behaves(self, behaviour: str) -> None:
        self.mailbox.send_reply = SEND_BEHAVIOURS[behaviour]
        self.behaviour = behaviour

    @rule(seconds=st.sampled_from([60, 600, FAST.preparation_seconds]))
    def time_passes(self, seconds: int) -> None:
        self.now += seconds

    @rule()
    def restart(self) -> None:
        self.store.close()
        self.store = SendStore(self.path, limits=FAST, clock=self.clock)

    @rule(prepared_id=consumes(preparations), sent=st.booleans())
    def crash_mid_send(self, prepared_id: str, sent: bool) -> None:
        """Another process claims, maybe sends, and dies before recording anything."""
        crashed = SendStore(self.path, limits=FAST, clock=self.clock)
        crashed.instance = f"{socket.gethostname()}|{DEAD_PID}|crashed"
        claim = crashed.claim(prepared_id, ACCOUNT, "/me", self.prepared[prepared_id]["digest"])
        crashed.close()
        if claim.status != "claimed" or not sent:
            return
        expected = self.prepared[prepared_id]
        draft = next(d for d in self.drafts if d.id == expected["draft_id"])
        if draft.json() != expected["content"]:
            return  # the real process re-reads the draft first and would not have sent
        before = len(self.mailbox.sent)
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{self.server.url}/v1.0/me/messages/{draft.id}/send", timeout=5.0)
        self.attribute_sends(prepared_id, before)

    @invariant()
    def never_sent_twice(self) -> None:
        assert all(count <= 1 for count in self.sends_by_preparation.values())

    @invariant()
    def no_draft_goes_out_twice(self) -> None:
        """Per message, not only per preparation (issue 17): only a send Graph refused
        leaves the draft to be prepared and sent again."""
        assert all(count <= 1 for count in self.deliverable_by_draft.values())


DEAD_PID = dead_pid() if os.name == "posix" else 0
"""A process id that no longer runs: the 'crashed' claimer of ``crash_mid_send``."""
DIRECTORY: list[Path] = []
RUNS = itertools.count()


@pytest.mark.slow
def test_no_preparation_is_ever_sent_twice_or_changed(tmp_path: Path) -> None:
    DIRECTORY[:] = [tmp_path]
    machine = SendMachine.TestCase
    machine.settings = settings(
        max_examples=60,
        stateful_step_count=20,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    machine().runTest()
