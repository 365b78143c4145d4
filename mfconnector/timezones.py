"""The mailbox's time zone: names Outlook uses, times shown in it, dates read in it.

Outlook's ``mailboxSettings.timeZone`` is usually a Windows name ("W. Europe Standard
Time"), sometimes an IANA one ("Europe/Berlin"). Times are shown in the zone as
``2026-03-01T10:00`` (the zone is named once per result), and a date without an offset in
a filter means that local day, not UTC. Pure functions; ``tzlocal`` supplies the CLDR
Windows-to-IANA table and is imported only when a Windows name needs it.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mfconnector.errors import ToolInputError

__all__ = ["UTC_ZONE", "MailboxZone", "resolve_zone"]


class MailboxZone:
    """A named zone: what Outlook called it, and the tzinfo that does the arithmetic."""

    __slots__ = ("name", "tz")

    def __init__(self, name: str, tz: tzinfo) -> None:
        self.name = name
        self.tz = tz

    def __repr__(self) -> str:
        return f"MailboxZone({self.name!r})"

    def local(self, value: object) -> str | None:
        """A Graph date-time (``2026-03-01T09:00:00Z``) as local ``2026-03-01T10:00``."""
        if not isinstance(value, str):
            return None
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(self.tz).strftime("%Y-%m-%dT%H:%M")

    def utc_instant(self, value: str, argument: str) -> str:
        """A filter date or date-time as the UTC instant Graph's ``$filter`` wants.

        Without an offset it is local time in this zone: ``2026-03-01`` is that day's
        local midnight.
        """
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ToolInputError(f"`{argument}` is not a valid date: {value[:40]!r}") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=self.tz)
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


UTC_ZONE = MailboxZone("UTC", UTC)


class ZoneChoice:
    """The zone in use and where it came from (account_status says both)."""

    __slots__ = ("source", "zone")

    def __init__(self, zone: MailboxZone, source: str) -> None:
        self.zone = zone
        self.source = source


@cache
def resolve_zone(name: str) -> MailboxZone | None:
    """The zone an Outlook or IANA name means, or None when it is not one we know."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > 100:
        return None
    if cleaned.upper() in ("UTC", "GMT", "ETC/UTC", "COORDINATED UNIVERSAL TIME"):
        return MailboxZone(cleaned, UTC)
    iana = cleaned
    if "/" not in cleaned:
        from tzlocal.windows_tz import win_tz

        iana = win_tz.get(cleaned, "")
        if not iana:
            return None
    try:
        return MailboxZone(cleaned, ZoneInfo(iana))
    except (ZoneInfoNotFoundError, ValueError):
        return None
