"""The account builders: one Graph, IMAP or Gmail account, from the single-account flags
or from one table of ``--accounts FILE`` (``entry.accounts_file``), with the sign-in and
the lazy Graph client it runs with.

``entry.wiring`` wires the modes out of these; ``PROVIDER_BUILDERS`` is the registry the
accounts file is served through (``entry.providers``). Nothing of a provider is imported
until its account is built; the Graph client (and httpx with it) not until first use.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mfconnector.auth import StaticTokenProvider, TokenProvider, UnavailableTokenProvider
from mfconnector.entry.accounts_file import AccountSpec
from mfconnector.entry.providers import AccountBuilder, BuildPlace, ServedAccount, secret_variable
from mfconnector.entry.signin import sign_in_config
from mfconnector.errors import AuthError
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import Limits
from mfconnector.writes.gates import Gates

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient
    from mfconnector.mail.accounts import Account, AccountSet
    from mfconnector.net.settings import NetworkSettings

__all__ = [
    "DEFAULT_ACCOUNT",
    "FIXTURE_TOKEN",
    "PROVIDER_BUILDERS",
    "SINGLE_ACCOUNT_SETTINGS",
    "LazyGraph",
    "SignIn",
    "UsageError",
    "demo_graph",
    "flags_imap_account",
    "graph_accounts",
    "imap_accounts",
    "live_graph",
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


def demo_graph(token_provider: TokenProvider, limits: Limits) -> GraphClient:
    """A Graph client over the emulator: the demo's mailbox."""
    from mfconnector.demo import demo_transport
    from mfconnector.graph.client import GraphClient

    return GraphClient(
        token_provider=token_provider,
        limits=limits,
        root=DEFAULT_GRAPH_ROOT,
        transport=demo_transport(),
    )


# --- the single-account flags -----------------------------------------------------------


def live_sign_in(
    args: argparse.Namespace,
    gates: Gates,
    limits: Limits,
    env: Mapping[str, str] = os.environ,
) -> SignIn:
    """The live token provider of these flags and environment, or one that says what blocks
    signing in on every call.

    The server asks for the read permissions only: Entra ID puts every permission the user
    consented to in the token anyway, and asking for a write permission that was never
    consented would break the read tools too. The acting tools check the granted
    permissions themselves and name the login command (``gate_flags``) that adds them.
    """
    try:
        config = sign_in_config(args, env, gates=gates, limits=limits)
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


def imap_accounts(imap: Account) -> AccountSet:
    """The one IMAP account of ``--imap`` as the server's account set."""
    from mfconnector.mail.accounts import AccountSet

    return AccountSet([imap])


def flags_imap_account(args: argparse.Namespace, limits: Limits, gates: Gates) -> Account | None:
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


def graph_accounts(graph: LazyGraph, limits: Limits, sign_in: SignIn, gates: Gates) -> AccountSet:
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


def live_graph(sign_in: SignIn, limits: Limits) -> GraphClient:
    """The Graph client of a live sign-in: its root and network settings."""
    from mfconnector.graph.client import GraphClient

    return GraphClient(
        token_provider=sign_in.token_provider,
        limits=limits,
        root=sign_in.graph_root,
        network=sign_in.network,
    )


# --- one table of --accounts FILE --------------------------------------------------------

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
        graph = LazyGraph(lambda: demo_graph(demo, limits))
        sign_in = SignIn(provider, all_files=True)
    else:
        sign_in = _file_sign_in(spec, place, gates)
        graph = LazyGraph(lambda: live_graph(sign_in, limits))
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
    """The sign-in of one Graph account of the file: ``live_sign_in`` of its table."""
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
    return live_sign_in(namespace, gates, place.limits, env)


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
        provider = _live_token_provider(place.args, env, gates, place.limits)
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
