"""The junk message whose HTML would cost an HTML5 tree builder gigabytes."""

from __future__ import annotations

from datetime import timedelta

from mfconnector.emulator.model import Folder
from mfconnector.emulator.seed.facts import DEMO_NOW, ME, PEOPLE
from mfconnector.emulator.seed.mail_builder import MailBuilder

__all__ = ["HOSTILE_HTML", "HOSTILE_TEXT", "add_hostile_html"]

HOSTILE_HTML = "<div>" + "".join(f"<b id={n}>" for n in range(250)) + "</div>" + "<p>x" * 60_000
"""243 KB that an HTML5 tree builder turns into 15 million nodes: each ``<p>`` re-opens the
250 formatting elements (0.2.0 took 5.6 GB converting it)."""
HOSTILE_TEXT = "x\r\n" * 60_000
"""Its text as the emulator renders it (``htmltext.html_to_text``, checked by a test), set
up front so the first search or preview does not spend seconds converting it."""


def add_hostile_html(b: MailBuilder, junk: Folder) -> None:
    """Added last, with a fixed date, so no other message's id or date moves."""
    message = b.add(
        junk,
        PEOPLE["lottery"],
        [ME],
        "Your parcel is waiting",
        html=HOSTILE_HTML,
        received=DEMO_NOW - timedelta(days=2, hours=3),
        inference="other",
        keeps_html=True,
    )
    message.preset_texts(HOSTILE_TEXT, HOSTILE_TEXT)
