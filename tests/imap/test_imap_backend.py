"""Issue 19's cases against the real Dovecot, through ``ImapMailBackend``: a re-created
folder is ``stale_reference``; ``[MODIFIED]`` is ``conflict`` with nothing changed; a
20 MB message is read in bounded memory; a dropped connection is retried for reads and is
``outcome_unknown`` for a change already sent; SMTP 5xx is ``rejected`` and a connection
closed inside DATA is ``unknown`` with exactly one delivery; hostile MIME gives text or a
clear error."""

from __future__ import annotations

import dataclasses
import email.utils
import itertools
import json
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import trio

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.failures import (
    Ambiguous,
    Conflict,
    StaleReference,
)
from mfconnector.mail.model import Folder, Person
from mfconnector.mail.outgoing import DraftContent
from mfconnector.mail.query import FlagChange, MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import account_tag
from mfconnector.writes.store import Preparation, SendStore
from tests.support.imap_fakes import CuttingProxy
from tests.support.mailservers import Dovecot, SmtpRelay

pytestmark = pytest.mark.slow

_names = itertools.count()
Relay = Callable[..., SmtpRelay]


def unique(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


def raw_message(subject: str, body: bytes = b"Hello.\r\n", headers: bytes = b"") -> bytes:
    return (
        (
            f"From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: {subject}\r\n"
            f"Date: {email.utils.formatdate()}\r\nMessage-ID: <{subject}@example.org>\r\n"
        ).encode()
        + headers
        + b"\r\n"
        + body
    )


def make_backend(
    settings: ServerSettings, *, smtp: ServerSettings | None = None, limits: Limits = DEFAULT_LIMITS
) -> ImapMailBackend:
    return ImapMailBackend(
        account_tag("imap", "work"),
        settings,
        limits,
        smtp=smtp,
        sender=Person("Alice", "alice@example.org"),
    )


@pytest.fixture
async def backend(alice: ServerSettings) -> AsyncIterator[ImapMailBackend]:
    made = make_backend(alice)
    await made.start()
    yield made
    await made.aclose()


def append(dovecot: Dovecot, folder: str, raw: bytes, *, create: bool = True) -> None:
    imap = dovecot.imaplib()
    try:
        if create:
            imap.create(folder)
        status, answer = imap.append(folder, "", None, raw)
        assert status == "OK", answer
    finally:
        imap.logout()


async def only_message(backend: ImapMailBackend, folder: Folder) -> object:
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))
    assert len(page.items) == 1
    return page.items[0]


async def test_a_folder_deleted_and_recreated_makes_its_references_stale(
    dovecot: Dovecot, backend: ImapMailBackend
) -> None:
    name = unique("Recreated")
    append(dovecot, name, raw_message(unique("first")))
    folder = await backend.resolve_folder(name, "folder")
    first = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=1))
    old = first.items[0]
    imap = dovecot.imaplib()
    imap.delete(name)
    imap.logout()
    append(dovecot, name, raw_message(unique("second")))  # UID 1 again, another message
    for act in (
        backend.read(old.ref, ReadRequest()),
        backend.set_flags(old.ref, FlagChange(flag="flagged")),
        backend.delete_permanently(old.ref),
    ):
        with pytest.raises(StaleReference, match="UIDVALIDITY"):
            await act
    with pytest.raises(StaleReference, match="UIDVALIDITY"):
        await backend.list_messages(
            folder, MessageFilter(), PageRequest(limit=1, position=first.here)
        )
    fresh = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))
    [survivor] = fresh.items
    assert survivor.ref != old.ref and survivor.flag == "none"  # nothing acted on it


async def test_a_change_by_another_client_since_the_read_is_a_conflict_and_changes_nothing(
    dovecot: Dovecot, backend: ImapMailBackend
) -> None:
    name = unique("Modified")
    append(dovecot, name, raw_message(unique("contested")))
    folder = await backend.resolve_folder(name, "folder")
    item = await only_message(backend, folder)
    read = await backend.read(item.ref, ReadRequest(with_body=False))  # type: ignore[attr-defined]
    assert read.change_token is not None
    imap = dovecot.imaplib()  # someone else marks it read meanwhile
    imap.select(name)
    imap.uid("STORE", "1", "+FLAGS", "(\\Seen)")
    imap.logout()
    with pytest.raises(Conflict) as caught:
        await backend.set_flags(
            read.ref, FlagChange(flag="flagged", unchanged_since=read.change_token)
        )
    assert caught.value.error_code == "conflict" and caught.value.retry_safe
    after = await backend.read(read.ref, ReadRequest(with_body=False))
    assert after.flag == "none" and not after.unread


async def test_a_20_mb_message_is_read_in_bounded_memory(
    dovecot: Dovecot, backend: ImapMailBackend
) -> None:
    name = unique("Twenty")
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\r\n"
    size = 20 * 1024 * 1024
    append(
        dovecot,
        name,
        raw_message(unique("twenty"), b"Start of the text.\r\n" + line * (size // len(line))),
    )
    folder = await backend.resolve_folder(name, "folder")
    item = await only_message(backend, folder)
    tracemalloc.start()
    try:
        message = await backend.read(item.ref, ReadRequest())  # type: ignore[attr-defined]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message.body is not None and message.body.text.startswith("Start of the text.")
    assert any("mime_message_bytes" in note for note in message.body.notes)
    cap = DEFAULT_LIMITS.mime_message_bytes
    assert peak < 3 * cap and cap < size, f"peak {peak:,} bytes for a {size:,}-byte message"


@pytest.fixture
def cutting(dovecot: Dovecot) -> AsyncIterator[CuttingProxy]:
    relay = CuttingProxy(dovecot.imap_port)
    yield relay  # type: ignore[misc]
    relay.close()


async def test_a_read_whose_connection_drops_mid_fetch_is_retried_on_a_fresh_one(
    dovecot: Dovecot, cutting: CuttingProxy
) -> None:
    name = unique("Dropped")
    body = b"B" * 200_000 + b"\r\nThe end.\r\n"
    append(dovecot, name, raw_message(unique("dropped"), body))
    settings = ServerSettings("127.0.0.1", cutting.port, "plain", "alice", dovecot.password)
    backend = make_backend(settings)
    folder = await backend.resolve_folder(name, "folder")
    item = await only_message(backend, folder)
    cutting.cut_after = 100_000  # inside the body's literal
    message = await backend.read(item.ref, ReadRequest())  # type: ignore[attr-defined]
    assert cutting.cuts == 1 and backend.pool.opened == 2
    assert message.body is not None and message.body.text.rstrip().endswith("The end.")
    await backend.aclose()


async def test_a_change_whose_connection_drops_after_it_left_is_outcome_unknown(
    dovecot: Dovecot, cutting: CuttingProxy
) -> None:
    name = unique("Unknown")
    append(dovecot, name, raw_message(unique("unknown")))
    settings = ServerSettings("127.0.0.1", cutting.port, "plain", "alice", dovecot.password)
    backend = make_backend(settings)
    folder = await backend.resolve_folder(name, "folder")
    item = await only_message(backend, folder)
    cutting.cut_on = b"UID STORE"
    with pytest.raises(Ambiguous) as caught:
        await backend.set_flags(item.ref, FlagChange(flag="flagged"))  # type: ignore[attr-defined]
    assert caught.value.error_code == "outcome_unknown" and caught.value.retry_safe is False
    assert backend.pool.opened == 1, "a change is never repeated on a fresh connection"
    await backend.aclose()


def smtp_settings(relay: SmtpRelay) -> ServerSettings:
    return ServerSettings("127.0.0.1", relay.port, "plain", "", "")


async def sent_draft(backend: ImapMailBackend, subject: str) -> object:
    draft = await backend.create_draft(
        DraftContent(to=(Person("Bob", "bob@example.org"),), subject=subject, text="Hi Bob.\n")
    )
    return await backend.freeze(draft.ref)


def bob_copies(dovecot: Dovecot, message_id: str) -> int:
    return sum(message_id.encode() in m for m in dovecot.inbox_messages("bob"))


async def test_an_smtp_5xx_is_rejected_with_the_reply_and_nothing_is_filed(
    dovecot: Dovecot, alice: ServerSettings, smtp_relay: Relay
) -> None:
    relay = smtp_relay("reject_rcpt")
    backend = make_backend(alice, smtp=smtp_settings(relay))
    frozen = await sent_draft(backend, unique("rejected"))
    result = await backend.send(frozen)  # type: ignore[arg-type]
    assert result.outcome == "rejected" and result.sent_copy == "none"
    assert result.provider_reply is not None and "No such user" in result.provider_reply
    assert bob_copies(dovecot, frozen.message_id) == 0  # type: ignore[attr-defined]
    assert await backend.verify_sent(frozen) is False  # type: ignore[arg-type]
    await backend.aclose()


async def test_a_connection_closed_inside_data_is_unknown_and_delivered_exactly_once(
    dovecot: Dovecot, alice: ServerSettings, smtp_relay: Relay
) -> None:
    relay = smtp_relay("close_inside_data")
    backend = make_backend(alice, smtp=smtp_settings(relay))
    frozen = await sent_draft(backend, unique("unknown"))
    result = await backend.send(frozen)  # type: ignore[arg-type]
    assert result.outcome == "unknown" and "do not send again" in (result.detail or "")
    assert result.sent_copy == "none", "no copy is filed for a send that may not have gone"
    assert len(relay.received) == 1
    assert bob_copies(dovecot, frozen.message_id) == 1  # type: ignore[attr-defined]
    await backend.aclose()


async def test_a_sent_message_is_filed_in_sent_and_a_failed_filing_is_no_error(
    dovecot: Dovecot, smtp_relay: Relay, cutting: CuttingProxy
) -> None:
    relay = smtp_relay()
    settings = ServerSettings("127.0.0.1", cutting.port, "plain", "alice", dovecot.password)
    backend = make_backend(settings, smtp=smtp_settings(relay))
    frozen = await sent_draft(backend, unique("filed"))
    result = await backend.send(frozen)  # type: ignore[arg-type]
    assert (result.outcome, result.sent_copy) == ("sent", "appended")
    assert await backend.verify_sent(frozen) is True  # type: ignore[arg-type]
    # The exact frozen bytes went out: Bob's copy holds them below the relay's headers.
    message_id = frozen.message_id.encode()  # type: ignore[attr-defined]
    [copy] = [m for m in dovecot.inbox_messages("bob") if message_id in m]
    assert frozen.mime.replace(b"\r\n", b"\n").strip() in copy.replace(b"\r\n", b"\n")  # type: ignore[attr-defined]
    # The connection drops while the copy is being filed: the send is still "sent".
    second = await sent_draft(backend, unique("unfiled"))
    cutting.cut_on = b"APPEND"
    result = await backend.send(second)  # type: ignore[arg-type]
    assert (result.outcome, result.sent_copy) == ("sent", "append_failed")
    assert "Sent" in (result.detail or "")
    assert len(relay.received) == 2
    await backend.aclose()


HOSTILE = {
    "nested": (
        b"Content-Type: multipart/mixed; boundary=b0\r\n",
        b"".join(
            f"--b{i}\r\nContent-Type: multipart/mixed; boundary=b{i + 1}\r\n\r\n".encode()
            for i in range(1000)
        )
        + b"--b1000\r\nContent-Type: text/plain\r\n\r\ndeep text\r\n",
    ),
    "huge_headers": (
        b"".join(b"X-Filler-%d: x\r\n" % i for i in range(200_000)),
        b"after the headers\r\n",
    ),
    "bad_base64": (
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n",
        b"SGVsbG8g!!!d29y bGQ=\r\n====\r\n",
    ),
    "bad_charset": (b"Content-Type: text/plain; charset=x-no-such\r\n", b"caf\xe9 ol\xe9\r\n"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
async def test_hostile_mime_gives_text_or_a_clear_error_and_serving_goes_on(
    dovecot: Dovecot, backend: ImapMailBackend, kind: str
) -> None:
    headers, body = HOSTILE[kind]
    name = unique("Hostile")
    append(dovecot, name, raw_message(unique(kind), body, headers))
    folder = await backend.resolve_folder(name, "folder")
    with trio.fail_after(30):
        page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))
        [item] = page.items
        message = await backend.read(item.ref, ReadRequest())
    assert message.body is not None
    text = message.body.text
    if kind == "bad_base64":
        assert "Hello" in text
    elif kind == "bad_charset":
        assert "caf" in text and any("charset" in n for n in message.body.notes)
    elif kind == "huge_headers":
        assert any("mime_header" in n for n in message.body.notes)
    else:
        assert any("mime_depth" in n for n in message.body.notes)
    again = await backend.folders(None, PageRequest(limit=50))  # the backend still serves
    assert any(f.role == "inbox" for f in again.items)


ALTERNATIVE = (
    b"--alt\r\nContent-Type: text/plain\r\n\r\nplain\r\n"
    b"--alt\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n--alt--\r\n"
)


@pytest.mark.parametrize("count", [2, 3, 4])  # imap_list_scan_messages = 3: L-1, L, L+1
async def test_a_filtered_listing_stops_at_the_scan_bound_and_goes_on_from_there(
    dovecot: Dovecot, alice: ServerSettings, count: int
) -> None:
    name = unique("Scan")
    imap = dovecot.imaplib()
    imap.create(name)
    for i in range(count):  # multipart, so SEARCH cannot rule them out; none has an attachment
        headers = b"Content-Type: multipart/alternative; boundary=alt\r\n"
        imap.append(name, "", None, raw_message(unique(f"plain{i}"), ALTERNATIVE, headers))
    imap.logout()
    limits = dataclasses.replace(DEFAULT_LIMITS, imap_list_scan_messages=3)
    backend = make_backend(alice, limits=limits)
    folder = await backend.resolve_folder(name, "folder")
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=10))
    assert len(page.items) == count  # without an exact filter no scan bound applies
    where = MessageFilter(has_attachments=True)
    page = await backend.list_messages(folder, where, PageRequest(limit=10))
    assert page.items == []
    if count <= 3:
        assert page.next is None and page.note is None
    else:
        assert page.next is not None and "imap_list_scan_messages" in (page.note or "")
        rest = await backend.list_messages(folder, where, PageRequest(limit=10, position=page.next))
        assert rest.items == [] and rest.next is None
    await backend.aclose()


@pytest.mark.parametrize("count", [2, 3, 4])  # imap_thread_messages = 3: L-1, L, L+1
async def test_a_conversation_is_gathered_up_to_its_bound(
    dovecot: Dovecot, alice: ServerSettings, count: int
) -> None:
    name = unique("Conversation")
    imap = dovecot.imaplib()
    imap.create(name)
    previous = ""
    for i in range(count):
        own = f"<{name}-{i}@example.org>"
        refs = f"In-Reply-To: {previous}\r\nReferences: {previous}\r\n" if previous else ""
        raw = raw_message(f"{name}-{i}").replace(
            f"Message-ID: <{name}-{i}@example.org>".encode(),
            f"Message-ID: {own}\r\n{refs}".encode().rstrip(b"\r\n"),
        )
        imap.append(name, "", None, raw)
        previous = own
    imap.logout()
    limits = dataclasses.replace(DEFAULT_LIMITS, imap_thread_messages=3)
    backend = make_backend(alice, limits=limits)
    folder = await backend.resolve_folder(name, "folder")
    newest = (await backend.list_messages(folder, MessageFilter(), PageRequest(limit=1))).items[0]
    thread = await backend.thread(newest.ref, PageRequest(limit=10))
    assert len(thread.items) == min(count, 3)
    assert "imap_thread_messages" in (thread.note or "")
    await backend.aclose()


WORKER = Path(__file__).parent.parent / "support" / "imap_send_worker.py"


async def test_two_processes_racing_one_preparation_deliver_it_once(
    dovecot: Dovecot, smtp_relay: Relay, tmp_path: Path
) -> None:
    """The one-time claim in the shared state file (writes/store.py) in front of the IMAP
    backend's send: two real processes, one SQLite file, one SMTP relay into Dovecot."""
    relay = smtp_relay()
    settings = ServerSettings("127.0.0.1", dovecot.imap_port, "plain", "alice", dovecot.password)
    backend = make_backend(settings, smtp=smtp_settings(relay))
    draft = await backend.create_draft(
        DraftContent(to=(Person("Bob", "bob@example.org"),), subject=unique("race"), text="Once.\n")
    )
    frozen = await backend.freeze(draft.ref)
    state = tmp_path / "state" / "sends.sqlite3"
    store = SendStore(state)
    now = time.time()
    store.save(Preparation("prep-1", "work", "", str(draft.ref), frozen.digest, {}, now, now + 600))
    store.close()
    go = tmp_path / "go"
    argv = [
        str(state),
        "prep-1",
        frozen.digest,
        str(draft.ref),
        str(dovecot.imap_port),
        str(relay.port),
        str(go),
    ]

    def race() -> list[dict[str, object]]:
        racers = [
            subprocess.Popen(
                [sys.executable, str(WORKER), *argv], stdout=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        time.sleep(0.5)  # both interpreters up and waiting
        go.write_text("go")
        return [json.loads(r.communicate(timeout=60)[0]) for r in racers]

    answers = await trio.to_thread.run_sync(race)
    claims = sorted(a["claim"] for a in answers)
    assert claims == ["claimed", "done"], answers
    assert [a.get("outcome") for a in answers if a["claim"] == "claimed"] == ["sent"]
    assert len(relay.received) == 1
    assert bob_copies(dovecot, frozen.message_id or "") == 1
    await backend.aclose()


async def test_a_cancelled_read_discards_its_connection_and_the_next_read_is_fresh(
    dovecot: Dovecot, alice: ServerSettings
) -> None:
    name = unique("Cancelled")
    append(dovecot, name, raw_message(unique("cancelled"), b"word " * 1_000_000))
    limits = dataclasses.replace(DEFAULT_LIMITS, imap_fetch_chunk_bytes=2_048)
    backend = make_backend(alice, limits=limits)  # 5 MiB in 2 KB fetches: 2,560 round trips
    folder = await backend.resolve_folder(name, "folder")
    item = await only_message(backend, folder)
    assert backend.pool.opened == 1
    with trio.move_on_after(0.05) as scope:
        await backend.read(item.ref, ReadRequest())  # type: ignore[attr-defined]
    assert scope.cancelled_caught, "the read finished before it could be cancelled"
    # Cancelled inside a command, the connection is discarded (its framing is lost);
    # cancelled while waiting for the connection's lock, nothing was sent and it is sound.
    discarded = backend.pool.idle == 0
    message = await backend.read(item.ref, ReadRequest(with_body=False))  # type: ignore[attr-defined]
    assert message.ref == item.ref and message.subject == item.subject  # type: ignore[attr-defined]
    assert backend.pool.opened == (2 if discarded else 1)
    await backend.aclose()
