"""Adele's automated mail: invoices, Message center notices, newsletters, receipts,
quick questions and booking confirmations."""

from __future__ import annotations

import functools

import mfconnector.demo_documents as docbuild
from mfconnector.emulator.model import Folder
from mfconnector.emulator.quoting import escape
from mfconnector.emulator.seed.corpus import MESSAGE_CENTER, QUESTIONS
from mfconnector.emulator.seed.documents import PDF, PNG, invoice_pdf
from mfconnector.emulator.seed.facts import ME, PEOPLE, STAFF
from mfconnector.emulator.seed.mail_builder import MailBuilder

__all__ = ["invoices", "notices"]


def invoices(b: MailBuilder, inbox: Folder, archive: Folder) -> None:
    for n in range(15):
        number = f"INV-2026-{870 + n:04d}"
        amount = f"USD {3_250 + 415 * n:,}.00"
        folder = inbox if n < 12 else archive
        message = b.add(
            folder,
            PEOPLE["billing"],
            [ME],
            f"Invoice {number} from Fabrikam",
            [
                f"Dear customer, invoice {number} for {amount} is attached.",
                b.write.paragraph("invoice", 2),
            ],
            is_read=n % 4 != 0,
            categories=["Finance"] if n % 2 == 0 else [],
        )
        b.attach(message, f"{number}.pdf", PDF, functools.partial(invoice_pdf, number, amount))


def notices(b: MailBuilder, inbox: Folder, newsletters: Folder, receipts: Folder) -> None:
    for n, (title, code) in enumerate(MESSAGE_CENTER):
        b.add(
            inbox if n % 4 else newsletters,
            PEOPLE["mc"],
            [ME],
            f"({code}) {title}",
            [f"Message center notice {code}.", title + ".", b.write.paragraph("security", 2)],
            is_read=n % 3 != 0,
            inference="other",
        )
    for n in range(14):
        html = newsletter(b, n)
        message = b.add(
            newsletters,
            PEOPLE["weekly"],
            [ME],
            f"Contoso Weekly #{112 - n}: retail highlights and launch news",
            html=html,
            is_read=n > 1,
            inference="other",
        )
        b.attach(
            message, f"banner{n}.png", PNG, functools.partial(docbuild.png, 120, 40, n), inline=True
        )
    for n in range(8):
        sender = PEOPLE[STAFF[(n * 5 + 2) % len(STAFF)]]
        topic = ["product", "meeting", "hiring", "product"][n % 4]
        b.add(
            inbox,
            sender,
            [ME],
            f"Quick question about {QUESTIONS[n % 4]}",
            ["Hi Adele,", b.write.paragraph(topic, 2), "Thanks!"],
            is_read=n % 3 == 0,
        )
    shops = ["Fourth Coffee", "Blue Yonder Airlines", "Fourth Coffee", "Wide World Importers"]
    for n in range(12):
        shop = shops[n % len(shops)]
        sender = PEOPLE["airline"] if "Airlines" in shop else PEOPLE["coffee"]
        total = f"${4 + n * 3}.{(n * 37) % 100:02d}"
        b.add(
            receipts,
            (shop, sender[1]),
            [ME],
            f"Your receipt from {shop} – order {5120 + n}",
            [
                f"Thank you for your purchase. Order {5120 + n}, total {total}.",
                "Keep this receipt for your expense report.",
            ],
        )
    for n in range(6):
        b.add(
            inbox,
            PEOPLE["airline"],
            [ME],
            f"Booking confirmation BY{4711 + n}: Seattle to Munich",
            [b.write.paragraph("travel", 4)],
            is_read=True,
        )


def newsletter(b: MailBuilder, n: int) -> str:
    sections = []
    for k, topic in enumerate(("product", "launch", "meeting", "hiring", "budget")):
        rows = "".join(
            f"<tr><td style='padding:4px'>{escape(s)}</td></tr>"
            for s in b.write.sentences(topic, 4)
        )
        sections.append(
            f"<h2>Section {k + 1}: {topic.title()}</h2><table role='presentation'>{rows}</table>"
        )
    return (
        "<html><head><style>body{font-family:Segoe UI}</style>"
        "<script>track()</script></head><body>"
        f"<img src='cid:banner{n}.png' alt='Contoso Weekly'>"
        f"<h1>Contoso Weekly #{112 - n}</h1>"
        + "".join(sections)
        * (1 + n % 3)
        + "<p><a href='https://contoso.com/unsubscribe'>Unsubscribe</a></p>"
        "<img src='https://t.contoso.com/open.gif' width='1' height='1'></body></html>"
    )
