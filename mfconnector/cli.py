"""Command line: serve (the default), tour, login, logout, status, serve-http.

The console entry point (``mfconnector.cli:main``): it parses the flags
(``entry.parser``) and hands the command to the module that runs it; the modes are
built in ``entry.wiring`` and served in ``entry.serving``. Every human-facing line goes to
stderr, except the ``tour`` report, which is for a person at a terminal.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from mfconnector.entry.parser import AUTH_COMMANDS, build_parser

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_CANCELLED = 130


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper()),
        format="mfconnector %(levelname)s %(name)s: %(message)s",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(getattr(args, "log_level", "warning"))
    if args.command is not None and getattr(args, "accounts", None):
        print(
            f"mfconnector: --accounts is for serving on stdio; {args.command} does not take it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.command == "tour":
        from mfconnector.tour import run_tour

        return run_tour()
    if args.command == "serve-http":
        from mfconnector.hosted.serve import serve_http

        return serve_http(args)
    if args.command in AUTH_COMMANDS:
        from mfconnector.auth.commands import run_command
        from mfconnector.entry.signin import sign_in_config

        try:
            if getattr(args, "provider", "microsoft") == "imap":
                from mfconnector.imap.login import run_imap_auth_command

                return run_imap_auth_command(args.command, args)
            if getattr(args, "provider", "microsoft") == "gmail":
                from mfconnector.entry.gmail import run_gmail_auth_command

                return run_gmail_auth_command(args.command, args)
            return run_command(args.command, args, settings=sign_in_config)
        except KeyboardInterrupt:
            return EXIT_CANCELLED
    from mfconnector.entry.serving import serve

    try:
        return serve(args)
    except KeyboardInterrupt:
        return EXIT_OK
