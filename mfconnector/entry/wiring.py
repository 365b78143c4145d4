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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mfconnector.auth import StaticTokenProvider, TokenProvider, UnavailableTokenProvider
from mfconnector.auth.config import auth_config_from_args, mailbox_argument
from mfconnector.entry.accounts_file import AccountsFileError, AccountSpec, load_accounts_file
from mfconnector.entry.instructions import accounts_sentence, server_instructions
from mfconnector.entry.providers import AccountBuilder, BuildPlace, ServedAccount, secret_variable
from mfconnector.entry.routing import account_contexts, file_gate_errors, routed_tools
from mfconnector.entry.signin import sign_in_config
from mfconnector.errors import AuthError
from mfconnector.graph.scopes import scopes_for
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import Limits
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
    "PROVIDER_BUILDERS",
    "SINGLE_ACCOUNT_SETTINGS",
    "LazyGraph",
    "SignIn",
    "UsageError",
    "accounts_from_args",
    "build_context",
    "build_server",
    "gates_of",
    "live_sign_in",
]

FIXTURE_TOKEN = "fixture-token-not-a-secret"
"""Demo and fixture modes still send a bearer token, so the same header code path runs."""
DEFAULT_ACCOUNT = "default"
"""The one account the single-account flags define (its name derives the reference tag)."""


class UsageError(Exception):
    """A serve option that cannot work: one stderr line, exit status 2."""


class LazyGraph:
    """The Graph client of this server's account backends, created by ``make`` on the first
    call that needs one.

    Awaiting it gives the one client of this server, built on first use, so a server that
    only lists tools never imports httpx. ``aclose`` closes the client if one was made.
    """

    def __init__(self, make: Callable[[], GraphClient]) -> None:
        self._make = make
        self._client: GraphClient | None = None
        self.others: list[LazyGraph] = []
        """The other accounts' clients, closed with this one (several accounts)."""

    async def __call__(self) -> GraphClient:
        if self._client is None:
            self._client = self._make()
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        for other in self.others:
            await other.aclose()


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
        live = live_sign_in(args, gates) if sign_in is None else sign_in
        sign_in = live
        graph = LazyGraph(lambda: _live_graph(live, limits))
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
        accounts=_imap_accounts(imap)
        if imap is not None
        else _accounts(graph, limits, sign_in, gates),
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


def _accounts(graph: LazyGraph, limits: Limits, sign_in: SignIn, gates: Gates) -> AccountSet:
    """One Microsoft 365 account, ``default``, served through Graph, in its cloud (which
    decides what it offers), with its files (other drives with ``--all-files``) and the
    gates in force."""
    from mfconnector.graph.mail_backend import graph_account
    from mfconnector.mail.accounts import AccountSet

    return AccountSet(
        [
            graph_account(
                DEFAULT_ACCOUNT,
                graph,
                limits,
                own_path=sign_in.user_path,
                cloud=sign_in.cloud,
                gates=frozenset(gates.names),
                all_files=sign_in.all_files,
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

SINGLE_ACCOUNT_SETTINGS: tuple[tuple[str, str, str | None], ...] = (
    ("auth_tenant", "--tenant", "MFC_TENANT"),
    ("auth_cloud", "--cloud", "MFC_CLOUD"),
    ("auth_mailbox", "--mailbox", "MFC_MAILBOX"),
    ("auth_all_files", "--all-files", "MFC_SCOPES_ALL_FILES"),
    ("auth_shared_mail", "--shared-mail", "MFC_SCOPES_SHARED_MAIL"),
    ("auth_app_only", "--app-only", "MFC_APP_ONLY"),
    ("auth_user", "--user", "MFC_USER"),
    ("auth_client_cert", "--client-cert", "MFC_CLIENT_CERT_PATH"),
    ("auth_client_cert_thumbprint", "--client-cert-thumbprint", "MFC_CLIENT_CERT_THUMBPRINT"),
    ("gate_writes", "--enable-writes", "MFC_ENABLE_WRITES"),
    ("gate_send", "--enable-send", "MFC_ENABLE_SEND"),
    ("gate_delete", "--enable-delete", "MFC_ENABLE_DELETE"),
    ("fixtures", "--fixtures", None),
)
"""What defines the one account of a server without ``--accounts`` (flag and variable);
with ``--accounts`` each account's table says these, so giving one as well is refused."""


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


def _graph_from_spec(spec: AccountSpec, place: BuildPlace) -> ServedAccount:
    """A Microsoft 365 account of the file: its own sign-in settings and Graph client.

    The app registration (``MFC_CLIENT_ID``, ``MFC_CLIENT_SECRET``), the token cache and
    the network settings come from the flags and environment unless the table says
    otherwise (``client_id``, ``cache_path``). The demo gives each account its own
    emulated mailbox."""
    from mfconnector.graph.mail_backend import graph_account

    limits, settings = place.limits, spec.settings
    gates = Gates(**{name: name in spec.gates for name in ("writes", "send", "delete")})
    if place.mode == "demo":
        from mfconnector.demo import DEMO_ACCOUNT

        provider: TokenProvider = StaticTokenProvider(
            FIXTURE_TOKEN, account=f"{DEMO_ACCOUNT} {spec.name}"
        )
        demo = provider
        graph = LazyGraph(lambda: _demo_graph(demo, limits))
        sign_in = SignIn(provider, all_files=True)
    else:
        sign_in = _file_sign_in(spec, place, gates)
        graph = LazyGraph(lambda: _live_graph(sign_in, limits))
    mailbox = settings.get("mailbox")
    account = graph_account(
        spec.name,
        graph,
        limits,
        own_path=sign_in.user_path,
        cloud=sign_in.cloud,
        gates=frozenset(gates.names),
        settings={k: v for k, v in settings.items() if k in ("tenant", "cloud", "mailbox")},
        all_files=sign_in.all_files,
    )
    return ServedAccount(
        account,
        sign_in.token_provider,
        graph,
        graph.aclose,
        user_path=sign_in.user_path,
        all_files=sign_in.all_files,
        mailbox=str(mailbox) if mailbox else None,
        cloud=sign_in.cloud,
    )


_ACCOUNT_VARIABLES = frozenset(v for _, _, v in SINGLE_ACCOUNT_SETTINGS if v)


def _file_sign_in(spec: AccountSpec, place: BuildPlace, gates: Gates) -> SignIn:
    """The sign-in of one Graph account of the file, as ``live_sign_in`` does for flags."""
    settings = spec.settings
    namespace = argparse.Namespace(**vars(place.args))
    for key in (
        "tenant",
        "cloud",
        "mailbox",
        "all_files",
        "shared_mail",
        "app_only",
        "user",
        "client_cert",
        "client_cert_thumbprint",
        "client_id",
        "cache_path",
    ):
        if key in settings or key not in ("client_id", "cache_path"):
            setattr(namespace, f"auth_{key}", settings.get(key))
    env = {k: v for k, v in place.env.items() if k not in _ACCOUNT_VARIABLES}
    try:
        config = auth_config_from_args(
            namespace, env, extra_scopes=scopes_for(gates.names), gate_flags=gates.flags
        )
        config.require_client_id()
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


def _imap_from_spec(spec: AccountSpec, place: BuildPlace) -> ServedAccount:
    """An IMAP/SMTP account of the file; its passwords from ``MFC_IMAP_PASSWORD_<NAME>`` /
    ``MFC_SMTP_PASSWORD_<NAME>`` or the OS keyring, never the file."""
    from mfconnector.imap.account import imap_account, imap_settings_from_table
    from mfconnector.imap.errors import MailSettingsError
    from mfconnector.net.settings import network_settings_from_args

    try:
        network = network_settings_from_args(place.args, place.env)
        settings = imap_settings_from_table(
            spec.name, dict(spec.settings), place.env, ca_file=network.ca_file
        )
    except MailSettingsError as error:
        raise UsageError(f"--accounts: {error}") from None
    account = imap_account(settings, place.limits, frozenset(spec.gates))

    def no_graph() -> GraphClient:
        raise UsageError(f"account {spec.name!r} is an IMAP account: it has no files")

    graph = LazyGraph(no_graph)
    provider = StaticTokenProvider(FIXTURE_TOKEN, account=spec.name)
    return ServedAccount(account, provider, graph, graph.aclose)


def _gmail_from_spec(spec: AccountSpec, place: BuildPlace) -> ServedAccount:
    """A Gmail account of the file: its own Gmail emulator with ``--demo``; live, the token
    from ``MFC_GMAIL_ACCESS_TOKEN_<NAME>`` (operator-managed) or the Google sign-in of
    ``mfconnector login --provider gmail`` (the table's ``client_id`` over
    ``MFC_GOOGLE_CLIENT_ID``)."""
    from mfconnector.entry.gmail import DEMO_GMAIL_SOURCE, _live_token_provider
    from mfconnector.gmail.account import gmail_account
    from mfconnector.gmail.api_root import DEFAULT_GMAIL_API_ROOT, ApiRootError

    gates = Gates(**{name: name in spec.gates for name in ("writes", "send", "delete")})
    provider: TokenProvider
    if place.mode == "demo":
        from mfconnector.gmail_emulator import DEMO_ADDRESS, DEMO_TOKEN, GmailTransport

        provider = StaticTokenProvider(DEMO_TOKEN, account=f"Gmail demo {spec.name}")
        account = gmail_account(
            spec.name,
            token_provider=provider,
            limits=place.limits,
            gates=frozenset(gates.names),
            transport=GmailTransport(),
            settings={"address": DEMO_ADDRESS, "source": DEMO_GMAIL_SOURCE},
        )
    else:
        env = dict(place.env)
        operator = env.get(secret_variable("MFC_GMAIL_ACCESS_TOKEN", spec.name), "").strip()
        env["MFC_GMAIL_ACCESS_TOKEN"] = operator
        if spec.settings.get("client_id"):
            env["MFC_GOOGLE_CLIENT_ID"] = str(spec.settings["client_id"])
        provider = _live_token_provider(place.args, env, gates)
        try:
            account = gmail_account(
                spec.name,
                token_provider=provider,
                limits=place.limits,
                gates=frozenset(gates.names),
                root=str(spec.settings.get("api_root") or DEFAULT_GMAIL_API_ROOT),
            )
        except ApiRootError as error:
            raise UsageError(f"--accounts: account {spec.name!r}: {error}") from None

    def no_graph() -> GraphClient:
        raise UsageError(f"account {spec.name!r} is a Gmail account: it has no files")

    graph = LazyGraph(no_graph)

    async def close() -> None:
        closing = getattr(account.mail, "aclose", None)
        if closing is not None:
            await closing()

    return ServedAccount(account, provider, graph, close)


PROVIDER_BUILDERS: dict[str, AccountBuilder] = {
    "graph": _graph_from_spec,
    "imap": _imap_from_spec,
    "gmail": _gmail_from_spec,
}
"""Provider name -> the builder of its accounts: a builder takes
the checked table (``spec.settings``: the keys of ``accounts_file.PROVIDER_SETTINGS``,
never a secret), the gates (``spec.gates``) and ``place`` (flags, limits, mode,
environment, where it reads its secrets: ``providers.secret_variable``), and returns the
``ServedAccount``. Until then their accounts are refused at start-up with "not built into
this server"."""


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
