"""Who and when in the demo mailbox: its owner, the people who write to it, its labels,
its fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["DEMO_ADDRESS", "DEMO_NOW", "ME", "PEOPLE", "PHISHING_FILENAME", "USER_LABELS", "at"]

DEMO_NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
DEMO_ADDRESS = "robin@demo-mail.example"
ME = f"Robin Demo <{DEMO_ADDRESS}>"
PHISHING_FILENAME = "INV-2026-0877_\u202efdp.scr"
"""Shown by a naive viewer as ``INV-2026-0877_rcs.pdf``; it is a Windows screensaver."""

PEOPLE = {
    "megan": "Megan Bowen <megan.bowen@contoso.example>",
    "alex": "Alex Wilber <alex.wilber@contoso.example>",
    "lee": "Lee Gu <lee.gu@fabrikam.example>",
    "nestor": "Nestor Wilke <nestor@fabrikam.example>",
    "wei": "王伟 <wang.wei@partner.example>",
    "yuki": "山田 由紀 <yuki.yamada@partner.example>",
    "minji": "김민지 <minji.kim@partner.example>",
    "layla": "ليلى حداد <layla@partner.example>",
    "noa": "נועה לוי <noa.levi@partner.example>",
    "zoe": "Zoë Müller <zoe.mueller@example.org>",
    "mum": "Mum <mum@family.example>",
    "news": "Tech Weekly <newsletter@news.example>",
    "shop": "Gadget Shop <offers@shop.example>",
    "social": "Friendbook <notify@social.example>",
    "bank": "Demo Bank <alerts@bank.example>",
    "forum": "Python Forum <forum@forum.example>",
}
USER_LABELS = (
    ("Projects", None),
    ("Projects/Contoso", {"textColor": "#ffffff", "backgroundColor": "#16a766"}),
    ("Projects/Fabrikam", None),
    ("Finance", None),
    ("Finance/Invoices", {"textColor": "#000000", "backgroundColor": "#fad165"}),
    ("Travel", None),
    ("Family", None),
    ("Receipts/2026", None),
)


def at(days: float, hour: int = 9) -> datetime:
    """``days`` before the demo's "now", at ``hour`` (minutes vary so no two collide)."""
    return (DEMO_NOW - timedelta(days=days)).replace(hour=hour, minute=(int(days * 37) % 60))
