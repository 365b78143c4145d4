"""The Marketing site's SharePoint document library, for shared-library reads."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import mfconnector.demo_documents as docbuild
from mfconnector.emulator import ids
from mfconnector.emulator.model import Drive, DriveItem, Recipient
from mfconnector.emulator.seed.corpus import SENTENCES
from mfconnector.emulator.seed.documents import DOCX, PDF, PNG, XLSX
from mfconnector.emulator.seed.drive_builder import DriveBuilder, text_file
from mfconnector.emulator.seed.facts import DEMO_NOW, DOMAIN, PEOPLE

__all__ = ["build_marketing_drive"]


def build_marketing_drive() -> Drive:
    """A SharePoint document library, for shared-library reads."""
    owner: Recipient = ("Marketing Team", f"marketing@{DOMAIN}")
    drive = Drive(
        id=ids.drive_id("marketing"),
        name="Documents",
        drive_type="documentLibrary",
        owner=owner,
        owner_id=ids.guid("group:marketing"),
        web_root="https://contoso.sharepoint.com/sites/Marketing/Shared%20Documents",
        download_root="https://contoso.sharepoint.com/sites/Marketing/_layouts/15/download.aspx",
    )
    root = DriveItem(
        id=ids.drive_item_id("marketing:root"),
        name="root",
        parent_id=None,
        created=datetime(2025, 1, 15, 9, 0, tzinfo=UTC),
        modified=DEMO_NOW - timedelta(days=1),
        author=PEOPLE["megan"],
        is_folder=True,
        guid=ids.guid("marketing:root"),
    )
    drive.add(root)
    drive.root_id = root.id
    d = DriveBuilder(drive, "marketing")
    d.folder("/Press kit")
    d.folder("/Campaigns")
    d.file(
        "/Brand guidelines.pdf",
        PDF,
        functools.partial(
            docbuild.pdf,
            "Contoso brand guidelines",
            ["Use the Contoso blue for headlines.", "Logos need clear space on every side."],
        ),
        text="Contoso brand guidelines Contoso blue headlines logos clear space",
        author=PEOPLE["megan"],
    )
    d.file(
        "/Campaign calendar.xlsx",
        XLSX,
        functools.partial(
            docbuild.xlsx,
            [
                (
                    "Calendar",
                    [
                        ["Campaign", "Start"],
                        ["Spring launch", "2026-04-14"],
                        ["Summer sale", "2026-06-20"],
                    ],
                )
            ],
        ),
        text="Campaign calendar Spring launch Summer sale",
        author=PEOPLE["megan"],
    )
    d.file(
        "/Press kit/Press release – Contoso Launch.docx",
        DOCX,
        functools.partial(docbuild.docx, "Press release - Contoso Launch", SENTENCES["launch"][:4]),
        text="Press release Contoso Launch " + " ".join(SENTENCES["launch"][:4]),
        author=PEOPLE["miriam"],
    )
    d.file(
        "/Press kit/Product photos.png",
        PNG,
        functools.partial(docbuild.png, 300, 200, 31),
        author=PEOPLE["diego"],
    )
    for n, name in enumerate(["Spring launch brief.md", "Social posts.txt", "Influencer list.csv"]):
        content = f"{name}\n\n" + " ".join(SENTENCES["launch"][n : n + 3]) + "\n"
        data, body = text_file(content)
        d.file(f"/Campaigns/{name}", "text/plain", data, text=body, author=PEOPLE["megan"])
    return drive
