"""Adele's project folders, international mail, Sent Items and Drafts, Junk and Deleted
Items, and the long reads at the 10,000-character limit."""

from __future__ import annotations

from mfconnector.emulator.model import Folder, Recipient
from mfconnector.emulator.seed.corpus import ARCHIVE_TOPICS, BUDGET_TOPICS, LAUNCH_TOPICS, SENTENCES
from mfconnector.emulator.seed.documents import (
    PDF,
    PPTX,
    XLSX,
    budget_model_xlsx,
    contract_pdf,
    launch_deck_pptx,
)
from mfconnector.emulator.seed.facts import DOMAIN, ME, PEOPLE, STAFF
from mfconnector.emulator.seed.mail_builder import MailBuilder
from mfconnector.emulator.seed.prose import html_page, plain

__all__ = ["international", "junk_and_deleted", "long_reads", "project_mail", "sent_and_drafts"]


def project_mail(b: MailBuilder, budget: Folder, launch: Folder) -> None:
    for n in range(24):
        sender = PEOPLE[STAFF[n % len(STAFF)]]
        message = b.add(
            budget,
            sender,
            [ME, PEOPLE["lynne"]],
            f"Budget 2027: {BUDGET_TOPICS[n % 6]} update {n + 1}",
            [b.write.paragraph("budget", 3)],
            is_read=n % 5 != 0,
            flag={"flagStatus": "complete"} if n % 7 == 0 else {"flagStatus": "notFlagged"},
            categories=["Finance"],
        )
        if n == 2:
            b.attach(message, "Budget 2027 model.xlsx", XLSX, budget_model_xlsx)
    for n in range(24):
        sender = PEOPLE[STAFF[(n * 3) % len(STAFF)]]
        message = b.add(
            launch,
            sender,
            [ME, PEOPLE["megan"]],
            f"Launch: {LAUNCH_TOPICS[n % 6]} status {n + 1}",
            [b.write.paragraph("launch", 3)],
            is_read=n % 4 != 0,
            importance="high" if n % 9 == 0 else "normal",
            categories=["Project Launch"],
            flag={"flagStatus": "flagged"} if n % 8 == 1 else {"flagStatus": "notFlagged"},
        )
        if n == 5:
            b.attach(message, "Launch deck.pptx", PPTX, launch_deck_pptx)
            b.attach(message, "Launch plan (OneDrive link)", None, None, kind="reference", size=0)


def international(b: MailBuilder, inbox: Folder) -> None:
    p = PEOPLE
    b.add(
        inbox,
        p["hanako"],
        [ME],
        "日本語の件名：東京オフィスの会議について",
        [
            "アデルさん、来週の東京オフィスでの会議の件です。",
            "議題は新製品の発売計画と予算です。よろしくお願いします。",
        ],
        is_read=False,
    )
    b.add(
        inbox,
        p["layla"],
        [ME],
        "اجتماع الميزانية في دبي",
        ["مرحبا أديل، نود تأكيد موعد اجتماع الميزانية في دبي.", "شكرا لك وأطيب التحيات."],
    )
    b.add(
        inbox,
        p["noa"],
        [ME],
        "פגישת השקה – Contoso Launch",
        ["שלום Adele, מצורף סיכום הפגישה על ה-launch.", "תודה רבה!"],
    )
    b.add(
        inbox,
        p["joerg"],
        [ME],
        "Angebot für den Workshop in München",
        [
            "Hallo Adele, das Angebot für den Workshop beträgt 18.400 €.",
            "Viele Grüße aus München, Jörg Müller",
        ],
    )
    b.add(
        inbox,
        p["camille"],
        [ME],
        "Réunion de lancement à Paris",
        [
            "Bonjour Adèle, la réunion de lancement aura lieu à Paris le 3 avril.",
            "Bien à vous, Camille",
        ],
    )
    b.add(
        inbox,
        p["megan"],
        [ME],
        "🎉 Launch party photos 😊",
        ["The team 👩‍💻👨‍👩‍👧 had a great time 🎉🎈 — photos are in the shared album 📸."],
        is_read=False,
    )
    b.add(
        inbox,
        p["customer3"],
        [ME],
        "合作伙伴会议 – partner meeting in Shanghai",
        ["您好，我们很高兴邀请您参加上海的合作伙伴会议。", "Best regards, Wei Chen"],
    )


def sent_and_drafts(b: MailBuilder, sent: Folder, drafts: Folder) -> None:
    for n in range(18):
        to = PEOPLE[STAFF[(n * 5) % len(STAFF)]]
        topic = ["budget", "launch", "meeting", "hiring", "product"][n % 5]
        b.add(
            sent,
            ME,
            [to],
            f"{topic.title()} follow-up for {to[0].split(' ')[0]}",
            [f"Hi {to[0].split(' ')[0]},", b.write.paragraph(topic, 2), "Best,\r\nAdele"],
        )
    drafts_plan: list[tuple[str, list[Recipient]]] = [
        ("Draft: launch thank-you note", [PEOPLE["megan"], PEOPLE["diego"]]),
        ("Budget questions for Lynne", [PEOPLE["lynne"]]),
        ("", []),
        ("Draft: reply to Fabrikam about the MSA", [PEOPLE["joerg"]]),
    ]
    for n, (subject, recipients) in enumerate(drafts_plan):
        message = b.add(
            drafts,
            ME,
            recipients,
            subject,
            [b.write.paragraph("launch" if n % 2 == 0 else "budget", 2)] if subject else [],
            is_draft=True,
        )
        message.sent = None


def junk_and_deleted(b: MailBuilder, junk: Folder, deleted: Folder) -> None:
    p = PEOPLE
    phishing = b.add(
        junk,
        p["phish"],
        [ME],
        "Action required: your password expires today",
        [
            "Your password expires today. Verify your account at "
            "https://micros0ft-alerts.com/verify now."
        ],
        is_read=False,
        inference="other",
    )
    b.attach(
        phishing,
        "INV-2026-0877_\u202efdp.scr",
        "application/octet-stream",
        lambda: b"MZ" + bytes(510),
    )
    for n in range(4):
        b.add(
            junk,
            p["lottery"],
            [ME],
            f"Congratulations! You have won prize #{9000 + n}",
            ["Send your bank details to claim your prize immediately."],
            inference="other",
        )
    for n in range(8):
        sender = PEOPLE[STAFF[(n * 7) % len(STAFF)]]
        b.add(
            deleted,
            sender,
            [ME],
            f"Lunch order for {['Monday', 'Tuesday', 'Wednesday', 'Thursday'][n % 4]}",
            ["Who is in for lunch? The usual place at noon."],
        )


def long_reads(b: MailBuilder, archive: Folder) -> None:
    """Bodies at the 10,000-character read limit, and a very long HTML thread."""
    p = PEOPLE
    words = " ".join(plain(SENTENCES["product"]) + SENTENCES["meeting"]) + " "
    for length in (9_999, 10_000, 10_001):
        text = (words * (length // len(words) + 1))[:length]
        b.add(
            archive,
            p["pradeep"],
            [ME],
            f"Store audit transcript ({length:,} characters)",
            text=text,
        )
    prefix = (words * 20)[: 10_000 - 1]
    b.add(
        archive,
        p["megan"],
        [ME],
        "Launch retrospective – full notes 🎉",
        text=prefix + "🎉😊" + " Thanks all for a great launch." * 8,
    )
    contract = html_page([f"Clause {n}: {s}" for n, s in enumerate(SENTENCES["invoice"] * 40, 1)])
    message = b.add(
        archive, p["joerg"], [ME], "Master Services Agreement – Contoso and Fabrikam", html=contract
    )
    b.attach(message, "Fabrikam MSA.pdf", PDF, contract_pdf)
    b.add(
        archive,
        p["isaiah"],
        [
            *(PEOPLE[s] for s in STAFF),
            *(("Store " + str(n), f"store{n}@{DOMAIN}") for n in range(50)),
        ],
        "All stores: spring opening hours",
        ["Spring opening hours start on March 20 for every store."],
    )
    for n in range(22):
        sender = PEOPLE[STAFF[(n * 11) % len(STAFF)]]
        b.add(
            archive,
            sender,
            [ME],
            f"Archived: {ARCHIVE_TOPICS[n % 5]} report week {n + 1}",
            [b.write.paragraph("product", 3)],
        )
