"""SMTP submission against aiosmtpd relaying into Dovecot: each outcome, and exactly one
delivery wherever the server accepted the message."""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from mfconnector.imap.errors import MailSettingsError
from mfconnector.imap.settings import Security, ServerSettings
from mfconnector.imap.smtp import submit
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.mailservers import Dovecot, SmtpRelay, free_port

pytestmark = pytest.mark.slow

Relay = Callable[..., SmtpRelay]


def outgoing(message_id: str, body: str = "Hello Bob.\r\n") -> bytes:
    return (
        f"From: alice@example.org\r\nTo: bob@example.org\r\nSubject: {message_id}\r\n"
        f"Message-ID: <{message_id}@example.org>\r\n\r\n{body}"
    ).encode()


def relay_settings(
    relay: SmtpRelay, security: Security = "plain", dovecot: Dovecot | None = None
) -> ServerSettings:
    context = dovecot.client_context() if dovecot else None
    return ServerSettings("127.0.0.1", relay.port, security, "", "", ssl_context=context)


def deliveries(dovecot: Dovecot, message_id: str) -> int:
    tag = f"<{message_id}@example.org>".encode()
    return sum(tag in message for message in dovecot.inbox_messages("bob"))


async def test_a_send_is_sent_and_arrives_once(dovecot: Dovecot, smtp_relay: Relay) -> None:
    relay = smtp_relay()
    body = "Hello.\r\n.leading dot line\r\n..two\r\n"
    outcome = await submit(
        relay_settings(relay),
        "alice@example.org",
        ["bob@example.org"],
        outgoing("sent-1", body),
        DEFAULT_LIMITS,
    )
    assert (outcome.status, outcome.reply_code, outcome.stage) == ("sent", 250, "done")
    assert deliveries(dovecot, "sent-1") == 1
    [arrived] = [m for m in dovecot.inbox_messages("bob") if b"sent-1@" in m]
    assert body.encode() in arrived  # dot-stuffing undone by the server: bytes exact


@pytest.mark.parametrize("security", ["starttls", "tls"])
async def test_tls_submission_is_sent(
    dovecot: Dovecot, smtp_relay: Relay, security: Security
) -> None:
    relay = smtp_relay(tls=security)
    message_id = f"{security}-1"
    outcome = await submit(
        relay_settings(relay, security, dovecot),
        "alice@example.org",
        ["bob@example.org"],
        outgoing(message_id),
        DEFAULT_LIMITS,
    )
    assert outcome.status == "sent"
    assert deliveries(dovecot, message_id) == 1


async def test_an_untrusted_certificate_is_not_sent(dovecot: Dovecot, smtp_relay: Relay) -> None:
    import ssl

    relay = smtp_relay(tls="tls")
    settings = ServerSettings(
        "127.0.0.1", relay.port, "tls", "", "", ssl_context=ssl.create_default_context()
    )
    outcome = await submit(
        settings, "alice@example.org", ["bob@example.org"], outgoing("untrusted"), DEFAULT_LIMITS
    )
    assert (outcome.status, outcome.stage) == ("not_sent", "connect")
    assert "TLS certificate not trusted" in outcome.detail
    assert relay.received == []


async def test_a_5xx_is_rejected_with_the_reply_and_nothing_arrives(
    dovecot: Dovecot, smtp_relay: Relay
) -> None:
    relay = smtp_relay("reject_rcpt")
    outcome = await submit(
        relay_settings(relay),
        "alice@example.org",
        ["bob@example.org"],
        outgoing("rejected-1"),
        DEFAULT_LIMITS,
    )
    assert (outcome.status, outcome.reply_code) == ("rejected", 550)
    assert "No such user here" in outcome.reply and "bob@example.org" in outcome.detail
    assert not outcome.retry_safe
    assert relay.received == [] and deliveries(dovecot, "rejected-1") == 0


async def test_a_4xx_after_data_is_unknown_never_sent_again(
    dovecot: Dovecot, smtp_relay: Relay
) -> None:
    relay = smtp_relay("tempfail_after_data")
    outcome = await submit(
        relay_settings(relay),
        "alice@example.org",
        ["bob@example.org"],
        outgoing("temp-1"),
        DEFAULT_LIMITS,
    )
    assert (outcome.status, outcome.reply_code) == ("unknown", 451)
    assert "do not send again" in outcome.detail
    assert len(relay.received) == 1  # one attempt, no retry


async def test_a_connection_closed_inside_data_is_unknown_and_delivered_once(
    dovecot: Dovecot, smtp_relay: Relay
) -> None:
    relay = smtp_relay("close_inside_data")
    outcome = await submit(
        relay_settings(relay),
        "alice@example.org",
        ["bob@example.org"],
        outgoing("closed-1"),
        DEFAULT_LIMITS,
    )
    assert outcome.status == "unknown" and outcome.stage in ("body", "done")
    assert "Message-ID" in outcome.detail
    assert len(relay.received) == 1 and deliveries(dovecot, "closed-1") == 1


async def test_no_server_is_not_sent_and_safe_to_retry() -> None:
    settings = ServerSettings("127.0.0.1", free_port(), "plain", "", "")
    outcome = await submit(
        settings, "alice@example.org", ["bob@example.org"], outgoing("nobody"), DEFAULT_LIMITS
    )
    assert (outcome.status, outcome.stage) == ("not_sent", "connect") and outcome.retry_safe


class SilentAfterBody:
    """An SMTP server that takes the whole message and then never answers."""

    def __init__(self, silent_from_start: bool = False) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.silent_from_start = silent_from_start
        self.got_body = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        client, _ = self.listener.accept()
        with client:
            if self.silent_from_start:
                self.stop.wait(10)
                return
            client.sendall(b"220 silent ESMTP\r\n")
            reader = client.makefile("rb")
            while line := reader.readline():
                if line.upper().startswith((b"EHLO", b"HELO", b"MAIL", b"RCPT")):
                    client.sendall(b"250 ok\r\n")
                elif line.upper().startswith(b"DATA"):
                    client.sendall(b"354 go\r\n")
                elif line == b".\r\n":
                    self.got_body.set()
                    self.stop.wait(10)
                    return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(10)


@pytest.fixture
def silent() -> Iterator[Callable[[bool], SilentAfterBody]]:
    servers: list[SilentAfterBody] = []

    def make(from_start: bool) -> SilentAfterBody:
        servers.append(SilentAfterBody(from_start))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.mark.parametrize(("from_start", "status"), [(False, "unknown"), (True, "not_sent")])
async def test_the_deadline_gives_unknown_after_the_body_and_not_sent_before(
    silent: Callable[[bool], SilentAfterBody], from_start: bool, status: str
) -> None:
    server = silent(from_start)
    limits = dataclasses.replace(DEFAULT_LIMITS, smtp_seconds=1.0)
    settings = ServerSettings("127.0.0.1", server.port, "plain", "", "")
    outcome = await submit(
        settings, "alice@example.org", ["bob@example.org"], outgoing("slow"), limits
    )
    assert outcome.status == status
    assert server.got_body.is_set() is (not from_start)


@pytest.mark.parametrize("address", ["bö@example.org", "a@b\r\nRCPT TO:<evil@x>", "no-at-sign", ""])
async def test_addresses_that_could_break_the_envelope_are_refused_before_connecting(
    address: str,
) -> None:
    settings = ServerSettings("127.0.0.1", free_port(), "plain", "", "")
    with pytest.raises(MailSettingsError):
        await submit(settings, "alice@example.org", [address], b"x", DEFAULT_LIMITS)
