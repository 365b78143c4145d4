"""Adele's conversations: Re:/Fw: chains where each reply quotes the whole history."""

from __future__ import annotations

from datetime import timedelta

import mfconnector.demo_documents as docbuild
from mfconnector.emulator.model import Folder, Message
from mfconnector.emulator.quoting import quoted_history
from mfconnector.emulator.seed.documents import (
    DOCX,
    PNG,
    PPTX,
    big_scan_png,
    budget_review_docx,
    hotel_eml,
    launch_deck_pptx,
    notes_txt,
)
from mfconnector.emulator.seed.facts import DEMO_NOW, ME, PEOPLE
from mfconnector.emulator.seed.mail_builder import MailBuilder
from mfconnector.emulator.seed.prose import html_page

__all__ = ["threads"]


def threads(
    b: MailBuilder, inbox: Folder, sent: Folder, archive: Folder, budget: Folder, launch: Folder
) -> None:
    """Conversations: Re:/Fw: chains where each reply quotes the whole history below it."""
    p = PEOPLE
    plans = [
        ("Q1 budget review", "budget", ["lynne", "adele", "alex", "lynne", "adele"], inbox),
        (
            "Contoso Launch venue and catering",
            "launch",
            ["megan", "adele", "megan", "diego"],
            inbox,
        ),
        (
            "Interview loop for store operations manager",
            "hiring",
            ["johanna", "adele", "johanna"],
            inbox,
        ),
        (
            "Pilot feedback from the Bellevue store",
            "product",
            ["nestor", "adele", "patti", "nestor", "adele", "lee"],
            inbox,
        ),
        ("Weekly retail sync – action items", "meeting", ["patti", "alex", "adele"], inbox),
        (
            "Fabrikam consulting invoice query",
            "invoice",
            ["billing", "adele", "billing", "adele"],
            archive,
        ),
        ("Trip to Munich for the Fabrikam workshop", "travel", ["joerg", "adele", "joerg"], inbox),
        (
            "Launch press release – legal review",
            "launch",
            ["miriam", "adele", "grady", "miriam"],
            launch,
        ),
        ("Headcount plan for 2027", "budget", ["alex", "adele", "lynne"], budget),
        ("Admin MFA rollout", "security", ["isaiah", "adele", "isaiah"], inbox),
        (
            "Loyalty programme milestone",
            "product",
            ["lidia", "adele", "pradeep", "lidia", "henrietta", "adele", "lidia"],
            archive,
        ),
        ("Demo script for offline sync", "launch", ["diego", "adele", "megan", "diego"], launch),
    ]
    for n, (topic, pool, speakers, folder) in enumerate(plans):
        conversation = f"thread:{n}"
        previous: Message | None = None
        start = DEMO_NOW - timedelta(days=3 + 4 * n, hours=n)
        for turn, speaker in enumerate(speakers):
            sender = p[speaker]
            others = [p[s] for s in dict.fromkeys(speakers) if s != speaker] or [ME]
            if turn == 0:
                subject = topic
            elif n % 4 == 3 and turn == len(speakers) - 1:
                subject = f"Fw: {topic}"
            else:
                subject = f"Re: {topic}"
            fresh = [b.write.paragraph(pool, 2 + turn % 2)]
            if turn:
                fresh.insert(0, f"Hi {previous.sender[0].split(' ')[0]}," if previous else "Hi,")
            fresh.append(f"Thanks,\r\n{sender[0].split(' ')[0]}")
            quoted = quoted_history(previous) if previous else ""
            target = sent if speaker == "adele" else folder
            received = start + timedelta(hours=5 * turn, minutes=7 * turn)
            message = b.add(
                target,
                sender,
                others,
                subject,
                html=html_page(fresh, quoted),
                unique=html_page(fresh),
                received=received,
                conversation=conversation,
                is_read=speaker == "adele" or turn < len(speakers) - 1 or n % 3 != 0,
                categories=["Project Launch"] if pool == "launch" else [],
            )
            if n == 0 and turn == 0:
                b.attach(message, "Q1 Budget Review.docx", DOCX, budget_review_docx)
            if n == 1 and turn == 0:
                b.attach(message, "Contoso Launch – kickoff.pptx", PPTX, launch_deck_pptx)
            if n == 4 and turn == 0:
                b.attach(message, "notes.txt", "text/plain", notes_txt)
                b.attach(message, "whiteboard.png", PNG, lambda: docbuild.png(320, 200, 11))
            if n == 3 and turn == 2:
                b.attach(message, "Site survey – raw scan.png", PNG, big_scan_png)
            if n == 6 and turn == 0:
                b.attach(message, "Hotel confirmation.eml", "message/rfc822", hotel_eml)
            if n == 5 and turn == 0:
                original = b.add(
                    archive,
                    p["joerg"],
                    [ME],
                    "Original quote from Fabrikam",
                    ["Our quote for the February consulting engagement is EUR 18,400."],
                    received=received - timedelta(days=20),
                )
                b.mailbox.remove_message(original)  # it lives only inside the attachment
                b.attach(
                    message,
                    "Original quote from Fabrikam",
                    None,
                    None,
                    kind="item",
                    item=original,
                    size=32_005,
                )
            previous = message
