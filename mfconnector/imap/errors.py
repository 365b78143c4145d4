"""IMAP and SMTP failures, in our words (never a library's).

ImapError (MfcError)
├── ImapProtocolError       the server broke the protocol or a named limit: the
│   └── ImapLimitError      connection is unusable and is discarded (names the limit)
├── ImapConnectionError     connect, TLS or greeting failed, or the connection dropped
├── ImapTimeoutError        a command outlived its deadline (the connection is discarded)
├── ImapCommandError        the server answered NO or BAD (status, response code, text)
└── ImapUnsupportedError    the server lacks the capability a command needs
MailSettingsError           server settings that cannot be used (plain text to a host
                            that is not loopback), refused before connecting; the outcome
                            of an SMTP send is a value, never an exception
"""

from __future__ import annotations

from mfconnector.errors import MfcError

__all__ = [
    "ImapCommandError",
    "ImapConnectionError",
    "ImapError",
    "ImapLimitError",
    "ImapProtocolError",
    "ImapStaleReferenceError",
    "ImapTimeoutError",
    "ImapUnsupportedError",
    "MailSettingsError",
]


class ImapError(MfcError):
    """Any IMAP failure."""


class ImapProtocolError(ImapError):
    """The server sent something the protocol does not allow; the connection is dropped."""


class ImapLimitError(ImapProtocolError):
    """The server sent more than a named limit allows; nothing past the limit was held."""

    def __init__(self, message: str, *, limit: str, value: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value


class ImapConnectionError(ImapError):
    """The connection could not be made, or it was lost."""


class ImapTimeoutError(ImapError):
    """No complete answer within the deadline."""


class ImapCommandError(ImapError):
    """The server refused a command (NO or BAD)."""

    def __init__(self, command: str, status: str, code: str | None, text: str) -> None:
        detail = f" [{code}]" if code else ""
        super().__init__(f"the IMAP server refused {command}: {status}{detail} {text}".strip())
        self.command = command
        self.status = status
        self.code = code
        self.text = text


class ImapStaleReferenceError(ImapError):
    """A reference's UIDVALIDITY no longer matches its folder: nothing was done."""

    def __init__(self, mailbox: str, expected: int, current: int) -> None:
        super().__init__(
            f"the folder {mailbox!r} was re-created or renumbered (UIDVALIDITY {current}, "
            f"the reference was made under {expected}): list the folder again"
        )
        self.mailbox = mailbox
        self.expected = expected
        self.current = current


class ImapUnsupportedError(ImapError):
    """The server does not offer what a command needs (a capability)."""

    def __init__(self, capability: str, what: str) -> None:
        super().__init__(f"the IMAP server does not offer {capability}, needed for {what}")
        self.capability = capability


class MailSettingsError(MfcError):
    """IMAP or SMTP settings that cannot be used (refused before connecting)."""
