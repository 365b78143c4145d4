"""Issue 16 section 5: names that hide bidi, invisible or control characters are flagged.

Through the real server on the demo mailbox (its phishing mail in Junk carries
``INV-2026-0877_\\u202efdp.scr``), and as a property of the one shaping pass.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.hidden_names import NAME_KEYS, with_name_warnings
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.visible import BIDI_CONTROLS
from tests.support.harness import rows
from tests.tools.test_reads_demo import demo

PHISHING_ATTACHMENT = {
    "kind": "invisible",
    "field": "attachments[0].name",
    "code_points": ["U+202E"],
    "shown_as": "INV-2026-0877_<U+202E>fdp.scr",
    "true_extension": "scr",
}


async def _phishing_id(client: Any) -> str:
    junk = await client.data("mail_list", {"folder": "junkemail", "limit": 50})
    assert "warnings" not in junk  # plain subjects and senders: nothing to say
    (message,) = [m for m in rows(junk) if m.get("subject", "").startswith("Action required")]
    return str(message["id"])


async def test_the_demo_phishing_attachment_is_flagged_in_mail_read_and_mail_attachment() -> None:
    async with demo() as client:
        message_id = await _phishing_id(client)
        read = await client.call("mail_read", {"message_id": message_id})
        listed = await client.call("mail_attachment", {"message_id": message_id})
        batch = await client.data("mail_read", {"message_ids": [message_id]})
        plain = await client.data("mail_read", {"message_id": (await _first_inbox(client))})
    for result in (read, listed):
        # the model reads the text block: the warning is in it, as in structuredContent
        assert json.loads(result["content"][0]["text"])["warnings"] == [PHISHING_ATTACHMENT]
        assert result["structuredContent"]["warnings"] == [PHISHING_ATTACHMENT]
    (warning,) = batch["warnings"]
    assert warning["field"].endswith("attachments[0].name")
    assert warning["code_points"] == ["U+202E"] and warning["true_extension"] == "scr"
    assert "warnings" not in plain


async def _first_inbox(client: Any) -> str:
    inbox = await client.data("mail_list", {"limit": 1})
    return str(rows(inbox)[0]["id"])


# --- the shaping pass ----------------------------------------------------------------------

HIDDEN = [*sorted(BIDI_CONTROLS), "\u200b", "\x00", "\x1b", "\u2028", "\ufeff", "\U000e0041"]
plain_names = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=12
)


@st.composite
def tainted(draw: st.DrawFn) -> tuple[str, str]:
    """A name with one hidden character put somewhere in it, and that code point."""
    name = draw(plain_names)
    hidden = draw(st.sampled_from(HIDDEN))
    at = draw(st.integers(0, len(name)))
    return name[:at] + hidden + name[at:], f"U+{ord(hidden):04X}"


@given(
    st.lists(st.tuples(plain_names, st.booleans()), min_size=1, max_size=6),
    st.data(),
)
def test_every_tainted_name_gets_one_warning_that_points_at_it(
    names: list[tuple[str, bool]], data: st.DataObject
) -> None:
    attachments, expected = [], {}
    for index, (name, taint) in enumerate(names):
        if taint:
            name, code_point = data.draw(tainted())
            expected[f"attachments[{index}].name"] = (name, code_point)
        attachments.append({"name": name + ".pdf", "body": "line one\r\nline two\u202e"})
    result = with_name_warnings({"attachments": attachments}, max_warnings=100)
    warnings = result.get("warnings", [])
    assert {w["field"] for w in warnings} == set(expected)
    for warning in warnings:
        name, code_point = expected[warning["field"]]
        assert warning["code_points"] == [code_point]
        assert (
            warning["shown_as"]
            == name.replace(chr(int(code_point[2:], 16)), f"<{code_point}>") + ".pdf"
        )
        assert warning["true_extension"] == "pdf"
    assert result["attachments"] == attachments  # the names themselves are left as they are


def test_a_compact_table_is_read_by_its_columns() -> None:
    table = {
        "columns": ["id", "subject", "from"],
        "messages": [["a", "fine", "x <x@y>"], ["b", "Re: \u2067hi", "Eve \u200b <e@v>"]],
    }
    fields = [w["field"] for w in with_name_warnings(table, 10)["warnings"]]
    assert fields == ["messages[1].subject", "messages[1].from"]


def test_only_names_and_addresses_are_scanned() -> None:
    """Bodies keep their line breaks; ids and URLs are not names."""
    result = {"message": {"body": "a\r\nb\u202e", "id": "\u202e", "webUrl": "x\u200b"}}
    assert with_name_warnings(result, 10) is result
    assert {"name", "subject", "from", "to", "displayName", "address"} <= NAME_KEYS


@pytest.mark.parametrize("count", [19, 20, 21])
def test_name_warnings_limit_at_l_minus_1_l_and_l_plus_1(count: int) -> None:
    limit = DEFAULT_LIMITS.name_warnings
    assert limit == 20
    items = [{"name": f"f{n}\u202egpj.exe"} for n in range(count)]
    result = with_name_warnings({"items": items}, limit)
    assert len(result["warnings"]) == min(count, limit)
    assert result.get("warnings_omitted", 0) == max(count - limit, 0)
    assert result["warnings"][0]["true_extension"] == "exe"
