"""Asking the person, not the assistant: the confirmation form, its answer, ``requestState``.

Pure protocol rules (no I/O, no trio). Where a client declares the ``elicitation``
capability, sending and permanent deletion show the person a form (the exact recipients,
subject, attachment names, a short excerpt) with one choice, "Send"/"Delete" or "Cancel",
and act only on ``action: "accept"`` with the acting choice picked. How the form travels:

- 2026-07-28 (multi round-trip requests): the ``tools/call`` is answered with
  ``resultType: "input_required"``, the form under ``inputRequests`` and a ``requestState``
  that this process signed (HMAC-SHA256, a key made at start-up and never written anywhere),
  bound to the tool, its arguments, what is being confirmed and an expiry. The client calls
  again with the same arguments, the state and ``inputResponses``; a state that does not
  verify is refused and nothing is done.
- 2025-11-25 / 2025-06-18: the server sends ``elicitation/create`` on the stream and waits
  (``mfconnector.asking``) for the client's response.

Sources: MCP 2026-07-28 "Multi round-trip requests" and "Elicitation"; MCP 2025-11-25 and
2025-06-18 "Elicitation" (modelcontextprotocol.io/specification).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CONFIRM_KEY",
    "CURRENT_ASK",
    "Ask",
    "AskFailed",
    "InputRequired",
    "Question",
    "StateSigner",
    "client_can_elicit",
    "decision_of",
    "form_params",
]

CONFIRM_KEY = "confirm"
"""The one key of ``inputRequests`` / ``inputResponses`` this server uses."""
DECISION_FIELD = "decision"
CANCEL_CHOICE = "Cancel"
OLDEST_FORM_WITHOUT_MODE = "2025-06-18"
"""2025-06-18 elicitation has no ``mode`` field (forms were the only kind)."""
Decision = Literal["accept", "decline", "cancel", "invalid"]


@dataclass(frozen=True, slots=True)
class Question:
    """What the person is asked: the text, the acting choice, and what it is bound to."""

    message: str
    act_choice: str
    """"Send" or "Delete"."""
    binding: str
    """What is confirmed (a prepared_id and its digest, a message id): the state names it."""


def client_can_elicit(capabilities: Any) -> bool:
    """A client that declared form elicitation (``{}`` means form, per 2025-11-25)."""
    if not isinstance(capabilities, dict):
        return False
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict):
        return False
    return not elicitation or "form" in elicitation


def form_params(question: Question, version: str) -> dict[str, Any]:
    """``elicitation/create`` params: the message and a one-field form, for ``version``."""
    params: dict[str, Any] = {
        "message": question.message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                DECISION_FIELD: {
                    "type": "string",
                    "title": "Your decision",
                    "enum": [question.act_choice, CANCEL_CHOICE],
                }
            },
            "required": [DECISION_FIELD],
        },
    }
    if version != OLDEST_FORM_WITHOUT_MODE:
        params["mode"] = "form"
    return params


def decision_of(result: Any, question: Question) -> Decision:
    """The person's answer: only ``accept`` with the acting choice picked is an accept."""
    if not isinstance(result, dict):
        return "invalid"
    action = result.get("action")
    if action in ("decline", "cancel"):
        return "decline" if action == "decline" else "cancel"
    if action != "accept":
        return "invalid"
    content = result.get("content")
    choice = content.get(DECISION_FIELD) if isinstance(content, dict) else None
    if choice == question.act_choice:
        return "accept"
    return "decline" if choice == CANCEL_CHOICE else "invalid"


class AskFailed(Exception):
    """A legacy round trip that brought no usable answer (no time left, an error, too many)."""


class InputRequired(Exception):
    """Raised by a tool in 2026-07-28: answer the call with ``input_required`` instead."""

    def __init__(self, input_requests: dict[str, Any], request_state: str) -> None:
        super().__init__("input required")
        self.input_requests = input_requests
        self.request_state = request_state

    def result(self) -> dict[str, Any]:
        return {
            "resultType": "input_required",
            "inputRequests": self.input_requests,
            "requestState": self.request_state,
        }


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _fingerprint(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(data.encode("ascii")).hexdigest()


class StateSigner:
    """Signs and verifies ``requestState`` with this process's own key.

    The state is ``base64url(claims) "." base64url(HMAC-SHA256(key, claims))``; the claims
    name the tool, a fingerprint of the arguments and of the binding, and the expiry. The
    client sees it and may change it; a changed one no longer verifies.
    """

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _mac(self, claims: bytes) -> bytes:
        return hmac.new(self._key, claims, hashlib.sha256).digest()

    def sign(self, tool: str, arguments: Any, binding: str, expires_at: float) -> str:
        claims = json.dumps(
            {
                "v": 1,
                "tool": tool,
                "arguments": _fingerprint(arguments),
                "binding": _fingerprint(binding),
                "exp": int(expires_at),
            },
            sort_keys=True,
            separators=(",", ":"),
        ).encode("ascii")
        return f"{_b64(claims)}.{_b64(self._mac(claims))}"

    def verify(self, state: Any, tool: str, arguments: Any, binding: str, now: float) -> str | None:
        """None when ``state`` is ours and still good; else why not, in our words."""
        if not isinstance(state, str) or state.count(".") != 1 or len(state) > 1024:
            return "requestState is not one this server issued"
        encoded, mac = state.split(".")
        try:
            claims = _unb64(encoded)
            signature = _unb64(mac)
            fields = json.loads(claims)
        except (ValueError, UnicodeDecodeError):
            return "requestState is not one this server issued"
        if not hmac.compare_digest(signature, self._mac(claims)) or not isinstance(fields, dict):
            return "requestState does not verify (it was changed, or issued by another process)"
        if (
            fields.get("tool") != tool
            or fields.get("arguments") != _fingerprint(arguments)
            or fields.get("binding") != _fingerprint(binding)
        ):
            return "requestState was issued for a different call"
        expires = fields.get("exp")
        if not isinstance(expires, int) or now >= expires:
            return "requestState has expired"
        return None


@dataclass(frozen=True, slots=True)
class Ask:
    """How the person can be asked during one tool call (set by the server per call)."""

    version: str
    can_ask: bool
    signer: StateSigner
    input_responses: Any = None
    request_state: Any = None
    round_trip: Callable[[dict[str, Any]], Awaitable[Any]] | None = None
    """Legacy eras: send ``elicitation/create`` with these params, return the result."""


CURRENT_ASK: ContextVar[Ask | None] = ContextVar("mfconnector_current_ask", default=None)
"""The running tool call's ``Ask``; each worker task has its own context."""
