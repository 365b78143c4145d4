"""Adele Vance's mailbox: its folders, then each script of messages in a fixed order."""

from __future__ import annotations

import random
from datetime import timedelta

from mfconnector.emulator import ids
from mfconnector.emulator.model import Mailbox
from mfconnector.emulator.seed.adele_folders import (
    international,
    junk_and_deleted,
    long_reads,
    project_mail,
    sent_and_drafts,
)
from mfconnector.emulator.seed.adele_notices import invoices, notices
from mfconnector.emulator.seed.adele_threads import threads
from mfconnector.emulator.seed.documents import XLSX, budget_model_xlsx
from mfconnector.emulator.seed.facts import DEMO_NOW, ME, PEOPLE
from mfconnector.emulator.seed.hostile import add_hostile_html
from mfconnector.emulator.seed.mail_builder import MailBuilder

__all__ = ["build_adele"]


def build_adele(rng: random.Random) -> Mailbox:
    mailbox = Mailbox(
        user_id=ids.guid("user:" + ME[1]),
        display_name=ME[0],
        mail=ME[1],
        upn=ME[1],
        time_zone="Pacific Standard Time",
    )
    b = MailBuilder(mailbox, rng)
    root = b.folder("root", "Top of Information Store", None, "msgfolderroot")
    root.parent_id = ids.folder_id(mailbox.mail + ":ipm-subtree-parent")
    inbox = b.folder("inbox", "Inbox", "msgfolderroot", "inbox")
    receipts = b.folder("receipts", "Receipts", inbox.id)
    newsletters = b.folder("newsletters", "Newsletters", inbox.id)
    archive = b.folder("archive", "Archive", "msgfolderroot", "archive")
    projects = b.folder("projects", "Projects", "msgfolderroot")
    budget = b.folder("budget", "Budget 2027", projects.id)
    launch = b.folder("launch", "Contoso Launch", projects.id)
    sent = b.folder("sentitems", "Sent Items", "msgfolderroot", "sentitems")
    drafts = b.folder("drafts", "Drafts", "msgfolderroot", "drafts")
    deleted = b.folder("deleteditems", "Deleted Items", "msgfolderroot", "deleteditems")
    junk = b.folder("junkemail", "Junk Email", "msgfolderroot", "junkemail")
    b.folder("outbox", "Outbox", "msgfolderroot", "outbox")
    b.folder("conversationhistory", "Conversation History", "msgfolderroot", "conversationhistory")
    for hidden, name in (
        ("recoverableitemsdeletions", "Recoverable Items Deletions"),
        ("searchfolders", "Finder"),
    ):
        b.folder(hidden, name, "msgfolderroot", hidden).is_hidden = True
    p = PEOPLE

    threads(b, inbox, sent, archive, budget, launch)
    invoices(b, inbox, archive)
    notices(b, inbox, newsletters, receipts)
    project_mail(b, budget, launch)
    international(b, inbox)
    sent_and_drafts(b, sent, drafts)
    junk_and_deleted(b, junk, deleted)
    long_reads(b, archive)

    # The newest inbox message: flagged, important, categorised, with a workbook.
    newest = b.add(
        inbox,
        p["lynne"],
        [ME],
        "Budget 2027 – numbers needed by Friday",
        [b.write.paragraph("budget", 3), "Can you send me your team's figures by Friday noon?"],
        received=DEMO_NOW - timedelta(minutes=18),
        is_read=False,
        importance="high",
        flag={
            "flagStatus": "flagged",
            "startDateTime": {"dateTime": "2026-03-06T00:00:00.0000000", "timeZone": "UTC"},
            "dueDateTime": {"dateTime": "2026-03-13T00:00:00.0000000", "timeZone": "UTC"},
        },
        categories=["Finance", "Red category"],
    )
    b.attach(newest, "Budget 2027 model.xlsx", XLSX, budget_model_xlsx)
    add_hostile_html(b, junk)
    return mailbox
