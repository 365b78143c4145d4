"""Who confirms a send or a permanent deletion: the person where the client can ask.

The operator's ``--confirm`` (``MFC_CONFIRM``) decides:

- ``auto`` (the default): ask the person where the client declared elicitation; else the
  assistant's confirmation (the prepared_id and digest it passes) is taken, as in 0.2;
- ``user``: act only on the person's own answer; a client that cannot ask gets
  ``confirmation_required`` and nothing is done;
- ``assistant``: never ask (for clients whose elicitation is not shown to a person).

The result says which happened (``confirmed_by``: ``person`` or ``assistant``). Only an
``accept`` with the acting choice picked acts; decline, cancel, a missing or malformed
answer, a ``requestState`` that does not verify, or no answer in time do nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from mfconnector.elicitation import (
    CONFIRM_KEY,
    CURRENT_ASK,
    AskFailed,
    InputRequired,
    Question,
    decision_of,
    form_params,
)
from mfconnector.limits import Limits
from mfconnector.visible import make_visible
from mfconnector.writes.errors import WriteError
from mfconnector.writes.gates import GateConfigError
from mfconnector.writes.outgoing import record_warnings

__all__ = [
    "CONFIRM_ENV",
    "CONFIRM_MODES",
    "ConfirmedBy",
    "confirm_mode",
    "confirm_with_person",
    "delete_question",
    "send_question",
]

CONFIRM_ENV = "MFC_CONFIRM"
CONFIRM_MODES = ("auto", "user", "assistant")
ConfirmedBy = Literal["person", "assistant"]


def confirm_mode(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    """``--confirm`` first, then ``MFC_CONFIRM``; unset or empty is ``auto``."""
    flag = getattr(args, "confirm", None)
    if flag:
        return str(flag)
    value = env.get(CONFIRM_ENV, "").strip().lower()
    if value == "":
        return "auto"
    if value not in CONFIRM_MODES:
        raise GateConfigError(
            f"{CONFIRM_ENV} must be user, assistant or auto, not {value[:20]!r}",
            hint=f"unset {CONFIRM_ENV} to ask the person where the client can",
        )
    return value


def _people(people: list[dict[str, str]]) -> str:
    shown = []
    for person in people:
        name, address = make_visible(person.get("name", "")), make_visible(person["address"])
        shown.append(f"{name} <{address}>" if name else address)
    return ", ".join(shown) or "(none)"


def _look_alike_lines(record: dict[str, Any]) -> list[str]:
    """One warning line per look-alike (a Cyrillic letter in a Latin domain reads the same on
    screen; a name can be another address): the preview's warnings, in words. Invisible
    characters need no line: every field is shown with them written out."""
    lines = []
    for warning in record_warnings(record):
        if warning["kind"] == "mixed_script":
            scripts = " and ".join(warning["scripts"])
            lines.append(
                f"WARNING: {warning['field']} mixes {scripts} letters: {warning['shown_as']}"
            )
        elif warning["kind"] == "name_is_another_address":
            lines.append(
                f"WARNING: the name {make_visible(warning['name'])!r} is shown for the "
                f"address {make_visible(warning['address'])}"
            )
    return lines


def send_question(record: dict[str, Any], text: str, binding: str, limits: Limits) -> Question:
    """The form's text for a frozen message: every recipient, subject, attachment names,
    the first ``confirm_excerpt_chars`` of the body; invisible characters made visible."""
    lines = [
        "Send this email now? It cannot be recalled.",
        f"From: {_people([record['from']])}",
        f"To: {_people(record['to'])}",
    ]
    for key, label in (("cc", "Cc"), ("bcc", "Bcc"), ("reply_to", "Reply-To")):
        if record.get(key):
            lines.append(f"{label}: {_people(record[key])}")
    lines += _look_alike_lines(record)
    lines.append(f"Subject: {make_visible(record['subject'])}")
    names = [make_visible(a["name"]) for a in record["attachments"]]
    lines.append(f"Attachments: {', '.join(names) if names else '(none)'}")
    excerpt = " ".join(text.split())
    if len(excerpt) > limits.confirm_excerpt_chars:
        excerpt = excerpt[: limits.confirm_excerpt_chars] + "..."
    lines += ["", make_visible(excerpt)]
    return Question("\n".join(lines), "Send", binding)


def delete_question(
    subject: str | None, sender: str | None, received: str | None, binding: str
) -> Question:
    lines = [
        "Delete this message permanently? It will not go to Deleted Items and cannot be recovered.",
        f"From: {make_visible(sender or '(unknown)')}",
        f"Subject: {make_visible(subject or '')}",
        f"Received: {received or '(unknown)'}",
    ]
    return Question("\n".join(lines), "Delete", binding)


def _refusal(code: str, message: str, hint: str, consequence: str) -> WriteError:
    return WriteError(code, f"{message}; {consequence}", hint=hint, retry_safe=True)


async def confirm_with_person(
    mode: str,
    tool: str,
    arguments: dict[str, Any],
    question_of: Callable[[], Awaitable[Question]],
    *,
    now: float,
    limits: Limits,
    consequence: str,
) -> ConfirmedBy:
    """Ask the person (or not, per ``mode``); returns who confirmed, or raises.

    In 2026-07-28 the first call raises ``InputRequired`` (the server answers
    ``input_required``); the client's retry brings the answer and the signed state.
    ``question_of`` builds the question only when someone is asked.
    """
    ask = CURRENT_ASK.get()
    if mode == "assistant" or ask is None or not ask.can_ask:
        if mode == "user":
            raise _refusal(
                "confirmation_required",
                "this server acts only on the person's own confirmation (--confirm user), "
                "and this client cannot ask them (it declared no form elicitation)",
                "use a client that supports MCP elicitation, or ask the operator",
                consequence,
            )
        return "assistant"
    hint = "call again with the same arguments to ask the person afresh"
    question = await question_of()
    if ask.round_trip is None:
        binding = question.binding
        if ask.request_state is None and ask.input_responses is None:
            state = ask.signer.sign(tool, arguments, binding, now + limits.confirm_wait_seconds)
            request = {"method": "elicitation/create", "params": form_params(question, ask.version)}
            raise InputRequired({CONFIRM_KEY: request}, state)
        problem = ask.signer.verify(ask.request_state, tool, arguments, binding, now)
        if problem is not None:
            raise _refusal("confirmation_invalid", problem, hint, consequence)
        responses = ask.input_responses
        answer = responses.get(CONFIRM_KEY) if isinstance(responses, dict) else None
    else:
        try:
            answer = await ask.round_trip(form_params(question, ask.version))
        except AskFailed as error:
            raise _refusal(
                "declined", f"the person's answer did not arrive: {error}", hint, consequence
            ) from None
    decision = decision_of(answer, question)
    if decision == "accept":
        return "person"
    if decision == "invalid":
        raise _refusal(
            "confirmation_invalid",
            f"the client's answer is not a choice of {question.act_choice!r} or 'Cancel'",
            hint,
            consequence,
        )
    said = "declined" if decision == "decline" else "dismissed the question"
    raise _refusal(
        "declined",
        f"the person {said}",
        "do not ask again unless the person asks you to",
        consequence,
    )
