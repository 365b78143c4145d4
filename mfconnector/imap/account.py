"""One IMAP/SMTP account from flags, the environment and the OS keyring; and its ``Account``.

Flags (issue 19): ``--imap HOST[:PORT]`` (``MFC_IMAP``), ``--imap-user`` (``MFC_IMAP_USER``),
``--imap-security tls|starttls|plain`` (default ``tls``, port 993; 143 otherwise),
``--smtp HOST[:PORT]`` (``MFC_SMTP``), ``--smtp-security`` (default ``starttls``, port 587;
465 with ``tls``), ``--smtp-user`` (default: the IMAP user), ``--from ADDRESS``
(``MFC_FROM``; default: the IMAP user when it is an address), ``--no-append-sent``.
``plain`` is refused for any host that is not loopback (``ServerSettings``).

Passwords never come from a flag: ``MFC_IMAP_PASSWORD`` / ``MFC_SMTP_PASSWORD`` (default:
the IMAP one), else the OS keyring (service ``mfconnector-imap``, user ``USER@HOST``) when
the ``keyring`` package is installed. They are never logged and never in a repr.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mfconnector.imap.backend import ImapMailBackend
from mfconnector.imap.errors import ImapError, MailSettingsError
from mfconnector.imap.settings import Security, ServerSettings
from mfconnector.limits import Limits
from mfconnector.mail.accounts import Account
from mfconnector.mail.model import Person
from mfconnector.mail.refs import account_tag

__all__ = [
    "KEYRING_SERVICE",
    "ImapAccountSettings",
    "add_imap_arguments",
    "imap_account",
    "imap_settings_from",
    "imap_settings_from_table",
    "keyring_password",
    "parse_server",
    "start_account",
]

KEYRING_SERVICE = "mfconnector-imap"
IMAP_PORTS = {"tls": 993, "starttls": 143, "plain": 143}
SMTP_PORTS = {"tls": 465, "starttls": 587, "plain": 587}
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.\-]{1,253})(?::(\d{1,5}))?$")
_log = logging.getLogger("mfconnector.imap")


@dataclass(frozen=True)
class ImapAccountSettings:
    """Everything an IMAP account needs; secrets only inside the ``ServerSettings``."""

    name: str
    imap: ServerSettings
    smtp: ServerSettings | None
    sender: Person
    append_sent: bool = True
    shown: Mapping[str, Any] = field(default_factory=dict)
    """What ``account_status`` may show: hosts, ports, security, users, sender."""


def parse_server(
    value: str, security: Security, ports: Mapping[str, int], what: str
) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port`` as (host, port)."""
    match = _HOST.match(value.strip())
    if match is None:
        raise MailSettingsError(f"{what} {value[:80]!r} is not HOST or HOST:PORT")
    host = match.group(1).strip("[]")
    port = int(match.group(2)) if match.group(2) else ports[security]
    return host, port


def _security(value: str | None, default: Security, what: str) -> Security:
    chosen = (value or default).strip().lower()
    if chosen not in ("tls", "starttls", "plain"):
        raise MailSettingsError(f"{what} {chosen!r}: tls, starttls or plain")
    return chosen  # type: ignore[return-value]


def keyring_password(user: str, host: str) -> str | None:
    """The password stored for ``user@host`` in the OS keyring, if there is one."""
    import keyring  # imported on first use: the OS keyring may have no backend at all

    try:
        found = keyring.get_password(KEYRING_SERVICE, f"{user}@{host}")
    except Exception:
        return None
    return found if isinstance(found, str) else None


def _pick(
    args: argparse.Namespace, name: str, env: Mapping[str, str], var: str | None
) -> str | None:
    value = getattr(args, name, None)
    if value is None and var is not None:
        value = env.get(var)
    return value.strip() if isinstance(value, str) and value.strip() else None


def imap_settings_from(
    args: argparse.Namespace,
    env: Mapping[str, str],
    *,
    ca_file: Path | None = None,
    password_lookup: Callable[[str, str], str | None] = keyring_password,
    name: str = "imap",
) -> ImapAccountSettings | None:
    """The IMAP account the flags and environment describe; None when no ``--imap``."""
    values = {
        "imap": _pick(args, "imap", env, "MFC_IMAP"),
        "imap_user": _pick(args, "imap_user", env, "MFC_IMAP_USER"),
        "imap_security": getattr(args, "imap_security", None),
        "smtp": _pick(args, "smtp", env, "MFC_SMTP"),
        "smtp_security": getattr(args, "smtp_security", None),
        "smtp_user": ""
        if getattr(args, "smtp_user", None) == ""
        else _pick(args, "smtp_user", env, "MFC_SMTP_USER"),
        "from": _pick(args, "mail_from", env, "MFC_FROM"),
        "append_sent": not bool(getattr(args, "no_append_sent", False)),
    }
    if values["imap"] is None:
        return None
    return _settings(
        name,
        values,
        imap_password=env.get("MFC_IMAP_PASSWORD"),
        smtp_password=env.get("MFC_SMTP_PASSWORD"),
        password_names=("MFC_IMAP_PASSWORD", "MFC_SMTP_PASSWORD"),
        ca_file=ca_file,
        password_lookup=password_lookup,
        flags=True,
    )


TABLE_KEYS = frozenset(
    {"provider", "imap", "imap_user", "imap_security", "smtp", "smtp_security", "smtp_user",
     "from", "append_sent"}
)  # fmt: skip
"""What an ``imap`` account's table in ``--accounts FILE`` may hold (no secret ever)."""


def imap_settings_from_table(
    name: str,
    table: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    ca_file: Path | None = None,
    password_lookup: Callable[[str, str], str | None] = keyring_password,
) -> ImapAccountSettings:
    """An ``imap`` account of an accounts file (``[accounts.NAME]``, the same settings as
    the flags, snake_case). Passwords come from ``MFC_IMAP_PASSWORD_<NAME>`` and
    ``MFC_SMTP_PASSWORD_<NAME>`` (NAME upper-cased, ``-`` as ``_``) or the keyring; a
    password in the file is refused, never read."""
    unknown = sorted(set(table) - TABLE_KEYS)
    secret = [key for key in unknown if "pass" in key.lower() or "secret" in key.lower()]
    if secret:
        raise MailSettingsError(
            f"account {name!r}: passwords never go in the accounts file ({', '.join(secret)}); "
            f"set MFC_IMAP_PASSWORD_{_env_name(name)} or use the OS keyring"
        )
    if unknown:
        raise MailSettingsError(f"account {name!r}: unknown settings {', '.join(unknown)}")
    for key in TABLE_KEYS - {"append_sent"}:
        if key in table and not isinstance(table[key], str):
            raise MailSettingsError(f"account {name!r}: {key} must be a string")
    if not isinstance(table.get("append_sent", True), bool):
        raise MailSettingsError(f"account {name!r}: append_sent must be true or false")
    if not table.get("imap"):
        raise MailSettingsError(f'account {name!r}: an imap account needs imap = "HOST[:PORT]"')
    suffix = _env_name(name)
    names = (f"MFC_IMAP_PASSWORD_{suffix}", f"MFC_SMTP_PASSWORD_{suffix}")
    return _settings(
        name,
        {**table, "append_sent": table.get("append_sent", True)},
        imap_password=env.get(names[0]),
        smtp_password=env.get(names[1]),
        password_names=names,
        ca_file=ca_file,
        password_lookup=password_lookup,
        flags=False,
    )


def _env_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def _settings(
    name: str,
    values: Mapping[str, Any],
    *,
    imap_password: str | None,
    smtp_password: str | None,
    password_names: tuple[str, str],
    ca_file: Path | None,
    password_lookup: Callable[[str, str], str | None],
    flags: bool,
) -> ImapAccountSettings:
    def said(key: str) -> str:
        return f"--{key.replace('_', '-')}" if flags else f"{key} (account {name!r})"

    from mfconnector.net.tls import verifying_context

    context = verifying_context(ca_file)
    security = _security(values.get("imap_security"), "tls", said("imap_security"))
    host, port = parse_server(str(values["imap"]), security, IMAP_PORTS, said("imap"))
    user = values.get("imap_user")
    if not user:
        raise MailSettingsError(f"{said('imap')} needs {said('imap_user')}")
    password = imap_password or password_lookup(user, host)
    if not password:
        raise MailSettingsError(
            f"no password for {user} at {host}: set {password_names[0]}, or store it in the OS "
            f"keyring (service {KEYRING_SERVICE!r}, user '{user}@{host}'); never a flag"
        )
    imap = ServerSettings(host, port, security, user, password, ssl_context=context)
    smtp = None
    shown: dict[str, Any] = {"imap": f"{host}:{port}", "imap_security": security, "user": user}
    if values.get("smtp"):
        smtp_security = _security(values.get("smtp_security"), "starttls", said("smtp_security"))
        smtp_host, smtp_port = parse_server(
            str(values["smtp"]), smtp_security, SMTP_PORTS, said("smtp")
        )
        smtp_user = values.get("smtp_user")
        if smtp_user is None:
            smtp_user = user  # "" (said on purpose): submit without logging in
        smtp_secret = (
            smtp_password
            or (password_lookup(smtp_user, smtp_host) if smtp_user != user else None)
            or password
        )
        smtp = ServerSettings(
            smtp_host, smtp_port, smtp_security, smtp_user, smtp_secret, ssl_context=context
        )
        shown.update(smtp=f"{smtp_host}:{smtp_port}", smtp_security=smtp_security)
    sender_address = values.get("from") or (user if "@" in user else "")
    shown["from"] = sender_address
    return ImapAccountSettings(
        name=name,
        imap=imap,
        smtp=smtp,
        sender=Person("", sender_address),
        append_sent=bool(values.get("append_sent", True)),
        shown=shown,
    )


def imap_account(
    settings: ImapAccountSettings, limits: Limits, gates: frozenset[str] = frozenset()
) -> Account:
    """The ``Account`` the tools call; ``start_account`` learns its capabilities."""
    backend = ImapMailBackend(
        account_tag("imap", settings.name),
        settings.imap,
        limits,
        smtp=settings.smtp,
        sender=settings.sender,
        append_sent=settings.append_sent,
    )
    return Account(
        name=settings.name, provider="imap", mail=backend, gates=gates, settings=settings.shown
    )


async def start_account(account: Account) -> bool:
    """Log in once to learn the server's capabilities (what the tools offer depends on
    them). An unreachable server is said on stderr, not fatal: the account then offers
    only what every IMAP4rev1 server can until a connection succeeds."""
    backend = account.mail
    if not isinstance(backend, ImapMailBackend):
        return False
    try:
        await backend.start()
    except ImapError as error:
        _log.warning("IMAP account %s: %s", account.name, error)
        return False
    return True


def add_imap_arguments(parser: argparse.ArgumentParser) -> None:
    """The single-account IMAP/SMTP flags; absent flags set nothing."""
    group = parser.add_argument_group("IMAP and SMTP (any standards mailbox)")
    group.add_argument("--imap", metavar="HOST[:PORT]", help="IMAP server [MFC_IMAP]")
    group.add_argument("--imap-user", metavar="USER", help="IMAP user [MFC_IMAP_USER]")
    group.add_argument(
        "--imap-security",
        choices=["tls", "starttls", "plain"],
        help="tls (default, port 993), starttls (143) or plain (loopback only)",
    )
    group.add_argument("--smtp", metavar="HOST[:PORT]", help="SMTP submission server [MFC_SMTP]")
    group.add_argument(
        "--smtp-security",
        choices=["tls", "starttls", "plain"],
        help="starttls (default, port 587), tls (465) or plain (loopback only)",
    )
    group.add_argument(
        "--smtp-user",
        metavar="USER",
        help="SMTP user (default: the IMAP user; '' submits without logging in, for a local relay)",
    )
    group.add_argument(
        "--from",
        dest="mail_from",
        metavar="ADDRESS",
        help="the sender address [MFC_FROM; default: the IMAP user when it is an address]",
    )
    group.add_argument(
        "--no-append-sent",
        action="store_true",
        help="do not file a copy of each sent message in Sent (for servers that do it "
        "themselves, such as Gmail)",
    )
