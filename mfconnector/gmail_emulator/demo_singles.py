"""The demo's single messages: attachments of every kind, many scripts, HTML newsletters,
the category tabs, Spam and Trash, and the phishing mail."""

from __future__ import annotations

import mfconnector.demo_documents as docbuild
from mfconnector.gmail_emulator.demo_build import Attachment, DemoWriter, forwarded
from mfconnector.gmail_emulator.demo_cast import ME, PEOPLE, PHISHING_FILENAME, at

__all__ = ["write_singles"]


def _documents(w: DemoWriter, ids: dict[str, str]) -> None:
    invoice = docbuild.pdf(
        "Invoice 2026-0412",
        [
            "Fabrikam Ltd - Invoice 2026-0412",
            "Consulting, November 2026: 12 days",
            "Total due: EUR 14,400.00",
            "Payment within 30 days.",
        ],
    )
    w.file(
        ["INBOX", "CATEGORY_UPDATES", ids["Finance/Invoices"], "UNREAD"],
        at(3),
        sender=PEOPLE["nestor"],
        to=[ME],
        subject="Invoice 2026-0412 for November",
        text="Please find our invoice attached.",
        attachments=[Attachment("Invoice-2026-0412.pdf", "application/pdf", invoice)],
    )
    contract = docbuild.docx(
        "Services Agreement",
        [
            "This agreement is made between Contoso and Fabrikam.",
            "Term: twelve months from 1 January 2027.",
            "Either party may end it with 60 days notice.",
        ],
    )
    budget = docbuild.xlsx(
        [("Budget", [["Item", "Q1", "Q2"], ["Licences", 1200, 1300], ["Travel", 800, 650]])]
    )
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Projects/Fabrikam"]],
        at(5),
        sender=PEOPLE["lee"],
        to=[ME],
        cc=[PEOPLE["nestor"]],
        subject="Contract draft and budget",
        text="Hi Robin,\n\nthe contract draft and the budget sheet are attached.\n\nLee",
        attachments=[
            Attachment("Services-Agreement.docx", _office_type("docx"), contract),
            Attachment("Budget-2027.xlsx", _office_type("xlsx"), budget),
        ],
    )
    deck = docbuild.pptx(
        [("Launch plan", ["Beta in December", "GA on 15 January"]), ("Risks", ["Search load"])]
    )
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Projects/Contoso"]],
        at(6),
        sender=PEOPLE["alex"],
        to=[ME],
        subject="Launch deck for Monday",
        html="<p>The <b>launch deck</b> is attached.</p>",
        text="The launch deck is attached.",
        attachments=[Attachment("Launch-plan.pptx", _office_type("pptx"), deck)],
    )
    original = forwarded(
        PEOPLE["nestor"], PEOPLE["lee"], "Delivery schedule", "Deliveries move to Tuesdays.", at(9)
    )
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Projects/Fabrikam"]],
        at(8),
        sender=PEOPLE["lee"],
        to=[ME],
        subject="Fwd: Delivery schedule",
        text="Forwarding Nestor's note as an attachment.",
        attachments=[Attachment("Delivery schedule.eml", "message/rfc822", original)],
    )
    logo = docbuild.png(64, 32, 7)
    w.file(
        ["INBOX", "CATEGORY_SOCIAL", ids["Family"], "STARRED"],
        at(2, 18),
        sender=PEOPLE["mum"],
        to=[ME],
        subject="Photos from the weekend",
        text="Here is the garden photo!",
        html='<p>Here is the garden photo!</p><img src="cid:garden@family.example" alt="garden">',
        attachments=[
            Attachment("garden.png", "image/png", logo, inline_cid="garden@family.example")
        ],
    )
    big = docbuild.png(320, 320, 3, noise=True)
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Travel"]],
        at(12),
        sender=PEOPLE["zoe"],
        to=[ME],
        subject="Scan of the boarding passes",
        text="The scan is large, sorry.",
        attachments=[Attachment("boarding-passes.png", "image/png", big)],
    )


def _office_type(kind: str) -> str:
    base = "application/vnd.openxmlformats-officedocument."
    return (
        base
        + {
            "docx": "wordprocessingml.document",
            "xlsx": "spreadsheetml.sheet",
            "pptx": "presentationml.presentation",
        }[kind]
    )


def _world(w: DemoWriter, ids: dict[str, str]) -> None:
    inbox = ["INBOX", "CATEGORY_PERSONAL"]
    w.file(
        [*inbox, "UNREAD"],
        at(1),
        sender=PEOPLE["wei"],
        to=[ME],
        subject="季度报告：请审阅",
        text="罗宾你好，\n\n附上第四季度报告的摘要，请在周五前审阅。\n\n王伟",
    )
    w.file(
        inbox,
        at(4),
        sender=PEOPLE["yuki"],
        to=[ME],
        subject="会議の議事録（11月）",
        text="お疲れ様です。11月の会議の議事録をお送りします。よろしくお願いします。",
    )
    w.file(
        inbox,
        at(7),
        sender=PEOPLE["minji"],
        to=[ME],
        subject="다음 주 회의 일정",
        text="안녕하세요, 다음 주 회의는 화요일 오후 3시입니다.",
    )
    w.file(
        [*inbox, "UNREAD"],
        at(2),
        sender=PEOPLE["layla"],
        to=[ME],
        subject="تقرير الميزانية للربع الرابع",
        html='<div dir="rtl"><p>مرحبا روبن، مرفق ملخص <b>تقرير الميزانية</b>.</p></div>',
    )
    w.file(
        inbox,
        at(9),
        sender=PEOPLE["noa"],
        to=[ME],
        subject="סיכום הפגישה",
        text="שלום רובין, מצורף סיכום הפגישה מיום שלישי.",
    )
    w.file(
        [*inbox, "STARRED"],
        at(3, 17),
        sender=PEOPLE["megan"],
        to=[ME],
        subject="🎉 Launch party on Friday 🚀",
        text="Cake 🍰, music 🎶 and a demo. Everyone is welcome! 🙌",
    )
    w.file(
        inbox,
        at(11),
        sender=PEOPLE["zoe"],
        to=[ME],
        subject="Café résumé — Zoë's notes",
        text="The café near the office has a new menu; my résumé is up to date, naïve as ever.",
    )
    w.file(
        [*inbox, ids["Finance"]],
        at(10),
        sender=PEOPLE["bank"],
        to=[ME],
        subject="Your statement is ready",
        html="<html><head><style>p{color:#333}</style></head><body>"
        "<p>Your <i>November statement</i> "
        "is ready. Balance: 2&nbsp;340,12&nbsp;€.</p><script>track()</script></body></html>",
    )


def _bulk(w: DemoWriter, ids: dict[str, str]) -> None:
    for n in range(4):
        w.file(
            [
                "INBOX",
                "CATEGORY_UPDATES" if n % 2 else "CATEGORY_FORUMS",
                *(["UNREAD"] if n < 2 else []),
            ],
            at(14 + n * 3),
            sender=PEOPLE["news" if n % 2 else "forum"],
            to=[ME],
            subject=f"Weekly digest #{40 + n}: async Python, HTTP/3 and more",
            html=f"<h1>Digest {40 + n}</h1><p>Top story: structured concurrency in practice.</p>"
            f'<p><a href="https://news.example/{n}">Read more</a></p>',
            text=f"Digest {40 + n}\nTop story: structured concurrency in practice.",
            headers=[("List-Id", "Tech Weekly <weekly.news.example>")],
        )
    for n in range(3):
        w.file(
            ["INBOX", "CATEGORY_PROMOTIONS"],
            at(13 + n * 4),
            sender=PEOPLE["shop"],
            to=[ME],
            subject=f"{30 + n * 10}% off headphones this week",
            html=f"<p>Save <b>{30 + n * 10}%</b> on headphones.</p>",
        )
    w.file(
        ["INBOX", "CATEGORY_SOCIAL", "UNREAD"],
        at(1, 20),
        sender=PEOPLE["social"],
        to=[ME],
        subject="Megan Bowen tagged you in a photo",
        text="See the photo on Friendbook.",
    )
    w.file(
        ["INBOX", "CATEGORY_UPDATES", ids["Receipts/2026"]],
        at(25),
        sender=PEOPLE["shop"],
        to=[ME],
        subject="Your order 55-1200 has shipped",
        text="Order 55-1200: 1 x USB-C cable. Total 9.90 EUR.",
    )
    w.file(
        ["SPAM", "UNREAD"],
        at(2, 3),
        sender="Prize Centre <winner@lottery.example>",
        to=[ME],
        subject="You have won 1,000,000 dollars",
        text="Send your bank details to claim the prize.",
    )
    w.file(
        ["SPAM"],
        at(6, 4),
        sender="Pharmacy <sales@pills.example>",
        to=[ME],
        subject="Cheap meds, no prescription",
        html="<p>Best prices!</p>",
    )
    w.file(
        ["TRASH", "CATEGORY_PROMOTIONS"],
        at(15),
        sender=PEOPLE["shop"],
        to=[ME],
        subject="Last chance: free shipping",
        text="Free shipping ends tonight.",
    )
    w.file(
        ["TRASH"],
        at(18),
        sender=PEOPLE["alex"],
        to=[ME],
        subject="Old lunch plan",
        text="Lunch on Tuesday is cancelled.",
    )


def _phishing(w: DemoWriter) -> None:
    payload = b"MZ" + b"\x00" * 62 + b"This program cannot be run in DOS mode.\r\n"
    w.file(
        ["INBOX", "CATEGORY_UPDATES", "UNREAD", "IMPORTANT"],
        at(0.5, 7),
        sender="Accounts Payable <billing@micros0ft-payments.example>",
        to=[ME],
        subject="URGENT: overdue invoice INV-2026-0877 – pay today",
        html="<p>Dear customer,</p><p>Your invoice is <b>overdue</b>. Open the attached PDF and "
        'confirm your card at <a href="https://micros0ft-payments.example/pay">'
        "our secure portal</a>.</p>",
        text="Your invoice is overdue. Open the attached PDF and confirm your card.",
        attachments=[Attachment(PHISHING_FILENAME, "application/octet-stream", payload)],
        headers=[("Reply-To", "pay-now@collector.example")],
    )


def write_singles(w: DemoWriter, ids: dict[str, str]) -> None:
    _documents(w, ids)
    _world(w, ids)
    _bulk(w, ids)
    _phishing(w)
