"""``mfconnector login|logout|status --provider gmail``: Google sign-in in a terminal.

The wiring passes the scopes and the login command the open gates need (the Gmail
backend's ``gmail.scopes``), so this module knows nothing of gates or backends. Output goes
to ``stream`` (stderr by default): never a token, a code or a URL with one.
"""

from __future__ import annotations

import argparse
import os
import webbrowser
from collections.abc import Mapping
from typing import TextIO

from mfconnector.auth.config import auth_config_from_args
from mfconnector.auth.google import (
    GoogleSettings,
    google_login,
    google_logout,
    google_settings,
    google_status,
)
from mfconnector.auth.terminal import EXIT_OK, EXIT_USAGE, fail, say
from mfconnector.errors import AuthError
from mfconnector.limits import DEFAULT_LIMITS, Limits

__all__ = ["google_settings_from_args", "run_google_command"]


def google_settings_from_args(
    args: argparse.Namespace,
    env: Mapping[str, str],
    *,
    scopes: tuple[str, ...],
    login_command: str,
    limits: Limits = DEFAULT_LIMITS,
) -> GoogleSettings:
    """The Google app from the environment; the token store where the Microsoft cache is.
    ``limits`` are the server's (a sign-in command takes the defaults)."""
    config = auth_config_from_args(args, env, limits=limits)
    return google_settings(
        env,
        scopes=scopes,
        cache_path=config.cache_path,
        allow_plaintext=config.allow_plaintext_cache,
        login_command=login_command,
        limits=limits,
    )


def _browser_available() -> bool:
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def run_google_command(
    command: str,
    args: argparse.Namespace,
    *,
    scopes: tuple[str, ...],
    login_command: str,
    env: Mapping[str, str] = os.environ,
    stream: TextIO | None = None,
) -> int:
    import sys

    out = stream if stream is not None else sys.stderr
    try:
        settings = google_settings_from_args(args, env, scopes=scopes, login_command=login_command)
    except AuthError as exc:
        fail(out, exc)
        return EXIT_USAGE
    try:
        if command == "login":
            say(out, "asking Google for: " + ", ".join(scopes))
            result = google_login(
                settings,
                open_browser=_browser_available(),
                show=lambda line: say(out, line),
                timeout_seconds=900,
            )
            say(out, "signed in to Gmail; granted: " + ", ".join(result["scopes"]))
            return EXIT_OK
        if command == "logout":
            had = google_logout(settings)
            say(out, "signed out of Gmail" if had else "was not signed in to Gmail")
            return EXIT_OK
        status = google_status(settings)
        say(out, f"Gmail: {'signed in' if status['signed_in'] else 'not signed in'}")
        say(out, f"client id: {status['client_id']}")
        say(out, f"token store: {status['store']}")
        if status["scopes"]:
            say(out, "granted: " + ", ".join(status["scopes"]))
        if status["missing_scopes"]:
            say(out, "missing for the enabled gates: " + ", ".join(status["missing_scopes"]))
            say(out, f"hint: run `{login_command}`")
        return EXIT_OK
    except AuthError as exc:
        return fail(out, exc)
