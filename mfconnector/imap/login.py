"""``mfconnector login|logout|status --provider imap``: the IMAP password in the OS keyring.

The password is asked on the terminal (never a flag, never echoed, never logged) and kept in
the OS keyring under service ``mfconnector-imap``, user ``USER@HOST`` — where the server
looks for it when ``MFC_IMAP_PASSWORD`` is not set (``imap.account``). ``status`` says
whether one is stored, never what it is; ``logout`` removes it.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable, Mapping
from typing import cast

from mfconnector.imap.account import IMAP_PORTS, KEYRING_SERVICE, parse_server
from mfconnector.imap.errors import MailSettingsError
from mfconnector.imap.settings import Security

__all__ = ["run_imap_auth_command"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

AskPassword = Callable[[str], str]


def _where(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str, str]:
    """(user, host) of the account the flags name, exactly as the server will look it up."""
    server = getattr(args, "imap", None) or env.get("MFC_IMAP", "").strip()
    user = getattr(args, "imap_user", None) or env.get("MFC_IMAP_USER", "").strip()
    if not server or not user:
        raise MailSettingsError("--provider imap needs --imap HOST[:PORT] and --imap-user USER")
    security = getattr(args, "imap_security", None) or env.get("MFC_IMAP_SECURITY") or "tls"
    if security not in IMAP_PORTS:
        raise MailSettingsError(f"--imap-security {security[:20]!r} is not tls, starttls or plain")
    host, _ = parse_server(server, cast(Security, security), IMAP_PORTS, "--imap")
    return user, host


def run_imap_auth_command(
    command: str,
    args: argparse.Namespace,
    env: Mapping[str, str] = os.environ,
    ask: AskPassword = getpass.getpass,
) -> int:
    """``login`` stores the password asked on the terminal, ``logout`` removes it,
    ``status`` says whether one is stored. Messages go to stderr; stdout stays empty."""
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        user, host = _where(args, env)
    except MailSettingsError as error:
        print(f"mfconnector: {error}", file=sys.stderr)
        return EXIT_USAGE
    entry = f"{user}@{host}"
    try:
        if command == "login":
            password = ask(f"IMAP password for {entry} (not shown): ")
            if not password:
                print("mfconnector: no password given; nothing was stored", file=sys.stderr)
                return EXIT_FAILED
            keyring.set_password(KEYRING_SERVICE, entry, password)
            print(
                f"mfconnector: the IMAP password for {entry} is in the OS keyring "
                f"(service {KEYRING_SERVICE!r})",
                file=sys.stderr,
            )
            return EXIT_OK
        if command == "logout":
            try:
                keyring.delete_password(KEYRING_SERVICE, entry)
            except PasswordDeleteError:
                print(f"mfconnector: no IMAP password stored for {entry}", file=sys.stderr)
                return EXIT_OK
            print(f"mfconnector: the IMAP password for {entry} is removed", file=sys.stderr)
            return EXIT_OK
        stored = keyring.get_password(KEYRING_SERVICE, entry) is not None
    except KeyringError as error:
        print(
            f"mfconnector: the OS keyring cannot be used ({type(error).__name__}); set "
            "MFC_IMAP_PASSWORD in the server's environment instead",
            file=sys.stderr,
        )
        return EXIT_FAILED
    said = "is stored" if stored else "is not stored"
    print(f"mfconnector: an IMAP password for {entry} {said} in the OS keyring", file=sys.stderr)
    return EXIT_OK
