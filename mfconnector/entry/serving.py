"""Serving a built MCP server on this process's stdin and stdout.

Only the runtime writes to stdout while serving; every human-facing line goes to stderr.
The first SIGTERM/SIGINT stops reading (in-flight requests finish), the second stops all.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable

import trio

from mfconnector.auth import UnavailableTokenProvider
from mfconnector.entry.account_builders import UsageError
from mfconnector.entry.wiring import accounts_from_args, build_context, build_server, gates_of
from mfconnector.errors import FixtureError
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.runtime import Runtime
from mfconnector.server import McpServer
from mfconnector.shutdown import shutdown_signals
from mfconnector.stdio import (
    StdioChoiceError,
    StdioKind,
    choose_stdio,
    claim_stdio,
    open_protocol_streams,
)
from mfconnector.tools.base import ToolContext
from mfconnector.writes.gates import GateConfigError, gates_from_args

__all__ = ["EXIT_OK", "EXIT_USAGE", "TTY_NOTICE", "serve", "serve_stdio"]

EXIT_OK = 0
EXIT_STATE = 1
"""The state store named by --state-url cannot be reached at start-up."""
EXIT_USAGE = 2
TTY_NOTICE = (
    "mfconnector is an MCP server: it is waiting for an MCP client to speak JSON-RPC on "
    "stdin. Add it to a client (Claude Desktop, Claude Code, VS Code) as README.md 'Add it "
    "to an MCP client' shows, or run `mfconnector tour` to see what it returns. Ctrl+D or "
    "Ctrl+C ends it."
)
"""Said on stderr when stdin is a terminal: a person started it by hand."""

log = logging.getLogger("mfconnector.cli")


def serve(args: argparse.Namespace, limits: Limits = DEFAULT_LIMITS) -> int:
    """The default command: the mode the flags name, on stdio, until end of input."""
    from mfconnector.writes.state_url import STATE_START_HINT, StateUrlError, shared_state
    from mfconnector.writes.store import StateStoreError

    try:
        stdio = choose_stdio()
        specs = accounts_from_args(args, limits)
        gates = gates_from_args(args) if specs is None else gates_of(specs)
        state = shared_state(args, limits)
        context, graph = build_context(args, limits, gates, specs, state=state)
    except (StdioChoiceError, FixtureError, GateConfigError, UsageError, StateUrlError) as error:
        print(f"mfconnector: {error}", file=sys.stderr)
        return EXIT_USAGE
    except StateStoreError as error:
        print(f"mfconnector: {error.message}; {STATE_START_HINT}", file=sys.stderr)
        return EXIT_STATE
    learn_capabilities(context)
    server = build_server(context, gates)
    terminal = _stdin_is_terminal()  # asked before the protocol takes stdin over

    def announce() -> None:
        """Said once stdin and stdout are known to be usable: the first blocker first."""
        _say_sign_in_blocker(context)
        if terminal:
            print(f"mfconnector: {TTY_NOTICE}", file=sys.stderr)

    async def close() -> None:
        await graph.aclose()
        for account in context.accounts or ():
            closing = getattr(account.mail, "aclose", None)
            if closing is not None:
                await closing()

    return serve_stdio(server, limits, close, stdio, announce=announce)


def learn_capabilities(context: ToolContext) -> None:
    """Log in to each IMAP account once, before the tool list is made: what it offers
    (CONDSTORE, UIDPLUS, MOVE...) decides which tools and arguments are listed. The probe's
    connections end with it; serving opens its own."""
    import trio

    from mfconnector.imap.account import start_account
    from mfconnector.imap.backend import ImapMailBackend

    accounts = [a for a in context.accounts or () if isinstance(a.mail, ImapMailBackend)]
    if not accounts:
        return

    async def probe() -> None:
        for account in accounts:
            await start_account(account)
            await account.mail.aclose()  # type: ignore[attr-defined]

    trio.run(probe)


def _say_sign_in_blocker(context: ToolContext) -> None:
    """Live mode that cannot sign in as configured says why at start-up (every tool will)."""
    several = {name: c.sign_in for name, c in context.per_account.items()}
    for name, provider in several.items() or [(None, context.sign_in)]:
        if isinstance(provider, UnavailableTokenProvider):
            error = provider.error
            hint = f" ({error.hint})" if error.hint else ""
            whose = f" account {name!r}" if name else ""
            print(
                f"mfconnector: live mode cannot sign in{whose}: {error.message}{hint}",
                file=sys.stderr,
            )


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed or detached stdin: not a person at a terminal
        return False


def serve_stdio(
    server: McpServer,
    limits: Limits,
    close: Callable[[], Awaitable[None]],
    stdio: StdioKind | None = None,
    *,
    announce: Callable[[], None] | None = None,
) -> int:
    """Serve ``server`` on this process's stdin/stdout until end of input or a signal, then
    await ``close``; ``announce`` says what a person should know once the streams are
    claimed."""
    if stdio is None:
        stdio = choose_stdio()
    try:
        fds = claim_stdio(pipe_bytes=limits.stdin_pipe_bytes)
    except OSError as error:  # for example started without stdin (pythonw, a closed fd 0)
        print(
            f"mfconnector: stdin and stdout must be open for the protocol: {error.strerror}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    logging.getLogger("mfconnector.stdio").info("protocol stream: %s", stdio)
    if announce is not None:
        announce()
    chosen = stdio

    async def run() -> None:
        receive, send = open_protocol_streams(fds, chosen)
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
    """SIGTERM/SIGINT (and Ctrl+Break on Windows): the first stops reading (in-flight
    requests finish), the second stops all."""
    with trio.open_signal_receiver(*shutdown_signals()) as signals:
        task_status.started()
        count = 0
        async for signum in signals:
            count += 1
            log.info(
                "signal %d: %s",
                signum,
                "finishing in-flight requests" if count == 1 else "stopping now",
            )
            (reading if count == 1 else everything).cancel()
