"""The command-line side of issue 10: scopes for shared mail and other drives, --mailbox,
--time-zone, and what the context the CLI builds carries into the tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mfconnector.auth.config import auth_config_from_args
from mfconnector.cli import build_parser
from mfconnector.entry.account_builders import UsageError
from mfconnector.entry.wiring import build_context
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.timezones import resolve_zone

ROOT = Path(__file__).resolve().parents[2]
CLIENT = "11111111-2222-3333-4444-555555555555"


def config_for(*flags: str, env: dict[str, str] | None = None) -> tuple[str, ...]:
    args = build_parser().parse_args(list(flags))
    return auth_config_from_args(args, {"MFC_CLIENT_ID": CLIENT, **(env or {})}).scopes


def test_scopes_follow_the_reads_asked_for() -> None:
    base = ("User.Read", "Mail.Read", "MailboxSettings.Read", "Files.Read")
    assert config_for() == base
    assert config_for("--shared-mail") == (*base, "Mail.Read.Shared")
    assert config_for("--mailbox", "support@contoso.com") == (*base, "Mail.Read.Shared")
    assert config_for(env={"MFC_MAILBOX": "support@contoso.com"}) == (*base, "Mail.Read.Shared")
    assert config_for("--all-files") == (
        "User.Read",
        "Mail.Read",
        "MailboxSettings.Read",
        "Files.Read.All",
        "Sites.Read.All",
    )


def test_the_context_carries_mailbox_zone_and_drives() -> None:
    args = build_parser().parse_args(
        ["--demo", "--mailbox", "support@contoso.com", "--time-zone", "Europe/Paris"]
    )
    ctx, _ = build_context(args, DEFAULT_LIMITS)
    assert (ctx.mailbox, ctx.time_zone, other_drives(ctx)) == (
        "support@contoso.com",
        "Europe/Paris",
        True,
    )
    live, _ = build_context(build_parser().parse_args([]), DEFAULT_LIMITS)
    assert (live.mailbox, live.time_zone, other_drives(live)) == (None, None, False)


def other_drives(ctx: Any) -> bool:
    """Whether the context's one account's files read other drives (--all-files)."""
    (account,) = ctx.accounts
    return bool(account.files.capabilities.other_drives)


def test_an_unknown_time_zone_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        build_context(
            build_parser().parse_args(["--demo", "--time-zone", "Mars/Olympus"]), DEFAULT_LIMITS
        )
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", "--demo", "--time-zone", "Mars/Olympus"],
        input=b"",
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().count("\n") == 1 and "--time-zone" in done.stderr.decode()


@pytest.mark.parametrize(
    ("name", "iana"),
    [
        ("W. Europe Standard Time", "Europe/Berlin"),
        ("Pacific Standard Time", "America/Los_Angeles"),
        ("Tokyo Standard Time", "Asia/Tokyo"),
        ("Europe/Paris", "Europe/Paris"),
        ("UTC", None),
    ],
)
def test_outlook_and_iana_zone_names_resolve(name: str, iana: str | None) -> None:
    zone = resolve_zone(name)
    assert zone is not None and zone.name == name
    if iana:
        assert str(zone.tz) == iana
    assert zone.local("2026-07-01T12:00:00Z") is not None


def test_local_dates_become_utc_instants_across_daylight_saving() -> None:
    zone = resolve_zone("Pacific Standard Time")
    assert zone is not None
    assert zone.utc_instant("2026-01-15", "since") == "2026-01-15T08:00:00Z"
    assert zone.utc_instant("2026-07-15", "since") == "2026-07-15T07:00:00Z"
    assert zone.utc_instant("2026-07-15T00:00:00+02:00", "since") == "2026-07-14T22:00:00Z"
    assert zone.local("2026-07-15T07:00:00Z") == "2026-07-15T00:00"
    assert resolve_zone("Not A Zone") is None
