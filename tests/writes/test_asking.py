"""The confirmation limits at L-1, L and L+1, and the bounds of waiting questions.

``confirm_wait_seconds``: a 2025 ``elicitation/create`` answered before it is used, one
answered after is not (trio's mock clock, no real waiting); a ``requestState`` signed for
L seconds verifies until then and not from then on. ``confirm_excerpt_chars``: a body up to
the limit is shown whole, a longer one cut with "...". At most ``limit`` questions wait.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import trio
import trio.testing

from mfconnector.asking import PendingAsks
from mfconnector.elicitation import AskFailed, StateSigner
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.writes.confirm import send_question

WAIT = DEFAULT_LIMITS.confirm_wait_seconds


async def ask_and_answer_after(seconds: float, asks: PendingAsks) -> Any:
    sent: list[dict[str, Any]] = []

    async def send(line: bytes) -> None:
        sent.append(json.loads(line))

    async def answer() -> None:
        await trio.sleep(seconds)
        asks.deliver(sent[0]["id"], {"action": "accept"}, None)

    outcome: list[Any] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        try:
            outcome.append(await asks.asker(send)({"message": "Send?"}))
        except AskFailed as error:
            outcome.append(error)
        nursery.cancel_scope.cancel()
    return outcome[0]


@pytest.mark.parametrize(("after", "answered"), [(WAIT - 1, True), (WAIT + 1, False)])
def test_a_legacy_answer_counts_only_within_confirm_wait_seconds(
    after: float, answered: bool
) -> None:
    async def main() -> None:
        asks = PendingAsks(limit=2, wait_seconds=WAIT)
        outcome = await ask_and_answer_after(after, asks)
        if answered:
            assert outcome == {"action": "accept"}
        else:
            assert isinstance(outcome, AskFailed)
            assert str(outcome) == f"no answer within {WAIT:g} s"
        assert asks.waiting == 0, "nothing is left waiting"

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize(("elapsed", "valid"), [(WAIT - 1, True), (WAIT, False), (WAIT + 1, False)])
def test_a_request_state_is_good_for_confirm_wait_seconds(elapsed: float, valid: bool) -> None:
    signer = StateSigner()
    issued = 1_800_000_000.0
    state = signer.sign("mail_send_confirmed", {"a": 1}, "p:d", issued + WAIT)
    problem = signer.verify(state, "mail_send_confirmed", {"a": 1}, "p:d", issued + elapsed)
    assert (problem is None) is valid, problem
    if not valid:
        assert problem == "requestState has expired"
    other = StateSigner().verify(state, "mail_send_confirmed", {"a": 1}, "p:d", issued)
    assert other is not None and "does not verify" in other, "another process's key"


@pytest.mark.parametrize(
    ("length", "cut"),
    [
        (DEFAULT_LIMITS.confirm_excerpt_chars - 1, False),
        (DEFAULT_LIMITS.confirm_excerpt_chars, False),
        (DEFAULT_LIMITS.confirm_excerpt_chars + 1, True),
    ],
)
def test_the_body_excerpt_the_person_sees_is_bounded(length: int, cut: bool) -> None:
    record = {
        "from": {"name": "Adele", "address": "adele@contoso.com"},
        "to": [{"name": "", "address": "megan@contoso.com"}],
        "subject": "Numbers",
        "attachments": [{"name": "INV_\u202efdp.scr"}],
    }
    body = "x" * (length - 1) + "y"
    message = send_question(record, body, "p:d", DEFAULT_LIMITS).message
    excerpt = message.rsplit("\n", 1)[-1]
    assert excerpt == ("x" * DEFAULT_LIMITS.confirm_excerpt_chars + "..." if cut else body)
    assert "INV_<U+202E>fdp.scr" in message, "names are shown with hidden characters visible"


def test_at_most_limit_questions_wait_and_unknown_answers_are_ignored() -> None:
    async def main() -> None:
        asks = PendingAsks(limit=1, wait_seconds=WAIT)

        async def send(line: bytes) -> None:
            pass

        async with trio.open_nursery() as nursery:
            nursery.start_soon(asks.asker(send), {"message": "first"})
            await trio.testing.wait_all_tasks_blocked()
            assert asks.waiting == 1
            with pytest.raises(AskFailed, match="already waiting"):
                await asks.asker(send)({"message": "second"})
            asks.deliver("mfc-elicit-77", {"action": "accept"}, None)
            asks.deliver(1, {"action": "accept"}, None)
            assert asks.waiting == 1, "answers to other ids change nothing"
            nursery.cancel_scope.cancel()
        assert asks.waiting == 0, "a cancelled question is forgotten"

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_active_limits_decide_the_excerpt_not_the_defaults() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, confirm_excerpt_chars=5)
    record = {
        "from": {"name": "", "address": "a@b.example"},
        "to": [{"name": "", "address": "c@d.example"}],
        "subject": "s",
        "attachments": [],
    }
    assert send_question(record, "abcdefgh", "p", limits).message.endswith("abcde...")


def test_the_person_is_warned_of_a_look_alike_address_in_the_question() -> None:
    record = {
        "from": {"name": "Adele", "address": "adele@contoso.com"},
        "to": [
            {"name": "CEO", "address": "ceo@cont\u043eso.com"},
            {"name": "boss@contoso.com", "address": "x@evil.example"},
        ],
        "subject": "Wire transfer",
        "attachments": [],
    }
    message = send_question(record, "Please pay.", "p:d", DEFAULT_LIMITS).message
    assert "WARNING: to[0].address mixes CYRILLIC and LATIN letters: cont<U+043E>so" in message
    assert "To: CEO <ceo@cont\u043eso.com>, boss@contoso.com <x@evil.example>" in message
    assert "WARNING: the name 'boss@contoso.com' is shown for the address x@evil.example" in (
        message
    )
