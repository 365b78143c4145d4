"""The server's instructions for the gates the operator opened.

Computed by whoever builds the server, from the same sentences a read-only server says:
a server that may act says so up front, and how to use what the gates turned on.
"""

from __future__ import annotations

from mfconnector.server import CONTENT_RULES, INSTRUCTIONS
from mfconnector.writes.gates import Gates

__all__ = ["accounts_sentence", "server_instructions"]

ACTING_SCOPE = "Access to one person's Microsoft 365 mail and files."
ACTING_RULE = (
    "The operator turned on tools that change the mailbox: use them only for what the user asked."
)
SENDING_RULE = (
    "Before mail_send_confirmed, show the user the complete mail_prepare preview "
    "(recipients including Bcc, subject, text, attachments) and send only after they "
    "approve that exact message; never call it again after an unclear outcome. "
    "Where the client can ask, the server also asks the user itself before sending, "
    "and acts only on their own answer; show them the preview's "
    "warnings (look-alike addresses, hidden characters)."
)


def server_instructions(gates: Gates) -> str:
    """Read-only by default; with a gate open, what acting allows (and, for sending, how)."""
    if not gates.any:
        return INSTRUCTIONS
    sentences = [ACTING_SCOPE, CONTENT_RULES, ACTING_RULE]
    if gates.send:
        sentences.append(SENDING_RULE)
    return " ".join(sentences)


def accounts_sentence(names: list[str]) -> str:
    """Said first by a server of several accounts: which, and that each call names one."""
    return (
        f"This server serves {len(names)} accounts ({', '.join(names)}): every tool takes "
        "`account`, and an id or cursor works only with the account it came from."
    )
