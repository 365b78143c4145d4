"""The demo's fixed facts: its "now", its domain and the people who write and receive."""

from __future__ import annotations

from datetime import UTC, datetime

from mfconnector.emulator.model import Recipient
from mfconnector.emulator.seed.corpus import PEOPLE

__all__ = ["DEMO_NOW", "DOMAIN", "ME", "PEOPLE", "STAFF", "SUPPORT"]

DEMO_NOW = datetime(2026, 3, 6, 17, 0, 0, tzinfo=UTC)
"""The demo's "now": the newest message arrived just before it."""

DOMAIN = "contoso.onmicrosoft.com"
ME: Recipient = PEOPLE["adele"]
SUPPORT: Recipient = ("Contoso Support", f"support@{DOMAIN}")

STAFF = [key for key, (_, address) in PEOPLE.items() if address.endswith(DOMAIN) and key != "adele"]
