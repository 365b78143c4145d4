"""An in-memory Gmail API v1 (``/gmail/v1/users/me/...``) for the demo and for tests.

It imports nothing of the rest of mfconnector (emulators sit outside the connector's
layers). Public entry points:

- ``GmailEmulator``: one mailbox, a token-to-scopes map, fault knobs (``add_fault``);
- ``build_demo_mailbox()``: the deterministic demo mailbox;
- ``transport(emulator)`` / ``GmailTransport``: the httpx (async) transport seam;
- ``serve_on_loopback(emulator)``: the same over a real HTTP server on 127.0.0.1.

The pieces, one concern each: ``store`` (labels, messages, threads, drafts, history),
``mime`` (RFC 5322 bytes to Gmail's part tree), ``search`` (the ``q`` syntax), ``messages``,
``threads`` (and drafts), ``labels`` (and history, profile): the methods; ``batch`` (the
multipart batch endpoint); ``errors`` (Google's error shape); ``calls`` (requests, scopes,
paging); ``core`` (dispatch, auth, faults); ``transport``, ``server``; ``demo``,
``demo_cast``, ``demo_threads``, ``demo_singles`` (the demo data), ``demo_build``
(deterministic MIME); its documents come from ``mfconnector.demo_documents``, shared with
the Graph emulator. What it implements and where it is simpler than Gmail:
``docs/GMAIL_EMULATOR.md``.
"""

from __future__ import annotations

from mfconnector.gmail_emulator.calls import (
    ALL_SCOPES,
    COMPOSE,
    FULL,
    INSERT,
    LABELS,
    METADATA,
    MODIFY,
    READONLY,
    SEND,
)
from mfconnector.gmail_emulator.core import DEMO_TOKEN, Fault, GmailEmulator
from mfconnector.gmail_emulator.demo import DEMO_ADDRESS, DEMO_NOW, build_demo_mailbox
from mfconnector.gmail_emulator.server import LoopbackGmail, serve_on_loopback
from mfconnector.gmail_emulator.transport import GmailSyncTransport, GmailTransport

__all__ = [
    "ALL_SCOPES",
    "COMPOSE",
    "DEMO_ADDRESS",
    "DEMO_NOW",
    "DEMO_TOKEN",
    "FULL",
    "INSERT",
    "LABELS",
    "METADATA",
    "MODIFY",
    "READONLY",
    "SEND",
    "Fault",
    "GmailEmulator",
    "GmailSyncTransport",
    "GmailTransport",
    "LoopbackGmail",
    "build_demo_mailbox",
    "serve_on_loopback",
    "transport",
]


def transport(emulator: GmailEmulator | None = None) -> GmailTransport:
    """An ``httpx.AsyncBaseTransport`` answering from ``emulator`` (a fresh demo if None)."""
    return GmailTransport(emulator)
