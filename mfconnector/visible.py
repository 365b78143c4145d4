"""Make invisible characters visible: bidi controls, zero-width marks and C0/C1 controls.

Pure functions over untrusted text. A name such as ``INV_\\u202efdp.scr`` reads
"INV_rcs.pdf" on screen; the person and the model must see what is really there. Both the
read tools (names, addresses and subjects the model is shown) and the acting tools (what the
person confirms) use the same rules, so what is flagged on the way in is refused or shown
the same way on the way out.

Sources: Unicode Standard Annex #9 (bidi controls), UTS #39 (look-alikes and default
ignorables), and the ``Cc``/``Cf`` general categories of the Unicode database.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = [
    "BIDI_CONTROLS",
    "Hidden",
    "find_hidden",
    "make_visible",
    "true_extension",
]

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""UAX #9 explicit directional formatting characters (embeddings, overrides, isolates, marks)."""

INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Hangul fillers and the Braille blank: default-ignorable or blank, yet not in ``Cf``."""

ALLOWED_WHITESPACE = frozenset(" \u00a0")
"""Plain spaces are ordinary text; tabs and line breaks in a name are not."""


@dataclass(frozen=True, slots=True)
class Hidden:
    """What was found in one field: the code points (``U+202E`` form) and the text made visible."""

    code_points: tuple[str, ...]
    visible: str

    def as_warning(self, field: str) -> dict[str, object]:
        """The warning entry a result carries, in the one key style the server writes (the
        same ``kind`` whether the read tools or a draft's preview found it)."""
        return {
            "kind": "invisible",
            "field": field,
            "code_points": list(self.code_points),
            "shown_as": self.visible,
        }


def _is_hidden(char: str) -> bool:
    if char in ALLOWED_WHITESPACE:
        return False
    if char in BIDI_CONTROLS or char in INVISIBLE_EXTRA:
        return True
    category = unicodedata.category(char)
    # Cc: C0/C1 controls (NUL, CR, LF, ESC); Cf: format characters (ZWSP, ZWJ, soft hyphen,
    # BOM, tag characters); Zl/Zp: line and paragraph separators; Co/Cn: private use and
    # unassigned code points, which no font shows reliably.
    return category in {"Cc", "Cf", "Zl", "Zp", "Co", "Cn"} or category == "Zs"


def _code_point(char: str) -> str:
    return f"U+{ord(char):04X}"


ZERO_WIDTH_JOINER = "\u200d"
EMOJI_NEIGHBOURS = frozenset({"So", "Sk", "Mn"})
"""A joiner between two emoji (a family, a flag) is how emoji are spelled, not a trick."""


def _hidden_positions(text: str) -> list[int]:
    hidden = []
    for index, char in enumerate(text):
        if not _is_hidden(char):
            continue
        if char == ZERO_WIDTH_JOINER and 0 < index < len(text) - 1:
            before = unicodedata.category(text[index - 1])
            after = unicodedata.category(text[index + 1])
            if before in EMOJI_NEIGHBOURS and after in EMOJI_NEIGHBOURS:
                continue
        hidden.append(index)
    return hidden


def _plainly_visible(text: str) -> bool:
    """True when ``text`` holds nothing hidden, decided in C: ``str.isprintable`` is False
    for every ``Cc``, ``Cf``, ``Co``, ``Cn``, ``Zl``, ``Zp`` and ``Zs`` character but the
    ASCII space (the bidi controls are ``Cf``), so only the few printable invisibles need
    their own look. An accented or CJK subject then costs no Python loop per character."""
    return text.isprintable() and not any(char in text for char in INVISIBLE_EXTRA)


def make_visible(text: str) -> str:
    """The text with every hidden character written as ``<U+XXXX>`` where it stands."""
    if _plainly_visible(text):
        return text
    positions = set(_hidden_positions(text))
    return "".join(f"<{_code_point(c)}>" if i in positions else c for i, c in enumerate(text))


def find_hidden(text: str) -> Hidden | None:
    """The hidden characters in ``text`` (each code point once, in order), or None."""
    if _plainly_visible(text):
        return None
    seen: dict[str, None] = {}
    for index in _hidden_positions(text):
        seen.setdefault(_code_point(text[index]), None)
    if not seen:
        return None
    return Hidden(code_points=tuple(seen), visible=make_visible(text))


def true_extension(name: str) -> str:
    """The extension a file system sees: after the last dot, hidden characters removed.

    ``INV_\\u202efdp.scr`` displays as "INV_rcs.pdf" but is a ``.scr`` file.
    """
    cleaned = "".join(c for c in name if not _is_hidden(c))
    _, dot, extension = cleaned.rpartition(".")
    return extension.lower() if dot and extension and "/" not in extension else ""
