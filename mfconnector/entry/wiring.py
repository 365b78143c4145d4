"""What a serving mode is built from: the token provider, the Graph client, the acting
tools' state and the tool context, from parsed flags and the environment.

Only the entry point wires. The Graph client (and httpx with it) is created on the first
tool call that needs one, so start-up stays cheap; msal is imported only in live mode.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mfconnector.auth import StaticTokenProvider
from mfconnector.auth.config import mailbox_argument
from mfconnector.entry.account_builders import (
    FIXTURE_TOKEN,
    PROVIDER_BUILDERS,
    SINGLE_ACCOUNT_SETTINGS,
    LazyGraph,
    SignIn,
    UsageError,
    demo_graph,
    flags_imap_account,
    graph_accounts,
    imap_accounts,
    live_graph,
    live_sign_in,
)
from mfconnector.entry.accounts_file import AccountsFileError, AccountSpec, load_accounts_file
from mfconnector.entry.instructions import accounts_sentence, server_instructions
from mfconnector.entry.providers import BuildPlace
from mfconnector.entry.routing import account_contexts, file_gate_errors, routed_tools
from mfconnector.limits import Limits
from mfconnector.server import McpServer
from mfconnector.timezones import resolve_zone
from mfconnector.tools.base import ToolContext
from mfconnector.tools.gated import hidden_tools, listed_tools
from mfconnector.writes.gates import Gates

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient
    from mfconnector.mail.accounts import Account
    from mfconnector.writes.redis_store import RedisState
    from mfconnector.writes.setup import WriteSetup

__all__ = [
    "accounts_from_args",
    "build_context",
    "build_server",
    "gates_of",
]


def build_context(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates | None = None,
    specs: Sequence[AccountSpec] | None = None,
    *,
    state: RedisState | None = None,
    namespace: str = "",
    sign_in: SignIn | None = None,
) -> tuple[ToolContext, LazyGraph]:
    """The tools' context for the mode the flags name (``--demo``, ``--fixtures``, live),
    and the lazy Graph client, which the caller closes when serving ends.

    ``sign_in``: live mode's sign-in when the caller has one (a hosted user's on-behalf-of
    token provider) instead of the one the flags describe.

    ``state``: the shared store (``--state-url``); ``namespace``: a hosted user's subject
    key, which their preparations, audit trail and cursors are bound to. ``specs``: the
    accounts of ``--accounts FILE`` (``accounts_from_args``); the context then serves
    those, each in its own context (``ToolContext.per_account``)."""
    if specs is not None:
        if state is not None or namespace:
            raise UsageError(
                "--accounts cannot be combined with --state-url or hosted mode yet: "
                "each account's send state lives in the local state file"
            )
        return _several_accounts(args, limits, specs)
    gates = Gates() if gates is None else gates
    from mfconnector.entry.gmail import wants_gmail

    if wants_gmail(args):
        return _gmail_context(args, limits, gates, state=state, namespace=namespace)
    source: str | None
    imap: Account | None = None
    if args.demo:
        from mfconnector.demo import DEMO_ACCOUNT, DEMO_SOURCE

        mode, source = "demo", DEMO_SOURCE
        demo_provider = StaticTokenProvider(FIXTURE_TOKEN, account=DEMO_ACCOUNT)
        # The demo has no scopes to grant: it shows every read.
        sign_in = SignIn(demo_provider, all_files=True)
        graph = LazyGraph(lambda: demo_graph(demo_provider, limits))
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
                transport=FixtureTransport(fixture_set, limits=limits),
            )

        graph = LazyGraph(make_fixture_graph)
    elif (imap := flags_imap_account(args, limits, gates)) is not None:
        mode, source = "live", None
        sign_in = SignIn(StaticTokenProvider(FIXTURE_TOKEN, account=imap.name))

        def no_graph() -> GraphClient:
            raise UsageError("this server serves an IMAP account; Microsoft Graph is not set up")

        graph = LazyGraph(no_graph)
    else:
        mode, source = "live", None
        live = live_sign_in(args, gates, limits) if sign_in is None else sign_in
        sign_in = live
        graph = LazyGraph(lambda: live_graph(live, limits))
    context = ToolContext(
        limits=limits,
        mode=mode,
        allow_partial=bool(args.allow_partial),
        sign_in=sign_in.token_provider,
        user_path=sign_in.user_path,
        source=source,
        writes=_write_setup(
            args, limits, gates, sign_in.cloud, mode=mode, state=state, namespace=namespace
        ),
        mailbox=mailbox_argument(args),
        time_zone=_time_zone(args),
        accounts=imap_accounts(imap)
        if imap is not None
        else graph_accounts(graph, limits, sign_in, gates),
    )
    if state is not None or namespace:
        from mfconnector.tools.cursors import CursorSigner

        key = state.cursor_key() if state is not None else None
        context.cursors = CursorSigner(max_chars=limits.cursor_chars, key=key, binding=namespace)
    return context, graph


def _gmail_context(
    args: argparse.Namespace,
    limits: Limits,
    gates: Gates,
    *,
    state: RedisState | None = None,
    namespace: str = "",
) -> tuple[ToolContext, Any]:
    """One Gmail account (``--demo gmail``, ``--gmail``): the tools reach it through
    ``ctx.accounts`` (a Gmail account has no files: the files tools are not offered)."""
    from mfconnector.entry.gmail import UsageProblem, gmail_wiring
    from mfconnector.mail.accounts import AccountSet

    try:
        wiring = gmail_wiring(args, limits, gates)
    except UsageProblem as error:
        raise UsageError(str(error)) from None
    context = ToolContext(
        limits=limits,
        mode=wiring.mode,
        allow_partial=bool(args.allow_partial),
        sign_in=wiring.token_provider,
        source=wiring.source,
        writes=_write_setup(
            args, limits, gates, "global", mode=wiring.mode, state=state, namespace=namespace
        ),
        time_zone=_time_zone(args),
        accounts=AccountSet([wiring.account]),
    )
    return context, wiring


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
    answer, and instructions that say what the open gates allow. With several accounts
    ``gates`` is every gate some account opens, and each tool takes ``account``; the files
    tools are offered when some account has files."""
    accounts = list(context.accounts or ())
    offered = [account.mail.capabilities for account in accounts]
    files = not accounts or any(account.files is not None for account in accounts)
    hidden = hidden_tools(gates, offered, files=files)
    instructions = server_instructions(gates)
    if context.accounts is not None and context.accounts.several:
        names = [account.name for account in context.accounts]
        instructions = f"{accounts_sentence(names)} {instructions}"
    return McpServer(
        routed_tools(listed_tools(gates, offered, files=files), context, context.per_account),
        context,
        file_gate_errors(hidden) if context.per_account else hidden,
        instructions,
    )


# --- several accounts: --accounts FILE ---------------------------------------------------


def accounts_from_args(
    args: argparse.Namespace, limits: Limits, env: Mapping[str, str] = os.environ
) -> list[AccountSpec] | None:
    """The checked accounts of ``--accounts FILE`` (or ``MFC_ACCOUNTS``); None without one.

    ``UsageError`` for a file that cannot work, and for a single-account flag or variable
    given as well (which account would it be for?)."""
    path = getattr(args, "accounts", None) or env.get("MFC_ACCOUNTS", "").strip() or None
    if path is None:
        return None
    for attribute, flag, variable in SINGLE_ACCOUNT_SETTINGS:
        if getattr(args, attribute, None) not in (None, False):
            raise UsageError(
                f"{flag} defines the one account of a server without --accounts; with "
                "--accounts put it in the account's table of the file"
            )
        if variable is not None and env.get(variable, "").strip():
            raise UsageError(
                f"{variable} is set: it defines the one account of a server without "
                "--accounts; with --accounts put it in the account's table of the file"
            )
    try:
        specs = load_accounts_file(path, limits)
    except AccountsFileError as error:
        raise UsageError(str(error)) from None
    for spec in specs:
        if spec.provider not in PROVIDER_BUILDERS:
            raise UsageError(
                f"--accounts: account {spec.name!r}: provider {spec.provider!r} is not built "
                "into this server (its settings were checked; it serves "
                + ", ".join(PROVIDER_BUILDERS)
                + " accounts)"
            )
    return specs


def gates_of(specs: Sequence[AccountSpec]) -> Gates:
    """Every gate some account opens: what the server lists (each call checks its own)."""
    opened = {gate for spec in specs for gate in spec.gates}
    return Gates(writes="writes" in opened, send="send" in opened, delete="delete" in opened)


def _several_accounts(
    args: argparse.Namespace, limits: Limits, specs: Sequence[AccountSpec]
) -> tuple[ToolContext, LazyGraph]:
    """The context of a server of the accounts file: the first account's context, with
    every account's own context in ``per_account`` (``entry.routing``)."""
    from mfconnector.mail.accounts import AccountSet

    if getattr(args, "fixtures", None):
        raise UsageError("--fixtures serves one canned account; it cannot be used with --accounts")
    mode = "demo" if args.demo else "live"
    place = BuildPlace(args, limits, mode, os.environ)
    served = [PROVIDER_BUILDERS[spec.provider](spec, place) for spec in specs]
    gates = gates_of(specs)
    first = served[0]
    graphs = [item.graph_factory for item in served if isinstance(item.graph_factory, LazyGraph)]
    closer = LazyGraph(_no_client)
    closer.others = graphs
    source: str | None = None
    if mode == "demo":
        from mfconnector.demo import DEMO_SOURCE

        source = DEMO_SOURCE
    context = ToolContext(
        limits=limits,
        mode=mode,
        allow_partial=bool(args.allow_partial),
        sign_in=first.token_provider,
        user_path=first.user_path,
        source=source,
        writes=_write_setup(args, limits, gates, first.cloud, mode=mode),
        mailbox=first.mailbox,
        time_zone=_time_zone(args),
        accounts=AccountSet([item.account for item in served]),
    )
    context.per_account = account_contexts(context, served)
    return context, closer


def _no_client() -> GraphClient:
    raise AssertionError("the closer of several accounts makes no client")
