"""HTML mail bodies to plain text in one bounded streaming pass that builds no tree.

Graph honours ``Prefer: outlook.body-content-type="text"`` most of the time; when a body
still arrives as HTML, this keeps the words, paragraph and line breaks, list items, table
rows (cells joined by `` | ``) and link targets (``text (https://...)``), and drops
markup, scripts, styles and comments. Credential-bearing links are then cut out by
``shaping.redact_text``, like any URL in text.

Why this and not the other ways to bound it (measured: bench/hostile_bench.py,
bench/textconv_bench.py, bench/README.md):

- An HTML5 tree builder (0.2 used lexbor through selectolax) is not bounded by its input.
  It re-opens every "active formatting element" at each new block, so ``<b id=1>`` ..
  ``<b id=250>`` then 60,000 ``<p>x`` makes 250 nodes per four input bytes: 243 KB took
  0.2.0's server past 4.7 GB and 60 s. A pre-pass that caps what reaches the builder
  would have to simulate the builder's reconstruction to know the node count.
- The isolated document worker would bound it, but costs a process hand-off (60-90 ms a
  document) on every HTML mail read, and a pipe copy of up to 2 MB each way.
- The stdlib ``html.parser`` tokenizer rescans unfinished constructs (quadratic; 0.1
  needed a pre-pass) and builds every attribute list (265 MB for 2 MB of attributes).

So the tokenizer below follows the HTML5 tokenizer's rules (``<a<b>`` is one tag,
``<!x>`` and ``<?x>`` are bogus comments, script and style are raw text, an unclosed
comment hides the rest) but each tag is handled as it is met and forgotten: no tree, no
attribute lists (only ``href`` and ``alt`` are looked up, by one search), one forward
scan whatever the nesting, misnesting or attribute count. The reproduction converts in
about a second inside the server on a loaded 2-core machine, at 40 MiB peak RSS (the
server at rest); in-process its peak is 1.7x its size (6x at worst on hostile input).

Two bounds remain, both in ``Limits``: past ``html_tags`` tags the rest of the body is read
as plain words (tags removed, entities decoded) and ``HtmlText.limit`` names the limit,
so the caller can mark the answer incomplete; and ``check`` is called every
``CHECK_EVERY_TAGS`` tags, so a cancelled conversion stops within milliseconds instead of
running on in an abandoned thread.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from mfconnector.limits import DEFAULT_LIMITS

__all__ = ["CHECK_EVERY_TAGS", "HtmlText", "convert_html", "html_to_text"]

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
CELL_TAGS = frozenset({"td", "th"})
RAW_HIDDEN_TAGS = frozenset(
    {"script", "style", "title", "noscript", "iframe", "noembed", "noframes"}
)
"""Elements whose content is raw text up to their own end tag, and never shown."""
RAW_SHOWN_TAGS = frozenset({"textarea", "xmp"})
"""Raw-text elements whose content is shown (``textarea`` decodes entities, as HTML5 does)."""
LINK_SCHEMES = ("http://", "https://", "mailto:")
"""Link targets worth showing; ``cid:``, ``#anchor`` and ``javascript:`` are not."""
CHECK_EVERY_TAGS = 1_024
"""How often (in tags) the conversion asks whether it should stop."""
LINK_TEXT_CHARS = 2_048
"""How much of a link's own text is kept to compare with its target."""

_ANY_TAG = re.compile(r"<[^<>]*>")
_SPACES = re.compile(r"[\t\r\f\v\xa0][ \t\r\f\v\xa0]*| [ \t\r\f\v\xa0]+")
"""Runs of blanks other than one plain space (a lone space is left alone: fewer pieces)."""
_LINE_EDGES = re.compile(r" +\n *|\n +")
_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class HtmlText:
    """The text of a body, and the limit that cut its layout short (``None``: none did)."""

    text: str
    limit: str | None = None


class _Text:
    """The output being written, with the state that places separators."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.parts: list[str] = []
        self.pending = 0
        """Line breaks owed before the next text (the largest one asked for wins)."""
        self.cells_in_row = 0
        self.link: str | None = None
        """The target of the open ``<a>``, while its text is being written."""
        self.link_text: list[str] = []
        self.link_chars = 0
        self.wrote = False

    def write(self, text: str) -> None:
        if self.pending:
            if not text.strip():
                return  # source whitespace between blocks
            if self.wrote:
                self.parts.append("\n" * self.pending)
            self.pending = 0
        if not text:
            return
        self.parts.append(text)
        self.wrote = True
        if self.link is not None and self.link_chars < LINK_TEXT_CHARS:
            self.link_text.append(text)
            self.link_chars += len(text)
        if len(self.parts) >= 4_096:  # few large strings, not a million small ones
            self.chunks.append("".join(self.parts))
            self.parts.clear()

    def line_break(self, count: int) -> None:
        self.pending = max(self.pending, count)

    def start(self, tag: str, attrs: dict[str, str]) -> None:
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
        elif tag == "a":
            self.end_link()  # HTML5: a new <a> closes the open one
            self.link = attrs.get("href", "").strip()
        elif tag == "img":
            alt = attrs.get("alt", "").strip()
            if alt:
                self.write(f"[{alt}]")

    def end(self, tag: str) -> None:
        if tag == "a":
            self.end_link()
        elif tag in PARAGRAPH_TAGS:
            self.line_break(2)
        elif tag in LINE_TAGS:
            self.line_break(1)
        elif tag == "br":  # HTML5 reads </br> as <br>
            self.start(tag, {})

    def end_link(self) -> None:
        href, self.link = self.link, None
        shown = "".join(self.link_text).strip()
        self.link_text.clear()
        self.link_chars = 0
        if href is None or not href.lower().startswith(LINK_SCHEMES):
            return
        target = href.removeprefix("mailto:")
        if shown and shown != target and shown != href:
            self.write(f" ({href})")
        elif not shown:
            self.write(f"{href} ")

    def result(self) -> str:
        self.end_link()
        return "".join([*self.chunks, *self.parts])


_MARKUP_START = re.compile(r"""<(?:(/?)([A-Za-z][^\s/>]*)([\s/][^<>"']*)?>|[A-Za-z!?/])""")
"""A ``<`` that starts a tag, comment or declaration; any other ``<`` is text (HTML5). A
whole tag without quotes or a second ``<`` is matched at once (groups: ``/``, name,
attributes); any other is read by ``_tag_end``. One character class per group, no
nested repetition: a failed attempt stops at the next ``<``, ``>`` or quote."""
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")
_TAG_STOP = re.compile(r"""=\s*["']|>""")
"""Where a tag may end (``>``) or a quoted value begins (that value may hold ``>``)."""
_ATTR_PATTERNS = {
    name: re.compile(rf"""[\s/"']{name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*))""", re.IGNORECASE)
    for name in ("href", "alt")
}
_WANTED_ATTR = {"a": "href", "img": "alt"}
_RAW_END = {
    tag: re.compile(rf"</{tag}[\s/>]", re.IGNORECASE) for tag in RAW_HIDDEN_TAGS | RAW_SHOWN_TAGS
}


def _attributes(name: str, attrs: str | None) -> dict[str, str]:
    """The one attribute the text needs from an ``<a>`` or ``<img>`` (others: none)."""
    wanted = _WANTED_ATTR.get(name)
    if wanted is None or not attrs:
        return {}
    found = _ATTR_PATTERNS[wanted].search(attrs)
    if found is None:
        return {}
    value = next((group for group in found.groups() if group is not None), "")
    return {wanted: html.unescape(value)}


def convert_html(
    markup: str,
    *,
    max_tags: int = DEFAULT_LIMITS.html_tags,
    check: Callable[[], object] | None = None,
) -> HtmlText:
    """The readable text of an HTML body: words, line structure and link targets.

    After ``max_tags`` tags the rest is read as plain words and ``limit`` says
    ``"html_tags"``. ``check`` is called every ``CHECK_EVERY_TAGS`` tags; whatever it
    raises (a cancellation) ends the conversion there.
    """
    out = _Text()
    pos = 0
    tags = 0
    limit: str | None = None
    size = len(markup)
    while (start := _MARKUP_START.search(markup, pos)) is not None:
        lt = start.start()
        if lt > pos:  # text, literal "<" included (one that starts nothing)
            out.write(_decoded(markup[pos:lt]))
        if start[2] is None:  # a comment, a declaration, or a tag with quotes
            if markup.startswith("<!--", lt):
                pos = _past(markup, "-->", lt + 4)  # unclosed: the rest is a comment
                continue
            following = markup[lt + 1]
            if following in "!?" or not _is_letter(markup, lt + (2 if following == "/" else 1)):
                pos = lt + 3 if markup.startswith("</>", lt) else _past(markup, ">", lt + 2)
                continue  # a bogus comment, as HTML5 reads it
        if tags >= max_tags:
            limit = "html_tags"
            pos = lt
            break
        tags += 1
        if check is not None and tags % CHECK_EVERY_TAGS == 0:
            check()
        if start[2] is not None:  # the whole tag, matched at once
            closing, name, attrs, pos = start[1], start[2].lower(), start[3], start.end()
        else:
            tag = _TAG_NAME.match(markup, lt)
            assert tag is not None  # a letter follows "<" or "</"
            end = _tag_end(markup, tag.end())
            if end < 0:  # never closed: the rest is text, as a reader would see it
                out.write(markup[lt:])
                pos = size
                break
            closing, name, attrs, pos = tag[1], tag[2].lower(), markup[tag.end() : end - 1], end
        if closing:
            out.end(name)
        elif name in _RAW_END:
            pos = _raw_text(markup, name, pos, out)
        elif name == "plaintext":
            out.write(markup[pos:])
            pos = size
        else:
            out.start(name, _attributes(name, attrs))
    if limit is not None:
        out.write(" " + html.unescape(_ANY_TAG.sub(" ", markup[pos:])))
    elif pos < size:
        out.write(_decoded(markup[pos:]))
    return HtmlText(_tidy(out.result()), limit)


def _raw_text(markup: str, name: str, pos: int, out: _Text) -> int:
    """Content up to ``</name``, never read as markup: shown or hidden; where it ends."""
    closing = _RAW_END[name].search(markup, pos)
    end = len(markup) if closing is None else closing.start()
    if name in RAW_SHOWN_TAGS:
        chunk = markup[pos:end]
        out.write(_decoded(chunk) if name == "textarea" else chunk)
    return end


def _tag_end(markup: str, pos: int) -> int:
    """Just past the ``>`` that ends the tag whose attributes start at ``pos``; -1 if none.

    One search per quoted value, no backtracking and no state kept: any attribute count
    costs one pass."""
    while (stop := _TAG_STOP.search(markup, pos)) is not None:
        if stop[0] == ">":
            return stop.end()
        closing = markup.find(stop[0][-1], stop.end())
        if closing < 0:
            return -1
        pos = closing + 1
    return -1


def _decoded(text: str) -> str:
    return html.unescape(text) if "&" in text else text


def _past(markup: str, marker: str, start: int) -> int:
    found = markup.find(marker, start)
    return len(markup) if found < 0 else found + len(marker)


def _is_letter(markup: str, index: int) -> bool:
    return index < len(markup) and markup[index].isascii() and markup[index].isalpha()


def html_to_text(markup: str) -> str:
    """The readable text of an HTML body (``convert_html`` with the default limits)."""
    return convert_html(markup).text


def _tidy(text: str) -> str:
    text = _SPACES.sub(" ", text)
    text = _LINE_EDGES.sub("\n", text)
    return _BLANK_LINES.sub("\n\n", text).strip()
