"""Command line: serve (the default), tour, login, logout, status.

Only the runtime writes to stdout while serving; every human-facing line goes to stderr,
except the ``tour`` report, which is for a person at a terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mfconnector import __version__
from mfconnector.errors import FixtureError
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.writes.gates import GateConfigError, Gates, add_gate_arguments, gates_from_args

if TYPE_CHECKING:
    import trio

    from mfconnector.auth import TokenProvider
    from mfconnector.graph.client import GraphClient
    from mfconnector.net.settings import NetworkSettings
    from mfconnector.server import McpServer
    from mfconnector.stdio import StdioKind
    from mfconnector.tools.base import ToolContext
    from mfconnector.writes.setup import WriteSetup

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_USAGE = 2
FIXTURE_TOKEN = "fixture-token-not-a-secret"
"""Demo and fixture modes still send a bearer token, so the same header code path runs."""


TOUR_HELP = "run the server on the demo mailbox and show what it returns"
TOUR_MORE = (
    "It starts the real server on the bundled demo data (no account, nothing sent anywhere), "
    "calls each read tool as an assistant would and prints what came back."
)
SUBCOMMANDS = (
    (
        "login",
        "sign in: in a web browser, or with --device-code (messages on stderr)",
        "Needs MFC_CLIENT_ID (or --client-id): the application (client) id of an app "
        "registration in Microsoft Entra ID; see README.md 'Sign in (live mode)'. The token "
        "is kept in the system keyring, or an encrypted file where there is none.",
    ),
    (
        "logout",
        "remove the signed-in account from the token cache",
        "The server then answers 'not signed in' until the next login.",
    ),
    (
        "status",
        "show account, tenant, scopes, cache location and token expiry",
        "Says first what blocks signing in (no client id configured, not signed in).",
    ),
)
TTY_NOTICE = (
    "mfconnector is an MCP server: it is waiting for an MCP client to speak JSON-RPC on "
    "stdin. Add it to a client (Claude Desktop, Claude Code, VS Code) as README.md 'Add it "
    "to an MCP client' shows, or run `mfconnector tour` to see what it returns. Ctrl+D or "
    "Ctrl+C ends it."
)
"""Said on stderr when stdin is a terminal: a person started it by hand."""


def _add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--demo",
        nargs="?",
        const="m365",
        choices=["m365", "gmail"],
        help="serve the demo mailbox and drive (an in-memory Graph emulator; no account); "
        "--demo gmail serves the Gmail emulator instead",
    )
    source.add_argument("--fixtures", metavar="PATH", help="serve canned Graph responses from PATH")
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="mark results that were cut to the limits isError=false (default: isError=true)",
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where the send state file lives [MFC_STATE_DIR; the platform state directory]; "
        "--demo and --fixtures keep it in memory",
    )
    parser.add_argument(
        "--confirm",
        choices=["user", "assistant"],
        help="who confirms a send or permanent deletion: user = only the person, asked "
        "through the client (refused where the client cannot ask); assistant = the "
        "assistant's prepared_id and digest [MFC_CONFIRM; default: ask the person where "
        "the client can, else the assistant]",
    )
    parser.add_argument(
        "--time-zone",
        metavar="ZONE",
        help="show and filter mail times in this zone (IANA or Windows name) instead of "
        "the mailbox's own",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="stderr log level (default: warning)",
    )
    from mfconnector.entry.gmail import add_gmail_arguments

    add_gmail_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mfconnector",
        description="Bounded, read-only MCP stdio server for Microsoft 365 mail and files.",
    )
    parser.add_argument("--version", action="version", version=f"mfconnector {__version__}")
    _add_serve_arguments(parser)
    _add_auth_arguments(parser)
    add_gate_arguments(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    tour = commands.add_parser(
        "tour", help=TOUR_HELP, description=f"{TOUR_HELP[0].upper()}{TOUR_HELP[1:]}. {TOUR_MORE}"
    )
    tour.add_argument(
        "--demo",
        action="store_true",
        help="accepted and ignored: the tour always runs on the demo mailbox",
    )
    for name, text, more in SUBCOMMANDS:
        sub = commands.add_parser(
            name, help=text, description=f"{text[0].upper()}{text[1:]}. {more}"
        )
        _add_auth_arguments(sub)
        sub.add_argument(
            "--provider",
            choices=["microsoft", "gmail"],
            default="microsoft",
            help="whose sign-in: Microsoft 365 (the default) or Gmail",
        )
        if name == "login":
            flow = sub.add_mutually_exclusive_group()
            flow.add_argument(
                "--device-code",
                dest="login_method",
                action="store_const",
                const="device-code",
                help="show a code to enter on any device's browser (for SSH sessions and "
                "machines without a browser)",
            )
            flow.add_argument(
                "--browser",
                dest="login_method",
                action="store_const",
                const="browser",
                help="sign in in a web browser on this computer (the default when one can be "
                "opened)",
            )
        add_gate_arguments(sub)
    from mfconnector.hosted.serve import add_http_arguments

    http = commands.add_parser("serve-http", help="serve MCP over Streamable HTTP, many users")
    _add_serve_arguments(http)
    add_gate_arguments(http)
    add_http_arguments(http)
    return parser


def _add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    try:
        from mfconnector.auth.config import add_auth_arguments
    except ImportError:
        return
    add_auth_arguments(parser)


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper()),
        format="mfconnector %(levelname)s %(name)s: %(message)s",
    )


class UsageError(Exception):
    """A serve option that cannot work: one stderr line, exit status 2."""


class _LazyGraph:
    """Creates the Graph client (and imports httpx) on the first tool call that needs it."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._client: GraphClient | None = None

    async def __call__(self) -> GraphClient:
        if self._client is None:
            self._client = self._make()
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _context(
    args: argparse.Namespace, limits: Limits, gates: Gates | None = None
) -> tuple[ToolContext, _LazyGraph]:
    from mfconnector.auth import StaticTokenProvider
    from mfconnector.tools.base import ToolContext

    token_provider: TokenProvider
    user_path = "/me"
    cloud = "global"
    from mfconnector.entry.gmail import wants_gmail

    if wants_gmail(args):
        return _gmail_context(args, limits, gates or Gates())
    if args.demo:
        from mfconnector.demo import DEMO_ACCOUNT, DEMO_SOURCE
        from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT

        mode = "demo"
        token_provider = StaticTokenProvider(FIXTURE_TOKEN, account=DEMO_ACCOUNT)

        def make() -> GraphClient:
            from mfconnector.demo import demo_transport
            from mfconnector.graph.client import GraphClient

            return GraphClient(
                token_provider=token_provider,
                limits=limits,
                root=DEFAULT_GRAPH_ROOT,
                transport=demo_transport(),
            )

        source: str | None = DEMO_SOURCE
        all_files = True  # the demo has no scopes to grant: it shows every read
    elif args.fixtures:
        from mfconnector.graph.fixtures import load_fixtures

        mode = "fixtures"
        fixture_set = load_fixtures(args.fixtures, limits=limits)
        all_files = bool(getattr(args, "auth_all_files", None))
        token_provider = StaticTokenProvider(FIXTURE_TOKEN, account="fixture account")

        def make() -> GraphClient:
            from mfconnector.graph.client import GraphClient
            from mfconnector.graph.fixture_transport import FixtureTransport

            return GraphClient(
                token_provider=token_provider,
                limits=limits,
                root=fixture_set.graph_root,
                transport=FixtureTransport(fixture_set),
            )

        source = str(args.fixtures)
    else:
        mode = "live"
        source = None
        token_provider, user_path, root, network, cloud, all_files = _live_auth(args)

        def make() -> GraphClient:
            from mfconnector.graph.client import GraphClient

            return GraphClient(
                token_provider=token_provider, limits=limits, root=root, network=network
            )

    graph = _LazyGraph(make)
    context = ToolContext(
        limits=limits,
        mode=mode,
        allow_partial=bool(args.allow_partial),
        token_provider=token_provider,
        graph_factory=graph,
        user_path=user_path,
        source=source,
        writes=_write_setup(args, limits, gates or Gates(), cloud, mode=mode),
        mailbox=_mailbox(args),
        time_zone=_time_zone(args),
        all_files=all_files,
    )
    return context, graph


def _gmail_context(
    args: argparse.Namespace, limits: Limits, gates: Gates
) -> tuple[ToolContext, Any]:
    """One Gmail account (``--demo gmail``, ``--gmail``): the tools reach it through
    ``ctx.accounts``; the Graph factory says this server has no Graph."""
    from mfconnector.entry.gmail import UsageProblem, gmail_wiring, no_graph
    from mfconnector.mail.accounts import AccountSet
    from mfconnector.tools.base import ToolContext

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
        writes=_write_setup(args, limits, gates, "global", mode=wiring.mode),
        time_zone=_time_zone(args),
        accounts=AccountSet([wiring.account]),
    )
    return context, wiring


def _write_setup(
    args: argparse.Namespace, limits: Limits, gates: Gates, cloud: str, *, mode: str
) -> WriteSetup | None:
    """The acting tools' shared state; a live server's send state lives in a file, and the
    demo dates its preparations on the demo's clock."""
    if not gates.any:
        return None
    import os
    import time
    from pathlib import Path

    from mfconnector.demo import DemoClock
    from mfconnector.paths import default_state_dir
    from mfconnector.writes.setup import WriteSetup
    from mfconnector.writes.store import STATE_FILE_NAME, AsyncSendStore, SendStore

    path: Path | None = None
    if mode == "live":
        raw = args.state_dir or os.environ.get("MFC_STATE_DIR", "").strip()
        directory = Path(raw).expanduser().absolute() if raw else default_state_dir(os.environ)
        path = directory / STATE_FILE_NAME
    from mfconnector.writes.confirm import confirm_mode

    clock = DemoClock() if mode == "demo" else time.time
    store = AsyncSendStore(SendStore(path, limits=limits, clock=clock))
    return WriteSetup(
        gates, store, cloud=cloud, clock=clock, confirm=confirm_mode(args, os.environ)
    )


def _mailbox(args: argparse.Namespace) -> str | None:
    try:
        from mfconnector.auth.config import mailbox_argument
    except ImportError:
        return None
    return mailbox_argument(args)


def _time_zone(args: argparse.Namespace) -> str | None:
    """``--time-zone`` checked at start-up: an unknown zone is a usage error, not UTC."""
    name = getattr(args, "time_zone", None)
    if name is None:
        return None
    from mfconnector.timezones import resolve_zone

    if resolve_zone(name) is None:
        raise UsageError(
            f"--time-zone {name[:60]!r} is not a time zone (try Europe/Paris or "
            "'W. Europe Standard Time')"
        )
    return str(name)


def _live_auth(
    args: argparse.Namespace,
) -> tuple[TokenProvider, str, str, NetworkSettings | None, str, bool]:
    """Token provider, user path, Graph root, network settings, cloud and ``--all-files``."""
    from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT

    try:
        from mfconnector.auth.config import auth_config_from_args
        from mfconnector.auth.msal_provider import build_token_provider
    except ImportError:
        from mfconnector.auth import StaticTokenProvider

        return StaticTokenProvider(None), "/me", DEFAULT_GRAPH_ROOT, None, "global", False
    from mfconnector.auth import UnavailableTokenProvider
    from mfconnector.errors import AuthError

    try:
        config = auth_config_from_args(args)
        config.require_client_id()  # the first blocker, said before any keyring or network
    except AuthError as error:
        return UnavailableTokenProvider(error), "/me", DEFAULT_GRAPH_ROOT, None, "global", False
    # The server asks for the read permissions only: Entra ID puts every permission the
    # user consented to in the token anyway, and asking for a write permission that was
    # never consented would break the read tools too. The acting tools check the granted
    # permissions themselves and name the login command that adds the missing ones.
    import dataclasses

    provider = build_token_provider(dataclasses.replace(config, extra_scopes=()))
    return (
        provider,
        config.user_path,
        config.graph_root,
        config.network,
        config.cloud.name,
        config.all_files,
    )


def serve(args: argparse.Namespace, limits: Limits = DEFAULT_LIMITS) -> int:
    from mfconnector.server import McpServer
    from mfconnector.stdio import StdioChoiceError, choose_stdio
    from mfconnector.tools.gated import hidden_tools, instructions, listed_tools

    try:
        stdio = choose_stdio()
        gates = gates_from_args(args)
        context, graph = _context(args, limits, gates)
    except (StdioChoiceError, FixtureError, GateConfigError, UsageError) as error:
        print(f"mfconnector: {error}", file=sys.stderr)
        return EXIT_USAGE
    server = McpServer(listed_tools(gates), context, hidden_tools(gates), instructions(gates))
    terminal = _stdin_is_terminal()  # asked before the protocol takes stdin over

    def announce() -> None:
        """Said once stdin and stdout are known to be usable: the first blocker first."""
        _say_sign_in_blocker(context)
        if terminal:
            print(f"mfconnector: {TTY_NOTICE}", file=sys.stderr)

    return serve_stdio(server, limits, graph.aclose, stdio, announce=announce)


def _say_sign_in_blocker(context: ToolContext) -> None:
    """Live mode that cannot sign in as configured says why at start-up (every tool will)."""
    from mfconnector.auth import UnavailableTokenProvider

    provider = context.token_provider
    if isinstance(provider, UnavailableTokenProvider):
        error = provider.error
        hint = f" ({error.hint})" if error.hint else ""
        print(f"mfconnector: live mode cannot sign in: {error.message}{hint}", file=sys.stderr)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed or detached stdin: not a person at a terminal
        return False


def serve_stdio(
    server: McpServer,
    limits: Limits,
    close: Any,
    stdio: StdioKind | None = None,
    *,
    announce: Callable[[], None] | None = None,
) -> int:
    """Serve ``server`` on this process's stdin/stdout until end of input or a signal;
    ``announce`` says what a person should know once the streams are claimed."""
    import trio

    from mfconnector.runtime import Runtime
    from mfconnector.stdio import choose_stdio, claim_stdio, open_protocol_streams

    if stdio is None:
        stdio = choose_stdio()
    try:
        fds = claim_stdio()
    except OSError as error:  # for example started without stdin (pythonw, a closed fd 0)
        print(
            f"mfconnector: stdin and stdout must be open for the protocol: {error.strerror}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    logging.getLogger("mfconnector.stdio").info("protocol stream: %s", stdio)
    if announce is not None:
        announce()

    async def run() -> None:
        receive, send = open_protocol_streams(fds, stdio)
        try:
            async with trio.open_nursery() as nursery:
                reading = trio.CancelScope()
                await nursery.start(_watch_signals, reading, nursery.cancel_scope)
                await Runtime(server, limits).serve(receive, send, reading=reading)
                nursery.cancel_scope.cancel()
        finally:
            await close()
            for stream in (receive, send):
                with contextlib.suppress(OSError):
                    await stream.aclose()

    trio.run(run)
    return EXIT_OK


async def _watch_signals(
    reading: trio.CancelScope,
    everything: trio.CancelScope,
    *,
    task_status: trio.TaskStatus[None],
) -> None:
    """SIGTERM/SIGINT (and Ctrl+Break on Windows): the first stops reading (in-flight requests
    finish), the second stops all."""
    import trio

    from mfconnector.shutdown import shutdown_signals

    with trio.open_signal_receiver(*shutdown_signals()) as signals:
        task_status.started()
        count = 0
        async for signum in signals:
            count += 1
            logging.getLogger("mfconnector.cli").info(
                "signal %d: %s",
                signum,
                "finishing in-flight requests" if count == 1 else "stopping now",
            )
            (reading if count == 1 else everything).cancel()


def _run_auth_command(args: argparse.Namespace) -> int:
    from mfconnector.auth import commands

    if getattr(args, "provider", "microsoft") == "gmail":
        from mfconnector.entry.gmail import run_gmail_auth_command

        return run_gmail_auth_command(args.command, args)

    return commands.run_command(args.command, args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(getattr(args, "log_level", "warning"))
    if args.command == "tour":
        from mfconnector.tour import run_tour

        return run_tour()
    if args.command == "serve-http":
        from mfconnector.hosted.serve import serve_http

        return serve_http(args)
    if args.command in ("login", "logout", "status"):
        try:
            return _run_auth_command(args)
        except KeyboardInterrupt:
            return 130
    try:
        return serve(args)
    except KeyboardInterrupt:
        return EXIT_OK
