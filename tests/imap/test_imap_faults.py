"""IMAP under faults: dropped connections, hostile literals, timeouts, cancels, the pool's
bound, a server without CONDSTORE/MOVE/UIDPLUS, and a 20 MB message in bounded memory."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import tracemalloc
from collections.abc import Iterator

import pytest
import trio

from mfconnector.imap import commands
from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.errors import (
    ImapConnectionError,
    ImapLimitError,
    ImapProtocolError,
    ImapTimeoutError,
    ImapUnsupportedError,
    MailSettingsError,
)
from mfconnector.imap.pool import ImapPool
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.imap_fakes import CuttingProxy, ScriptedServer
from tests.support.mailservers import Dovecot, settings_for

BIG = 20 * 1024 * 1024


def fake_settings(port: int) -> ServerSettings:
    return ServerSettings("127.0.0.1", port, "plain", "alice", "secret")


@pytest.fixture(params=["plain", "tls"])
def proxy(dovecot: Dovecot, request: pytest.FixtureRequest) -> Iterator[CuttingProxy]:
    """A cutting proxy in front of Dovecot's plain port, or its TLS port (the cut then
    lands inside TLS records)."""
    relay = CuttingProxy(dovecot.imaps_port if request.param == "tls" else dovecot.imap_port)
    relay.security = request.param
    yield relay
    relay.close()


def test_plain_text_to_a_remote_host_is_refused_before_connecting() -> None:
    with pytest.raises(MailSettingsError, match="only to a loopback address"):
        ServerSettings("mail.example.org", 143, "plain", "alice", "secret")
    for host in ("127.0.0.1", "::1", "localhost", "127.8.9.10"):
        ServerSettings(host, 143, "plain", "alice", "secret")


@pytest.mark.slow
async def test_a_connection_dropped_mid_fetch_fails_clearly_and_the_next_is_fresh(
    dovecot: Dovecot, proxy: CuttingProxy
) -> None:
    body = b"A" * 300_000
    dovecot.deliver(b"Subject: big\r\nMessage-ID: <mid-fetch@example.org>\r\n\r\n" + body, "bob")
    pool = ImapPool(
        ServerSettings(
            "127.0.0.1",
            proxy.port,
            proxy.security,
            "bob",
            dovecot.password,
            ssl_context=dovecot.client_context(),
        ),
        DEFAULT_LIMITS,
    )
    async with pool.connection() as connection:
        uid = (await commands.search(connection, "INBOX")).uids[-1]
    with pytest.raises(ImapConnectionError, match="in the middle of a literal"):
        async with pool.connection() as connection:
            proxy.cut_after = 100_000
            await commands.fetch(connection, "INBOX", [uid], ["BODY.PEEK[]"])
    assert connection.broken and proxy.cuts == 1
    async with pool.connection() as fresh:
        assert fresh is not connection
        [message] = await commands.fetch(fresh, "INBOX", [uid], ["BODY.PEEK[TEXT]"])
        assert message.sections["BODY[TEXT]"].rstrip(b"\r\n") == body  # LMTP adds a CRLF
    assert pool.opened == 2
    await pool.aclose()


async def test_an_announced_literal_over_the_cap_is_refused_without_holding_it() -> None:
    flood = b"* 1 FETCH (UID 1 BODY[] {999999999}\r\n" + b"z" * 4_000_000

    def answer(tag: bytes, line: bytes) -> bytes:
        return flood

    server = ScriptedServer(answer)
    try:
        connection = await ImapConnection.open(fake_settings(server.port), DEFAULT_LIMITS)
        tracemalloc.start()
        with trio.fail_after(10), pytest.raises(ImapLimitError) as caught:
            await connection.command("UID FETCH 1 (BODY[])")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert caught.value.limit == "imap_literal_bytes"
        assert "999,999,999-byte literal" in str(caught.value)
        assert connection.broken
        assert peak < 1_000_000  # the 4 MB that followed the announcement was never kept
        with pytest.raises(ImapConnectionError, match="discarded"):
            await connection.command("NOOP")
    finally:
        server.close()


async def test_a_silent_server_times_out_and_the_connection_is_discarded() -> None:
    server = ScriptedServer(lambda tag, line: None)
    limits = dataclasses.replace(DEFAULT_LIMITS, imap_command_seconds=0.5)
    try:
        connection = await ImapConnection.open(fake_settings(server.port), limits)
        with trio.fail_after(10), pytest.raises(ImapTimeoutError, match="imap_command_seconds"):
            await commands.noop(connection)
        assert connection.broken
    finally:
        server.close()


async def test_a_cancelled_command_discards_its_connection() -> None:
    server = ScriptedServer(lambda tag, line: None)
    try:
        pool = ImapPool(fake_settings(server.port), DEFAULT_LIMITS)
        with trio.move_on_after(0.3) as scope:
            async with pool.connection() as connection:
                await commands.noop(connection)
        assert scope.cancelled_caught and connection.broken
        assert pool.idle == 0  # never handed to the next caller
    finally:
        server.close()


@pytest.mark.slow
async def test_the_pool_never_opens_more_than_its_limit(alice: ServerSettings) -> None:
    pool = ImapPool(alice, DEFAULT_LIMITS)
    in_use = peak = 0

    async def worker() -> None:
        nonlocal in_use, peak
        async with pool.connection() as connection:
            in_use += 1
            peak = max(peak, in_use)
            await commands.status(connection, "INBOX")
            await trio.sleep(0.05)
            in_use -= 1

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for _ in range(6):
                nursery.start_soon(worker)
    assert peak == DEFAULT_LIMITS.imap_connections == 2
    assert pool.opened == 2
    await pool.aclose()


@pytest.mark.slow
async def test_without_condstore_move_uidplus_those_commands_are_unsupported(
    reduced_dovecot: Dovecot,
) -> None:
    connection = await ImapConnection.open(settings_for(reduced_dovecot), DEFAULT_LIMITS)
    try:
        for missing in ("CONDSTORE", "QRESYNC", "MOVE", "UIDPLUS"):
            assert missing not in connection.capabilities
        assert await commands.enable(connection, "CONDSTORE", "QRESYNC") == frozenset()
        await commands.append(connection, "INBOX", b"Subject: x\r\n\r\nbody\r\n")
        [uid] = (await commands.search(connection, "INBOX")).uids
        sent_before = len(connection.capabilities)
        with pytest.raises(ImapUnsupportedError, match="CONDSTORE"):
            await commands.store_flags(
                connection, "INBOX", [uid], ["\\Seen"], add=True, unchanged_since=1
            )
        with pytest.raises(ImapUnsupportedError, match="MOVE"):
            await commands.move(connection, "INBOX", [uid], "Archive")
        with pytest.raises(ImapUnsupportedError, match="UIDPLUS"):
            await commands.expunge_uids(connection, "INBOX", [uid])
        with pytest.raises(ImapUnsupportedError, match="CONDSTORE"):
            await commands.fetch(connection, "INBOX", [uid], ["MODSEQ"])
        assert len(connection.capabilities) == sent_before
        [message] = await commands.fetch(connection, "INBOX", [uid], ["FLAGS"])
        assert message.flags is not None and "\\Seen" not in message.flags  # nothing changed
    finally:
        await connection.logout()


@pytest.mark.slow
async def test_a_20_mb_message_is_read_in_bounded_memory_by_partial_fetches(
    alice: ServerSettings,
) -> None:
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_\r\n"
    raw = b"Subject: twenty\r\n\r\n" + line * (BIG // len(line))
    expected, size = hashlib.sha256(raw).hexdigest(), len(raw)
    connection = await ImapConnection.open(alice, DEFAULT_LIMITS)
    try:
        await commands.create(connection, "Big")
        uid = (await commands.append(connection, "Big", raw)).uid
        assert uid is not None
        del raw
        chunk = DEFAULT_LIMITS.imap_fetch_chunk_bytes
        digest = hashlib.sha256()
        tracemalloc.start()
        offset = 0
        while True:
            piece = await commands.fetch_range(connection, "Big", uid, offset, chunk)
            digest.update(piece)
            offset += len(piece)
            if len(piece) < chunk:
                break
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert offset == size and digest.hexdigest() == expected
        assert peak < 4 * chunk  # a chunk, its copy in the reader, the socket buffer
        # One fetch of the whole message is refused: its literal is over the cap.
        with pytest.raises(ImapLimitError, match="imap_literal_bytes"):
            await commands.fetch(connection, "Big", [uid], ["BODY.PEEK[]"])
        assert connection.broken
    finally:
        await connection.logout()


@pytest.mark.slow
async def test_a_pooled_connection_the_server_dropped_fails_once_then_the_pool_reconnects(
    dovecot: Dovecot,
) -> None:
    pool = ImapPool(settings_for(dovecot, user="bob"), DEFAULT_LIMITS)
    async with pool.connection() as connection:
        await commands.noop(connection)
    assert dovecot.kill_imap_processes() >= 1
    await trio.sleep(0.2)
    with pytest.raises(ImapConnectionError, match=r"closed the connection|lost"):
        async with pool.connection() as dropped:
            await commands.noop(dropped)
    assert dropped is connection and dropped.broken
    async with pool.connection() as fresh:
        assert (await commands.status(fresh, "INBOX")).uidvalidity
    assert pool.opened == 2
    await pool.aclose()


@pytest.mark.parametrize(
    ("password", "sent"),
    [
        ("secret", b"M2 LOGIN alice secret\r\n"),
        ('pa ss"word', b'M2 LOGIN alice "pa ss\\"word"\r\n'),
        ("pässwörd", "M2 LOGIN alice {10}\r\npässwörd\r\n".encode()),
    ],
)
async def test_login_without_auth_plain_quotes_or_sends_a_literal(
    password: str, sent: bytes
) -> None:
    server = ScriptedServer(lambda tag, line: tag + b" OK fine\r\n", greeting=b"* OK hi\r\n")
    try:
        settings = ServerSettings("127.0.0.1", server.port, "plain", "alice", password)
        connection = await ImapConnection.open(settings, DEFAULT_LIMITS)
        assert server.commands[1] == sent  # M1 was CAPABILITY (the greeting had none)
        await connection.logout()
    finally:
        server.close()


async def test_authenticate_plain_without_sasl_ir_answers_the_continuation() -> None:
    server = ScriptedServer(
        lambda tag, line: tag + b" OK fine\r\n",
        greeting=b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] hi\r\n",
    )
    try:
        connection = await ImapConnection.open(fake_settings(server.port), DEFAULT_LIMITS)
        assert server.commands[0] == b"M1 AUTHENTICATE PLAIN\r\n"
        assert base64.b64decode(server.commands[1]) == b"\0alice\0secret"
        await connection.logout()
    finally:
        server.close()


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (b"X9 OK not yours\r\n", ImapProtocolError, "a command never sent"),
        (b"+ more please\r\n", ImapProtocolError, "asked for data"),
        (b"* BYE shutting down\r\n", ImapConnectionError, "closed the connection"),
    ],
)
async def test_a_server_that_breaks_the_exchange_gets_a_clear_error_and_a_discard(
    reply: bytes, error: type[Exception], words: str
) -> None:
    server = ScriptedServer(lambda tag, line: reply if b"NOOP" in line else None)
    try:
        connection = await ImapConnection.open(fake_settings(server.port), DEFAULT_LIMITS)
        server.close_after_reply = True
        with trio.fail_after(10), pytest.raises(error, match=words):
            await commands.noop(connection)
        assert connection.broken
    finally:
        server.close()


@pytest.mark.slow
async def test_capabilities_are_described_as_the_server_offers_them(
    dovecot: Dovecot, reduced_dovecot: Dovecot
) -> None:
    from mfconnector.imap.capabilities import describe

    reports = {}
    for name, server in (("full", dovecot), ("reduced", reduced_dovecot)):
        connection = await ImapConnection.open(settings_for(server), DEFAULT_LIMITS)
        statuses, _ = describe(connection.capabilities)
        reports[name] = {s.name: s.offered for s in statuses}
        await connection.logout()
    assert all(reports["full"].values())
    assert {n for n, offered in reports["reduced"].items() if not offered} == {
        "CONDSTORE",
        "QRESYNC",
        "MOVE",
        "UIDPLUS",
    }
    _, limit = describe(["IMAP4rev1", "APPENDLIMIT=35651584"])
    assert limit == 35_651_584
