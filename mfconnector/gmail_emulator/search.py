"""Gmail's search syntax (the ``q`` of ``messages.list``, ``threads.list``, ``drafts.list``).

Grammar, after Google's "Search operators you can use with Gmail" and "Refine searches in
Gmail" pages: terms separated by spaces are all required; ``OR`` (upper case) or ``{a b}``
wants any; ``-term`` excludes; ``( )`` groups; ``"..."`` is an exact phrase; ``op:value``,
``op:"a phrase"`` and ``op:(a b)`` (the operator applied to each term inside) narrow to one
field. Bare words match whole words of From, To, Cc, Subject, the body text and attachment
names, ignoring case and diacritics; text in scripts written without spaces (CJK) matches as
a substring. Gmail is lenient with broken queries and so is this parser: an unknown operator
is a plain word, an unbalanced parenthesis is closed or ignored, a value that cannot mean
anything (``after:someday``) matches nothing.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mfconnector.gmail_emulator.store import Mailbox, Message

__all__ = ["Node", "matches", "parse_query", "wants_spam_or_trash"]

OPERATORS = frozenset(
    {
        "from", "to", "cc", "bcc", "deliveredto", "subject", "label", "in", "is", "has",
        "filename", "rfc822msgid", "after", "before", "older", "newer", "newer_than",
        "older_than", "larger", "smaller", "size", "category", "list",
    }
)  # fmt: skip
_OPERATOR = re.compile(r"([A-Za-z_0-9]+):")
_WORD = re.compile(r"\w+")
_NO_SPACES_SCRIPT = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
_SIZE = re.compile(r"^(\d+)([kKmM]?)$")
_RELATIVE = re.compile(r"^(\d+)([dmy])$")
_DATE = re.compile(r"^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$|^(\d{1,2})/(\d{1,2})/(\d{4})$")
_CATEGORY = {
    "primary": "CATEGORY_PERSONAL",
    "personal": "CATEGORY_PERSONAL",
    "social": "CATEGORY_SOCIAL",
    "promotions": "CATEGORY_PROMOTIONS",
    "updates": "CATEGORY_UPDATES",
    "forums": "CATEGORY_FORUMS",
}
_IN = {
    "inbox": "INBOX", "sent": "SENT", "trash": "TRASH", "spam": "SPAM", "drafts": "DRAFT",
    "draft": "DRAFT", "starred": "STARRED", "important": "IMPORTANT", "chats": "CHAT",
    "unread": "UNREAD",
}  # fmt: skip


def _pacific() -> tzinfo:
    """Google: dates in ``q`` are "midnight on that date in the PST timezone"."""
    try:
        return ZoneInfo("America/Los_Angeles")
    except ZoneInfoNotFoundError:  # a system without the tz database
        return timezone(timedelta(hours=-8))


def fold(text: str) -> str:
    """Case- and diacritic-insensitive form: NFKD, combining marks dropped, casefolded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@functools.lru_cache(maxsize=2048)
def _words(text: str) -> str:
    """`` word word `` of a folded text; cached, since every term of every query reads the
    same few hundred header and body texts again."""
    return " " + " ".join(_WORD.findall(fold(text))) + " "


@functools.lru_cache(maxsize=2048)
def _compact(text: str) -> str:
    return "".join(fold(text).split())


def text_matches(term: str, text: str) -> bool:
    """Whole words in sequence, or a substring for scripts written without spaces."""
    wanted = fold(term)
    if _NO_SPACES_SCRIPT.search(wanted):
        return "".join(wanted.split()) in _compact(text)
    words = _WORD.findall(wanted)
    return bool(words) and f" {' '.join(words)} " in _words(text)


@dataclass(frozen=True)
class Node:
    kind: str
    """term, and, or, not."""
    children: tuple[Node, ...] = ()
    op: str | None = None
    value: str = ""


_ALL = Node("and")


# --- the parser -------------------------------------------------------------------------


def _tokens(query: str) -> list[tuple[str, str, str]]:
    """(kind, operator, value): kinds ( ) { } - OR AND op( term."""
    out: list[tuple[str, str, str]] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
        elif c in "(){}":
            out.append((c, "", ""))
            i += 1
        elif c == "-" and i + 1 < n and not query[i + 1].isspace():
            out.append(("-", "", ""))
            i += 1
        elif c == '"':
            end = query.find('"', i + 1)
            end = n if end < 0 else end
            out.append(("term", "", query[i + 1 : end]))
            i = end + 1
        else:
            match = _OPERATOR.match(query, i)
            if match and match.group(1).lower() in OPERATORS:
                op, i = match.group(1).lower(), match.end()
                if i < n and query[i] == '"':
                    end = query.find('"', i + 1)
                    end = n if end < 0 else end
                    out.append(("term", op, query[i + 1 : end]))
                    i = end + 1
                    continue
                if i < n and query[i] == "(":
                    out.append(("op(", op, ""))
                    i += 1
                    continue
            else:
                op = ""
            start = i
            while i < n and not query[i].isspace() and query[i] not in '(){}"':
                i += 1
            word = query[start:i]
            if not op and word in ("OR", "AND"):
                out.append((word, "", ""))
            elif word or op:
                out.append(("term", op, word))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def sequence(self, default_op: str, closer: str | None) -> Node:
        items: list[Node] = []
        while (kind := self.peek()) is not None and kind != closer:
            if kind in (")", "}"):  # a stray closer: ignored
                self.at += 1
                continue
            if kind == "AND":
                self.at += 1
                continue
            items.append(self.either(default_op, closer))
        if closer is not None and self.peek() == closer:
            self.at += 1
        return items[0] if len(items) == 1 else Node("and", tuple(items))

    def either(self, default_op: str, closer: str | None) -> Node:
        items = [self.unary(default_op, closer)]
        while self.peek() == "OR":
            self.at += 1
            if self.peek() in (None, closer):
                break
            items.append(self.unary(default_op, closer))
        return items[0] if len(items) == 1 else Node("or", tuple(items))

    def unary(self, default_op: str, closer: str | None) -> Node:
        kind, op, value = self.tokens[self.at]
        self.at += 1
        if kind == "-":
            if self.peek() in (None, closer, "OR"):
                return Node("term", op=default_op or None, value="-")
            return Node("not", (self.unary(default_op, closer),))
        if kind == "(":
            return self.sequence(default_op, ")")
        if kind == "op(":
            return self.sequence(op, ")")
        if kind == "{":
            group = self.sequence(default_op, "}")
            return Node("or", group.children) if group.kind == "and" else group
        if kind in ("OR", "AND"):
            return Node("term", op=default_op or None, value=kind)
        return Node("term", op=(op or default_op) or None, value=value)


def parse_query(query: str) -> Node:
    tokens = _tokens(query)
    return _Parser(tokens).sequence("", None) if tokens else _ALL


def wants_spam_or_trash(node: Node) -> bool:
    """Spam and Trash are searched only when the query names them (or in:anywhere)."""
    if node.kind == "not":
        return False
    if node.kind == "term":
        return node.op in ("in", "label") and fold(node.value) in ("trash", "spam", "anywhere")
    return any(wants_spam_or_trash(child) for child in node.children)


# --- evaluation -------------------------------------------------------------------------


def matches(node: Node, message: Message, mailbox: Mailbox) -> bool:
    if node.kind == "and":
        return all(matches(child, message, mailbox) for child in node.children)
    if node.kind == "or":
        return any(matches(child, message, mailbox) for child in node.children)
    if node.kind == "not":
        return not matches(node.children[0], message, mailbox)
    return _term(node.op, node.value, message, mailbox)


def _bare(value: str, message: Message) -> bool:
    parsed = message.parsed
    fields = [parsed.header(name) for name in ("From", "To", "Cc", "Subject")]
    fields += [parsed.text, " ".join(parsed.filenames)]
    return any(text_matches(value, text) for text in fields)


def _address(header: str, value: str, message: Message, mailbox: Mailbox) -> bool:
    wanted = mailbox.address if value.lower() == "me" else value
    for name, address in message.parsed.addresses(header):
        if "@" in wanted and fold(wanted) in fold(address):
            return True
        if text_matches(wanted, f"{name} {address}"):
            return True
    return False


def _label_key(name: str) -> str:
    return re.sub(r"[\s/\-_]+", "-", fold(name)).strip("-")


def _label(value: str, message: Message, mailbox: Mailbox) -> bool:
    wanted = _label_key(value)
    ids = {lb.id for lb in mailbox.labels.values() if _label_key(lb.name) == wanted}
    return bool(ids & set(message.label_ids))


def _date(value: str) -> datetime | None:
    if value.isdigit():
        try:
            return datetime.fromtimestamp(int(value), UTC)
        except (OverflowError, OSError, ValueError):  # beyond the calendar: matches nothing
            return None
    found = _DATE.match(value)
    if not found:
        return None
    if found.group(1):
        year, month, day = int(found.group(1)), int(found.group(2)), int(found.group(3))
    else:
        month, day, year = int(found.group(4)), int(found.group(5)), int(found.group(6))
    try:
        return datetime(year, month, day, tzinfo=_pacific())
    except ValueError:
        return None


def _relative(value: str, now: datetime) -> datetime | None:
    found = _RELATIVE.match(value.lower())
    if not found:
        return None
    days = int(found.group(1)) * {"d": 1, "m": 30, "y": 365}[found.group(2)]
    return now - timedelta(days=days)


def _size(value: str) -> int | None:
    found = _SIZE.match(value)
    if not found:
        return None
    return int(found.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[found.group(2).lower()]


def _term(op: str | None, value: str, message: Message, mailbox: Mailbox) -> bool:
    labels = set(message.label_ids)
    lowered = fold(value)
    if op is None:
        return _bare(value, message)
    if op in ("from", "to", "cc", "bcc"):
        return _address(op.capitalize() if op != "bcc" else "Bcc", value, message, mailbox)
    if op == "deliveredto":
        return _address("Delivered-To", value, message, mailbox)
    if op == "subject":
        return text_matches(value, message.parsed.header("Subject"))
    if op == "list":
        return fold(value) in fold(message.parsed.header("List-Id"))
    if op == "label":
        return _label(value, message, mailbox)
    if op == "in":
        if lowered == "anywhere":
            return True
        system = _IN.get(lowered)
        return system in labels if system else _label(value, message, mailbox)
    if op == "is":
        return {
            "unread": "UNREAD" in labels,
            "read": "UNREAD" not in labels,
            "starred": "STARRED" in labels,
            "important": "IMPORTANT" in labels,
            "draft": "DRAFT" in labels,
        }.get(lowered, False)
    if op == "has":
        user = any(mailbox.labels[lb].type == "user" for lb in labels if lb in mailbox.labels)
        return {
            "attachment": bool(message.parsed.attachments),
            "userlabels": user,
            "nouserlabels": not user,
        }.get(lowered, False)
    if op == "filename":
        return any(
            lowered == fold(name).rsplit(".", 1)[-1] or lowered in fold(name)
            for name in message.parsed.filenames
        )
    if op == "rfc822msgid":
        return value.strip().strip("<>") == message.parsed.message_id.strip("<>") != ""
    if op == "category":
        return _CATEGORY.get(lowered, "") in labels
    if op in ("after", "newer", "before", "older"):
        moment = _date(value)
        if moment is None:
            return False
        if op in ("after", "newer"):
            return message.internal_date >= moment
        return message.internal_date < moment
    if op in ("newer_than", "older_than"):
        moment = _relative(value, mailbox.now)
        if moment is None:
            return False
        return (message.internal_date > moment) == (op == "newer_than")
    size = _size(value)
    if size is None:
        return False
    if op == "smaller":
        return len(message.raw) < size
    return len(message.raw) > size  # larger: and size:
