"""The whole demo tenant, as the emulator serves it."""

from __future__ import annotations

import random

from mfconnector.emulator.model import Mailbox, Tenant
from mfconnector.emulator.seed.adele import build_adele
from mfconnector.emulator.seed.marketing_drive import build_marketing_drive
from mfconnector.emulator.seed.personal_drive import build_personal_drive
from mfconnector.emulator.seed.support import build_support

__all__ = ["build_tenant"]


def build_tenant() -> Tenant:
    """A fresh demo tenant: the same data every time, nothing shared between calls."""
    rng = random.Random(20260306)
    adele = build_adele(rng)
    support = build_support(random.Random(20260307))
    personal = build_personal_drive()
    marketing = build_marketing_drive()
    mailboxes: dict[str, Mailbox] = {}
    for mailbox in (adele, support):
        for key in (mailbox.user_id, mailbox.mail.lower(), mailbox.upn.lower()):
            mailboxes[key] = mailbox
    mailboxes["me"] = adele
    return Tenant(
        mailboxes=mailboxes,
        drives={personal.id: personal, marketing.id: marketing},
        personal_drive={adele.user_id: personal.id},
        me=adele.user_id,
    )
