"""OData system query options as Outlook and OneDrive read them: ``$filter``, ``$orderby``,
``$select``, ``$top``, ``$skip``, ``$count`` (``$search`` is in ``kql``).

``$filter`` is parsed into a predicate over a message's Graph JSON (``eq ne gt ge lt le``,
``and or not``, parentheses, ``contains``/``startswith``/``endswith``, and ``any`` over
``categories`` and recipient collections). String comparisons ignore case, as Exchange's
do. What Outlook refuses is refused the same way: an unknown property, a malformed
clause, and a ``$filter`` that does not start with the ``$orderby`` properties
(``InefficientFilter``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mfconnector.emulator.errors import GraphHttpError

__all__ = [
    "Order",
    "QueryOptions",
    "compile_filter",
    "filter_properties",
    "parse_options",
    "parse_orderby",
]

Predicate = Callable[[Mapping[str, Any]], bool]

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<string>'(?:[^']|'')*')"
    r"|(?P<datetime>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))"
    r"|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<punct>[(),:])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*(?:/any)?)"
    r")"
)
_COMPARISONS = {"eq", "ne", "gt", "ge", "lt", "le"}
MAX_NESTING = 32
"""Parentheses and ``not`` nested deeper than this are refused (a bounded parse stack)."""
_FUNCTIONS = {"contains", "startswith", "endswith"}


def invalid_filter(detail: str) -> GraphHttpError:
    return GraphHttpError(400, "BadRequest", f"Invalid filter clause: {detail}")


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


def _tokens(source: str) -> list[_Tok]:
    out: list[_Tok] = []
    position = 0
    while position < len(source):
        if source[position:].strip() == "":
            break
        match = _TOKEN.match(source, position)
        if match is None or match.end() == position:
            raise invalid_filter(f"syntax error at position {position}")
        kind = match.lastgroup or ""
        out.append(_Tok(kind, match.group(kind)))
        position = match.end()
    return out


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _path_value(item: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = item
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _normalise(value: Any) -> Any:
    """Comparable form: strings folded, ISO date-times parsed."""
    if isinstance(value, str):
        if len(value) >= 20 and value[4] == "-" and value[10] == "T":
            try:
                return _parse_time(value)
            except ValueError:
                pass
        return value.casefold()
    return value


def _compare(op: str, left: Any, right: Any) -> bool:
    left, right = _normalise(left), _normalise(right)
    if op == "eq":
        return bool(left == right)
    if op == "ne":
        return bool(left != right)
    if left is None or right is None:
        return False
    try:
        if op == "gt":
            return bool(left > right)
        if op == "ge":
            return bool(left >= right)
        if op == "lt":
            return bool(left < right)
        return bool(left <= right)
    except TypeError:
        return False


class _Parser:
    def __init__(self, tokens: list[_Tok], properties: frozenset[str], entity: str) -> None:
        self.tokens = tokens
        self.index = 0
        self.properties = properties
        self.entity = entity
        self.order: list[str] = []
        self.depth = 0
        """Properties in the order the filter names them (for InefficientFilter)."""

    def peek(self) -> _Tok | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> _Tok:
        token = self.peek()
        if token is None:
            raise invalid_filter("unexpected end of the clause")
        self.index += 1
        return token

    def expect(self, text: str) -> None:
        token = self.take()
        if token.text != text:
            raise invalid_filter(f"expected {text!r}, found {token.text!r}")

    def word(self, text: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "name" and token.text.lower() == text

    def parse(self) -> Predicate:
        predicate = self.or_expr()
        if self.peek() is not None:
            raise invalid_filter(f"unexpected {self.peek().text!r}")  # type: ignore[union-attr]
        return predicate

    def or_expr(self) -> Predicate:
        parts = [self.and_expr()]
        while self.word("or"):
            self.take()
            parts.append(self.and_expr())
        if len(parts) == 1:
            return parts[0]
        return lambda item: any(part(item) for part in parts)

    def and_expr(self) -> Predicate:
        parts = [self.unary()]
        while self.word("and"):
            self.take()
            parts.append(self.unary())
        if len(parts) == 1:
            return parts[0]
        return lambda item: all(part(item) for part in parts)

    def unary(self) -> Predicate:
        token = self.peek()
        nesting = self.word("not") or (token is not None and token.text == "(")
        if nesting:
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise invalid_filter(f"the clause nests deeper than {MAX_NESTING} levels")
        try:
            return self._unary(token)
        finally:
            if nesting:
                self.depth -= 1

    def _unary(self, token: _Tok | None) -> Predicate:
        if self.word("not"):
            self.take()
            inner = self.unary()
            return lambda item: not inner(item)
        if token is not None and token.text == "(":
            self.take()
            inner = self.or_expr()
            self.expect(")")
            return inner
        if token is not None and token.kind == "name" and token.text.lower() in _FUNCTIONS:
            return self.function(self.take().text.lower())
        return self.comparison()

    def property(self, token: _Tok) -> tuple[str, ...]:
        if token.kind != "name":
            raise invalid_filter(f"expected a property, found {token.text!r}")
        path = tuple(token.text.split("/"))
        if path[0] not in self.properties:
            raise GraphHttpError(
                400,
                "RequestBroker--ParseUri",
                f"Could not find a property named '{path[0]}' on type "
                f"'microsoft.graph.{self.entity}'.",
            )
        self.order.append(path[0])
        return path

    def literal(self) -> Any:
        token = self.take()
        if token.kind == "string":
            return token.text[1:-1].replace("''", "'")
        if token.kind == "datetime":
            try:
                return _parse_time(token.text)
            except ValueError:
                raise invalid_filter(f"bad date-time {token.text!r}") from None
        if token.kind == "number":
            return float(token.text) if "." in token.text else int(token.text)
        if token.kind == "name" and token.text in ("true", "false"):
            return token.text == "true"
        if token.kind == "name" and token.text == "null":
            return None
        raise invalid_filter(f"expected a value, found {token.text!r}")

    def comparison(self) -> Predicate:
        token = self.take()
        if token.kind == "name" and token.text.endswith("/any"):
            return self.any(token)
        path = self.property(token)
        op_token = self.take()
        op = op_token.text.lower()
        if op_token.kind != "name" or op not in _COMPARISONS:
            raise invalid_filter(f"unknown operator {op_token.text!r}")
        value = self.literal()
        return lambda item: _compare(op, _path_value(item, path), value)

    def function(self, name: str) -> Predicate:
        self.expect("(")
        path = self.property(self.take())
        self.expect(",")
        value = self.literal()
        self.expect(")")
        if not isinstance(value, str):
            raise invalid_filter(f"{name} needs a string")
        needle = value.casefold()

        def test(item: Mapping[str, Any]) -> bool:
            found = _path_value(item, path)
            if not isinstance(found, str):
                return False
            text = found.casefold()
            if name == "contains":
                return needle in text
            if name == "startswith":
                return text.startswith(needle)
            return text.endswith(needle)

        return test

    def any(self, token: _Tok) -> Predicate:
        """``categories/any(c:c eq 'x')``, ``toRecipients/any(r:r/emailAddress/address eq 'x')``."""
        collection = token.text[: -len("/any")]
        path = self.property(_Tok("name", collection))
        self.expect("(")
        variable = self.take()
        if variable.kind != "name":
            raise invalid_filter("expected a lambda variable")
        self.expect(":")
        inner_token = self.take()
        parts = inner_token.text.split("/")
        if inner_token.kind != "name" or parts[0] != variable.text:
            raise invalid_filter("the lambda must compare its variable")
        inner_path = tuple(parts[1:])
        op = self.take().text.lower()
        if op not in _COMPARISONS:
            raise invalid_filter(f"unknown operator {op!r}")
        value = self.literal()
        self.expect(")")

        def test(item: Mapping[str, Any]) -> bool:
            values = _path_value(item, path)
            if not isinstance(values, list):
                return False
            return any(
                _compare(op, _path_value(v, inner_path) if inner_path else v, value) for v in values
            )

        return test


def compile_filter(source: str, properties: frozenset[str], entity: str) -> Predicate:
    parser = _Parser(_tokens(source), properties, entity)
    return parser.parse()


def filter_properties(source: str, properties: frozenset[str], entity: str) -> list[str]:
    """The properties a filter names, in order of appearance."""
    parser = _Parser(_tokens(source), properties, entity)
    parser.parse()
    return parser.order


@dataclass(frozen=True)
class Order:
    property: str
    descending: bool


def parse_orderby(source: str, properties: frozenset[str], entity: str) -> list[Order]:
    orders = []
    for part in source.split(","):
        words = part.split()
        if (
            not words
            or len(words) > 2
            or (len(words) == 2 and words[1].lower() not in ("asc", "desc"))
        ):
            raise GraphHttpError(400, "BadRequest", f"Invalid $orderby clause: {part.strip()!r}")
        name = words[0]
        if name.split("/")[0] not in properties:
            raise GraphHttpError(
                400,
                "RequestBroker--ParseUri",
                f"Could not find a property named '{name}' on type 'microsoft.graph.{entity}'.",
            )
        orders.append(Order(name, len(words) == 2 and words[1].lower() == "desc"))
    return orders


@dataclass
class QueryOptions:
    select: list[str] | None
    top: int | None
    skip: int
    count: bool
    filter: str | None
    orderby: str | None
    search: str | None
    expand: str | None
    skiptoken: str | None


_KNOWN = {
    "$select",
    "$top",
    "$skip",
    "$count",
    "$filter",
    "$orderby",
    "$search",
    "$expand",
    "$skiptoken",
    "$format",
    "includehiddenfolders",
}


_DIGITS = re.compile(r"\d{1,9}")


def _integer(name: str, value: str, *, minimum: int) -> int:
    if not _DIGITS.fullmatch(value) or int(value) < minimum:
        raise GraphHttpError(
            400, "BadRequest", f"Invalid value '{value}' for the query option '{name}'."
        )
    return int(value)


def parse_options(query: Mapping[str, str]) -> QueryOptions:
    """Read the query options; an unknown ``$`` option is refused, as Graph does."""
    lowered = {key.lower() if key.startswith("$") else key: value for key, value in query.items()}
    for key in lowered:
        if key.startswith("$") and key not in _KNOWN:
            raise GraphHttpError(
                400, "BadRequest", f"Query option '{key}' is not allowed for this resource."
            )
    select = lowered.get("$select")
    count = lowered.get("$count")
    if count is not None and count.lower() not in ("true", "false"):
        raise GraphHttpError(400, "BadRequest", "Invalid value for the query option '$count'.")
    return QueryOptions(
        select=[part.strip() for part in select.split(",") if part.strip()] if select else None,
        top=_integer("$top", lowered["$top"], minimum=1) if "$top" in lowered else None,
        skip=_integer("$skip", lowered["$skip"], minimum=0) if "$skip" in lowered else 0,
        count=(count or "").lower() == "true",
        filter=lowered.get("$filter"),
        orderby=lowered.get("$orderby"),
        search=lowered.get("$search"),
        expand=lowered.get("$expand"),
        skiptoken=lowered.get("$skiptoken"),
    )
