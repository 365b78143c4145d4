"""Sign-in configuration: which app, which tenant, which cloud, where the token cache lives.

Everything comes from command-line flags first and ``MFC_*`` environment variables second,
read once, when the caller asks (never at import time), into one frozen ``AuthConfig``. The
authority host and the Graph root are chosen together from one ``Cloud`` row, so a token
for one cloud is never sent to another cloud's Graph.

No msal here: demo and fixture mode build an ``AuthConfig`` (or not) without loading it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from mfconnector.envflags import EnvFlagError, env_flag
from mfconnector.errors import AuthError
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.net.settings import (
    NetworkSettings,
    add_network_arguments,
    network_settings_from_args,
)
from mfconnector.paths import default_cache_path

__all__ = [
    "CLOUDS",
    "DELEGATED_SCOPES",
    "RESERVED_SCOPES",
    "AuthConfig",
    "AuthConfigError",
    "Cloud",
    "add_auth_arguments",
    "auth_config_from_args",
    "check_scopes",
    "default_cache_path",
    "mailbox_argument",
]

RESERVED_SCOPES = frozenset({"openid", "profile", "offline_access"})
"""msal adds these itself and raises ``ValueError`` when a caller passes them."""

DELEGATED_SCOPES: tuple[str, ...] = (
    "User.Read",
    "Mail.Read",
    "MailboxSettings.Read",
    "Files.Read",
)
"""MailboxSettings.Read is for the mailbox's time zone alone (times shown and filtered in it)."""
ALL_FILES_SCOPE = "Files.Read.All"
"""Replaces ``Files.Read`` with ``--all-files``: it also reaches drives shared with the user."""
SITES_SCOPE = "Sites.Read.All"
"""Added by ``--all-files``: SharePoint sites and their document libraries by name."""
SHARED_MAIL_SCOPE = "Mail.Read.Shared"
"""Added by ``--shared-mail`` or ``--mailbox``: shared and delegated mailboxes."""

WELL_KNOWN_TENANTS = ("common", "organizations", "consumers")
_GUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_DOMAIN = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})+$")
_THUMBPRINT = re.compile(r"^[0-9a-fA-F]{40}$")

Mode = Literal["delegated", "app-only"]


class AuthConfigError(AuthError):
    """A flag or environment variable that cannot work; the hint names the fix."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code="config")


@dataclass(frozen=True, slots=True)
class Cloud:
    """One national cloud: its sign-in host and its Graph host always travel together."""

    name: str
    authority_host: str
    graph_host: str
    """``https://`` origin of Graph in this cloud, without the API version."""

    @property
    def graph_root(self) -> str:
        return self.graph_host + "/v1.0"


CLOUDS: Mapping[str, Cloud] = {
    "global": Cloud("global", "login.microsoftonline.com", "https://graph.microsoft.com"),
    "usgov": Cloud("usgov", "login.microsoftonline.us", "https://graph.microsoft.us"),
    "dod": Cloud("dod", "login.microsoftonline.us", "https://dod-graph.microsoft.us"),
    "china": Cloud("china", "login.chinacloudapi.cn", "https://microsoftgraph.chinacloudapi.cn"),
}


def check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """Return the scopes as a tuple, refusing the OIDC scopes msal reserves for itself."""
    result = tuple(scopes)
    reserved = sorted(set(result) & RESERVED_SCOPES)
    if reserved:
        raise AuthConfigError(
            f"reserved scope(s) {', '.join(reserved)} must not be requested",
            hint="msal adds openid, profile and offline_access itself",
        )
    if not result or any(not s or s != s.strip() or " " in s for s in result):
        raise AuthConfigError("scopes must be non-empty names without spaces")
    return result


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """Everything sign-in needs. Secrets are kept out of ``repr``."""

    client_id: str | None = None
    tenant: str = "common"
    cloud: Cloud = CLOUDS["global"]
    cache_path: Path = field(default_factory=lambda: default_cache_path(os.environ))
    allow_plaintext_cache: bool = False
    all_files: bool = False
    shared_mail: bool = False
    app_only: bool = False
    user: str | None = None
    """App-only: the mailbox and drive owner (object id or UPN). Unused when delegated."""
    client_secret: str | None = field(default=None, repr=False)
    client_cert_path: Path | None = None
    client_cert_thumbprint: str | None = None
    http_timeout_seconds: float = 30.0
    """msal's ``timeout=``: each HTTP call to the sign-in service."""
    call_timeout_seconds: float = 90.0
    """Trio deadline around one msal call in the server (discovery + refresh + a retry)."""
    lock_timeout_seconds: float = 10.0
    """Longest wait for another process holding the token-cache lock."""
    extra_scopes: tuple[str, ...] = ()
    """Delegated permissions the open gates need (Mail.ReadWrite, Mail.Send)."""
    gate_flags: tuple[str, ...] = ()
    """The gate switches in force, so a re-consent hint can repeat them."""
    network: NetworkSettings = field(default_factory=NetworkSettings)
    """Proxy and trust for the sign-in service (the Graph client gets the same)."""
    limits: Limits = DEFAULT_LIMITS
    """The server's limits (token cache and certificate file sizes, TLS error text)."""

    @property
    def mode(self) -> Mode:
        return "app-only" if self.app_only else "delegated"

    @property
    def authority(self) -> str:
        return f"https://{self.cloud.authority_host}/{self.tenant}"

    @property
    def graph_root(self) -> str:
        return self.cloud.graph_root

    @property
    def scopes(self) -> tuple[str, ...]:
        """What we ask msal for. Never the reserved OIDC scopes (msal adds those)."""
        if self.app_only:
            return (self.cloud.graph_host + "/.default",)
        files = ALL_FILES_SCOPE if self.all_files else "Files.Read"
        scopes = [s if s != "Files.Read" else files for s in DELEGATED_SCOPES]
        if self.all_files:
            scopes.append(SITES_SCOPE)
        if self.shared_mail:
            scopes.append(SHARED_MAIL_SCOPE)
        return check_scopes([*scopes, *(s for s in self.extra_scopes if s not in scopes)])

    @property
    def login_command(self) -> str:
        """The sign-in command that consents to what this configuration needs."""
        return " ".join(["mfconnector login", *self.gate_flags])

    @property
    def user_path(self) -> str:
        """Graph path prefix of the mailbox/drive owner: ``/me``, or ``/users/<id>`` app-only."""
        if self.app_only and self.user:
            # One path segment: a guest UPN's '#EXT#' or a '/' must not escape it.
            return "/users/" + quote(self.user, safe="@!$&'()*+,;=:-._~")
        return "/me"

    def require_client_id(self) -> str:
        """The client id, or an error that says how to configure one."""
        if not self.client_id:
            raise AuthConfigError(
                "no client id configured",
                hint="register an app (docs/AUTH.md), then set MFC_CLIENT_ID or pass --client-id",
            )
        return self.client_id


def mailbox_argument(args: Any, env: Mapping[str, str] | None = None) -> str | None:
    """``--mailbox`` or ``MFC_MAILBOX``: the mailbox read when a call names none."""
    env = os.environ if env is None else env
    return _pick(getattr(args, "auth_mailbox", None), env, "MFC_MAILBOX")


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the sign-in flags. Each overrides the environment variable named in its help.

    Absent flags set nothing (``default=SUPPRESS``), so the same flags can live on the main
    parser and on each subcommand without a subcommand's defaults erasing ``--tenant X``
    given before it.
    """
    group = parser.add_argument_group("sign-in (Microsoft Entra ID)")
    unset = argparse.SUPPRESS
    switch = argparse.BooleanOptionalAction
    group.add_argument(
        "--client-id",
        dest="auth_client_id",
        metavar="GUID",
        default=unset,
        help="application (client) id of your app registration [MFC_CLIENT_ID]",
    )
    group.add_argument(
        "--tenant",
        dest="auth_tenant",
        metavar="TENANT",
        default=unset,
        help="common, organizations, consumers, a tenant id or domain [MFC_TENANT; common]",
    )
    group.add_argument(
        "--cloud",
        dest="auth_cloud",
        choices=sorted(CLOUDS),
        default=unset,
        help="national cloud: sign-in host and Graph root together [MFC_CLOUD; global]",
    )
    group.add_argument(
        "--cache-path",
        dest="auth_cache_path",
        metavar="PATH",
        default=unset,
        help="token cache file [MFC_CACHE_PATH; the platform's cache directory, for example "
        "~/.cache/mfconnector/token_cache.json on Linux]",
    )
    group.add_argument(
        "--allow-plaintext-cache",
        dest="auth_allow_plaintext_cache",
        action=switch,
        default=unset,
        help="where no encrypted store exists (headless Linux), keep the cache in a 0600 "
        "plaintext file [MFC_ALLOW_PLAINTEXT_CACHE]",
    )
    group.add_argument(
        "--all-files",
        dest="auth_all_files",
        action=switch,
        default=unset,
        help="ask for Files.Read.All and Sites.Read.All instead of Files.Read (other drives, "
        "SharePoint libraries) [MFC_SCOPES_ALL_FILES]",
    )
    group.add_argument(
        "--shared-mail",
        dest="auth_shared_mail",
        action=switch,
        default=unset,
        help="ask for Mail.Read.Shared too (the tools' `mailbox` argument) "
        "[MFC_SCOPES_SHARED_MAIL; on with --mailbox]",
    )
    group.add_argument(
        "--mailbox",
        dest="auth_mailbox",
        metavar="ADDRESS",
        default=unset,
        help="read this shared or delegated mailbox by default [MFC_MAILBOX]",
    )
    group.add_argument(
        "--app-only",
        dest="auth_app_only",
        action=switch,
        default=unset,
        help="unattended: client credentials plus --user instead of a signed-in person "
        "[MFC_APP_ONLY; on when MFC_CLIENT_SECRET or a certificate is set]",
    )
    group.add_argument(
        "--user",
        dest="auth_user",
        metavar="ID_OR_UPN",
        default=unset,
        help="app-only: whose mailbox and drive to read [MFC_USER]",
    )
    group.add_argument(
        "--client-cert",
        dest="auth_client_cert",
        metavar="PEM",
        default=unset,
        help="app-only: PEM file with the private key (and certificate) [MFC_CLIENT_CERT_PATH]; "
        "a client secret is read only from MFC_CLIENT_SECRET",
    )
    group.add_argument(
        "--client-cert-thumbprint",
        dest="auth_client_cert_thumbprint",
        metavar="SHA1",
        default=unset,
        help="app-only: SHA-1 thumbprint of that certificate [MFC_CLIENT_CERT_THUMBPRINT]",
    )
    add_network_arguments(parser)


def _env_bool(env: Mapping[str, str], name: str) -> bool | None:
    try:
        return env_flag(env, name)
    except EnvFlagError as exc:
        raise AuthConfigError(str(exc)) from None


def _pick(flag: str | None, env: Mapping[str, str], name: str) -> str | None:
    if flag is not None and flag.strip():
        return flag.strip()
    value = env.get(name, "").strip()
    return value or None


def _check_tenant(tenant: str) -> str:
    if tenant.lower() in WELL_KNOWN_TENANTS:
        return tenant.lower()
    if _GUID.match(tenant) or _DOMAIN.match(tenant):
        return tenant
    raise AuthConfigError(
        f"tenant {tenant[:80]!r} is not a tenant",
        hint="use common, organizations, consumers, a tenant id (GUID) or a domain "
        "such as contoso.onmicrosoft.com",
    )


def auth_config_from_args(
    args: argparse.Namespace,
    env: Mapping[str, str] = os.environ,
    *,
    extra_scopes: tuple[str, ...] = (),
    gate_flags: tuple[str, ...] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> AuthConfig:
    """Resolve flags over environment variables over defaults, and check they fit together.

    A missing client id is not an error here (demo mode needs none); the provider and the
    commands ask ``require_client_id()`` when they need it. ``extra_scopes`` and
    ``gate_flags`` are what the caller's open gates need: sign-in knows permissions, not
    gates.
    """
    client_id = _pick(getattr(args, "auth_client_id", None), env, "MFC_CLIENT_ID")
    if client_id is not None and not _GUID.match(client_id):
        raise AuthConfigError(
            "the client id must be the application (client) id GUID of your app registration",
            hint="copy it from the app's Overview page (docs/AUTH.md)",
        )

    tenant = _check_tenant(_pick(getattr(args, "auth_tenant", None), env, "MFC_TENANT") or "common")

    cloud_name = (_pick(getattr(args, "auth_cloud", None), env, "MFC_CLOUD") or "global").lower()
    if cloud_name not in CLOUDS:
        raise AuthConfigError(
            f"unknown cloud {cloud_name[:40]!r}", hint="use one of " + ", ".join(sorted(CLOUDS))
        )

    raw_path = _pick(getattr(args, "auth_cache_path", None), env, "MFC_CACHE_PATH")
    cache_path = Path(raw_path).expanduser().absolute() if raw_path else default_cache_path(env)

    flag_plain = getattr(args, "auth_allow_plaintext_cache", None)
    allow_plain = (
        flag_plain if flag_plain is not None else _env_bool(env, "MFC_ALLOW_PLAINTEXT_CACHE")
    )
    flag_all = getattr(args, "auth_all_files", None)
    all_files = flag_all if flag_all is not None else _env_bool(env, "MFC_SCOPES_ALL_FILES")
    flag_shared = getattr(args, "auth_shared_mail", None)
    shared_mail = (
        flag_shared if flag_shared is not None else _env_bool(env, "MFC_SCOPES_SHARED_MAIL")
    )
    if mailbox_argument(args, env):
        shared_mail = True

    secret = env.get("MFC_CLIENT_SECRET") or None
    raw_cert = _pick(getattr(args, "auth_client_cert", None), env, "MFC_CLIENT_CERT_PATH")
    cert_path = Path(raw_cert).expanduser().absolute() if raw_cert else None
    thumbprint = _pick(
        getattr(args, "auth_client_cert_thumbprint", None), env, "MFC_CLIENT_CERT_THUMBPRINT"
    )
    if thumbprint is not None:
        thumbprint = thumbprint.replace(":", "").replace(" ", "")
        if not _THUMBPRINT.match(thumbprint):
            raise AuthConfigError(
                "the certificate thumbprint must be 40 hex digits (SHA-1)",
                hint="copy it from Certificates & secrets in the app registration",
            )
    user = _pick(getattr(args, "auth_user", None), env, "MFC_USER")

    flag_app = getattr(args, "auth_app_only", None)
    app_only = flag_app if flag_app is not None else _env_bool(env, "MFC_APP_ONLY")
    if app_only is None:
        app_only = bool(secret or cert_path)

    if app_only:
        if secret and cert_path:
            raise AuthConfigError(
                "both a client secret and a certificate are configured",
                hint="unset MFC_CLIENT_SECRET or the certificate: use exactly one",
            )
        if not (secret or cert_path):
            raise AuthConfigError(
                "app-only mode needs a client credential",
                hint="set MFC_CLIENT_SECRET, or --client-cert (and --client-cert-thumbprint)",
            )
        if not user:
            raise AuthConfigError(
                "app-only mode needs the user whose mail and files to read",
                hint="pass --user or set MFC_USER (object id or user principal name)",
            )
        if tenant in WELL_KNOWN_TENANTS:
            raise AuthConfigError(
                f"app-only mode needs your tenant id, not {tenant!r}",
                hint="pass --tenant <tenant id or domain> or set MFC_TENANT",
            )

    network = network_settings_from_args(args, env)

    return AuthConfig(
        extra_scopes=extra_scopes,
        gate_flags=gate_flags,
        client_id=client_id,
        tenant=tenant,
        cloud=CLOUDS[cloud_name],
        cache_path=cache_path,
        allow_plaintext_cache=bool(allow_plain),
        all_files=bool(all_files),
        shared_mail=bool(shared_mail),
        app_only=app_only,
        user=user,
        client_secret=secret if app_only else None,
        client_cert_path=cert_path if app_only else None,
        client_cert_thumbprint=thumbprint if app_only else None,
        network=network,
        limits=limits,
    )
