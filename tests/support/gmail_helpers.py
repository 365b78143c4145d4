"""Shared pieces of the Gmail emulator tests: clients with a token, RFC 5322 test mail.

Tests talk to the emulator as a Gmail client does: HTTP requests with a bearer token, at
the httpx transport seam (or over 127.0.0.1), reading Google's documented JSON. Expected
answers come from what the test itself put into the mailbox, never from emulator code.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

import httpx

from mfconnector.gmail_emulator import ALL_SCOPES, GmailEmulator, GmailSyncTransport
from mfconnector.gmail_emulator.store import Mailbox

ROOT = "https://gmail.googleapis.com"
API = "/gmail/v1/users/me"
ME = "tester@mail.example"
TOKEN = "all-scopes-token"


def client(emulator: GmailEmulator, token: str = TOKEN) -> httpx.Client:
    return httpx.Client(
        transport=GmailSyncTransport(emulator),
        base_url=ROOT,
        headers={"Authorization": f"Bearer {token}"},
    )


def empty_emulator(now: datetime, tokens: dict[str, Iterable[str]] | None = None) -> GmailEmulator:
    """An emulator with an empty mailbox for ``ME``; ``TOKEN`` has every scope."""
    return GmailEmulator(
        Mailbox(address=ME, now=now), tokens=tokens if tokens is not None else {TOKEN: ALL_SCOPES}
    )


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def rfc822(
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    when: datetime,
    text: str | None = None,
    html: str | None = None,
    cc: Sequence[str] = (),
    message_id: str,
    parent_id: str | None = None,
    attachments: Sequence[tuple[str, str, bytes]] = (),
) -> bytes:
    """A message as a mail client writes one (``attachments``: name, MIME type, bytes)."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(to)
    if cc:
        message["Cc"] = ", ".join(cc)
    message["Subject"] = subject
    message["Date"] = format_datetime(when)
    message["Message-ID"] = message_id
    if parent_id:
        message["In-Reply-To"] = parent_id
        message["References"] = parent_id
    if html is not None and text is None:
        message.set_content(html, subtype="html")
    else:
        message.set_content(text or "")
        if html is not None:
            message.add_alternative(html, subtype="html")
    for name, mime_type, data in attachments:
        maintype, _, subtype = mime_type.partition("/")
        message.add_attachment(data, maintype, subtype, filename=name)
    return message.as_bytes()


def import_message(http: httpx.Client, raw: bytes, labels: Sequence[str]) -> dict[str, Any]:
    """``messages.import`` with the Date header as internalDate (Gmail's default)."""
    reply = http.post(f"{API}/messages/import", json={"raw": b64url(raw), "labelIds": list(labels)})
    assert reply.status_code == 200, reply.text
    found: dict[str, Any] = reply.json()
    return found


def all_ids(http: httpx.Client, **params: Any) -> list[str]:
    """Every message id of a ``messages.list`` query, following nextPageToken."""
    ids: list[str] = []
    token: str | None = None
    while True:
        query = dict(params, **({"pageToken": token} if token else {}))
        body = http.get(f"{API}/messages", params=query).json()
        ids += [m["id"] for m in body.get("messages", [])]
        token = body.get("nextPageToken")
        if not token:
            return ids
