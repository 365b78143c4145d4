"""``$search`` on messages: the Keyword Query Language subset Outlook answers.

- Free words match subject, body, sender, recipients and attachment names, by word
  prefix, ignoring case and the accents of Latin, Greek and Cyrillic letters (``budg``
  finds "Budget", ``reunion`` finds "Réunion"), as Microsoft's search indexes do unless
  made diacritic-sensitive. An emoji or other symbol is a word of its own (``🎉`` finds
  "🎉 Launch party photos"). A word in a script written without spaces (Chinese,
  Japanese) matches anywhere in the text.
- ``"quoted phrases"``: the words in that order (the last one by prefix).
- Property restrictions: ``from: to: cc: bcc: participants: subject: body:
  attachment(s): category:`` (same word rules, on that field only), ``hasattachment(s):``
  ``isread:`` ``importance:`` (values), ``received`` / ``sent`` with ``: = > >= < <=`` and
  a date (``2026-03-01`` or ``3/1/2026``), or a range ``received:2026-03-01..2026-03-03``
  (both days included, KQL's ``..`` operator).
- ``AND``, ``OR``, ``NOT`` (upper case, as KQL wants), ``-word``, parentheses; words next
  to each other are ANDed.

The whole ``$search`` value is one OData string: ``"budget OR invoice"``; inside it a
phrase is written ``\\"...\\"``.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import Message

__all__ = ["SearchIndex", "compile_search", "words"]

_WORD = re.compile(r"\w+|[^\w\s]")
FOLDED_MARKS_BELOW = 0x0530
"""Accents are ignored on letters below U+0530 (Latin, Greek, Cyrillic); elsewhere a
combining mark is part of the letter (Japanese dakuten, Indic vowel signs)."""
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_TOKEN = re.compile(
    r'\s*(?:(?P<paren>[()])|(?P<phrase>"(?:[^"\\]|\\.)*")'
    r'|(?P<restriction>[A-Za-z]+)(?P<op>>=|<=|:|=|>|<)(?P<value>"(?:[^"\\]|\\.)*"|[^\s()"]+)'
    r'|(?P<word>[^\s()"]+))'
)
_TEXT_FIELDS = {
    "from": ("from",),
    "to": ("to",),
    "cc": ("cc",),
    "bcc": ("bcc",),
    "participants": ("from", "to", "cc", "bcc"),
    "subject": ("subject",),
    "body": ("body",),
    "attachment": ("attachments",),
    "attachments": ("attachments",),
    "attachmentnames": ("attachments",),
    "category": ("categories",),
}
_ALL_FIELDS = ("subject", "body", "from", "to", "cc", "attachments")

MAX_NESTING = 32
"""Parentheses and NOTs nested deeper than this are refused (a bounded parse stack)."""

Fields = dict[str, tuple[list[str], str, list[str]]]
"""Per field: its words (folded, in order), its folded text, its distinct words sorted."""
Test = Callable[[Message, Fields], bool]


def fold(text: str) -> str:
    """Case and Latin/Greek/Cyrillic accents folded away: what the index compares."""
    if text.isascii():  # no accents to drop (NFKD leaves ASCII as it is): most mail text
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    if not any(map(unicodedata.combining, decomposed)):  # no marks: nothing to drop
        return unicodedata.normalize("NFC", decomposed).casefold()
    kept: list[str] = []
    base = 0
    for char in decomposed:
        if unicodedata.combining(char):
            if base < FOLDED_MARKS_BELOW:
                continue
        else:
            base = ord(char)
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept)).casefold()


def words(text: str) -> list[str]:
    """Word runs, and each other symbol (emoji, ©, ✓) as a word of its own; punctuation,
    math and currency signs are not words."""
    return _words_of_folded(fold(text))


def _words_of_folded(folded: str) -> list[str]:
    return [
        token
        for token in _WORD.findall(folded)
        if len(token) > 1 or token.isalnum() or token == "_" or _is_symbol(token)
    ]


def _is_symbol(char: str) -> bool:
    return unicodedata.category(char) == "So"


@lru_cache(maxsize=8192)
def _indexed(text: str) -> tuple[list[str], str, list[str]]:
    """One field's words, folded text and sorted distinct words. Pure, so remembered across
    mailboxes (every fresh demo mailbox holds the same seeded texts); callers only read it."""
    folded = fold(text)
    tokens = _words_of_folded(folded)
    return tokens, folded, sorted(set(tokens))


class SearchIndex:
    """Each message's searchable words, rebuilt when the message changes."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, Fields]] = {}

    def fields(self, message: Message) -> Fields:
        cached = self._cache.get(message.immutable_id)
        if cached is not None and cached[0] == message.version:
            return cached[1]

        def people(recipients: list[tuple[str, str]]) -> str:
            return " ".join(f"{name} {address}" for name, address in recipients)

        sources = {
            "subject": message.subject,
            "body": message.texts()[0],
            "from": people([message.from_ or message.sender]),
            "to": people(message.to),
            "cc": people(message.cc),
            "bcc": people(message.bcc),
            "attachments": " ".join(a.name for a in message.attachments),
            "categories": " ".join(message.categories),
        }
        fields: Fields = {key: _indexed(text) for key, text in sources.items()}
        self._cache[message.immutable_id] = (message.version, fields)
        return fields


def _has_prefix(ordered: list[str], prefix: str) -> bool:
    """Whether some word of the sorted list starts with ``prefix`` (a binary search)."""
    index = bisect_left(ordered, prefix)
    return index < len(ordered) and ordered[index].startswith(prefix)


def _matches(
    term_words: list[str], term_text: str, field: tuple[list[str], str, list[str]]
) -> bool:
    tokens, text, ordered = field
    if not term_words:
        return False
    if _UNSPACED.search(term_text):
        return " ".join(term_words) in text or term_text in text
    if not all(_has_prefix(ordered, word) for word in term_words):
        return False
    size = len(term_words)
    if size == 1:
        return True
    last = size - 1
    for start in range(len(tokens) - size + 1):
        if all(tokens[start + k] == term_words[k] for k in range(last)) and tokens[
            start + last
        ].startswith(term_words[last]):
            return True
    return False


def _text_test(term: str, fields: tuple[str, ...]) -> Test:
    term_words = words(term)
    folded = fold(term).strip()

    def test(message: Message, index: Fields) -> bool:
        return any(_matches(term_words, folded, index[name]) for name in fields)

    return test


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return re.sub(r"\\(.)", r"\1", value)


def _parse_date(value: str) -> datetime:
    for pattern in ("%Y-%m-%d", "%m/%d/%Y", "%Y/%m/%d"):
        try:
            return datetime.strptime(value, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise GraphHttpError(400, "BadRequest", f"Syntax error: '{value}' is not a valid date.")


def _date_test(field: str, op: str, value: str) -> Test:
    first, dots, last = value.partition("..")
    if dots and op not in (":", "="):
        raise GraphHttpError(
            400, "BadRequest", f"Syntax error: a range needs ':' or '=', not '{op}'."
        )
    if dots and not (first and last):
        raise GraphHttpError(
            400, "BadRequest", f"Syntax error: the range '{value}' needs a start and an end."
        )
    day = _parse_date(first)
    end = (_parse_date(last) if dots else day) + timedelta(days=1)

    def test(message: Message, index: Fields) -> bool:
        moment = message.received if field == "received" else (message.sent or message.received)
        if op in (":", "="):
            return day <= moment < end
        if op == ">=":
            return moment >= day
        if op == ">":
            return moment >= end
        if op == "<=":
            return moment < end
        return moment < day

    return test


def _flag_value(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise GraphHttpError(400, "BadRequest", f"Syntax error: '{value}' is not true or false.")


def _restriction(name: str, op: str, raw: str) -> Test:
    key = name.lower()
    value = _unquote(raw)
    if key in ("received", "sent"):
        return _date_test(key, op, value)
    if key in ("hasattachment", "hasattachments"):
        wanted = _flag_value(value)
        return lambda message, _: message.has_attachments is wanted
    if key == "isread":
        read = _flag_value(value)
        return lambda message, _: message.is_read is read
    if key == "importance":
        level = value.lower()
        return lambda message, _: message.importance == level
    if key in _TEXT_FIELDS and op == ":":
        return _text_test(value, _TEXT_FIELDS[key])
    return _text_test(f"{name}{op}{value}", _ALL_FIELDS)


@dataclass
class _Tok:
    kind: str
    text: str
    op: str = ""
    value: str = ""


def _tokens(query: str) -> list[_Tok]:
    out: list[_Tok] = []
    position = 0
    while query[position:].strip():
        match = _TOKEN.match(query, position)
        if match is None:
            raise GraphHttpError(
                400, "BadRequest", f"Syntax error: character at position {position} is not valid."
            )
        position = match.end()
        if match.group("paren"):
            out.append(_Tok("paren", match.group("paren")))
        elif match.group("phrase"):
            out.append(_Tok("phrase", _unquote(match.group("phrase"))))
        elif match.group("restriction"):
            out.append(
                _Tok(
                    "restriction",
                    match.group("restriction"),
                    match.group("op"),
                    match.group("value"),
                )
            )
        else:
            out.append(_Tok("word", match.group("word")))
    return out


class _Parser:
    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0

    def peek(self) -> _Tok | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def keyword(self, word: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "word" and token.text == word

    def parse(self) -> Test:
        if not self.tokens:
            raise GraphHttpError(400, "BadRequest", "The $search query is empty.")
        test = self.or_expr()
        if self.peek() is not None:
            raise GraphHttpError(400, "BadRequest", "Syntax error: unbalanced parentheses.")
        return test

    def or_expr(self) -> Test:
        parts = [self.and_expr()]
        while self.keyword("OR"):
            self.index += 1
            parts.append(self.and_expr())
        if len(parts) == 1:
            return parts[0]
        return lambda m, f: any(part(m, f) for part in parts)

    def and_expr(self) -> Test:
        parts = [self.unary()]
        while True:
            token = self.peek()
            if token is None or (token.kind == "paren" and token.text == ")") or self.keyword("OR"):
                break
            if self.keyword("AND"):
                self.index += 1
            parts.append(self.unary())
        if len(parts) == 1:
            return parts[0]
        return lambda m, f: all(part(m, f) for part in parts)

    def unary(self) -> Test:
        token = self.peek()
        if token is None:
            raise GraphHttpError(400, "BadRequest", "Syntax error: the query ends too early.")
        self.index += 1
        if token.kind == "paren" or (token.kind == "word" and token.text == "NOT"):
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise GraphHttpError(
                    400, "BadRequest", f"The query nests deeper than {MAX_NESTING} levels."
                )
        if token.kind == "word" and token.text == "NOT":
            inner = self.unary()
            self.depth -= 1
            return lambda m, f: not inner(m, f)
        if token.kind == "word" and token.text.startswith("-") and len(token.text) > 1:
            negated = _text_test(token.text[1:], _ALL_FIELDS)
            return lambda m, f: not negated(m, f)
        if token.kind == "paren":
            if token.text != "(":
                raise GraphHttpError(400, "BadRequest", "Syntax error: unbalanced parentheses.")
            inner = self.or_expr()
            closing = self.peek()
            if closing is None or closing.text != ")":
                raise GraphHttpError(400, "BadRequest", "Syntax error: unbalanced parentheses.")
            self.index += 1
            self.depth -= 1
            return inner
        if token.kind == "restriction":
            return _restriction(token.text, token.op, token.value)
        return _text_test(token.text, _ALL_FIELDS)


def compile_search(value: str) -> Test:
    """A ``$search`` value (with its OData quotes) as a test on a message."""
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    text = text.replace('\\"', '"').replace("\\\\", "\\")
    return _Parser(_tokens(text)).parse()
