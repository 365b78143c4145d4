"""mfconnector 0.1's HTML-to-text converter (stdlib HTMLParser + a linear pre-pass), kept for
bench/textconv_bench.py to compare against. Not used by the server since 0.2.

Graph honours ``Prefer: outlook.body-content-type="text"`` most of the time; when a body
still arrives as HTML, this keeps the words and the paragraph breaks and drops markup,
scripts, styles and comments. Entities are decoded by the parser itself.

The body is untrusted and up to 2 MB, and Python's ``HTMLParser`` rescans unfinished
constructs (``<a<a<a…``, an unclosed ``<!--``), which is quadratic. ``_defuse`` first makes
every ``<`` either the start of a tag that closes before the next ``<`` or a literal
``&lt;``, in one linear pass, so the parser never has an unfinished construct to rescan.
Declarations other than a doctype (CDATA, ``<![if mso]>``) are dropped up to the next
``>``, as HTML5 reads them. Anything the parser still rejects falls back to a linear tag
strip.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

BLOCK_TAGS = frozenset(
    {
        "p", "div", "br", "tr", "li", "ul", "ol", "table", "blockquote", "pre", "hr",
        "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer",
    }
)  # fmt: skip
HIDDEN_TAGS = frozenset({"script", "style", "head", "title", "template"})
_ANY_TAG = re.compile(r"<[^<>]*>")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN_TAGS:
            self._hidden += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n- " if tag == "li" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN_TAGS:
            self._hidden = max(0, self._hidden - 1)
        elif tag in BLOCK_TAGS and tag != "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def _defuse(markup: str) -> str:
    """Drop complete comments and escape every ``<`` that opens nothing complete (linear)."""
    out: list[str] = []
    pos = 0
    next_gt = next_comment_end = -2  # -2: not looked yet; -1: none left in the text
    while (lt := markup.find("<", pos)) >= 0:
        out.append(markup[pos:lt])
        if markup.startswith("<!--", lt):
            if next_comment_end != -1 and next_comment_end < lt + 4:
                next_comment_end = markup.find("-->", lt + 4)
            if next_comment_end >= 0:
                pos = next_comment_end + 3
                continue
        elif markup.startswith("<!", lt) and not markup.startswith("<!doctype", lt, lt + 9):
            # CDATA, <![if ...]> and other declarations: a bogus comment up to the next
            # ">", as HTML5 reads them (the stdlib would scan for "]]>" each time).
            if next_gt != -1 and next_gt < lt + 1:
                next_gt = markup.find(">", lt + 1)
            pos = next_gt + 1 if next_gt >= 0 else len(markup)
            continue
        else:
            if next_gt != -1 and next_gt < lt + 1:
                next_gt = markup.find(">", lt + 1)
            following_lt = markup.find("<", lt + 1, next_gt if next_gt >= 0 else None)
            if next_gt >= 0 and following_lt < 0:
                out.append(markup[lt : next_gt + 1])
                pos = next_gt + 1
                continue
        out.append("&lt;")
        pos = lt + 1
    out.append(markup[pos:])
    return "".join(out)


def _strip_tags(markup: str) -> str:
    return html.unescape(_ANY_TAG.sub(" ", markup))


def html_to_text(markup: str) -> str:
    collector = _TextCollector()
    try:
        collector.feed(_defuse(markup))
        collector.close()
        text = "".join(collector.parts)
    except Exception:  # the parser's own assertions on malformed markup: keep the words
        text = _strip_tags(markup)
    text = text.replace("\xa0", " ")
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()
