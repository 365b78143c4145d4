"""``--accounts FILE``: several accounts in one server, read and checked at start-up.

The file is TOML (stdlib ``tomllib``), one ``[[account]]`` table per account::

    [[account]]
    name = "work"
    provider = "graph"
    tenant = "contoso.onmicrosoft.com"
    enable_writes = true

Every problem is refused before serving, in one sentence that names the account and the
key: the server never guesses what a malformed file meant. Secrets are never read from the
file: a key that looks like one (password, secret, token) is refused by name, its value
never repeated. Which settings each provider takes is ``PROVIDER_SETTINGS``; a builder in
``entry.providers`` turns a checked ``AccountSpec`` into an account.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mfconnector.limits import Limits
from mfconnector.mail.refs import PROVIDER_LETTERS, account_tag
from mfconnector.net.hosts import is_loopback_host

__all__ = [
    "GATE_KEYS",
    "PROVIDER_SETTINGS",
    "AccountSpec",
    "AccountsFileError",
    "load_accounts_file",
    "parse_accounts",
]


class AccountsFileError(Exception):
    """An accounts file that cannot work: one stderr line, exit status 2."""


GATE_KEYS: Mapping[str, str] = {
    "enable_writes": "writes",
    "enable_send": "send",
    "enable_delete": "delete",
}
"""Per-account gates: the key in the file, the gate it opens for that account only."""

SECRET_WORDS = ("password", "passwd", "secret", "token", "credential")
"""A key containing one of these holds a secret: never in the file (environment or keyring)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_SECURITY = ("tls", "starttls", "plain")
_CLOUDS = ("global", "usgov", "dod", "china")

Check = Callable[[str, Any], Any]
"""Checks one setting's value (``where``, value) and returns it, or raises."""


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AccountsFileError(f"{where} must be a non-empty string")
    if len(value) > 512 or any(ord(c) < 32 for c in value):
        raise AccountsFileError(f"{where} must be one line of at most 512 characters")
    return value


def _flag(where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise AccountsFileError(f"{where} must be true or false")
    return value


_SERVER = re.compile(r"^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.\-]{1,253})(?::(\d{1,5}))?$")


def _server(where: str, value: Any) -> str:
    """``HOST``, ``HOST:PORT`` or ``[v6]:PORT``, as the ``--imap`` and ``--smtp`` flags."""
    match = _SERVER.match(_text(where, value).strip())
    if match is None or (match.group(2) and not 1 <= int(match.group(2)) <= 65_535):
        raise AccountsFileError(f"{where} must be HOST or HOST:PORT (a port from 1 to 65535)")
    return str(value).strip()


def _host_of(server: str) -> str:
    match = _SERVER.match(server)
    return match.group(1).strip("[]") if match else server


def _one_of(*choices: str) -> Check:
    def check(where: str, value: Any) -> str:
        if value not in choices:
            raise AccountsFileError(f"{where} must be one of " + ", ".join(choices))
        return str(value)

    return check


def _root(where: str, value: Any) -> str:
    """An API root: https, or http only to a loopback address (emulators)."""
    text = _text(where, value)
    parts = urlsplit(text)
    if parts.scheme == "https" and parts.hostname:
        return text
    if parts.scheme == "http" and parts.hostname and is_loopback_host(parts.hostname):
        return text
    raise AccountsFileError(f"{where} must be an https URL, or http to a loopback address")


PROVIDER_SETTINGS: Mapping[str, Mapping[str, Check]] = {
    "graph": {
        "tenant": _text,
        "cloud": _one_of(*_CLOUDS),
        "mailbox": _text,
        "all_files": _flag,
        "shared_mail": _flag,
        "client_id": _text,
        "cache_path": _text,
        "app_only": _flag,
        "user": _text,
        "client_cert": _text,
        "client_cert_thumbprint": _text,
    },
    "imap": {  # the flags' names (issue 19: --imap HOST[:PORT], --imap-user, ...)
        "imap": _server,
        "imap_user": _text,
        "imap_security": _one_of(*_SECURITY),
        "smtp": _server,
        "smtp_security": _one_of(*_SECURITY),
        "smtp_user": _text,
        "from": _text,
        "append_sent": _flag,
    },
    "gmail": {
        "api_root": _root,
        "client_id": _text,
    },
}
"""The settings each provider takes (issues 18-20); any other key is refused."""

REQUIRED_SETTINGS: Mapping[str, tuple[str, ...]] = {"imap": ("imap", "imap_user")}


@dataclass(frozen=True)
class AccountSpec:
    """One checked account of the file: never a secret in it."""

    name: str
    provider: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    gates: frozenset[str] = frozenset()
    """The gates the file opens for this account (``writes``, ``send``, ``delete``)."""


def load_accounts_file(path: str | Path, limits: Limits) -> list[AccountSpec]:
    """The accounts ``path`` defines, checked; ``AccountsFileError`` says what is wrong."""
    shown = str(path)[:200]
    try:
        with open(path, "rb") as handle:
            data = handle.read(limits.accounts_file_bytes + 1)
    except OSError as error:
        raise AccountsFileError(
            f"--accounts {shown}: cannot be read ({error.strerror or 'error'})"
        ) from None
    if len(data) > limits.accounts_file_bytes:
        raise AccountsFileError(
            f"--accounts {shown}: larger than {limits.accounts_file_bytes:,} bytes "
            "(accounts_file_bytes)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AccountsFileError(f"--accounts {shown}: not UTF-8 text") from None
    try:
        return parse_accounts(text, limits)
    except AccountsFileError as error:
        raise AccountsFileError(f"--accounts {shown}: {error}") from None


_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse_accounts(text: str, limits: Limits) -> list[AccountSpec]:
    """The accounts of one TOML document, in file order."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        # tomllib's wording is not ours; keep only where it stopped
        at = _AT.search(str(error))
        where = f" at line {at.group(1)}, column {at.group(2)}" if at else ""
        raise AccountsFileError(f"not valid TOML{where}") from None
    _refuse_secrets(document, "")
    unknown = sorted(set(document) - {"account"})
    if unknown:
        raise AccountsFileError(
            f"unknown top-level key {unknown[0][:40]!r}: the file holds [[account]] tables only"
        )
    tables = document.get("account")
    if not isinstance(tables, list) or not tables:
        raise AccountsFileError("defines no account: add one [[account]] table per account")
    if len(tables) > limits.accounts:
        raise AccountsFileError(
            f"defines {len(tables)} accounts; at most {limits.accounts} (accounts) are served"
        )
    specs = [_account(number, table, limits) for number, table in enumerate(tables, 1)]
    _refuse_clashes(specs)
    return specs


def _refuse_secrets(value: Any, where: str) -> None:
    """A key that names a secret, anywhere in the document, refused by its path only."""
    if isinstance(value, list):
        for item in value:
            _refuse_secrets(item, where)
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        path = f"{where}.{key}" if where else str(key)
        if any(word in str(key).lower() for word in SECRET_WORDS):
            raise AccountsFileError(
                f"key {path[:80]!r} would put a secret in the file; secrets come only from "
                "the environment or the OS keyring (docs/TOOLS.md 'Accounts')"
            )
        _refuse_secrets(item, path)


def _account(number: int, table: Any, limits: Limits) -> AccountSpec:
    if not isinstance(table, dict):
        raise AccountsFileError(f"account #{number} must be a table")
    name = table.get("name")
    if not isinstance(name, str):
        raise AccountsFileError(f"account #{number} has no `name` (a string)")
    if not _NAME.match(name) or len(name) > limits.account_name_chars:
        raise AccountsFileError(
            f"account #{number}: name {name[:40]!r} must be 1 to {limits.account_name_chars} "
            "letters, digits, '-' or '_' (account_name_chars), starting with a letter or digit"
        )
    where = f"account {name!r}"
    provider = table.get("provider")
    if not isinstance(provider, str) or provider not in PROVIDER_SETTINGS:
        shown = repr(provider[:40]) if isinstance(provider, str) else "none"
        raise AccountsFileError(
            f"{where}: unknown provider {shown}; use one of " + ", ".join(PROVIDER_SETTINGS)
        )
    checks = PROVIDER_SETTINGS[provider]
    settings: dict[str, Any] = {}
    gates: set[str] = set()
    for key, value in table.items():
        if key in ("name", "provider"):
            continue
        if key in GATE_KEYS:
            if _flag(f"{where}: {key}", value):
                gates.add(GATE_KEYS[key])
            continue
        check = checks.get(key)
        if check is None:
            raise AccountsFileError(
                f"{where}: unknown key {key[:40]!r} for provider {provider!r}; it takes "
                + ", ".join([*checks, *GATE_KEYS])
            )
        settings[key] = check(f"{where}: {key}", value)
    missing = [key for key in REQUIRED_SETTINGS.get(provider, ()) if key not in settings]
    if missing:
        raise AccountsFileError(f"{where}: provider {provider!r} needs {missing[0]!r}")
    if "delete" in gates and "writes" not in gates:
        raise AccountsFileError(f"{where}: enable_delete needs enable_writes = true too")
    _refuse_plain_off_loopback(where, settings)
    return AccountSpec(name, provider, settings, frozenset(gates))


def _refuse_plain_off_loopback(where: str, settings: Mapping[str, Any]) -> None:
    """``security = "plain"`` sends a password in the clear: only to this machine."""
    for security, server in (("imap_security", "imap"), ("smtp_security", "smtp")):
        target = settings.get(server, settings.get("imap"))
        on_loopback = bool(target) and is_loopback_host(_host_of(target))
        if settings.get(security) == "plain" and not on_loopback:
            raise AccountsFileError(
                f"{where}: {security} = 'plain' is allowed only to a loopback address"
            )


def _refuse_clashes(specs: list[AccountSpec]) -> None:
    """Names must differ (ignoring case), and so must the reference tags they derive."""
    seen: dict[str, str] = {}
    tags: dict[str, str] = {}
    for spec in specs:
        key = spec.name.lower()
        if key in seen:
            raise AccountsFileError(f"two accounts are named {spec.name!r} (names ignore case)")
        seen[key] = spec.name
        assert spec.provider in PROVIDER_LETTERS
        tag = account_tag(spec.provider, spec.name).tag
        if tag in tags:
            raise AccountsFileError(
                f"accounts {tags[tag]!r} and {spec.name!r} give the same reference tag "
                f"{tag!r}; rename one of them"
            )
        tags[tag] = spec.name
