"""The demo's text, read once from ``corpus.json`` (shipped in the package).

Sentence pools per topic (``SENTENCES`` as 0.2 had them, ``MORE_SENTENCES`` with
``{slot}``s that ``prose.Writer`` fills from ``SLOTS``), the people, the Message center
titles, the contract's clauses and a few fixed texts. The order of every list matters: the
generators draw from them in order, so a reordered list changes the demo.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = [
    "ARCHIVE_TOPICS",
    "BUDGET_TOPICS",
    "CONTRACT_SECTIONS",
    "HOTEL_TEXT",
    "LAUNCH_TOPICS",
    "LOG_INCIDENT",
    "MESSAGE_CENTER",
    "MORE_SENTENCES",
    "PEOPLE",
    "QUESTIONS",
    "SENTENCES",
    "SLOTS",
]


def _load() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("corpus.json").read_text(encoding="utf-8")
    found: dict[str, Any] = json.loads(text)
    return found


_CORPUS = _load()

PEOPLE: dict[str, tuple[str, str]] = {
    key: (name, address) for key, (name, address) in _CORPUS["people"].items()
}
"""(display name, address) by key; Contoso staff first, then outside senders."""
SENTENCES: dict[str, list[str]] = _CORPUS["sentences"]
"""The pools as 0.2 had them: documents and long bodies quote them as they stand."""
MORE_SENTENCES: dict[str, list[str]] = _CORPUS["more_sentences"]
"""More sentences per topic, with slots, drawn by ``prose.Writer`` from its own generator:
the demo's bodies differ from message to message, so a search is selective (in 0.2 every
product message said "battery drain"), while the main generator moves exactly as before."""
SLOTS: dict[str, list[str]] = _CORPUS["slots"]
"""Values for each ``{slot}``; ``prose.plain`` takes each slot's last value."""
MESSAGE_CENTER: list[tuple[str, str]] = [(title, code) for title, code in _CORPUS["message_center"]]
"""(title, MC code) of the Microsoft 365 Message center notices."""
QUESTIONS: list[str] = _CORPUS["questions"]
BUDGET_TOPICS: list[str] = _CORPUS["budget_topics"]
LAUNCH_TOPICS: list[str] = _CORPUS["launch_topics"]
ARCHIVE_TOPICS: list[str] = _CORPUS["archive_topics"]
CONTRACT_SECTIONS: list[tuple[str, list[str]]] = [
    (title, clauses) for title, clauses in _CORPUS["contract_sections"]
]
"""The demo MSA: a contract whose clauses differ (0.2 repeated six clauses nine times,
which read like a parser bug), long enough for two PDF pages."""
HOTEL_TEXT: str = _CORPUS["hotel_text"]
LOG_INCIDENT: str = _CORPUS["log_incident"]
"""The end of the demo log, the part a person opens a log for."""
