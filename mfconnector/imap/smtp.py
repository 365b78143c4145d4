"""SMTP submission of exact bytes, once, with the outcome classified exactly.

``smtplib`` runs in a worker thread (one short exchange per send; nothing to bound that
smtplib does not already cap) under ``smtp_seconds``. The outcome is a value:

- ``sent``: the server answered 250 after the message body: it took responsibility.
- ``rejected``: a 5xx at any step (the server's reply is kept); nothing was accepted.
  Recipients are offered one by one and a single refusal stops the send before DATA,
  so a message never goes to some of its recipients silently.
- ``not_sent``: it failed before the body was sent (no connection, TLS or login failed,
  a 4xx before DATA): certainly not delivered, safe to try again later.
- ``unknown``: the body was being sent or had been sent and no final answer came (the
  connection dropped, the deadline passed, or a 4xx arrived after the body, which some
  servers send after having queued the message). It may have been delivered: never
  retried; check the recipient's mailbox or the Sent folder for the Message-ID.
"""

from __future__ import annotations

import contextlib
import re
import smtplib
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import Literal

import trio

from mfconnector.imap.errors import MailSettingsError
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import Limits

__all__ = ["SubmitOutcome", "submit"]

Status = Literal["sent", "rejected", "not_sent", "unknown"]
Stage = Literal["connect", "login", "envelope", "data", "body", "done"]

_REPLY_CHARS = 500
_ADDRESS = re.compile(r"[^\s<>()\[\],;:\"\\]{1,254}@[A-Za-z0-9.\-\[\]:]{1,255}")
_UNKNOWN_HINT = (
    "it may have been delivered: do not send again; look for its Message-ID in the "
    "recipient's mailbox or the Sent folder"
)


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    status: Status
    stage: Stage
    """The last step reached: ``body`` or ``done`` means the message bytes went out."""
    reply_code: int | None
    reply: str
    """The server's own reply text (clipped), empty when there was none."""
    detail: str
    """What happened, in our words, and what to do next."""

    @property
    def retry_safe(self) -> bool:
        return self.status == "not_sent"


class _Progress:
    """Shared with the worker thread: how far it got, and the connection to cut."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stage: Stage = "connect"
        self.client: smtplib.SMTP | None = None
        self.cut = False

    def advance(self, stage: Stage) -> None:
        with self.lock:
            if self.cut:
                raise smtplib.SMTPServerDisconnected("cut at the deadline")
            self.stage = stage

    def cut_connection(self) -> Stage:
        """Shut the socket (the thread's next step fails), then say how far it got."""
        with self.lock:
            self.cut = True
            client = self.client
            stage = self.stage
        if client is not None and client.sock is not None:
            with contextlib.suppress(OSError):
                client.sock.shutdown(socket.SHUT_RDWR)
        return stage


def _check_address(address: str, what: str) -> None:
    if not address.isascii() or _ADDRESS.fullmatch(address) is None:
        raise MailSettingsError(f"{what} {address[:80]!r} is not a plain ASCII mail address")


async def submit(
    settings: ServerSettings,
    sender: str,
    recipients: list[str],
    message: bytes,
    limits: Limits,
) -> SubmitOutcome:
    """Send ``message`` (exact bytes, CRLF lines) from ``sender`` to ``recipients``."""
    _check_address(sender, "the sender")
    if not recipients:
        raise MailSettingsError("a message needs at least one recipient")
    for recipient in recipients:
        _check_address(recipient, "the recipient")
    progress = _Progress()
    with trio.move_on_after(limits.smtp_seconds):
        return await trio.to_thread.run_sync(
            _submit_blocking,
            settings,
            sender,
            recipients,
            message,
            limits,
            progress,
            abandon_on_cancel=True,
        )
    stage = progress.cut_connection()
    if stage in ("body", "done"):
        return SubmitOutcome(
            "unknown",
            stage,
            None,
            "",
            f"no answer to the message within {limits.smtp_seconds:g} s (smtp_seconds): "
            + _UNKNOWN_HINT,
        )
    return SubmitOutcome(
        "not_sent",
        stage,
        None,
        "",
        f"the SMTP server did not get as far as the message within {limits.smtp_seconds:g} s "
        "(smtp_seconds); nothing was sent",
    )


def _submit_blocking(
    settings: ServerSettings,
    sender: str,
    recipients: list[str],
    message: bytes,
    limits: Limits,
    progress: _Progress,
) -> SubmitOutcome:
    try:
        client = _connect(settings, limits)
    except (OSError, smtplib.SMTPException, ssl.SSLError) as error:
        return SubmitOutcome(
            "not_sent",
            "connect",
            None,
            "",
            f"cannot reach SMTP server {settings.host}:{settings.port} "
            f"({_reason(error)}); nothing was sent",
        )
    with progress.lock:
        progress.client = client
    try:
        return _exchange(client, settings, sender, recipients, message, progress)
    except (OSError, smtplib.SMTPException) as error:
        stage = progress.stage
        if stage in ("body", "done"):
            return SubmitOutcome(
                "unknown",
                stage,
                None,
                "",
                f"the SMTP connection was lost after the message was sent "
                f"({_reason(error)}): " + _UNKNOWN_HINT,
            )
        return SubmitOutcome(
            "not_sent",
            stage,
            None,
            "",
            f"the SMTP connection failed before the message was sent ({_reason(error)}); "
            "nothing was sent",
        )
    finally:
        with contextlib.suppress(OSError):
            client.close()


def _connect(settings: ServerSettings, limits: Limits) -> smtplib.SMTP:
    timeout = limits.smtp_seconds
    if settings.security == "tls":
        return smtplib.SMTP_SSL(
            settings.host, settings.port, timeout=timeout, context=settings.tls_context()
        )
    client = smtplib.SMTP(settings.host, settings.port, timeout=timeout)
    try:
        if settings.security == "starttls":
            client.ehlo()
            if not client.has_extn("starttls"):
                raise smtplib.SMTPNotSupportedError("the server offers no STARTTLS")
            client.starttls(context=settings.tls_context())
        return client
    except BaseException:
        client.close()
        raise


def _exchange(
    client: smtplib.SMTP,
    settings: ServerSettings,
    sender: str,
    recipients: list[str],
    message: bytes,
    progress: _Progress,
) -> SubmitOutcome:
    client.ehlo_or_helo_if_needed()
    progress.advance("login")
    if settings.user:
        if not client.has_extn("auth"):
            return SubmitOutcome(
                "not_sent",
                "login",
                None,
                "",
                "the SMTP server offers no AUTH on this connection; nothing was sent",
            )
        try:
            client.login(settings.user, settings.password)
        except smtplib.SMTPAuthenticationError as error:
            return _refused("login", error.smtp_code, error.smtp_error, "the login")
    progress.advance("envelope")
    code, reply = client.mail(sender)
    if code != 250:
        return _refused("envelope", code, reply, f"the sender {sender}")
    for recipient in recipients:
        code, reply = client.rcpt(recipient)
        if code not in (250, 251):
            client.rset()
            return _refused("envelope", code, reply, f"the recipient {recipient}")
    progress.advance("data")
    client.putcmd("data")
    code, reply = client.getreply()
    if code != 354:
        return _refused("data", code, reply, "DATA")
    progress.advance("body")
    client.send(_dot_stuffed(message))
    code, reply = client.getreply()
    progress.advance("done")
    text = _text(reply)
    if code == 250:
        # The message is accepted whatever happens to QUIT.
        with contextlib.suppress(OSError, smtplib.SMTPException):
            client.quit()
        return SubmitOutcome("sent", "done", code, text, "the SMTP server accepted the message")
    if 500 <= code < 600:
        return SubmitOutcome(
            "rejected", "done", code, text, f"the SMTP server refused the message: {code} {text}"
        )
    return SubmitOutcome(
        "unknown",
        "done",
        code,
        text,
        f"the SMTP server answered {code} after the message: " + _UNKNOWN_HINT,
    )


def _refused(stage: Stage, code: int, reply: bytes | str, what: str) -> SubmitOutcome:
    text = _text(reply)
    if 500 <= code < 600:
        return SubmitOutcome(
            "rejected", stage, code, text, f"the SMTP server refused {what}: {code} {text}"
        )
    return SubmitOutcome(
        "not_sent",
        stage,
        code,
        text,
        f"the SMTP server deferred {what}: {code} {text}; nothing was sent, try again later",
    )


def _dot_stuffed(message: bytes) -> bytes:
    """CRLF line ends, leading dots doubled, then the end marker (RFC 5321 section 4.5.2)."""
    lines = re.sub(rb"\r\n|\n|\r(?!\n)", b"\r\n", message)
    stuffed = re.sub(rb"(?m)^\.", b"..", lines)
    if not stuffed.endswith(b"\r\n"):
        stuffed += b"\r\n"
    return stuffed + b".\r\n"


def _text(reply: bytes | str) -> str:
    text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply
    return " ".join(text.split())[:_REPLY_CHARS]


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted: {str(error.verify_message)[:200]}"
    if isinstance(error, ssl.SSLError):
        return "TLS failed"
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return "the server closed the connection"
    if isinstance(error, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__
