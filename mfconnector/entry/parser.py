"""The command line: every flag of every subcommand, and nothing that acts on them.

Building the parser imports no network stack: the sign-in, gate and hosted flags come from
modules that import msal, httpx and hypercorn only when a command runs.
"""

from __future__ import annotations

import argparse

from mfconnector import __version__
from mfconnector.auth.config import add_auth_arguments
from mfconnector.hosted.serve import add_http_arguments
from mfconnector.net.settings import add_network_arguments
from mfconnector.writes.gates import add_gate_arguments

__all__ = ["AUTH_COMMANDS", "build_parser"]

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
AUTH_COMMANDS = tuple(name for name, _, _ in SUBCOMMANDS)
"""The subcommands that run the sign-in side (``auth.commands``), not a server."""


def _described(text: str, more: str) -> str:
    return f"{text[0].upper()}{text[1:]}. {more}"


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags a serving mode reads (stdio and ``serve-http``)."""
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
        "--state-url",
        metavar="redis://HOST:PORT/DB",
        help="keep preparations, claims, outcomes, the audit trail and the cursor key in "
        "Redis, shared by every process or replica given the same URL [MFC_STATE_URL; "
        "default: the state file of --state-dir]",
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
    from mfconnector.imap.account import add_imap_arguments

    add_imap_arguments(parser)
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="stderr log level (default: warning)",
    )
    from mfconnector.entry.gmail import add_gmail_arguments

    add_gmail_arguments(parser)


def _add_login_flow(parser: argparse.ArgumentParser) -> None:
    flow = parser.add_mutually_exclusive_group()
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
        help="sign in in a web browser on this computer (the default when one can be opened)",
    )


def build_parser() -> argparse.ArgumentParser:
    """Serving on stdio is the default; ``tour``, the sign-in commands and ``serve-http``
    are subcommands."""
    parser = argparse.ArgumentParser(
        prog="mfconnector",
        description="Bounded, read-only MCP stdio server for Microsoft 365 mail and files.",
    )
    parser.add_argument("--version", action="version", version=f"mfconnector {__version__}")
    add_serve_arguments(parser)
    parser.add_argument(
        "--accounts",
        metavar="FILE",
        help="serve the accounts of this TOML file (docs/TOOLS.md 'Accounts'); each "
        "account's table replaces the single-account sign-in and gate flags [MFC_ACCOUNTS]",
    )
    add_auth_arguments(parser)
    add_gate_arguments(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    tour = commands.add_parser("tour", help=TOUR_HELP, description=_described(TOUR_HELP, TOUR_MORE))
    tour.add_argument(
        "--demo",
        action="store_true",
        help="accepted and ignored: the tour always runs on the demo mailbox",
    )
    for name, text, more in SUBCOMMANDS:
        sub = commands.add_parser(name, help=text, description=_described(text, more))
        add_auth_arguments(sub)
        sub.add_argument(
            "--provider",
            choices=["microsoft", "gmail", "imap"],
            default="microsoft",
            help="whose sign-in: Microsoft 365 (the default), Gmail, or an IMAP password "
            "kept in the OS keyring (with --imap and --imap-user)",
        )
        imap = sub.add_argument_group("--provider imap")
        imap.add_argument("--imap", metavar="HOST[:PORT]", help="IMAP server [MFC_IMAP]")
        imap.add_argument("--imap-user", metavar="USER", help="IMAP user [MFC_IMAP_USER]")
        imap.add_argument(
            "--imap-security",
            choices=["tls", "starttls", "plain"],
            help="as the server will use it [MFC_IMAP_SECURITY; tls]",
        )
        if name == "login":
            _add_login_flow(sub)
        add_gate_arguments(sub)
    http = commands.add_parser("serve-http", help="serve MCP over Streamable HTTP, many users")
    add_serve_arguments(http)
    add_gate_arguments(http)
    add_http_arguments(http)
    add_network_arguments(http)  # live mode: the on-behalf-of exchange and Graph
    return parser
