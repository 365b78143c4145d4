"""Invisible and bidi characters are found, shown and never hide a file's true extension."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mfconnector.visible import BIDI_CONTROLS, find_hidden, make_visible, true_extension

PHISHING_NAME = "INV-2026-0877_\u202efdp.scr"


def test_the_demo_phishing_name_is_flagged_with_its_true_extension() -> None:
    hidden = find_hidden(PHISHING_NAME)
    assert hidden is not None
    assert hidden.code_points == ("U+202E",)
    assert hidden.visible == "INV-2026-0877_<U+202E>fdp.scr"
    assert true_extension(PHISHING_NAME) == "scr"


def test_ordinary_international_text_is_not_flagged() -> None:
    for text in (
        "Réunion",
        "🎉 Launch party",
        "日本語の件名",
        "שלום עולם",
        "👨‍👩‍👧 family",
        "a\u00a0b",
    ):
        assert find_hidden(text) is None, text


def test_controls_and_zero_width_marks_are_flagged() -> None:
    for text, point in (("a\x00b", "U+0000"), ("a\r\nb", "U+000D"), ("pay\u200bpal", "U+200B")):
        hidden = find_hidden(text)
        assert hidden is not None and point in hidden.code_points


@given(st.text(max_size=40), st.sampled_from(sorted(BIDI_CONTROLS)), st.text(max_size=40))
def test_any_bidi_control_anywhere_is_flagged_and_shown(
    before: str, control: str, after: str
) -> None:
    hidden = find_hidden(before + control + after)
    assert hidden is not None
    assert f"U+{ord(control):04X}" in hidden.code_points
    assert control not in hidden.visible
    assert make_visible(before + control + after) == hidden.visible


@given(st.text(max_size=60))
def test_the_quick_check_agrees_with_the_character_by_character_rules(text: str) -> None:
    """``find_hidden`` skips its per-character loop for text Python calls printable; what
    it finds must be exactly what the rules find one character at a time."""
    from mfconnector.visible import _hidden_positions

    found = find_hidden(text)
    by_rule = _hidden_positions(text)
    assert (found is None) == (not by_rule)
    if found is not None:
        assert found.code_points == tuple(dict.fromkeys(f"U+{ord(text[i]):04X}" for i in by_rule))
