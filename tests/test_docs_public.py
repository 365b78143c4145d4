"""Issue 22 §6: the shipped documentation speaks of the product only.

A clone of the repository has no ``shared/`` folder and no "seed" projects: 0.2's
docs/TOOLS.md, EMULATOR.md and FIXTURES.md pointed readers at ``shared/reference/…`` and
``shared/graph-samples/`` and spoke of "the seed" and "the second seed". Sources the docs
cite must be public (Microsoft Learn, RFCs, the MCP specification).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "bench").glob("*.md")]
)
NOT_IN_A_CLONE = [
    re.compile(r"(?<![\w.-])shared/[\w.-]"),
    re.compile(r"graph-samples"),
    re.compile(r"\b(the|second|first|a) seed\b|\bseed's\b|\bseed operation", re.IGNORECASE),
]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shipped_docs_cite_nothing_a_clone_lacks(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}"
        for pattern in NOT_IN_A_CLONE
        for match in pattern.finditer(text)
    ]
    assert found == [], f"{path.name} points outside the product: {found}"


def test_the_pattern_catches_what_0_2_shipped() -> None:
    """The check itself: 0.2's own wording is caught (so the test above can fail)."""
    for sample in (
        "digested in `shared/reference/wave2-operations.md` §1.1",
        "the shapes in `shared/graph-samples/`.",
        "The second seed's mail connector",
        "| seed operation | here |",
    ):
        assert any(p.search(sample) for p in NOT_IN_A_CLONE), sample
    assert not any(p.search("emulator/seed.py builds the mailbox") for p in NOT_IN_A_CLONE)


def test_tools_md_has_no_operation_row_that_0_2_contradicts() -> None:
    """0.2's table said triage, conversation and batch reads were missing; 0.2 had them."""
    text = (ROOT / "docs" / "TOOLS.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): line
        for line in text.splitlines()
        if line.startswith("| `mail_query ")
    }
    assert "triage: true" in rows["`mail_query triage`"]
    assert "thread_of" in rows["`mail_query conversation`"]
    assert "message_ids" in rows["`mail_query read_many`"]
    assert "mail_attachment" in rows["`mail_query attachment`"]
    assert (
        "no header-thread walk" not in text and "per message" not in rows["`mail_query read_many`"]
    )
