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
from datetime import datetime

from mfconnector.gmail_emulator.demo_build import DemoWriter
from mfconnector.gmail_emulator.demo_cast import (
    DEMO_ADDRESS,
    DEMO_NOW,
    PHISHING_FILENAME,
    USER_LABELS,
)
from mfconnector.gmail_emulator.demo_singles import write_singles
from mfconnector.gmail_emulator.demo_threads import write_sent_and_drafts, write_threads
from mfconnector.gmail_emulator.mime import Parsed
from mfconnector.gmail_emulator.store import Draft, Mailbox

__all__ = ["DEMO_ADDRESS", "DEMO_NOW", "PHISHING_FILENAME", "build_demo_mailbox"]


def _labels(box: Mailbox) -> dict[str, str]:
    """The user labels, created in a fixed order so that their ids are the same each time."""
    ids = {}
    for name, color in USER_LABELS:
        label = box.add_user_label(name, message_list_visibility="show")
        label.label_list_visibility = "labelShow"
        label.color = color
        ids[name] = label.id
    return ids


def _write_all(box: Mailbox) -> None:
    ids = _labels(box)
    w = DemoWriter(box)
    review = write_threads(w, ids)
    write_singles(w, ids)
    write_sent_and_drafts(w, ids, review)


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
