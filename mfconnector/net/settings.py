"""``--proxy`` / ``MFC_PROXY`` and ``--ca-file`` / ``MFC_CA_FILE``, resolved once.

Without a setting, no proxy is used, whatever ``HTTPS_PROXY`` says: a token must not travel
through a proxy the user did not choose for this server (and before 0.2, sign-in went through
an inherited proxy while Graph did not, so every call failed). ``--proxy URL`` routes both
sign-in and Graph through that HTTP(S) proxy; ``--proxy env`` takes ``HTTPS_PROXY`` (else
``ALL_PROXY``) and ``NO_PROXY`` from the environment, read here, once.

A proxy URL may carry credentials (``http://user:secret@proxy:8080``): they are used, and kept
out of ``repr``, ``status``, ``account_status`` and logs (``display`` shows the URL without them).
Pure code: no httpx, requests or ssl imports.
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from mfconnector.errors import AuthError

__all__ = [
    "NetworkSettings",
    "NetworkSettingsError",
    "ProxySetting",
    "add_network_arguments",
    "network_settings_from_args",
    "parse_proxy_url",
]

ProxySource = Literal["--proxy", "MFC_PROXY", "environment"]
_SCHEMES = ("http", "https")
_ENV_WORD = "env"
_NONE_WORDS = frozenset({"", "none", "off", "direct"})


class NetworkSettingsError(AuthError):
    """A proxy or CA setting that cannot work; the hint names the fix."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint, code="config")


@dataclass(frozen=True, slots=True)
class ProxySetting:
    """One HTTP(S) proxy for every request, except hosts listed in ``no_proxy``."""

    url: str = field(repr=False)
    """The URL as given, credentials included: only the HTTP stacks see it."""
    display: str
    """The same URL without credentials: what status lines and logs show."""
    has_credentials: bool
    source: ProxySource
    no_proxy: tuple[str, ...] = ()
    """Lower-case host patterns (``example.com`` also covers its subdomains, ``*`` all)."""

    def applies_to(self, host: str) -> bool:
        """Whether a request to ``host`` goes through the proxy (False when NO_PROXY matches)."""
        name = host.strip("[]").rstrip(".").lower()
        for pattern in self.no_proxy:
            if pattern == "*" or name == pattern or name.endswith("." + pattern):
                return False
            if "/" in pattern and _in_network(name, pattern):
                return False
        return True


def _in_network(host: str, network: str) -> bool:
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(network, strict=False)
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class NetworkSettings:
    """What both HTTP stacks use: a proxy or none, and extra trusted CAs or none."""

    proxy: ProxySetting | None = None
    ca_file: Path | None = None
    """PEM certificates trusted in addition to the operating system's store."""

    def describe(self) -> dict[str, Any]:
        """For ``status`` and ``account_status``: never the proxy's credentials."""
        proxy = self.proxy
        facts: dict[str, Any] = {
            "proxy": proxy.display if proxy else None,
            "proxySource": proxy.source if proxy else "none (environment proxy variables ignored)",
            "trust": "operating system trust store"
            + (f" plus {self.ca_file}" if self.ca_file else ""),
        }
        if proxy and proxy.has_credentials:
            facts["proxyCredentials"] = "set (not shown)"
        if proxy and proxy.no_proxy:
            facts["noProxy"] = list(proxy.no_proxy)
        return facts


def parse_proxy_url(
    raw: str, *, source: ProxySource, no_proxy: tuple[str, ...] = ()
) -> ProxySetting:
    """Check a proxy URL (http or https, a host, an optional port) and split off credentials."""
    text = raw.strip()
    where = {"--proxy": "--proxy", "MFC_PROXY": "MFC_PROXY", "environment": "HTTPS_PROXY"}[source]
    if "://" not in text:
        text = "http://" + text  # what curl and requests assume for "proxy:8080"
    try:
        parts = urlsplit(text)
        port = parts.port
        host = parts.hostname
    except ValueError:
        host, port, parts = None, None, None
    if parts is None or parts.scheme.lower() not in _SCHEMES or not host:
        raise NetworkSettingsError(
            f"{where} is not an HTTP proxy URL",
            hint="use http://host:port (or https://, or http://user:password@host:port); "
            "SOCKS proxies are not supported",
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise NetworkSettingsError(
            f"{where} must be just scheme, host and port", hint="for example http://proxy:8080"
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    display = urlunsplit((parts.scheme.lower(), netloc, "", "", ""))
    has_credentials = parts.username is not None or parts.password is not None
    url = urlunsplit((parts.scheme.lower(), parts.netloc, "", "", ""))
    return ProxySetting(url, display, has_credentials, source, no_proxy)


def _no_proxy(env: Mapping[str, str]) -> tuple[str, ...]:
    raw = env.get("NO_PROXY") or env.get("no_proxy") or ""
    patterns: list[str] = []
    for item in raw.split(","):
        pattern = item.strip().lower().lstrip("*").lstrip(".")
        if item.strip() == "*":
            pattern = "*"
        if pattern:
            patterns.append(pattern.rsplit(":", 1)[0] if pattern.count(":") == 1 else pattern)
    return tuple(dict.fromkeys(patterns))


def _from_environment(env: Mapping[str, str]) -> ProxySetting | None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        value = env.get(name, "").strip()
        if value:
            return parse_proxy_url(value, source="environment", no_proxy=_no_proxy(env))
    return None


def _pick(flag: str | None, env: Mapping[str, str], name: str) -> tuple[str | None, bool]:
    """The value and whether it came from the flag."""
    if flag is not None:
        return flag, True
    value = env.get(name)
    return value, False


def network_settings_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> NetworkSettings:
    """Resolve ``--proxy`` over ``MFC_PROXY``, ``--ca-file`` over ``MFC_CA_FILE``."""
    raw, from_flag = _pick(getattr(args, "net_proxy", None), env, "MFC_PROXY")
    proxy: ProxySetting | None = None
    if raw is not None and raw.strip().lower() not in _NONE_WORDS:
        if raw.strip().lower() == _ENV_WORD:
            proxy = _from_environment(env)
        else:
            proxy = parse_proxy_url(raw, source="--proxy" if from_flag else "MFC_PROXY")
    raw_ca, _ = _pick(getattr(args, "net_ca_file", None), env, "MFC_CA_FILE")
    ca_file: Path | None = None
    if raw_ca is not None and raw_ca.strip():
        ca_file = Path(raw_ca.strip()).expanduser().absolute()
        if not ca_file.is_file():
            raise NetworkSettingsError(
                f"the CA file {ca_file} does not exist",
                hint="--ca-file / MFC_CA_FILE takes a PEM file of extra trusted certificates",
            )
    return NetworkSettings(proxy=proxy, ca_file=ca_file)


def add_network_arguments(parser: argparse.ArgumentParser) -> None:
    """``--proxy`` and ``--ca-file``; absent flags set nothing (see ``add_auth_arguments``)."""
    group = parser.add_argument_group("network")
    group.add_argument(
        "--proxy",
        dest="net_proxy",
        metavar="URL|env|none",
        default=argparse.SUPPRESS,
        help="HTTP(S) proxy for sign-in and Graph; 'env' takes HTTPS_PROXY/NO_PROXY from the "
        "environment [MFC_PROXY; none: environment proxy variables are ignored]",
    )
    group.add_argument(
        "--ca-file",
        dest="net_ca_file",
        metavar="PEM",
        default=argparse.SUPPRESS,
        help="extra certificate authorities to trust besides the operating system's store, "
        "for example a TLS-inspecting proxy's [MFC_CA_FILE]",
    )
