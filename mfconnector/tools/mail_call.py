"""What every mail read call settles first: its account's backend, the mailbox, the zone.

A call reads its account's own mailbox, or a shared or delegated one named by its
``mailbox`` argument or the server's ``--mailbox`` where the provider has shared mailboxes
(``capabilities.shared_mailboxes``; elsewhere ``unsupported`` before any request). Times
are shown, and filter dates read, in ``--time-zone`` if given, else the mailbox's own zone
(asked once), else UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mfconnector.mail.backend import MailBackend
from mfconnector.mail.failures import Unsupported
from mfconnector.mail.refs import Reference, parse_reference
from mfconnector.timezones import UTC_ZONE, MailboxZone, ZoneChoice, resolve_zone
from mfconnector.tools.base import ToolContext

__all__ = ["MailCall", "mail_call", "zone_choice"]


@dataclass(frozen=True, slots=True)
class MailCall:
    backend: MailBackend
    zone: MailboxZone
    mailbox: str | None
    """The other mailbox as the call or ``--mailbox`` named it (None: the account's own)."""
    account: str

    @property
    def scope(self) -> dict[str, Any]:
        """What this call's cursors are bound to: the account and the mailbox."""
        return {
            "account": self.backend.tag.tag,
            "mailbox": self.mailbox.lower() if self.mailbox else None,
        }

    def reference(self, value: str, argument: str) -> Reference:
        """``value`` as a reference of this call's account; ``stale_reference`` otherwise."""
        return parse_reference(value, self.backend.tag, argument)

    def labelled(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` naming the other mailbox it read, when it read one."""
        if self.mailbox:
            result["mailbox"] = self.mailbox
        return result


def _other_mailbox(ctx: ToolContext, arguments: dict[str, Any]) -> str | None:
    name = arguments.get("mailbox") or ctx.mailbox
    return None if not name or name.lower() == "me" else str(name)


async def zone_choice(ctx: ToolContext, backend: MailBackend) -> ZoneChoice:
    """``--time-zone``, else the mailbox's zone, else UTC; and where it came from."""
    if ctx.time_zone:
        zone = resolve_zone(ctx.time_zone)
        if zone is not None:
            return ZoneChoice(zone, "--time-zone")
    name = await backend.time_zone()
    if name is None:
        return ZoneChoice(
            UTC_ZONE, "UTC (the mailbox's zone could not be read; pass --time-zone to choose)"
        )
    zone = resolve_zone(name)
    if zone is None:
        return ZoneChoice(UTC_ZONE, f"UTC (unknown mailbox zone {name[:60]!r})")
    return ZoneChoice(zone, "mailbox settings")


async def mail_call(ctx: ToolContext, arguments: dict[str, Any]) -> MailCall:
    account = ctx.account(arguments)
    backend = account.mail
    other = _other_mailbox(ctx, arguments)
    if other is not None:
        if not backend.capabilities.shared_mailboxes:
            raise Unsupported(
                f"account {account.name!r} ({account.provider}) has no shared mailboxes",
                hint="leave out `mailbox` to read this account's own mail",
            )
        backend = backend.for_mailbox(other)
    zone = (await zone_choice(ctx, backend)).zone
    return MailCall(backend, zone, other, account.name)
