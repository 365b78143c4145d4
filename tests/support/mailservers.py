"""Throwaway mail servers for the IMAP/SMTP tests: a real Dovecot and an aiosmtpd relay.

``Dovecot`` writes a whole configuration into a fresh temporary directory (base and state
dirs, log, maildirs, a passwd-file, a certificate signed by a private CA), listens on free
high ports on 127.0.0.1 only, and counts as ready once a LOGIN succeeds (an open port is
not readiness: "disconnected before auth was ready"). ``capabilities`` switches the
advertised IMAP capabilities down (``imap_capability``) for the "unsupported" paths.

``SmtpRelay`` is an aiosmtpd server whose handler hands each accepted message to Dovecot
over LMTP, so a send really arrives in the recipient's INBOX, with fault modes: a 5xx at
RCPT, a 4xx after DATA, or the connection closed inside DATA after the message was recorded
(and delivered), the case a client can only call ``unknown``.
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import shutil
import signal
import smtplib
import socket
import ssl
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from mfconnector.imap.settings import Security, ServerSettings
from tests.support.tls_certs import make_ca_and_server

__all__ = ["DOVECOT", "Dovecot", "SmtpRelay", "free_port"]

DOVECOT = shutil.which("dovecot") or (
    "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None
)
"""The dovecot binary, or None when it is not installed (the tests then skip)."""

_READY_SECONDS = 20.0
_STOP_SECONDS = 10.0
SPECIAL_USE = {
    "Sent": r"\Sent",
    "Drafts": r"\Drafts",
    "Trash": r"\Trash",
    "Junk": r"\Junk",
    "Archive": r"\Archive",
}

FULL_CAPABILITIES = None
REDUCED_CAPABILITIES = (
    "IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE SORT THREAD=REFERENCES LITERAL+ "
    "NAMESPACE LIST-EXTENDED LIST-STATUS SPECIAL-USE ESEARCH SEARCHRES UNSELECT CHILDREN"
)
"""What a plain IMAP4rev1 server offers: no CONDSTORE, QRESYNC, MOVE or UIDPLUS."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _mail_ids() -> tuple[int, int, str, str]:
    """(mail uid, gid, internal user, login user): Dovecot refuses uid 0 for mail and will
    not run imap-login as root, so as root the mail belongs to nobody."""
    if os.geteuid() == 0:
        return 65534, 65534, "dovecot", "dovenull"
    user = _self_name()
    return os.geteuid(), os.getegid(), user, user


def _self_name() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def _group_name() -> str:
    import grp

    return grp.getgrgid(os.getegid()).gr_name


def _ensure_login_user() -> None:
    """Debian's dovecot-core package creates ``dovenull``; create it if a base image lacks it."""
    import pwd

    try:
        pwd.getpwnam("dovenull")
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "dovenull"],
            check=True,
            capture_output=True,
        )


@dataclass
class Dovecot:
    """One Dovecot master process with users ``alice`` and ``bob`` (password ``secret``)."""

    capabilities: str | None = FULL_CAPABILITIES
    users: tuple[str, ...] = ("alice", "bob")
    password: str = "secret"
    directory: Path = field(init=False)
    imap_port: int = field(init=False)
    imaps_port: int = field(init=False)
    lmtp_port: int = field(init=False)
    ca_file: Path = field(init=False)
    _process: subprocess.Popen[bytes] | None = field(init=False, default=None)

    def __enter__(self) -> Dovecot:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        if DOVECOT is None:
            raise RuntimeError("dovecot is not installed")
        # /tmp itself, not pytest's 0700 tmp_path: the mail user (nobody) must reach it.
        self.directory = Path(tempfile.mkdtemp(prefix="mfc-dovecot-"))
        self.directory.chmod(0o755)
        self.imap_port, self.imaps_port, self.lmtp_port = free_port(), free_port(), free_port()
        certs = make_ca_and_server(self.directory / "tls", ["127.0.0.1", "localhost"])
        assert certs.ca_file is not None
        self.ca_file = certs.ca_file
        uid, gid, internal, login = _mail_ids()
        if os.geteuid() == 0:
            _ensure_login_user()
        mail = self.directory / "mail"
        mail.mkdir()
        lines = []
        for user in self.users:
            home = mail / user
            home.mkdir()
            os.chown(home, uid, gid)
            lines.append(f"{user}:{{PLAIN}}{self.password}:{uid}:{gid}::{home}\n")
        os.chown(mail, uid, gid)
        (self.directory / "passwd").write_text("".join(lines))
        (self.directory / "dovecot.conf").write_text(
            self._config(certs.cert_file, certs.key_file, internal, login)
        )
        self._process = subprocess.Popen(
            [DOVECOT, "-F", "-c", str(self.directory / "dovecot.conf")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()  # the process (if any) and the temporary directory
            raise

    def _config(self, cert: Path, key: Path, internal: str, login: str) -> str:
        d = self.directory
        unprivileged = os.geteuid() != 0
        mailboxes = "".join(
            f"  mailbox {name} {{\n    special_use = {flag}\n    auto = subscribe\n  }}\n"
            for name, flag in SPECIAL_USE.items()
        )
        no_chroot = (
            "".join(f"service {name} {{\n  chroot =\n}}\n" for name in ("imap-login", "anvil"))
            if unprivileged
            else ""
        )
        auth_user = (
            (
                f"default_internal_group = {_group_name()}\n"
                f"service auth {{\n  user = {internal}\n}}\n"
                f"service auth-worker {{\n  user = {internal}\n}}\n"
            )
            if unprivileged
            else ""
        )
        capability = (
            f"protocol imap {{\n  imap_capability = {self.capabilities}\n}}\n"
            if self.capabilities is not None
            else ""
        )
        return f"""\
base_dir = {d}/run
state_dir = {d}/state
log_path = {d}/dovecot.log
info_log_path = {d}/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
default_internal_user = {internal}
default_login_user = {login}
first_valid_uid = 1
ssl = yes
ssl_cert = <{cert}
ssl_key = <{key}
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:~/Maildir
passdb {{
  driver = passwd-file
  args = username_format=%n {d}/passwd
}}
userdb {{
  driver = passwd-file
  args = username_format=%n {d}/passwd
}}
namespace inbox {{
  inbox = yes
  separator = /
{mailboxes}}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {self.imap_port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {self.imaps_port}
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {self.lmtp_port}
  }}
}}
{no_chroot}{auth_user}{capability}"""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _READY_SECONDS
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                output = self._process.stdout.read() if self._process.stdout else b""
                raise RuntimeError(f"dovecot exited: {output.decode(errors='replace')}{self.log()}")
            try:
                with imaplib.IMAP4("127.0.0.1", self.imap_port, timeout=2) as imap:
                    imap.login(self.users[0], self.password)
                    imap.logout()
                return
            except (OSError, imaplib.IMAP4.error) as error:
                last = error
                time.sleep(0.1)
        raise RuntimeError(f"dovecot not ready after {_READY_SECONDS} s: {last}\n{self.log()}")

    def log(self) -> str:
        path = self.directory / "dovecot.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout:
                process.stdout.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.directory)

    def client_context(self) -> ssl.SSLContext:
        """A TLS context that trusts this server's private CA and nothing else."""
        return ssl.create_default_context(cafile=str(self.ca_file))

    # --- seeding, checking and sabotage, through the stdlib (independent of our client) ---

    def deliver(self, raw: bytes, user: str = "alice") -> None:
        """Deliver a message over LMTP, as a mail server would."""
        with smtplib.LMTP("127.0.0.1", self.lmtp_port) as lmtp:
            lmtp.sendmail("seed@example.org", [user], raw)

    def imaplib(self, user: str = "alice") -> imaplib.IMAP4:
        imap = imaplib.IMAP4("127.0.0.1", self.imap_port, timeout=30)
        imap.login(user, self.password)
        return imap

    def inbox_messages(self, user: str = "alice", folder: str = "INBOX") -> list[bytes]:
        """Every message in a folder, whole, read with imaplib."""
        imap = self.imaplib(user)
        try:
            imap.select(folder, readonly=True)
            _, data = imap.uid("SEARCH", "ALL")
            uids = data[0].split() if data and data[0] else []
            messages = []
            for uid in uids:
                _, fetched = imap.uid("FETCH", uid, "(BODY.PEEK[])")
                item = fetched[0]
                assert isinstance(item, tuple)
                messages.append(item[1])
            return messages
        finally:
            imap.logout()

    def kill_imap_processes(self) -> int:
        """Kill every ``imap`` session process of this instance (a dropped connection)."""
        killed = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if self._process and ppid == self._process.pid and cmdline[0].endswith(b"dovecot/imap"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed += 1
        return killed


Fault = Literal["none", "reject_rcpt", "tempfail_after_data", "close_inside_data"]


class _RelayHandler:
    """aiosmtpd handler: deliver over LMTP into Dovecot, then answer as the fault says."""

    def __init__(self, relay: SmtpRelay) -> None:
        self.relay = relay

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        if self.relay.fault == "reject_rcpt":
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        fault = self.relay.fault
        if fault == "tempfail_after_data":
            self.relay.received.append(bytes(envelope.original_content))
            return "451 4.3.0 Try again later"
        recipients = [address.split("@", 1)[0] for address in envelope.rcpt_tos]
        content = bytes(envelope.original_content)
        # Blocking LMTP inside aiosmtpd's own loop thread: a tiny local hop in a test server.
        with smtplib.LMTP("127.0.0.1", self.relay.dovecot.lmtp_port) as lmtp:
            lmtp.sendmail(envelope.mail_from, recipients, content)
        self.relay.received.append(content)
        if fault == "close_inside_data":
            server.transport.close()
            return "250 OK"  # never reaches the client: the connection is already closed
        return "250 2.0.0 Queued"


class SmtpRelay:
    """An aiosmtpd submission server on 127.0.0.1 that delivers into ``dovecot``."""

    def __init__(
        self,
        dovecot: Dovecot,
        fault: Fault = "none",
        *,
        tls: Literal["none", "starttls", "tls"] = "none",
    ) -> None:
        self.dovecot = dovecot
        self.fault: Fault = fault
        self.received: list[bytes] = []
        self.port = free_port()
        from aiosmtpd.controller import Controller

        context: ssl.SSLContext | None = None
        if tls != "none":
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            certs = dovecot.directory / "tls"
            context.load_cert_chain(certs / "server.pem", certs / "key.pem")
        self._controller = Controller(
            _RelayHandler(self),
            hostname="127.0.0.1",
            port=self.port,
            tls_context=context if tls == "starttls" else None,
            require_starttls=tls == "starttls",
            ssl_context=context if tls == "tls" else None,
        )

    def __enter__(self) -> SmtpRelay:
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()


def settings_for(
    server: Dovecot, security: Security = "tls", user: str = "alice"
) -> ServerSettings:
    port = server.imaps_port if security == "tls" else server.imap_port
    return ServerSettings(
        "127.0.0.1", port, security, user, server.password, ssl_context=server.client_context()
    )
