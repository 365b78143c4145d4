"""HTML to plain text the way Outlook's ``Prefer: outlook.body-content-type="text"`` does it.

Deliberately not the connector's own converter (``mfconnector.textconv``): the emulator
plays the server, and a test that compared the connector's conversion with itself would
prove nothing. Outlook drops ``head``, ``style`` and ``script``, writes block boundaries
and ``<br>`` as CRLF, keeps a link's text followed by its target in angle brackets
(``Reset<https://example.org/reset?token=...>``: a credential in a link reaches a text
body), and collapses runs of whitespace inside a line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser

__all__ = ["html_to_text", "preview"]

_BLOCKS = frozenset(
    {"p", "div", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "hr"}
)
_SKIPPED = frozenset({"head", "style", "script", "title"})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line: list[str] = []
        self.skipping = 0
        self.links: list[str] = []
        """The targets of the links open here, innermost last."""

    def _break(self) -> None:
        text = _SPACES.sub(" ", "".join(self.line)).strip()
        self.lines.append(text)
        self.line = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag == "br" or tag in _BLOCKS:
            self._break()
        elif tag in ("td", "th"):
            self.line.append(" ")
        elif tag == "a":
            self.links.append((dict(attrs).get("href") or "").strip())

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" or tag == "hr":
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self._break()
        elif tag == "a" and self.links:
            target = self.links.pop()
            if target and not target.startswith("#") and not self.skipping:
                self.line.append(f"<{target}>")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.line.append(data)


@lru_cache(maxsize=1024)
def html_to_text(html: str) -> str:
    """The text of an HTML body. Pure, so remembered across mailboxes: every fresh demo
    mailbox (one per hosted user, one per test) holds the same seeded bodies."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    parser._break()
    lines: list[str] = []
    for line in parser.lines:
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\r\n".join(lines) + ("\r\n" if lines else "")


def preview(text: str) -> str:
    """``bodyPreview``: the first 255 characters of the text body, whitespace folded."""
    return _SPACES.sub(" ", text).strip()[:255]
