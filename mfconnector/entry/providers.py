"""What a provider builder makes of one account of the accounts file, and where it runs.

The registry itself (provider name -> builder) is ``entry.account_builders.PROVIDER_BUILDERS``: a
provider whose builder is not registered there is refused at start-up ("not built into
this server"), after its settings were checked (``entry.accounts_file``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mfconnector.auth import TokenProvider
    from mfconnector.entry.accounts_file import AccountSpec
    from mfconnector.limits import Limits
    from mfconnector.mail.accounts import Account

__all__ = ["AccountBuilder", "BuildPlace", "ServedAccount", "secret_variable"]

GraphFactory = Callable[[], Awaitable[Any]]
"""Awaiting it gives the account's Graph client (made on first use)."""


@dataclass(frozen=True)
class BuildPlace:
    """What every builder may read: the parsed flags, the limits, the mode, the environment."""

    args: argparse.Namespace
    limits: Limits
    mode: str
    """``live`` or ``demo``."""
    env: Mapping[str, str]


@dataclass(frozen=True)
class ServedAccount:
    """One built account, and what the calls made for it run with (their tool context)."""

    account: Account
    token_provider: TokenProvider
    graph_factory: GraphFactory
    """The Graph client the account's backends share (closed when serving ends); a
    provider without Graph answers with its refusal."""
    close: Callable[[], Awaitable[None]]
    user_path: str = "/me"
    all_files: bool = False
    mailbox: str | None = None
    cloud: str = "global"


AccountBuilder = Callable[["AccountSpec", BuildPlace], ServedAccount]
"""Builds one checked account; raises ``AccountsFileError`` (or ``UsageError``) when its
settings cannot work together."""


def secret_variable(base: str, account: str) -> str:
    """The environment variable that holds ``account``'s secret ``base``:
    ``MFC_IMAP_PASSWORD`` for account ``home`` is ``MFC_IMAP_PASSWORD_HOME``."""
    return f"{base}_{re.sub(r'[^A-Z0-9]', '_', account.upper())}"
