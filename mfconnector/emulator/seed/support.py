"""The shared mailbox support@: customer tickets and the team's replies."""

from __future__ import annotations

import random
from datetime import timedelta

from mfconnector.emulator import ids
from mfconnector.emulator.model import Mailbox
from mfconnector.emulator.quoting import quoted_history
from mfconnector.emulator.seed.facts import PEOPLE, SUPPORT
from mfconnector.emulator.seed.mail_builder import MailBuilder
from mfconnector.emulator.seed.prose import html_page

__all__ = ["build_support"]


def build_support(rng: random.Random) -> Mailbox:
    """The shared mailbox support@: customer tickets and the team's replies."""
    mailbox = Mailbox(
        user_id=ids.guid("user:" + SUPPORT[1]),
        display_name=SUPPORT[0],
        mail=SUPPORT[1],
        upn=SUPPORT[1],
        time_zone="Pacific Standard Time",
    )
    b = MailBuilder(mailbox, rng)
    root = b.folder("root", "Top of Information Store", None, "msgfolderroot")
    root.parent_id = ids.folder_id(mailbox.mail + ":ipm-subtree-parent")
    inbox = b.folder("inbox", "Inbox", "msgfolderroot", "inbox")
    sent = b.folder("sentitems", "Sent Items", "msgfolderroot", "sentitems")
    b.folder("drafts", "Drafts", "msgfolderroot", "drafts")
    b.folder("deleteditems", "Deleted Items", "msgfolderroot", "deleteditems")
    b.folder("archive", "Archive", "msgfolderroot", "archive")
    customers = ["customer1", "customer2", "customer3"]
    for n in range(21):
        customer = PEOPLE[customers[n % 3]]
        ticket = 40_310 + n
        problem = [
            "My Mark 8 tablet drains its battery overnight",
            "I cannot print a return label",
            "My loyalty points are missing",
        ][n % 3]
        message = b.add(
            inbox,
            customer,
            [SUPPORT],
            f"[Ticket #{ticket}] {problem}",
            [f"Hello, {problem.lower()}.", b.write.paragraph("product", 2)],
            conversation=f"ticket:{ticket}",
            is_read=n % 3 != 0,
        )
        if n % 2 == 0:
            b.add(
                sent,
                SUPPORT,
                [customer],
                f"Re: [Ticket #{ticket}] {problem}",
                html=html_page(
                    ["Thank you for contacting Contoso Support.", b.write.paragraph("product", 1)],
                    quoted_history(message),
                ),
                conversation=f"ticket:{ticket}",
                received=message.received + timedelta(hours=2),
            )
    return mailbox
