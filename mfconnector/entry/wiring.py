"""What a serving mode is built from: the token provider, the Graph client, the acting
tools' state and the tool context, from parsed flags and the environment.

Only the entry point wires. The Graph client (and httpx with it) is created on the first
tool call that needs one, so start-up stays cheap; msal is imported only in live mode.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mfconnector.auth import StaticTokenProvider, TokenProvider, UnavailableTokenProvider
from mfconnector.auth.config import mailbox_argument
from mfconnector.entry.instructions import server_instructions
from mfconnector.entry.signin import sign_in_config
from mfconnector.errors import AuthError
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import Limits
from mfconnector.mail.failures import Unsupported
from mfconnector.server import McpServer
from mfconnector.timezones import resolve_zone
from mfconnector.tools.base import ToolContext
from mfconnector.tools.gated import hidden_tools, listed_tools
from mfconnector.writes.gates import Gates

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient
    from mfconnector.mail.accounts import Account, AccountSet
    from mfconnector.net.settings import NetworkSettings
    from mfconnector.writes.redis_store import RedisState
    from mfconnector.writes.setup import WriteSetup

__all__ = [
    "FIXTURE_TOKEN",
    "LazyGraph",
    "SignIn",
    "UsageError",
    "build_context",
    "build_server",
    "live_sign_in",
]

FIXTURE_TOKEN = "fixture-token-not-a-secret"
"""Demo and fixture modes still send a bearer token, so the same header code path runs."""
DEFAULT_ACCOUNT = "default"
"""The one account the single-account flags define (its name derives the reference tag)."""


class UsageError(Exception):
    """A serve option that cannot work: one stderr line, exit status 2."""


class LazyGraph:
    """The tools' Graph client, created by ``make`` on the first call that needs one.

    It is the ``graph_factory`` of the :class:`ToolContext`: awaiting it gives the one client
    of this server, built on first use, so a server that only lists tools never imports
    httpx. ``aclose`` closes the client if one was made.
    """

    def __init__(self, make: Callable[[], GraphClient]) -> None:
        self._make = make
        self._client: GraphClient | None = None

    async def __call__(self) -> GraphClient:
        if self._client is None:
            self._client = self._make()
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


@dataclass(frozen=True, slots=True)
class SignIn:
    """Who the tools act as and where they read: the token provider, the mailbox path,
    the Graph root and the network settings (live mode reads them from the sign-in
    settings; demo and fixtures have fixed ones)."""

    token_provider: TokenProvider
    user_path: str = "/me"
    """``/me`` when delegated, ``/users/{id}`` in app-only mode."""
    graph_root: str = DEFAULT_GRAPH_ROOT
    network: NetworkSettings | None = None
    cloud: str = "global"
    all_files: bool = False
    """``--all-files``: other drives can be read."""


def live_sign_in(args: argparse.Namespace, gates: Gates) -> SignIn:
    """The live token provider, or one that says what blocks signing in on every call.

    The server asks for the read permissions only: Entra ID puts every permission the user
    consented to in the token anyway, and asking for a write permission that was never
    consented would break the read tools too. The acting tools check the granted
    permissions themselves and name the login command (``gate_flags``) that adds them.
    """
    try:
        config = sign_in_config(args, gates=gates)
        config.require_client_id()  # the first blocker, said before any keyring or network
    except AuthError as error:
        return SignIn(UnavailableTokenProvider(error))
    from mfconnector.auth.msal_provider import build_token_provider

    return SignIn(
        token_provider=build_token_provider(replace(config, extra_scopes=())),
        user_path=config.user_path,
        graph_root=config.graph_root,
        network=config.network,
        cloud=config.cloud.name,
        all_files=config.all_files,
    )


def _demo_graph(token_provider: TokenProvider, limits: Limits) -> GraphClient:
    from mfconnector.demo import demo_transport
    from mfconnector.graph.client import GraphClient

    return GraphClient(
        token_provider=token_provider,
        limits=limits,
        root=DEFAULT_GRAPH_ROOT,
        transport=demo_transport(),
    )


def build_context(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates | None = None,
    *,
    state: RedisState | None = None,
    namespace: str = "",
) -> tuple[ToolContext, LazyGraph]:
    """The tools' context for the mode the flags name (``--demo``, ``--fixtures``, live),
    and the lazy Graph client, which the caller closes when serving ends.

    ``state``: the shared store (``--state-url``); ``namespace``: a hosted user's subject
    key, which their preparations, audit trail and cursors are bound to."""
    gates = Gates() if gates is None else gates
    from mfconnector.entry.gmail import wants_gmail

    if wants_gmail(args):
        return _gmail_context(args, limits, gates, state=state, namespace=namespace)
    source: str | None
    imap: Account | None = None  # set only when --imap names the account (below)
    if args.demo:
        from mfconnector.demo import DEMO_ACCOUNT, DEMO_SOURCE

        mode, source = "demo", DEMO_SOURCE
        demo_provider = StaticTokenProvider(FIXTURE_TOKEN, account=DEMO_ACCOUNT)
        # The demo has no scopes to grant: it shows every read.
        sign_in = SignIn(demo_provider, all_files=True)
        graph = LazyGraph(lambda: _demo_graph(demo_provider, limits))
    elif args.fixtures:
        from mfconnector.graph.fixtures import load_fixtures

        mode, source = "fixtures", str(args.fixtures)
        fixture_set = load_fixtures(args.fixtures, limits=limits)
        fixture_provider = StaticTokenProvider(FIXTURE_TOKEN, account="fixture account")
        sign_in = SignIn(
            fixture_provider,
            graph_root=fixture_set.graph_root,
            all_files=bool(getattr(args, "auth_all_files", None)),
        )

        def make_fixture_graph() -> GraphClient:
            from mfconnector.graph.client import GraphClient
            from mfconnector.graph.fixture_transport import FixtureTransport

            return GraphClient(
                token_provider=fixture_provider,
                limits=limits,
                root=fixture_set.graph_root,
                transport=FixtureTransport(fixture_set),
            )

        graph = LazyGraph(make_fixture_graph)
    elif (imap := _imap_account(args, limits, gates)) is not None:
        mode, source = "live", None
        sign_in = SignIn(StaticTokenProvider(FIXTURE_TOKEN, account=imap.name))

        def no_graph() -> GraphClient:
            raise UsageError("this server serves an IMAP account; Microsoft Graph is not set up")

        graph = LazyGraph(no_graph)
    else:
        mode, source = "live", None
        sign_in = live_sign_in(args, gates)
        graph = LazyGraph(lambda: _live_graph(sign_in, limits))
    context = ToolContext(
        limits=limits,
        mode=mode,
        allow_partial=bool(args.allow_partial),
        token_provider=sign_in.token_provider,
        graph_factory=graph,
        user_path=sign_in.user_path,
        source=source,
        writes=_write_setup(
            args, limits, gates, sign_in.cloud, mode=mode, state=state, namespace=namespace
        ),
        mailbox=mailbox_argument(args),
        time_zone=_time_zone(args),
        all_files=sign_in.all_files,
        accounts=_imap_accounts(imap)
        if imap is not None
        else _accounts(graph, limits, sign_in.user_path, sign_in.cloud, gates),
    )
    if state is not None or namespace:
        from mfconnector.tools.cursors import CursorSigner

        key = state.cursor_key() if state is not None else None
        context.cursors = CursorSigner(max_chars=limits.cursor_chars, key=key, binding=namespace)
    return context, graph


def _imap_accounts(imap: Account) -> AccountSet:
    from mfconnector.mail.accounts import AccountSet

    return AccountSet([imap])


def _imap_account(args: argparse.Namespace, limits: Limits, gates: Gates) -> Account | None:
    """The IMAP/SMTP account of ``--imap`` (or ``MFC_IMAP``), or None (issue 19)."""
    from mfconnector.imap.account import imap_account, imap_settings_from
    from mfconnector.imap.errors import MailSettingsError
    from mfconnector.net.settings import network_settings_from_args

    try:
        network = network_settings_from_args(args, os.environ)
        settings = imap_settings_from(args, os.environ, ca_file=network.ca_file)
    except MailSettingsError as error:
        raise UsageError(str(error)) from None
    if settings is None:
        return None
    return imap_account(settings, limits, frozenset(gates.names))


def _accounts(
    graph: LazyGraph, limits: Limits, user_path: str, cloud: str, gates: Gates
) -> AccountSet:
    """One Microsoft 365 account, ``default``, served through Graph, in its cloud (which
    decides what it offers) and with the gates in force."""
    from mfconnector.graph.mail_backend import graph_account
    from mfconnector.mail.accounts import AccountSet

    return AccountSet(
        [
            graph_account(
                DEFAULT_ACCOUNT,
                graph,
                limits,
                own_path=user_path,
                cloud=cloud,
                gates=frozenset(gates.names),
            )
        ]
    )


def _gmail_context(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates,
    *,
    state: RedisState | None = None,
    namespace: str = "",
) -> tuple[ToolContext, Any]:
    """One Gmail account (``--demo gmail``, ``--gmail``): the tools reach it through
    ``ctx.accounts``; the Graph factory says this server has no Graph."""
    from mfconnector.entry.gmail import UsageProblem, gmail_wiring, no_graph
    from mfconnector.mail.accounts import AccountSet

    try:
        wiring = gmail_wiring(args, limits, gates)
    except UsageProblem as error:
        raise UsageError(str(error)) from None
    context = ToolContext(
        limits=limits,
        mode=wiring.mode,
        allow_partial=bool(args.allow_partial),
        token_provider=wiring.token_provider,
        graph_factory=no_graph,
        source=wiring.source,
        writes=_write_setup(
            args, limits, gates, "global", mode=wiring.mode, state=state, namespace=namespace
        ),
        time_zone=_time_zone(args),
        accounts=AccountSet([wiring.account]),
    )
    return context, wiring


def _live_graph(sign_in: SignIn, limits: Limits) -> GraphClient:
    from mfconnector.graph.client import GraphClient

    return GraphClient(
        token_provider=sign_in.token_provider,
        limits=limits,
        root=sign_in.graph_root,
        network=sign_in.network,
    )


def _write_setup(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates,
    cloud: str,
    *,
    mode: str,
    state: RedisState | None = None,
    namespace: str = "",
) -> WriteSetup | None:
    """The acting tools' shared state; a live server's send state lives in a file (or in
    Redis with ``--state-url``), and the demo dates its preparations on the demo's clock."""
    if not gates.any:
        return None
    from mfconnector.demo import DemoClock
    from mfconnector.paths import default_state_dir
    from mfconnector.writes.confirm import confirm_mode
    from mfconnector.writes.setup import WriteSetup
    from mfconnector.writes.store import STATE_FILE_NAME, AsyncSendStore, SendStore

    path: Path | None = None
    if mode == "live":
        raw = args.state_dir or os.environ.get("MFC_STATE_DIR", "").strip()
        directory = Path(raw).expanduser().absolute() if raw else default_state_dir(os.environ)
        path = directory / STATE_FILE_NAME
    clock: Callable[[], float] = time.time
    if mode == "demo":
        clock = DemoClock(state.demo_epoch() if state is not None else None)
    if state is not None:
        store = AsyncSendStore(state.store(namespace, clock=clock), limiter=state.limiter)
    else:
        store = AsyncSendStore(SendStore(path, limits=limits, clock=clock, namespace=namespace))
    return WriteSetup(
        gates, store, cloud=cloud, clock=clock, confirm=confirm_mode(args, os.environ)
    )


def _time_zone(args: argparse.Namespace) -> str | None:
    """``--time-zone`` checked at start-up: an unknown zone is a usage error, not UTC."""
    name = getattr(args, "time_zone", None)
    if name is None:
        return None
    if resolve_zone(name) is None:
        raise UsageError(
            f"--time-zone {name[:60]!r} is not a time zone (try Europe/Paris or "
            "'W. Europe Standard Time')"
        )
    return str(name)


FILES_PROVIDERS = frozenset({"graph"})
"""Providers whose accounts have files (Microsoft 365: OneDrive, SharePoint)."""
FILES_TOOLS = ("files_list", "files_search", "files_read")


def build_server(context: ToolContext, gates: Gates) -> McpServer:
    """The MCP server for ``context``: the tools the gates list, what the hidden ones
    answer, and instructions that say what the open gates allow."""
    offered = [account.mail.capabilities for account in context.accounts or ()]
    tools = listed_tools(gates, offered)
    hidden = hidden_tools(gates, offered)
    if context.accounts is not None and not any(
        account.provider in FILES_PROVIDERS for account in context.accounts
    ):
        tools = tuple(tool for tool in tools if tool.name not in FILES_TOOLS)
        for name in FILES_TOOLS:
            hidden[name] = Unsupported(
                f"{name} is not offered: no account of this server has files "
                "(OneDrive or SharePoint); nothing was requested",
                hint="the mail tools read this account's mail and attachments",
            )
    return McpServer(tools, context, hidden, server_instructions(gates))
