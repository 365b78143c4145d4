"""HTML mail bodies to plain text, parsed by lexbor (selectolax) and walked without recursion.

Graph honours ``Prefer: outlook.body-content-type="text"`` most of the time; when a body
still arrives as HTML, this keeps the words, paragraph and line breaks, list items, table
rows (cells joined by `` | ``) and link targets (``text (https://...)``), and drops
markup, scripts, styles and comments. Credential-bearing links are then cut out by
``shaping.redact_text``, like any URL in text.

The body is untrusted and up to 2 MB. lexbor is a C implementation of the HTML5 parsing
algorithm (the browsers' error recovery: unclosed tags, stray ``<``, bogus comments), and
the walk below follows sibling and parent pointers, never recursing. One thing is not
linear in any HTML5 parser: scope checks walk the stack of open elements at each tag, so
``<div>`` nested 100,000 deep costs minutes. A linear scan first bounds how deep the
markup can nest; past ``Limits.html_nesting_depth`` the body is read as plain words
(tags removed, entities decoded), which loses its layout but none of its text.
Figures: bench/textconv_bench.py and bench/README.md.
"""

from __future__ import annotations

import html
import re
from typing import Any

from mfconnector.limits import DEFAULT_LIMITS

__all__ = ["html_to_text"]

PARAGRAPH_TAGS = frozenset(
    {
        "p", "table", "ul", "ol", "dl", "blockquote", "pre", "hr", "h1", "h2", "h3", "h4",
        "h5", "h6", "section", "article", "header", "footer", "address", "figure", "form",
        "fieldset", "main", "nav", "aside",
    }
)  # fmt: skip
"""Elements set apart by a blank line."""
LINE_TAGS = frozenset({"div", "tr", "li", "dt", "dd", "caption", "figcaption"})
"""Elements that start and end a line."""
HIDDEN_TAGS = frozenset({"script", "style", "head", "title", "template", "noscript", "-comment"})
CELL_TAGS = frozenset({"td", "th"})
LINK_SCHEMES = ("http://", "https://", "mailto:")
"""Link targets worth showing; ``cid:``, ``#anchor`` and ``javascript:`` are not."""
VOID_TAGS = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr", "keygen",
    }
)  # fmt: skip
OPTIONAL_END_TAGS = frozenset(
    {
        "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
        "optgroup", "rt", "rp", "colgroup", "caption", "html", "head", "body",
    }
)  # fmt: skip
"""Elements the parser closes by itself when a sibling starts: they never nest deep."""
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]{0,31})")
_ANY_TAG = re.compile(r"<[^<>]*>")
_SPACES = re.compile(r"[ \t\r\f\v\xa0]+")
_LINE_EDGES = re.compile(r" *\n *")
_BLANK_LINES = re.compile(r"\n{3,}")


class _Text:
    """The output being written, with the state that places separators."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = 0
        """Line breaks owed before the next text (the largest one asked for wins)."""
        self.cells_in_row = 0

    def write(self, text: str) -> None:
        if self.pending:
            if not text.strip():
                return  # source whitespace between blocks
            if self.parts:
                self.parts.append("\n" * self.pending)
            self.pending = 0
        self.parts.append(text)

    def line_break(self, count: int) -> None:
        self.pending = max(self.pending, count)

    def enter(self, node: Any, tag: str) -> None:
        if tag in PARAGRAPH_TAGS:
            self.line_break(2)
        elif tag in LINE_TAGS:
            self.line_break(1)
            if tag == "li":
                self.write("- ")
            elif tag == "tr":
                self.cells_in_row = 0
        elif tag in CELL_TAGS:
            if self.cells_in_row:
                self.write(" | ")
            self.cells_in_row += 1
        elif tag == "br":
            self.pending = min(self.pending + 1, 2)

    def leave(self, node: Any, tag: str, start: int) -> None:
        if tag == "a":
            self._link_target(node, start)
        elif tag in PARAGRAPH_TAGS:
            self.line_break(2)
        elif tag in LINE_TAGS:
            self.line_break(1)
        elif tag == "img":
            alt = (node.attributes.get("alt") or "").strip()
            if alt:
                self.write(f"[{alt}]")

    def _link_target(self, node: Any, start: int) -> None:
        href = (node.attributes.get("href") or "").strip()
        if not href.lower().startswith(LINK_SCHEMES):
            return
        shown = "".join(self.parts[start:]).strip()
        target = href.removeprefix("mailto:")
        if shown and shown != target and shown != href:
            self.write(f" ({href})")
        elif not shown:
            self.write(f"{href} ")


def may_nest_deeper_than(markup: str, depth: int) -> bool:
    """Whether ``markup`` may nest elements more than ``depth`` deep (one linear scan).

    An upper bound: each end tag closes at most one open element of its own name (a
    stray one closes nothing); void elements and those the parser closes by itself are
    not counted. The scan stops as soon as the bound passes ``depth``, so hostile
    nesting is caught after ``depth`` tags.
    """
    open_by_name: dict[str, int] = {}
    level = 0
    for match in _TAG_NAME.finditer(markup):
        name = match.group(2).lower()
        if name in VOID_TAGS or name in OPTIONAL_END_TAGS:
            continue
        if match.group(1):
            if open_by_name.get(name):
                open_by_name[name] -= 1
                level -= 1
        else:
            open_by_name[name] = open_by_name.get(name, 0) + 1
            level += 1
            if level > depth:
                return True
    return False


def html_to_text(markup: str, max_depth: int = DEFAULT_LIMITS.html_nesting_depth) -> str:
    """The readable text of an HTML body: words, line structure and link targets.

    Markup that may nest deeper than ``max_depth`` is read as plain words instead.
    """
    if may_nest_deeper_than(markup, max_depth):
        return _tidy(html.unescape(_ANY_TAG.sub(" ", markup)))
    from selectolax.lexbor import LexborHTMLParser  # on first use: off the start-up path

    tree = LexborHTMLParser(markup)
    out = _Text()
    top = tree.body if tree.body is not None else tree.root
    if top is None:
        return ""
    node: Any = top.first_child
    starts: list[int] = []
    """Output position at which each open element began (for its link text)."""
    while node is not None:
        tag = node.tag
        if tag == "-text":
            out.write(node.text_content or "")
            child = None
        elif tag in HIDDEN_TAGS or not node.is_element_node:
            child = None
        else:
            out.enter(node, tag)
            starts.append(len(out.parts))
            child = node.first_child
        if child is not None:
            node = child
            continue
        if tag not in HIDDEN_TAGS and node.is_element_node:
            out.leave(node, tag, starts.pop())
        # no child: move to the next sibling, closing every parent left behind
        while node is not None and node.next is None:
            node = node.parent
            if node is None or node.mem_id == top.mem_id:
                node = None
                break
            out.leave(node, node.tag, starts.pop())
        if node is not None:
            node = node.next
    return _tidy("".join(out.parts))


def _tidy(text: str) -> str:
    text = _SPACES.sub(" ", text)
    text = _LINE_EDGES.sub("\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip()
