"""Accounts: one server can serve several, each a provider backend with its own gates.

With one account (today's single-account flags) tools take no ``account`` argument; with
more than one they do, and references, cursors and gates are per account. Secrets never
live here: a backend reads them from the environment or the OS keyring.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.mail.backend import FilesBackend, MailBackend
from mfconnector.mail.refs import AccountTag, account_tag

__all__ = ["Account", "AccountSet"]


@dataclass(frozen=True)
class Account:
    """One configured account. ``gates``: the acting gates turned on for it."""

    name: str
    provider: str
    mail: MailBackend
    files: FilesBackend | None = None
    gates: frozenset[str] = frozenset()
    settings: Mapping[str, Any] = field(default_factory=dict)
    """What ``account_status`` may show (host, user; never a secret)."""

    @property
    def tag(self) -> AccountTag:
        return self.mail.tag


class AccountSet:
    """The accounts of this server, in the order the operator gave them."""

    def __init__(self, accounts: list[Account]) -> None:
        if not accounts:
            raise ValueError("a server needs at least one account")
        names = [a.name for a in accounts]
        if len(set(names)) != len(names):
            raise ValueError("account names must differ")
        tags = [account_tag(a.provider, a.name).tag for a in accounts]
        if len(set(tags)) != len(tags):
            raise ValueError("two accounts' names give the same reference tag; rename one of them")
        self._accounts = {a.name: a for a in accounts}

    def __iter__(self) -> Iterator[Account]:
        return iter(self._accounts.values())

    def __len__(self) -> int:
        return len(self._accounts)

    @property
    def several(self) -> bool:
        """Whether tools take (and need) an ``account`` argument."""
        return len(self._accounts) > 1

    def choose(self, arguments: Mapping[str, Any]) -> Account:
        """The account a call names, or the only one."""
        name = arguments.get("account")
        if name is None:
            if self.several:
                raise ToolInputError(
                    "this server serves several accounts: name one with `account`",
                    hint="account_status lists them: " + ", ".join(self._accounts),
                )
            return next(iter(self._accounts.values()))
        account = self._accounts.get(name)
        if account is None:
            raise ToolInputError(
                f"no account named {name!r}",
                hint="account_status lists them: " + ", ".join(self._accounts),
            )
        return account
