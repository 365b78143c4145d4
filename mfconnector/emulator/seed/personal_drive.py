"""Adele's OneDrive: its folders and its Office and PDF documents; the text files, the
long log and the standup notes come from ``personal_files``, in a fixed order (each item's
dates follow its place in that order)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import mfconnector.demo_documents as docbuild
from mfconnector.emulator import ids
from mfconnector.emulator.model import Drive, DriveItem
from mfconnector.emulator.seed.corpus import SENTENCES
from mfconnector.emulator.seed.documents import (
    DOCX,
    PDF,
    PPTX,
    XLSX,
    budget_model_xlsx,
    budget_review_docx,
    contract_pdf,
    launch_deck_pptx,
)
from mfconnector.emulator.seed.drive_builder import DriveBuilder
from mfconnector.emulator.seed.facts import DEMO_NOW, ME
from mfconnector.emulator.seed.personal_files import standup_notes, text_files
from mfconnector.emulator.seed.prose import plain

__all__ = ["build_personal_drive"]


def build_personal_drive() -> Drive:
    drive = Drive(
        id=ids.drive_id("adelev"),
        name="OneDrive",
        drive_type="business",
        owner=ME,
        owner_id=ids.guid("user:" + ME[1]),
        web_root="https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/Documents",
        download_root="https://contoso-my.sharepoint.com/personal/adelev_contoso_onmicrosoft_com/_layouts/15/download.aspx",
    )
    root = DriveItem(
        id=ids.drive_item_id("adelev:root"),
        name="root",
        parent_id=None,
        created=datetime(2025, 6, 1, 9, 0, tzinfo=UTC),
        modified=DEMO_NOW - timedelta(hours=2),
        author=ME,
        is_folder=True,
        guid=ids.guid("adelev:root"),
    )
    drive.add(root)
    drive.root_id = root.id
    d = DriveBuilder(drive, "adelev")
    for name in (
        "Documents",
        "Projects",
        "Photos",
        "Notebooks",
        "Recordings",
        "Attachments",
        "Microsoft Teams Chat Files",
        "Archive 2025",
    ):
        d.folder("/" + name)
    d.folder("/Documents/Reports")
    d.folder("/Documents/Reports/2026")
    d.folder("/Projects/Contoso Launch")
    d.folder("/Projects/Budget 2027")

    _office_documents(d)
    text_files(d)
    standup_notes(d)
    return drive


def _office_documents(d: DriveBuilder) -> None:
    budget_text = " ".join(SENTENCES["budget"])
    launch_text = " ".join(SENTENCES["launch"])
    budget_text = " ".join(SENTENCES["budget"])
    launch_text = " ".join(SENTENCES["launch"])
    d.file(
        "/Documents/Q1 Budget Review.docx",
        DOCX,
        budget_review_docx,
        text="Q1 Budget Review " + budget_text,
    )
    d.file(
        "/Budget 2027 draft.xlsx",
        XLSX,
        budget_model_xlsx,
        text="Budget 2027 Retail stores Marketing Cloud services Travel Training Inflation "
        "Headcount growth",
    )
    d.file(
        "/Projects/Budget 2027/Budget 2027 model.xlsx",
        XLSX,
        budget_model_xlsx,
        text="Budget 2027 Retail stores Marketing Cloud services Travel Training",
    )
    d.file(
        "/Contoso Launch plan.docx",
        DOCX,
        functools.partial(docbuild.docx, "Contoso Launch plan", SENTENCES["launch"]),
        text="Contoso Launch plan " + launch_text,
    )
    d.file(
        "/Projects/Contoso Launch/Launch deck.pptx",
        PPTX,
        launch_deck_pptx,
        text="Contoso Launch kickoff Goals Timeline Risks " + " ".join(SENTENCES["launch"][:3]),
    )
    d.file(
        "/Projects/Contoso Launch/Press release draft.docx",
        DOCX,
        functools.partial(docbuild.docx, "Press release draft", SENTENCES["launch"][1:5]),
        text="Press release draft " + " ".join(SENTENCES["launch"][1:5]),
    )
    d.file(
        "/Documents/Contract – Fabrikam MSA.pdf",
        PDF,
        contract_pdf,
        text="Master Services Agreement Contoso Fabrikam consulting services term fees "
        "confidentiality termination governing law",
    )
    d.file(
        "/Résumé Adèle Vance.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Adele Vance - Resume",
            [
                "Retail Manager, Contoso (2021 - today)",
                "Led the loyalty programme to 200,000 members.",
                "Education: University of Washington",
            ],
        ),
        text="Adele Vance Resume Retail Manager Contoso loyalty programme University of Washington",
    )
    d.file(
        "/Documents/Quarterly business review.pptx",
        PPTX,
        functools.partial(
            docbuild.pptx,
            [
                ("Quarterly business review", ["Q4 2025 results"]),
                ("Highlights", plain(SENTENCES["product"][:3])),
            ],
        ),
        text="Quarterly business review Q4 2025 results Highlights "
        + " ".join(plain(SENTENCES["product"][:3])),
    )
    d.file(
        "/Projects/Budget 2027/Cost centres.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Cost centres 2027",
            ["Retail stores: 120,000", "Marketing: 137,500", "Cloud services: 155,000"],
        ),
        text="Cost centres 2027 Retail stores Marketing Cloud services",
    )
    d.file(
        "/Documents/Reports/Monthly report – January 2026.docx",
        DOCX,
        functools.partial(
            docbuild.docx, "Monthly report - January 2026", plain(SENTENCES["product"])
        ),
        text="Monthly report January 2026 " + " ".join(plain(SENTENCES["product"])),
    )
    d.file(
        "/Documents/Reports/Sales report Q4 2025.xlsx",
        XLSX,
        functools.partial(
            docbuild.xlsx,
            [("Sales", [["Region", "Revenue"], ["Northwest", 1_250_000], ["Southwest", 980_000]])],
        ),
        text="Sales Region Revenue Northwest Southwest",
    )
