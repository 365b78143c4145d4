"""Every IMAP command the backend needs, against a real Dovecot over TLS."""

from __future__ import annotations

import dataclasses
import email.policy
import email.utils
import itertools

import pytest
import trio

from mfconnector.imap import commands
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.encode import astring
from mfconnector.imap.errors import (
    ImapCommandError,
    ImapConnectionError,
    ImapStaleReferenceError,
)
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.mailservers import Dovecot, settings_for

pytestmark = pytest.mark.slow

_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


def message(
    subject: str, *, to: str = "alice@example.org", extra: str = "", body: str = "Hello.\r\n"
) -> bytes:
    return (
        f"From: Bob Sender <bob@example.org>\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Date: {email.utils.formatdate()}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@example.org>\r\n{extra}"
        f"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}"
    ).encode()


async def open_alice(alice: ServerSettings) -> ImapConnection:
    connection = await ImapConnection.open(alice, DEFAULT_LIMITS)
    await commands.enable(connection, "CONDSTORE", "QRESYNC")
    return connection


async def test_login_over_tls_reports_the_capabilities_the_backend_uses(
    alice: ServerSettings,
) -> None:
    connection = await open_alice(alice)
    try:
        for capability in (
            "CONDSTORE",
            "QRESYNC",
            "MOVE",
            "UIDPLUS",
            "SPECIAL-USE",
            "THREAD=REFERENCES",
            "ENABLE",
        ):
            assert capability in connection.capabilities
        assert "CONDSTORE" in connection.enabled
    finally:
        await connection.logout()


async def test_starttls_upgrades_then_logs_in(dovecot: Dovecot) -> None:
    connection = await ImapConnection.open(settings_for(dovecot, "starttls"), DEFAULT_LIMITS)
    try:
        assert "STARTTLS" not in connection.capabilities  # asked again after TLS
        assert "UIDPLUS" in connection.capabilities
    finally:
        await connection.logout()


async def test_plain_to_loopback_logs_in_with_login_or_plain(dovecot: Dovecot) -> None:
    connection = await ImapConnection.open(settings_for(dovecot, "plain"), DEFAULT_LIMITS)
    try:
        await commands.noop(connection)
    finally:
        await connection.logout()


async def test_a_wrong_password_is_refused_without_echoing_it(dovecot: Dovecot) -> None:
    settings = ServerSettings(
        "127.0.0.1",
        dovecot.imaps_port,
        "tls",
        "alice",
        "wrong-pw-xyz",
        ssl_context=dovecot.client_context(),
    )
    with pytest.raises(ImapConnectionError) as caught:
        await ImapConnection.open(settings, DEFAULT_LIMITS)
    assert "refused the login for 'alice'" in str(caught.value)
    assert "wrong-pw-xyz" not in str(caught.value)
    assert "wrong-pw-xyz" not in repr(settings)


async def test_tls_with_an_untrusted_certificate_fails_clearly(dovecot: Dovecot) -> None:
    import ssl

    settings = ServerSettings(
        "127.0.0.1",
        dovecot.imaps_port,
        "tls",
        "alice",
        "secret",
        ssl_context=ssl.create_default_context(),
    )
    with pytest.raises(ImapConnectionError, match=r"TLS with 127\.0\.0\.1"):
        await ImapConnection.open(settings, DEFAULT_LIMITS)


async def test_list_finds_special_use_folders_by_attribute_with_counts(
    dovecot: Dovecot, alice: ServerSettings
) -> None:
    dovecot.deliver(message("counted"))
    connection = await open_alice(alice)
    try:
        entries = await commands.list_mailboxes(connection, with_status=True)
        by_role = {entry.special_use: entry.name for entry in entries if entry.special_use}
        assert by_role == {
            "\\Sent": "Sent",
            "\\Drafts": "Drafts",
            "\\Trash": "Trash",
            "\\Junk": "Junk",
            "\\Archive": "Archive",
        }
        inbox = next(entry for entry in entries if entry.name == "INBOX")
        assert inbox.delimiter == "/"
        assert inbox.status is not None and inbox.status.messages is not None
        assert inbox.status.messages >= 1 and inbox.status.uidvalidity
        status = await commands.status(connection, "INBOX")
        assert status.messages == inbox.status.messages
        assert status.highestmodseq is not None
    finally:
        await connection.logout()


async def test_select_search_fetch_headers_structure_and_partial_body(
    dovecot: Dovecot, alice: ServerSettings
) -> None:
    folder = unique("Fetch")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        raw = message(
            "structured", extra="Reply-To: replies@example.org\r\n", body="0123456789" * 100
        )
        appended = await commands.append(connection, folder, raw, flags=["\\Flagged"])
        opened = await commands.select(connection, folder)
        assert opened.uidvalidity == appended.uidvalidity
        assert opened.exists == 1 and opened.highestmodseq is not None
        found = await commands.search(connection, folder, [b"FLAGGED"])
        assert found.uids == (appended.uid,)
        assert (await commands.search(connection, folder, [b"UNFLAGGED"])).uids == ()
        [fetched] = await commands.fetch(
            connection,
            folder,
            found.uids,
            [
                "FLAGS",
                "MODSEQ",
                "RFC822.SIZE",
                "ENVELOPE",
                "BODYSTRUCTURE",
                "BODY.PEEK[HEADER.FIELDS (SUBJECT REPLY-TO)]",
                "BODY.PEEK[TEXT]<10.25>",
            ],
        )
        assert fetched.uid == appended.uid
        assert fetched.flags is not None and "\\Flagged" in fetched.flags
        assert fetched.modseq is not None and fetched.size == len(raw)
        assert fetched.envelope is not None
        assert fetched.envelope.subject == "structured"
        assert [a.email for a in fetched.envelope.reply_to] == ["replies@example.org"]
        assert [a.name for a in fetched.envelope.from_] == ["Bob Sender"]
        assert fetched.envelope.message_id == "<structured@example.org>"
        assert fetched.parts is not None and fetched.parts[0].mime_type == "text/plain"
        assert fetched.sections["BODY[TEXT]<10>"] == b"0123456789" * 2 + b"01234"
        header = fetched.sections["BODY[HEADER.FIELDS (SUBJECT REPLY-TO)]"]
        assert b"Subject: structured" in header and b"From:" not in header
    finally:
        await connection.logout()


async def test_unicode_search_text_goes_as_a_literal(alice: ServerSettings) -> None:
    folder = unique("Unicode")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        encoded = (
            message("x")
            .replace(b"Subject: x", b"Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=")
            .replace(b"From: Bob Sender", b"From: =?iso-8859-1?q?J=FCrgen?=")
        )
        await commands.append(connection, folder, encoded)
        await commands.append(connection, folder, message("other"))
        found = await commands.search(connection, folder, [b"SUBJECT", astring("Grüße")])
        assert len(found.uids) == 1
        [fetched] = await commands.fetch(connection, folder, found.uids, ["ENVELOPE"])
        assert fetched.envelope is not None
        assert fetched.envelope.subject == "Grüße aus Köln"
        assert [a.name for a in fetched.envelope.from_] == ["Jürgen"]
    finally:
        await connection.logout()


async def test_store_unchangedsince_detects_a_stale_modseq(alice: ServerSettings) -> None:
    folder = unique("Store")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        uid = (await commands.append(connection, folder, message("flags"))).uid
        assert uid is not None
        [before] = await commands.fetch(connection, folder, [uid], ["MODSEQ"])
        assert before.modseq is not None
        changed = await commands.store_flags(
            connection, folder, [uid], ["\\Seen"], add=True, unchanged_since=before.modseq
        )
        assert changed.modified == frozenset() and "\\Seen" in changed.flags[uid]
        assert changed.modseqs[uid] > before.modseq
        with pytest.raises(ValueError, match="not an IMAP flag"):
            await commands.store_flags(connection, folder, [uid], ["$ok) \\Deleted ("], add=True)
        stale = await commands.store_flags(
            connection, folder, [uid], ["\\Flagged"], add=True, unchanged_since=before.modseq
        )
        assert stale.modified == {uid}
        [after] = await commands.fetch(connection, folder, [uid], ["FLAGS"])
        assert after.flags is not None and "\\Flagged" not in after.flags
    finally:
        await connection.logout()


async def test_copy_and_move_report_copyuid_and_expunge_takes_exactly_one_uid(
    alice: ServerSettings,
) -> None:
    source, target = unique("Src"), unique("Dst")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, source)
        await commands.create(connection, target)
        first = (await commands.append(connection, source, message("one"))).uid
        second = (await commands.append(connection, source, message("two"))).uid
        assert first is not None and second is not None
        copied = await commands.copy(connection, source, [first], target)
        assert copied is not None and set(copied.mapping) == {first}
        target_status = await commands.status(connection, target)
        assert copied.uidvalidity == target_status.uidvalidity
        moved = await commands.move(connection, source, [second], target)
        assert moved is not None and set(moved.mapping) == {second}
        assert (await commands.search(connection, source)).uids == (first,)
        # Both marked deleted; UID EXPUNGE of one leaves the other.
        both = list(copied.mapping.values()) + list(moved.mapping.values())
        await commands.store_flags(connection, target, both, ["\\Deleted"], add=True)
        await commands.expunge_uids(connection, target, [both[0]])
        assert (await commands.search(connection, target)).uids == (both[1],)
    finally:
        await connection.logout()


async def test_rename_and_delete_then_recreate_changes_uidvalidity(
    alice: ServerSettings,
) -> None:
    folder, renamed = unique("Old"), unique("New")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        await commands.rename(connection, folder, renamed)
        names = {entry.name for entry in await commands.list_mailboxes(connection)}
        assert renamed in names and folder not in names
        before = await commands.select(connection, renamed)
        await commands.delete(connection, renamed)
        await trio.sleep(1.1)  # Dovecot derives UIDVALIDITY from the clock, in seconds
        await commands.create(connection, renamed)
        after = await commands.select(connection, renamed)
        assert after.uidvalidity != before.uidvalidity
        with pytest.raises(ImapStaleReferenceError, match="re-created"):
            await commands.open_checked(connection, renamed, before.uidvalidity, writable=True)
        opened = await commands.open_checked(connection, renamed, after.uidvalidity, writable=True)
        assert opened.uidvalidity == after.uidvalidity
        with pytest.raises(ImapCommandError, match="DELETE"):
            await commands.delete(connection, unique("Missing"))
        await commands.noop(connection)  # a NO leaves the connection usable
    finally:
        await connection.logout()


async def test_unicode_folder_names_round_trip_in_modified_utf7(alice: ServerSettings) -> None:
    folder = unique("Entwürfe & Co ")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        names = {entry.name for entry in await commands.list_mailboxes(connection)}
        assert folder in names
    finally:
        await connection.logout()


async def test_thread_references_groups_replies(alice: ServerSettings) -> None:
    folder = unique("Thread")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        root = (await commands.append(connection, folder, message("root"))).uid
        reply = (
            await commands.append(
                connection,
                folder,
                message(
                    "re root",
                    extra="In-Reply-To: <root@example.org>\r\nReferences: <root@example.org>\r\n",
                ),
            )
        ).uid
        alone = (await commands.append(connection, folder, message("alone"))).uid
        trees = await commands.thread(connection, folder)
        shapes = {(node.uid, tuple(child.uid for child in node.children)) for node in trees}
        assert shapes == {(root, (reply,)), (alone, ())}
    finally:
        await connection.logout()


async def test_a_delivered_message_with_attachment_lists_its_parts(
    dovecot: Dovecot, alice: ServerSettings
) -> None:
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "bob@example.org", "alice@example.org", "att"
    mail.set_content("see attached")
    mail.add_alternative("<p>see attached</p>", subtype="html")
    mail.add_attachment(
        b"%PDF-1.4 tiny", maintype="application", subtype="pdf", filename="report.pdf"
    )
    folder = unique("Parts")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        uid = (await commands.append(connection, folder, mail.as_bytes())).uid
        assert uid is not None
        [fetched] = await commands.fetch(connection, folder, [uid], ["BODYSTRUCTURE"])
        assert fetched.parts is not None
        summary = [(p.path, p.mime_type, p.filename, p.is_attachment) for p in fetched.parts]
        assert summary == [
            ("1.1", "text/plain", None, False),
            ("1.2", "text/html", None, False),
            ("2", "application/pdf", "report.pdf", True),
        ]
        [part] = await commands.fetch(connection, folder, [uid], ["BODY.PEEK[2]"])
        assert part.sections["BODY[2]"].strip() == b"JVBERi0xLjQgdGlueQ=="
    finally:
        await connection.logout()


async def test_a_message_prefix_read_by_partial_fetch_parses_with_the_mime_reader(
    alice: ServerSettings,
) -> None:
    from email.message import EmailMessage

    from mfconnector.mime import read_message

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "bob@example.org", "alice@example.org", "Bericht"
    mail["Reply-To"] = "=?utf-8?q?B=C3=BCro?= <office@example.org>"
    mail.set_content("Der Bericht hängt an.\n")
    mail.add_attachment(
        b"\x00" * 300_000, maintype="application", subtype="octet-stream", filename="daten.bin"
    )
    raw = mail.as_bytes(policy=email.policy.SMTP)
    folder = unique("Mime")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        uid = (await commands.append(connection, folder, raw)).uid
        assert uid is not None
        [meta] = await commands.fetch(connection, folder, [uid], ["RFC822.SIZE", "BODYSTRUCTURE"])
        assert meta.size == len(raw) and meta.parts is not None
        limits = dataclasses.replace(DEFAULT_LIMITS, mime_message_bytes=65_536)
        prefix = await commands.fetch_range(
            connection, folder, uid, 0, limits.mime_message_bytes + 1
        )
        assert len(prefix) == limits.mime_message_bytes + 1
        parsed = read_message(prefix, limits)
        assert parsed.truncated
        assert parsed.headers["reply-to"] == "Büro <office@example.org>"
        assert parsed.text == "Der Bericht hängt an.\n"
        [attachment] = parsed.attachments
        assert attachment.name == "daten.bin"
        assert attachment.path == meta.parts[-1].path == "2"
    finally:
        await connection.logout()


async def test_a_flag_change_by_another_client_is_not_taken_for_an_answer(
    dovecot: Dovecot, alice: ServerSettings
) -> None:
    folder = unique("Concurrent")
    connection = await open_alice(alice)
    try:
        await commands.create(connection, folder)
        first = (await commands.append(connection, folder, message("first"))).uid
        second = (await commands.append(connection, folder, message("second"))).uid
        assert first is not None and second is not None
        await commands.select(connection, folder)
        other = dovecot.imaplib()
        other.select(folder)
        other.uid("STORE", str(second), "+FLAGS", "(\\Flagged)")
        other.logout()
        found = await commands.fetch(connection, folder, [first], ["FLAGS", "BODY.PEEK[]<0.4>"])
        assert [m.uid for m in found] == [first]
        assert await commands.fetch_range(connection, folder, first, 0, 4) == b"From"
    finally:
        await connection.logout()
