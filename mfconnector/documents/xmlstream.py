"""Stream the elements of an XML part with expat, refusing any DTD (so any entity).

OOXML never carries a document type declaration. Every entity declaration (the
billion-laughs expansion, external entities that would read a file or a URL) lives in
one, so refusing the declaration itself refuses them all before one is defined; an
undefined entity reference is then an ordinary parse error. These are the handlers
defusedxml installs, set on the C parser directly: defusedxml's ElementTree parser is
the pure-Python one, which measured 1.2 to 2.3 times slower on a 40 MB sheet
(bench/README.md), and defusedxml would be one more dependency.

Only the subtrees a reader asks for are built (a paragraph, a row, a shared string), and
each is handed over as soon as it ends, so memory follows the largest such subtree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any, NoReturn
from xml.etree.ElementTree import Element, SubElement
from xml.parsers import expat

__all__ = ["XmlRefused", "feed", "iter_elements", "local", "safe_parser", "whole"]

CHUNK_BYTES = 65_536


class XmlRefused(ValueError):
    """A DTD or an entity declaration: never expanded, the part is refused."""


def _refuse(*_: Any) -> NoReturn:
    raise XmlRefused("XML declarations are not accepted in a document part")


def local(tag: str) -> str:
    """``w:p`` → ``p``: prefixes are whatever the writer chose, local names are not."""
    return tag.rpartition(":")[2]


def safe_parser() -> Any:
    """An expat parser that refuses any DTD and entity declaration, buffering text."""
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.UnparsedEntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.buffer_text = True
    parser.buffer_size = CHUNK_BYTES
    return parser


def feed(parser: Any, stream: IO[bytes], done: list[Any]) -> Iterator[Any]:
    """Parse ``stream`` chunk by chunk, yielding what the handlers put in ``done``."""
    while True:
        chunk = stream.read(CHUNK_BYTES)
        parser.Parse(chunk, not chunk)
        yield from done
        done.clear()
        if not chunk:
            return


def iter_elements(stream: IO[bytes], wanted: frozenset[str] | None = None) -> Iterator[Element]:
    """Each complete element whose local name is in ``wanted`` (outermost only), in order.

    ``wanted=None`` yields the root element, whole. Tags are local names (the prefix is
    dropped: namespaces are not resolved, which is cheaper, and Strict OOXML reads the
    same); attribute names keep their prefix (``r:id``). Element text is kept for leaves
    (``t``, ``v``); tails are dropped (OOXML puts no words there).
    """
    parser = safe_parser()
    stack: list[Element] = []
    texts: list[list[str]] = []
    """Text pieces of each open element, joined once at its end (never quadratic)."""
    done: list[Element] = []

    def start(raw: str, attrs: dict[str, str]) -> None:
        if stack:
            stack.append(SubElement(stack[-1], raw.rpartition(":")[2], attrs))
            texts.append([])
            return
        tag = raw.rpartition(":")[2]
        if wanted is None or tag in wanted:
            stack.append(Element(tag, attrs))
            texts.append([])

    def end(_: str) -> None:
        if stack:
            element = stack.pop()
            pieces = texts.pop()
            if pieces and not len(element):
                element.text = "".join(pieces)
            if not stack:
                done.append(element)

    def text(data: str) -> None:
        if texts:
            texts[-1].append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    yield from feed(parser, stream, done)


def whole(stream: IO[bytes]) -> Element | None:
    """A small part (a directory, a relationship list, one slide) parsed whole."""
    root = None
    for element in iter_elements(stream):
        root = element
    return root
