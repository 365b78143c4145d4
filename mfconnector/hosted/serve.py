"""``mfconnector serve-http``: wiring for hosted mode, and its command-line options.

Importing this module costs nothing: hypercorn, PyJWT and httpx are imported only when
``serve_http`` runs, so the stdio server's start-up never pays for them.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mfconnector.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from mfconnector.hosted.bearer import Subject
    from mfconnector.hosted.resource import ResourceSettings
    from mfconnector.hosted.tenants import Tenant, TenantPool
    from mfconnector.writes.redis_store import RedisState

__all__ = ["DEFAULT_LISTEN", "add_http_arguments", "parse_listen", "serve_http"]

DEFAULT_LISTEN = "127.0.0.1:8000"
EXIT_STATE = 1
EXIT_USAGE = 2
log = logging.getLogger("mfconnector.hosted.serve")


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help=f"address to listen on [MFC_HTTP_LISTEN; default {DEFAULT_LISTEN}]; port 0 picks "
        "a free port (the address is printed on stderr)",
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        required=True,
        help="the URL clients use, e.g. https://mail.example.com/mcp: the OAuth resource "
        "identifier, and its path is the MCP endpoint",
    )
    parser.add_argument("--oauth-issuer", metavar="URL", required=True, help="expected iss")
    parser.add_argument(
        "--oauth-audience", metavar="AUD[,AUD]", help="accepted aud (default: the public URL)"
    )
    parser.add_argument(
        "--oauth-jwks-url",
        metavar="URL",
        help="the issuer's JWKS (default: from its OpenID discovery document)",
    )
    parser.add_argument(
        "--oauth-scope", metavar="SCOPE", required=True, help="the scope every token must carry"
    )
    parser.add_argument(
        "--allowed-tenants", metavar="ID[,ID]", default="", help="Entra tid values (empty: any)"
    )
    parser.add_argument(
        "--allowed-origins",
        metavar="ORIGIN[,ORIGIN]",
        default="",
        help="browser origins accepted besides the public URL's own",
    )
    parser.add_argument("--tls-cert", metavar="FILE", help="serve https with this certificate")
    parser.add_argument("--tls-key", metavar="FILE", help="the certificate's private key")


class ListenError(ValueError):
    """A serve-http option that cannot work; the message names it."""


@dataclass(frozen=True)
class HostedSetup:
    """Everything checked before the event loop starts."""

    resource: ResourceSettings
    tenants: TenantPool
    origins: frozenset[str]
    state: RedisState | None = None
    """``--state-url``: the state every replica shares (None: each user's in memory)."""


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT``."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65_535:
        raise ListenError(f"--listen must be HOST:PORT, not {value[:60]!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def serve_http(args: argparse.Namespace, limits: Limits = DEFAULT_LIMITS) -> int:
    """Check every setting, then serve until SIGTERM or SIGINT."""
    from mfconnector.hosted.live import LiveSettingsError
    from mfconnector.hosted.resource import SettingsError
    from mfconnector.hosted.sealed_tokens import SealKeyError
    from mfconnector.net.hosts import is_loopback_host
    from mfconnector.net.settings import NetworkSettingsError
    from mfconnector.writes.gates import GateConfigError, gates_from_args
    from mfconnector.writes.state_url import (
        STATE_START_HINT,
        StateUrlError,
        shared_state,
        state_url_of,
    )
    from mfconnector.writes.store import StateStoreError

    listen = args.listen or os.environ.get("MFC_HTTP_LISTEN", "").strip() or DEFAULT_LISTEN
    try:
        host, port = parse_listen(listen)
        if args.demo == "gmail" or getattr(args, "gmail", None):
            raise ListenError("serve-http serves the Microsoft 365 demo only: no Gmail yet")
        if getattr(args, "imap", None) or os.environ.get("MFC_IMAP", "").strip():
            # One IMAP login would serve every signed-in user the same mailbox.
            raise ListenError(
                "serve-http serves Microsoft 365 accounts only: --imap / MFC_IMAP name one "
                "mailbox, which every user would share; unset it"
            )
        if bool(args.tls_cert) != bool(args.tls_key):
            raise ListenError("--tls-cert and --tls-key go together")
        gates = gates_from_args(args)
        state_url_of(args, os.environ)  # a bad URL is a usage error before anything else
        _setup(args, limits, gates)  # every setting checked before Redis is reached
    except (
        ListenError,
        SettingsError,
        GateConfigError,
        StateUrlError,
        LiveSettingsError,
        SealKeyError,
    ) as error:
        print(f"mfconnector: {error}", file=sys.stderr)
        return EXIT_USAGE
    except NetworkSettingsError as error:
        print(f"mfconnector: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    try:
        state = shared_state(args, limits)
    except StateStoreError as error:
        print(f"mfconnector: {error.message}; {STATE_START_HINT}", file=sys.stderr)
        return EXIT_STATE
    setup = _setup(args, limits, gates, state)  # cheap: no user's state exists yet
    if not is_loopback_host(host) and not args.tls_cert:
        print(
            f"mfconnector: warning: listening on {host} without TLS; bearer tokens cross the "
            "network in clear unless a TLS reverse proxy is in front (see docs/HOSTING.md)",
            file=sys.stderr,
        )
    import trio

    trio.run(_serve, setup, host, port, args, limits)
    return 0


def _setup(
    args: argparse.Namespace, limits: Limits, gates: Any, state: RedisState | None = None
) -> HostedSetup:
    from mfconnector.hosted.http_checks import origin_of
    from mfconnector.hosted.resource import ResourceSettings
    from mfconnector.hosted.tenants import TenantPool

    resource = ResourceSettings.build(
        public_url=args.public_url,
        issuer=args.oauth_issuer,
        scope=args.oauth_scope,
        audience=args.oauth_audience,
        jwks_url=args.oauth_jwks_url,
        allowed_tenants=args.allowed_tenants,
    )
    origins = set()
    for raw in args.allowed_origins.split(","):
        if raw.strip():
            origin = origin_of(raw)
            if origin is None:
                raise ListenError(f"--allowed-origins: {raw.strip()[:60]!r} is not an origin")
            origins.add(origin)

    build: Callable[[Subject], Tenant]
    if args.demo:
        build = functools.partial(_demo_tenant, args, limits, gates, state=state)
    else:
        build = _live_builder(args, limits, gates, state)
    pool = TenantPool(build, limits.http_subjects)
    return HostedSetup(resource, pool, frozenset(origins), state)


def _demo_tenant(
    args: argparse.Namespace,
    limits: Limits,
    gates: Any,
    subject: Subject,
    *,
    state: RedisState | None,
) -> Tenant:
    """A fresh in-memory mailbox; the send state, audit trail and cursors bound to the
    user's subject key (in memory, or in the shared Redis): one user never sees another's."""
    from mfconnector.entry.wiring import build_context, build_server
    from mfconnector.hosted.tenants import Tenant
    from mfconnector.server import McpServer

    context, graph = build_context(args, limits, gates, state=state, namespace=subject.key)

    def new_server() -> McpServer:
        return build_server(context, gates)

    return Tenant(new_server(), new_server, graph.aclose)


def _live_builder(
    args: argparse.Namespace, limits: Limits, gates: Any, state: RedisState | None
) -> Callable[[Subject], Tenant]:
    """Each user's tenant reads live Graph, in the issuer's cloud, with the on-behalf-of
    token of the request's own bearer token; preparations, audit trail and cursors are
    bound to the subject key."""
    from mfconnector.entry.account_builders import SignIn
    from mfconnector.entry.wiring import build_context, build_server
    from mfconnector.hosted.live import on_behalf_of
    from mfconnector.hosted.obo import SubjectTokenProvider
    from mfconnector.hosted.tenants import Tenant
    from mfconnector.net.settings import network_settings_from_args
    from mfconnector.server import McpServer

    network = network_settings_from_args(args, os.environ)
    exchange, cloud = on_behalf_of(args.oauth_issuer, os.environ, network, state, limits)

    def build(subject: Subject) -> Tenant:
        provider = SubjectTokenProvider(exchange, subject)
        sign_in = SignIn(provider, graph_root=cloud.graph_root, network=network, cloud=cloud.name)
        context, graph = build_context(
            args, limits, gates, state=state, namespace=subject.key, sign_in=sign_in
        )

        def new_server() -> McpServer:
            return build_server(context, gates)

        return Tenant(new_server(), new_server, graph.aclose)

    return build


async def _serve(
    setup: HostedSetup, host: str, port: int, args: argparse.Namespace, limits: Limits
) -> None:
    import httpx
    import trio
    from hypercorn.trio import serve

    from mfconnector.hosted.bearer import BearerVerifier
    from mfconnector.hosted.http_app import McpHttpApp
    from mfconnector.hosted.jwks import JwksCache
    from mfconnector.hosted.listeners import hypercorn_config

    resource, tenants = setup.resource, setup.tenants
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    config = hypercorn_config(bind, limits, tls_cert=args.tls_cert, tls_key=args.tls_key)
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False) as client:
        verifier = BearerVerifier(resource, JwksCache(resource, client, limits), limits)
        app = McpHttpApp(resource, verifier, tenants, limits, allowed_origins=setup.origins)
        endpoint = urlsplit(resource.public_url).path
        try:
            async with trio.open_nursery() as nursery:
                binds = await nursery.start(
                    functools.partial(serve, app, config, shutdown_trigger=_signalled)  # type: ignore[arg-type]
                )
                for bind in binds:
                    print(
                        f"mfconnector: serving MCP on {bind}{endpoint} for {resource.public_url}",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            await tenants.aclose()
            if setup.state is not None:
                setup.state.close()


async def _signalled() -> None:
    """Returns on the first SIGTERM or SIGINT: hypercorn then shuts down gracefully."""
    import trio

    from mfconnector.shutdown import shutdown_signals

    with trio.open_signal_receiver(*shutdown_signals()) as signals:
        async for _ in signals:
            return
