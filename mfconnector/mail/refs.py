"""Exact references: every id a tool hands out names its provider, account and native id.

A reference is one compact string, ``<tag>.<native>``: the tag is a provider letter and two
characters derived from the account name (``m`` Microsoft Graph, ``i`` IMAP, ``g`` Gmail),
the native part is the provider's own id, with whatever the provider needs to refuse a
stale one (IMAP: UIDVALIDITY, UID and folder). Four bytes per id is the price of never
acting on the wrong account's message: ids are half the bytes of a listing.

Parsing is strict and happens before any request: a reference of another provider or
another account, or one a backend cannot read, is ``stale_reference``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from mfconnector.mail.failures import StaleReference

__all__ = [
    "PROVIDER_LETTERS",
    "REFERENCE_PATTERN",
    "AccountTag",
    "Reference",
    "account_tag",
    "parse_reference",
]

PROVIDER_LETTERS = {"graph": "m", "imap": "i", "gmail": "g"}
_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
_TAG = re.compile(r"^([mig])([a-z2-7]{2})\.(.+)$", re.DOTALL)
REFERENCE_PATTERN = r"^[mig][a-z2-7]{2}\."
"""What a tool's input schema checks of a reference; the rest is the backend's to parse."""


@dataclass(frozen=True, slots=True)
class AccountTag:
    """The three characters that bind a reference to one provider and one account."""

    provider: str
    account: str
    tag: str


def account_tag(provider: str, account: str) -> AccountTag:
    """The tag of ``account`` at ``provider``: stable across restarts, derived from its name."""
    letter = PROVIDER_LETTERS[provider]
    digest = hashlib.sha256(f"{provider}\0{account}".encode()).digest()
    return AccountTag(
        provider, account, letter + _ALPHABET[digest[0] % 32] + _ALPHABET[digest[1] % 32]
    )


@dataclass(frozen=True, slots=True)
class Reference:
    """One provider object of one account. ``native`` is the provider's id string."""

    tag: AccountTag
    native: str

    def __str__(self) -> str:
        return f"{self.tag.tag}.{self.native}"

    @property
    def provider(self) -> str:
        return self.tag.provider

    @property
    def account(self) -> str:
        return self.tag.account


def parse_reference(value: str, tag: AccountTag, argument: str) -> Reference:
    """``value`` as a reference of ``tag``'s account, or ``StaleReference`` naming ``argument``.

    A reference of another account or provider is refused, never resolved elsewhere.
    """
    match = _TAG.match(value)
    if match is None:
        raise StaleReference(
            f"`{argument}` is not a reference this server handed out",
            hint="take ids from mail_list, mail_search, mail_read or mail_folders",
        )
    if match.group(1) + match.group(2) != tag.tag:
        raise StaleReference(
            f"`{argument}` belongs to another account or provider than `{tag.account}`",
            hint="pass the `account` the id came from, or list this account's items again",
        )
    return Reference(tag, match.group(3))
