"""Documents with real text, shared by mail attachments and drive files.

Each factory returns the file's bytes; builders wrap them in ``functools.cache`` so a file
is built the first time a request asks for it.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime

import mfconnector.demo_documents as docbuild
from mfconnector.emulator.seed.corpus import CONTRACT_SECTIONS, HOTEL_TEXT, SENTENCES
from mfconnector.emulator.seed.facts import ME

__all__ = [
    "DOCX",
    "PDF",
    "PNG",
    "PPTX",
    "XLSX",
    "big_scan_png",
    "budget_model_xlsx",
    "budget_review_docx",
    "contract_pdf",
    "hotel_eml",
    "invoice_pdf",
    "launch_deck_pptx",
    "notes_txt",
]

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
PDF = "application/pdf"
PNG = "image/png"


def budget_review_docx() -> bytes:
    return docbuild.docx(
        "Q1 Budget Review",
        [
            "Summary: spending is on plan for the first quarter of 2026.",
            *SENTENCES["budget"],
            "Decision needed: approve the revised headcount plan before the March close.",
        ],
    )


def budget_model_xlsx() -> bytes:
    rows: list[list[str | float | int]] = [["Cost centre", "Q1 plan", "Q1 actual", "Variance"]]
    for n, centre in enumerate(
        ["Retail stores", "Marketing", "Cloud services", "Travel", "Training"]
    ):
        plan = 120_000 + 17_500 * n
        actual = plan + (-1) ** n * 3_250 * (n + 1)
        rows.append([centre, plan, actual, actual - plan])
    assumptions = [["Assumption", "Value"], ["Inflation", "3.1%"], ["Headcount growth", "4 FTE"]]
    return docbuild.xlsx([("Budget 2027", rows), ("Assumptions", assumptions)])


def launch_deck_pptx() -> bytes:
    return docbuild.pptx(
        [
            ("Contoso Launch – kickoff", ["April 14, Redmond campus", "Owner: Megan Bowen"]),
            ("Goals", SENTENCES["launch"][:3]),
            (
                "Timeline",
                ["Press review: March 20", "Partner preview: March 31", "Launch: April 14"],
            ),
            ("Risks", ["Offline sync demo", "Venue capacity", "Legal review of press materials"]),
        ]
    )


def invoice_pdf(number: str, amount: str) -> bytes:
    return docbuild.pdf(
        f"Fabrikam, Inc. - Invoice {number}",
        [
            "Bill to: Contoso Ltd., Accounts Payable, One Microsoft Way, Redmond WA",
            f"Invoice number: {number}",
            "Invoice date: 2026-02-27   Due date: 2026-03-29",
            "Description: consulting services, February 2026",
            f"Total due: {amount}",
            *SENTENCES["invoice"][:3],
        ],
    )


def contract_pdf() -> bytes:
    lines = []
    for number, (title, clauses) in enumerate(CONTRACT_SECTIONS, 1):
        lines.append(f"{number}. {title}")
        lines.extend(f"{number}.{n} {clause}" for n, clause in enumerate(clauses, 1))
    return docbuild.pdf("Master Services Agreement - Contoso and Fabrikam", lines)


def hotel_eml() -> bytes:
    return docbuild.eml(
        sender="Hotel Messe München <reservations@hotel-messe.de>",
        to=[f"{ME[0]} <{ME[1]}>"],
        subject="Reservation confirmed: 14-17 April 2026",
        text=HOTEL_TEXT,
        sent=datetime(2026, 2, 2, 9, 30, tzinfo=UTC),
        message_id="<reservation-4711@hotel-messe.de>",
    )


def notes_txt() -> bytes:
    return ("Meeting notes\n\n" + "\n".join(SENTENCES["meeting"]) + "\n").encode()


@functools.cache
def big_scan_png() -> bytes:
    """3.3 MB of image: over Graph's 3 MB limit for attaching through a plain POST."""
    return docbuild.png(1100, 1000, 7, noise=True)
