"""The demo mailbox: deterministic, built from nothing but this package.

Labels (system ones and nested user labels such as ``Projects/Contoso``); 60-odd messages
in threads, one of them 14 messages long; attachments of every kind a reader must handle (a
real PDF, Word, Excel and PowerPoint files, an .eml, an inline and a large image); subjects
and bodies in Chinese, Japanese, Korean, Arabic, Hebrew and with emoji and diacritics;
HTML bodies; newsletters in the category tabs; Spam and Trash; drafts; and a phishing mail
whose attachment name hides ``.scr`` behind a right-to-left override (U+202E). The clock
is fixed at ``DEMO_NOW``; history before the demo was built has expired.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mfconnector.gmail_emulator import docbuild
from mfconnector.gmail_emulator.demo_build import Attachment, DemoWriter, forwarded
from mfconnector.gmail_emulator.mime import Parsed
from mfconnector.gmail_emulator.store import Draft, Mailbox, Message

__all__ = ["DEMO_ADDRESS", "DEMO_NOW", "PHISHING_FILENAME", "build_demo_mailbox"]

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


def _at(days: float, hour: int = 9) -> datetime:
    return (DEMO_NOW - timedelta(days=days)).replace(hour=hour, minute=(int(days * 37) % 60))


def _labels(box: Mailbox) -> dict[str, str]:
    ids = {}
    for name, color in USER_LABELS:
        label = box.add_user_label(name, message_list_visibility="show")
        label.label_list_visibility = "labelShow"
        label.color = color
        ids[name] = label.id
    return ids


def _long_thread(w: DemoWriter, project: str) -> None:
    """Fourteen messages, replies both ways, the last three unread."""
    lines = [
        ("megan", "Here is the agenda for the Q4 roadmap review. Please add your items."),
        ("me", "Thanks Megan. I added the migration timeline and the budget question."),
        ("alex", "Can we move the review to Thursday? The design team is out on Wednesday."),
        ("megan", "Thursday works. Same room, 10:00."),
        ("me", "Confirmed. I will bring the updated milestones."),
        ("alex", "Attached the latest mock-ups; the navigation changed a lot."),
        ("megan", "The mock-ups look good. One concern: the search page is too dense."),
        ("me", "Agreed, let us simplify the filters and keep three at most."),
        ("alex", "Updated the search page with three filters. Better?"),
        ("megan", "Much better. Approved from my side."),
        ("me", "Great. I will write up the decisions and send them round."),
        ("alex", "Small correction: the launch date is 15 January, not 12."),
        ("megan", "Noted, thanks Alex. Final minutes to follow."),
        ("alex", "Reminder: the minutes are still missing the budget numbers."),
    ]
    parent: Message | None = None
    for index, (who, text) in enumerate(lines):
        mine = who == "me"
        sender = ME if mine else PEOPLE[who]
        to = [PEOPLE["megan"], PEOPLE["alex"]] if mine else [ME]
        labels = ["SENT"] if mine else ["INBOX", "CATEGORY_PERSONAL", "IMPORTANT"]
        labels.append(project)
        if not mine and index >= len(lines) - 3:
            labels.append("UNREAD")
        subject = "Q4 roadmap review" if parent is None else "Re: Q4 roadmap review"
        parent = w.file(
            labels,
            _at(20 - index, 8 + index % 9),
            sender=sender,
            to=to,
            subject=subject,
            text=f"{text}\n\n-- \n{sender.split(' <')[0]}",
            parent=parent,
        )


def _thread(
    w: DemoWriter, subject: str, turns: list[tuple[str, str]], start: float, labels: list[str]
) -> Message:
    parent: Message | None = None
    for index, (who, text) in enumerate(turns):
        mine = who == "me"
        filed = ["SENT", *labels] if mine else ["INBOX", "CATEGORY_PERSONAL", *labels]
        parent = w.file(
            filed,
            _at(start - index * 0.7, 10 + index),
            sender=ME if mine else PEOPLE[who],
            to=[PEOPLE[turns[0][0]] if mine else ME],
            subject=subject if parent is None else f"Re: {subject}",
            text=text,
            parent=parent,
        )
    assert parent is not None
    return parent


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
        _at(3),
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
        _at(5),
        sender=PEOPLE["lee"],
        to=[ME],
        cc=[PEOPLE["nestor"]],
        subject="Contract draft and budget",
        text="Hi Robin,\n\nthe contract draft and the budget sheet are attached.\n\nLee",
        attachments=[
            Attachment("Services-Agreement.docx", docbuild_type("docx"), contract),
            Attachment("Budget-2027.xlsx", docbuild_type("xlsx"), budget),
        ],
    )
    deck = docbuild.pptx(
        [("Launch plan", ["Beta in December", "GA on 15 January"]), ("Risks", ["Search load"])]
    )
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Projects/Contoso"]],
        _at(6),
        sender=PEOPLE["alex"],
        to=[ME],
        subject="Launch deck for Monday",
        html="<p>The <b>launch deck</b> is attached.</p>",
        text="The launch deck is attached.",
        attachments=[Attachment("Launch-plan.pptx", docbuild_type("pptx"), deck)],
    )
    original = forwarded(
        PEOPLE["nestor"], PEOPLE["lee"], "Delivery schedule", "Deliveries move to Tuesdays.", _at(9)
    )
    w.file(
        ["INBOX", "CATEGORY_PERSONAL", ids["Projects/Fabrikam"]],
        _at(8),
        sender=PEOPLE["lee"],
        to=[ME],
        subject="Fwd: Delivery schedule",
        text="Forwarding Nestor's note as an attachment.",
        attachments=[Attachment("Delivery schedule.eml", "message/rfc822", original)],
    )
    logo = docbuild.png(64, 32, 7)
    w.file(
        ["INBOX", "CATEGORY_SOCIAL", ids["Family"], "STARRED"],
        _at(2, 18),
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
        _at(12),
        sender=PEOPLE["zoe"],
        to=[ME],
        subject="Scan of the boarding passes",
        text="The scan is large, sorry.",
        attachments=[Attachment("boarding-passes.png", "image/png", big)],
    )


def docbuild_type(kind: str) -> str:
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
        _at(1),
        sender=PEOPLE["wei"],
        to=[ME],
        subject="季度报告：请审阅",
        text="罗宾你好，\n\n附上第四季度报告的摘要，请在周五前审阅。\n\n王伟",
    )
    w.file(
        inbox,
        _at(4),
        sender=PEOPLE["yuki"],
        to=[ME],
        subject="会議の議事録（11月）",
        text="お疲れ様です。11月の会議の議事録をお送りします。よろしくお願いします。",
    )
    w.file(
        inbox,
        _at(7),
        sender=PEOPLE["minji"],
        to=[ME],
        subject="다음 주 회의 일정",
        text="안녕하세요, 다음 주 회의는 화요일 오후 3시입니다.",
    )
    w.file(
        [*inbox, "UNREAD"],
        _at(2),
        sender=PEOPLE["layla"],
        to=[ME],
        subject="تقرير الميزانية للربع الرابع",
        html='<div dir="rtl"><p>مرحبا روبن، مرفق ملخص <b>تقرير الميزانية</b>.</p></div>',
    )
    w.file(
        inbox,
        _at(9),
        sender=PEOPLE["noa"],
        to=[ME],
        subject="סיכום הפגישה",
        text="שלום רובין, מצורף סיכום הפגישה מיום שלישי.",
    )
    w.file(
        [*inbox, "STARRED"],
        _at(3, 17),
        sender=PEOPLE["megan"],
        to=[ME],
        subject="🎉 Launch party on Friday 🚀",
        text="Cake 🍰, music 🎶 and a demo. Everyone is welcome! 🙌",
    )
    w.file(
        inbox,
        _at(11),
        sender=PEOPLE["zoe"],
        to=[ME],
        subject="Café résumé — Zoë's notes",
        text="The café near the office has a new menu; my résumé is up to date, naïve as ever.",
    )
    w.file(
        [*inbox, ids["Finance"]],
        _at(10),
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
            _at(14 + n * 3),
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
            _at(13 + n * 4),
            sender=PEOPLE["shop"],
            to=[ME],
            subject=f"{30 + n * 10}% off headphones this week",
            html=f"<p>Save <b>{30 + n * 10}%</b> on headphones.</p>",
        )
    w.file(
        ["INBOX", "CATEGORY_SOCIAL", "UNREAD"],
        _at(1, 20),
        sender=PEOPLE["social"],
        to=[ME],
        subject="Megan Bowen tagged you in a photo",
        text="See the photo on Friendbook.",
    )
    w.file(
        ["INBOX", "CATEGORY_UPDATES", ids["Receipts/2026"]],
        _at(25),
        sender=PEOPLE["shop"],
        to=[ME],
        subject="Your order 55-1200 has shipped",
        text="Order 55-1200: 1 x USB-C cable. Total 9.90 EUR.",
    )
    w.file(
        ["SPAM", "UNREAD"],
        _at(2, 3),
        sender="Prize Centre <winner@lottery.example>",
        to=[ME],
        subject="You have won 1,000,000 dollars",
        text="Send your bank details to claim the prize.",
    )
    w.file(
        ["SPAM"],
        _at(6, 4),
        sender="Pharmacy <sales@pills.example>",
        to=[ME],
        subject="Cheap meds, no prescription",
        html="<p>Best prices!</p>",
    )
    w.file(
        ["TRASH", "CATEGORY_PROMOTIONS"],
        _at(15),
        sender=PEOPLE["shop"],
        to=[ME],
        subject="Last chance: free shipping",
        text="Free shipping ends tonight.",
    )
    w.file(
        ["TRASH"],
        _at(18),
        sender=PEOPLE["alex"],
        to=[ME],
        subject="Old lunch plan",
        text="Lunch on Tuesday is cancelled.",
    )


def _phishing(w: DemoWriter) -> None:
    payload = b"MZ" + b"\x00" * 62 + b"This program cannot be run in DOS mode.\r\n"
    w.file(
        ["INBOX", "CATEGORY_UPDATES", "UNREAD", "IMPORTANT"],
        _at(0.5, 7),
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


def _sent_and_drafts(w: DemoWriter, ids: dict[str, str], reply_to: Message) -> None:
    box = w.mailbox
    w.file(
        ["SENT"],
        _at(4, 16),
        sender=ME,
        to=[PEOPLE["mum"]],
        subject="Sunday lunch",
        text="Shall we have lunch on Sunday? I can bring dessert.",
    )
    w.file(
        ["SENT", ids["Travel"]],
        _at(16),
        sender=ME,
        to=[PEOPLE["zoe"]],
        subject="Train tickets to Lyon",
        text="I booked the 8:04 train; seats 41 and 42.",
    )
    reply = w.file(
        ["DRAFT"],
        _at(0.2, 8),
        sender=ME,
        to=[PEOPLE["lee"]],
        subject=f"Re: {reply_to.parsed.header('Subject').removeprefix('Re: ')}",
        text="Thanks Lee, I will review it by Friday.",
        parent=reply_to,
    )
    fresh = w.file(
        ["DRAFT"],
        _at(0.1, 8),
        sender=ME,
        to=[PEOPLE["megan"]],
        subject="Ideas for 2027",
        text="Some first thoughts:\n- fewer meetings\n- a team offsite",
    )
    for number, message in enumerate((reply, fresh), start=1):
        draft = Draft(f"r{1_000_000 + number}", message.id)
        box.drafts[draft.id] = draft


def _write_all(box: Mailbox) -> None:
    ids = _labels(box)
    w = DemoWriter(box)
    _long_thread(w, ids["Projects/Contoso"])
    _thread(
        w,
        "Budget sign-off",
        [
            ("nestor", "Can you sign off the budget today?"),
            ("me", "Signed off."),
            ("nestor", "Thanks, received."),
        ],
        19,
        [ids["Finance"]],
    )
    _thread(
        w,
        "Offsite venue",
        [
            ("megan", "Two options: the lake house or the city hotel."),
            ("me", "The lake house, please."),
            ("megan", "Booked!"),
            ("alex", "Is there parking?"),
        ],
        17,
        [ids["Projects"]],
    )
    _thread(
        w,
        "Flight to Lisbon",
        [("zoe", "Found flights on the 12th."), ("me", "Book the morning one.")],
        15,
        [ids["Travel"]],
    )
    _thread(
        w,
        "Dinner on Saturday?",
        [
            ("mum", "Dinner at ours on Saturday?"),
            ("me", "Yes, 7pm?"),
            ("mum", "Perfect, see you then."),
        ],
        9,
        [ids["Family"]],
    )
    review = _thread(
        w,
        "Security review findings",
        [
            ("lee", "The review found two medium issues."),
            ("me", "Can you share the details?"),
            ("lee", "Details are in the tracker, item 88."),
        ],
        7,
        [ids["Projects/Fabrikam"]],
    )
    _thread(
        w,
        "Expense report October",
        [("bank", "Your card was charged 84.00 EUR."), ("me", "Forwarded to accounting.")],
        22,
        [ids["Finance"]],
    )
    _thread(
        w,
        "Printer on floor 3",
        [
            ("alex", "The printer is jammed again."),
            ("me", "IT is on it."),
            ("alex", "Fixed now, thanks."),
        ],
        5,
        [],
    )
    _documents(w, ids)
    _world(w, ids)
    _bulk(w, ids)
    _phishing(w)
    _sent_and_drafts(w, ids, review)


@dataclass(frozen=True)
class _Recipe:
    messages: tuple[tuple[bytes, tuple[str, ...], datetime, tuple[str, Parsed]], ...]
    drafts: tuple[tuple[str, int], ...]
    """(draft id, index into ``messages``)."""


@functools.lru_cache(maxsize=1)
def _recipe() -> _Recipe:
    """The demo written and parsed once per process (MIME is the slow part); nothing in
    it is changed later: a message's labels live in the Message, not in its parse."""
    box = Mailbox(address=DEMO_ADDRESS, now=DEMO_NOW)
    _write_all(box)
    order = list(box.messages)
    return _Recipe(
        tuple(
            (m.raw, tuple(m.label_ids), m.internal_date, (m.id, m.parsed))
            for m in box.messages.values()
        ),
        tuple((d.id, order.index(d.message_id)) for d in box.drafts.values()),
    )


def build_demo_mailbox() -> Mailbox:
    """A fresh demo mailbox (the same bytes, ids and history ids on every call)."""
    box = Mailbox(address=DEMO_ADDRESS, now=DEMO_NOW)
    _labels(box)
    filed = [
        box.add_message(raw, labels, internal=when, known=known)
        for raw, labels, when, known in _recipe().messages
    ]
    for draft_id, index in _recipe().drafts:
        box.drafts[draft_id] = Draft(draft_id, filed[index].id)
    box.forget_history()
    return box
