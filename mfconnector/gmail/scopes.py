"""Gmail's OAuth scopes, each asked only when its gate is on (the Gmail API's "Choose
scopes" page): reads ``gmail.readonly``; ``--enable-writes`` ``gmail.modify`` (labels,
trash, drafts); ``--enable-send`` ``gmail.send`` and ``gmail.compose`` (drafts to send);
``--enable-delete`` ``https://mail.google.com/``, the only scope that permits permanent
deletion.
"""

from __future__ import annotations

__all__ = [
    "COMPOSE",
    "FULL_MAIL",
    "GATE_SCOPES",
    "MODIFY",
    "READONLY",
    "SEND",
    "gate_flags",
    "login_command",
    "scopes_for",
]

_AUTH = "https://www.googleapis.com/auth/"
READONLY = _AUTH + "gmail.readonly"
MODIFY = _AUTH + "gmail.modify"
SEND = _AUTH + "gmail.send"
COMPOSE = _AUTH + "gmail.compose"
FULL_MAIL = "https://mail.google.com/"


GATE_SCOPES = {"writes": (MODIFY,), "send": (SEND, COMPOSE), "delete": (FULL_MAIL,)}
"""What each acting gate needs beyond the read scope."""


def scopes_for(
    *, writes: bool = False, send: bool = False, delete: bool = False
) -> tuple[str, ...]:
    """The scopes a sign-in asks for with these gates on, in a stable order."""
    scopes = [READONLY]
    if writes:
        scopes.append(MODIFY)
    if send:
        scopes += [SEND, COMPOSE]
    if delete:
        scopes.append(FULL_MAIL)
    return tuple(scopes)


def gate_flags(*, writes: bool = False, send: bool = False, delete: bool = False) -> list[str]:
    return [
        flag
        for flag, on in (
            ("--enable-writes", writes),
            ("--enable-send", send),
            ("--enable-delete", delete),
        )
        if on
    ]


def login_command(*, writes: bool = False, send: bool = False, delete: bool = False) -> str:
    """The command that grants exactly what these gates need."""
    flags = gate_flags(writes=writes, send=send, delete=delete)
    return " ".join(["mfconnector login --provider gmail", *flags])
