"""``mfconnector login``, ``logout`` and ``status``: the human side of sign-in.

Plain blocking functions for a terminal (not run inside the server's trio loop). Everything
they say goes to ``stream`` (stderr by default) — stdout is the protocol stream in the
server and stays clean here too. They return exit codes: 0 ok, 1 failed, 130 cancelled.
No token, refresh token or secret is ever printed. The sign-in flows live in ``login``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TextIO

from mfconnector.auth.cache import open_token_store
from mfconnector.auth.config import AuthConfig, auth_config_from_args
from mfconnector.auth.login import (
    LoginMethod,
    forget_accounts,
    login,
)
from mfconnector.auth.sessions import make_session
from mfconnector.auth.terminal import EXIT_FAILED, EXIT_OK, EXIT_USAGE, duration, fail, say
from mfconnector.errors import AuthError

__all__ = ["login", "logout", "run_command", "status"]


def logout(config: AuthConfig, *, stream: TextIO | None = None, http_client: Any = None) -> int:
    """Remove the signed-in account and its tokens from the cache. Needs no network.

    (Entra ID keeps the refresh token valid until it expires or an admin revokes sessions;
    removing our only copy is what a client can do.)
    """
    del http_client  # same signature as login/status; logout never talks to the network
    out = stream if stream is not None else sys.stderr
    if config.app_only:
        say(
            out,
            "App-only mode keeps no sign-in: nothing to remove "
            "(unset MFC_CLIENT_SECRET / the certificate to stop using it).",
        )
        return EXIT_OK
    try:
        store = open_token_store(config)
        store.refresh()
        removed = forget_accounts(store)
        store.commit()
    except AuthError as exc:
        return fail(out, exc)
    if removed:
        say(out, f"Signed out {', '.join(removed)}; tokens removed from {store.location}.")
    else:
        say(out, f"No account was signed in ({store.location}).")
    return EXIT_OK


def status(config: AuthConfig, *, stream: TextIO | None = None, http_client: Any = None) -> int:
    """Who is signed in, where, with what; never a token. 0 if signed in, else 1."""
    out = stream if stream is not None else sys.stderr
    if not config.client_id:  # the first blocker first: nothing else can work without it
        try:
            config.require_client_id()
        except AuthError as exc:
            say(out, f"error: {exc.message}")
            if exc.hint:
                say(out, f"hint: {exc.hint}")
    try:
        facts = make_session(config, http_client=http_client).facts()
    except AuthError as exc:
        return fail(out, exc)
    encrypted = facts.get("cacheEncrypted")
    if encrypted is None:
        cache_words = str(facts.get("cacheLocation"))
    elif encrypted:
        cache_words = f"{facts.get('cacheLocation')} (encrypted: {facts.get('cacheStorage')})"
    else:
        cache_words = (
            f"{facts.get('cacheLocation')} (not encrypted: plaintext file, "
            "mode 0600, allowed by --allow-plaintext-cache)"
        )
    expires = facts.get("expiresOn")
    if expires:
        left = datetime_left(expires)
        expires_words = f"{expires} ({left})" if left else expires
    else:
        expires_words = "no access token cached (the next request gets one)"
    rows = [
        ("mode", facts.get("mode")),
        ("signed in", "yes" if facts.get("signedIn") else "no: not signed in"),
        ("account", facts.get("account") or "-"),
        ("tenant", facts.get("tenantId") or "-"),
        ("authority", facts.get("authority")),
        ("graph", facts.get("graphRoot")),
        ("client id", facts.get("clientId") or "- (set MFC_CLIENT_ID or --client-id)"),
        ("scopes", " ".join(facts.get("scopes") or []) or "-"),
        ("needed", " ".join(config.scopes)),
        ("token cache", cache_words),
        ("access token", expires_words),
        *_network_rows(config),
    ]
    if facts.get("credential"):
        rows.insert(
            3,
            (
                "credential",
                f"client {facts['credential']} (not checked here; `mfconnector login` checks it)",
            ),
        )
        rows.insert(4, ("graph path", config.user_path))
    granted = {str(s).rsplit("/", 1)[-1].lower() for s in facts.get("scopes") or []}
    missing = [s for s in config.scopes if s.lower() not in granted]
    if facts.get("signedIn") and granted and missing and not config.app_only:
        rows.append(("missing", f"{' '.join(missing)} (run `{config.login_command}` to consent)"))
    if facts.get("accounts"):
        rows.append(("note", f"{facts['accounts']} accounts cached; run logout, then login"))
    width = max(len(k) for k, _ in rows) + 1
    for key, value in rows:
        say(out, f"{key + ':':<{width}} {value}")
    if facts.get("error"):
        say(out, f"error: {facts['error']}")
        if facts.get("hint"):
            say(out, f"hint: {facts['hint']}")
        return EXIT_FAILED
    if not facts.get("signedIn"):
        say(out, "not signed in: run `mfconnector login` to sign in")
        return EXIT_FAILED
    return EXIT_OK


def _network_rows(config: AuthConfig) -> list[tuple[str, str]]:
    """Proxy and trust lines for ``status``: the proxy's address, never its credentials."""
    facts = config.network.describe()
    proxy = facts["proxy"]
    if proxy is None:
        proxy_words = str(facts["proxySource"])
    else:
        proxy_words = f"{proxy} (from {facts['proxySource']})"
        if facts.get("proxyCredentials"):
            proxy_words += ", with credentials (not shown)"
        if facts.get("noProxy"):
            proxy_words += f"; not for {', '.join(facts['noProxy'])}"
    return [("proxy", proxy_words), ("trust", str(facts["trust"]))]


def datetime_left(iso: str) -> str | None:
    """'in 42 min' / 'expired' for an ISO timestamp from ``facts``."""
    try:
        when = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    left = when - time.time()
    return f"in {duration(left)}" if left > 0 else "expired"


def run_command(
    command: str,
    args: argparse.Namespace,
    env: Mapping[str, str] = os.environ,
    *,
    stream: TextIO | None = None,
    settings: Callable[[argparse.Namespace, Mapping[str, str]], AuthConfig] = (
        auth_config_from_args
    ),
) -> int:
    """``login`` / ``logout`` / ``status`` from parsed CLI arguments; 2 for a bad setting.

    ``settings`` reads the sign-in settings; the entry point's adds the permissions of the
    open gates (this layer knows permissions, not gates).
    """
    out = stream if stream is not None else sys.stderr
    try:
        config = settings(args, env)
    except AuthError as exc:
        fail(out, exc)
        return EXIT_USAGE
    if command == "login":
        method: LoginMethod = getattr(args, "login_method", None) or "auto"
        return login(config, method=method, stream=out)
    handlers = {"logout": logout, "status": status}
    return handlers[command](config, stream=out)
