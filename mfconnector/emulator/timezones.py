"""Time zones as Outlook names them, and ``Prefer: outlook.timezone``.

Graph returns a message's ``DateTimeOffset`` properties (``receivedDateTime``,
``sentDateTime``…) in UTC whatever the preference; ``outlook.timezone`` changes only
``dateTimeTimeZone`` values (a flag's start, due and completed dates) and the local times
Outlook writes into text (the "Sent:" line of a quoted reply). Windows names (``Pacific
Standard Time``) and IANA names (``Europe/Berlin``) are both accepted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mfconnector.emulator.errors import GraphHttpError

__all__ = ["WINDOWS_ZONES", "check_date_time_time_zone", "convert_flag", "zone"]

WINDOWS_ZONES = {
    "pacific standard time": "America/Los_Angeles",
    "mountain standard time": "America/Denver",
    "central standard time": "America/Chicago",
    "eastern standard time": "America/New_York",
    "gmt standard time": "Europe/London",
    "w. europe standard time": "Europe/Berlin",
    "romance standard time": "Europe/Paris",
    "tokyo standard time": "Asia/Tokyo",
    "china standard time": "Asia/Shanghai",
    "india standard time": "Asia/Kolkata",
    "aus eastern standard time": "Australia/Sydney",
    "utc": "UTC",
}


def zone(name: str) -> ZoneInfo:
    """The zone for an Outlook or IANA name; 400 ``ErrorTimeZoneNotSupported`` if unknown."""
    try:
        return ZoneInfo(WINDOWS_ZONES.get(name.strip().lower(), name.strip()))
    except (ZoneInfoNotFoundError, ValueError):
        raise GraphHttpError(
            400, "ErrorTimeZoneNotSupported", f"The time zone '{name[:60]}' is not supported."
        ) from None


def _moment(value: dict[str, Any]) -> datetime | None:
    text, name = value.get("dateTime"), value.get("timeZone", "UTC")
    if not isinstance(text, str) or not isinstance(name, str):
        return None
    try:
        parsed = datetime.fromisoformat(text[:26].rstrip("Z"))
    except ValueError:
        return None
    return parsed.replace(tzinfo=zone(name)) if parsed.tzinfo is None else parsed


def convert_flag(flag: dict[str, Any], name: str) -> dict[str, Any]:
    """A followupFlag with its dateTimeTimeZone values shown in the zone ``name``."""
    target = zone(name)
    out = dict(flag)
    for key in ("startDateTime", "dueDateTime", "completedDateTime"):
        value = flag.get(key)
        if not isinstance(value, dict):
            continue
        moment = _moment(value)
        if moment is None:
            continue
        local = moment.astimezone(target).replace(tzinfo=None)
        out[key] = {"dateTime": local.strftime("%Y-%m-%dT%H:%M:%S.0000000"), "timeZone": name}
    return out


def check_date_time_time_zone(value: Any, name: str) -> None:
    """400 unless ``value`` is a dateTimeTimeZone with a readable time and a known zone."""
    if not isinstance(value, dict) or _moment(value) is None:
        raise GraphHttpError(
            400, "ErrorInvalidArgument", f"'{name}' must be a dateTimeTimeZone object."
        )
