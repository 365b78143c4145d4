"""Wiring a Gmail account: ``--demo gmail``, ``--gmail`` (one account by flags) and
``login|logout|status --provider gmail``.

Entry layer: it alone knows the gates (``writes.gates``), Google sign-in
(``auth.google``), the backend (``gmail.account``) and the emulator. Nothing Google is
imported until a token is needed; the emulator only for ``--demo gmail``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mfconnector.errors import ToolError
from mfconnector.limits import Limits

if TYPE_CHECKING:
    from mfconnector.auth import TokenProvider
    from mfconnector.gmail.account import LazyGmailClient
    from mfconnector.graph.client import GraphClient
    from mfconnector.mail.accounts import Account
    from mfconnector.writes.gates import Gates

__all__ = [
    "DEMO_GMAIL_ACCOUNT",
    "DEMO_GMAIL_SOURCE",
    "GmailWiring",
    "add_gmail_arguments",
    "gmail_wiring",
    "no_graph",
    "run_gmail_auth_command",
    "wants_gmail",
]

DEMO_GMAIL_ACCOUNT = "demo Gmail account (emulator)"
DEMO_GMAIL_SOURCE = "built-in Gmail emulator (mfconnector.gmail_emulator)"
ACCOUNT_NAME = "gmail"


class UsageProblem(Exception):
    """A Gmail setting that cannot work: one stderr line, exit status 2."""


def add_gmail_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gmail",
        action="store_true",
        default=None,
        help="serve one Gmail account (sign in with `mfconnector login --provider gmail`) "
        "[MFC_GMAIL=1]",
    )
    parser.add_argument(
        "--gmail-api-root",
        metavar="URL",
        help="Gmail API root for emulators and proxies: https, or http on loopback only "
        "[MFC_GMAIL_API_ROOT; default https://gmail.googleapis.com]",
    )


def wants_gmail(args: argparse.Namespace, env: Mapping[str, str] = os.environ) -> bool:
    if getattr(args, "demo", None) == "gmail":
        return True
    flag = getattr(args, "gmail", None)
    if flag is not None:
        return bool(flag)
    return env.get("MFC_GMAIL", "").strip().lower() in ("1", "true", "yes", "on")


def _switches(gates: Gates) -> dict[str, bool]:
    return {"writes": gates.writes, "send": gates.send, "delete": gates.delete}


def _gate_names(gates: Gates) -> frozenset[str]:
    return frozenset(name for name, on in _switches(gates).items() if on)


@dataclass
class GmailWiring:
    account: Account
    token_provider: TokenProvider
    client: LazyGmailClient
    mode: str
    source: str | None

    async def aclose(self) -> None:
        await self.client.aclose()


async def no_graph() -> GraphClient:
    """The Graph client of a Gmail-only server: there is none."""
    raise ToolError(
        "this server serves a Gmail account: this tool still speaks Microsoft Graph only",
        hint="the Gmail account answers through the mail tools ported to the neutral model",
    )


def _live_token_provider(
    args: argparse.Namespace, env: Mapping[str, str], gates: Gates, limits: Limits
) -> TokenProvider:
    from mfconnector.auth import StaticTokenProvider, UnavailableTokenProvider
    from mfconnector.errors import AuthError
    from mfconnector.gmail.scopes import login_command, scopes_for

    operator_token = env.get("MFC_GMAIL_ACCESS_TOKEN", "").strip()
    if operator_token:
        return StaticTokenProvider(operator_token, account="operator-managed token")
    from mfconnector.auth.google import GoogleTokenProvider
    from mfconnector.auth.google_commands import google_settings_from_args

    try:
        settings = google_settings_from_args(
            args,
            env,
            scopes=scopes_for(**_switches(gates)),
            login_command=login_command(**_switches(gates)),
            limits=limits,
        )
    except AuthError as error:
        return UnavailableTokenProvider(error)
    return GoogleTokenProvider(settings)


def gmail_wiring(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates,
    env: Mapping[str, str] = os.environ,
) -> GmailWiring:
    """The one Gmail account of ``--demo gmail`` or ``--gmail``; ``UsageProblem`` for a
    refused ``--gmail-api-root``."""
    from mfconnector.auth import StaticTokenProvider
    from mfconnector.gmail.account import gmail_account
    from mfconnector.gmail.api_root import DEFAULT_GMAIL_API_ROOT, ApiRootError

    names = _gate_names(gates)
    if getattr(args, "demo", None) == "gmail":
        from mfconnector.gmail_emulator import DEMO_ADDRESS, DEMO_TOKEN, GmailTransport

        demo_tokens = StaticTokenProvider(DEMO_TOKEN, account=DEMO_GMAIL_ACCOUNT)
        account = gmail_account(
            ACCOUNT_NAME,
            token_provider=demo_tokens,
            limits=limits,
            gates=names,
            transport=GmailTransport(),
            settings={"address": DEMO_ADDRESS, "source": DEMO_GMAIL_SOURCE},
        )
        return GmailWiring(account, demo_tokens, _client_of(account), "demo", DEMO_GMAIL_SOURCE)
    root = (
        getattr(args, "gmail_api_root", None)
        or env.get("MFC_GMAIL_API_ROOT", "").strip()
        or DEFAULT_GMAIL_API_ROOT
    )
    tokens = _live_token_provider(args, env, gates, limits)
    try:
        account = gmail_account(
            ACCOUNT_NAME, token_provider=tokens, limits=limits, gates=names, root=root
        )
    except ApiRootError as error:
        raise UsageProblem(str(error)) from None
    return GmailWiring(account, tokens, _client_of(account), "live", None)


def _client_of(account: Account) -> LazyGmailClient:
    from mfconnector.gmail.account import LazyGmailClient
    from mfconnector.gmail.backend import GmailMailBackend

    backend = account.mail
    assert isinstance(backend, GmailMailBackend)
    assert isinstance(backend.client_factory, LazyGmailClient)
    return backend.client_factory


def run_gmail_auth_command(command: str, args: argparse.Namespace) -> int:
    """``login|logout|status --provider gmail`` with the scopes the gates need."""
    from mfconnector.auth.google_commands import run_google_command
    from mfconnector.gmail.scopes import login_command, scopes_for
    from mfconnector.writes.gates import gates_from_args

    gates = gates_from_args(args)
    switches = _switches(gates)
    return run_google_command(
        command, args, scopes=scopes_for(**switches), login_command=login_command(**switches)
    )
