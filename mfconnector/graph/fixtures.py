"""Fixture mode: canned Graph answers served at the HTTP transport seam.

The fixture file (format in ``docs/FIXTURES.md``) is read once, at start-up, under
``Limits.fixture_file_bytes``, and checked whole before anything is served: a file that
cannot be served is refused with one :class:`~mfconnector.errors.FixtureError` line that
names the file, the entry and the problem, never with a traceback.

:class:`~mfconnector.graph.fixture_transport.FixtureTransport` (its own module: it needs
httpx and trio, this loader neither) plugs into ``httpx.AsyncClient(transport=...)``, so the
real client code (byte caps, redirects, retries, paging markers) runs unchanged: bodies are
streamed in chunks of at most 64 KiB, ``repeat`` bodies are generated lazily, a request
with no canned answer gets a Graph-shaped 404, and a bearer token sent anywhere but the
Graph root is answered with a 400 instead of being "delivered".
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

from mfconnector.errors import FixtureError
from mfconnector.graph.fixture_schema import (
    FIXTURE_SCHEMA,
    Problem,
    entry_problems,
    top_problems,
)
from mfconnector.graph.fixture_words import escape_controls, show_value, type_name
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT, is_graph_url
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.strictjson import RepeatedKeys, StrictJsonError, Strictness, parse_strict

__all__ = [
    "FIXTURE_SCHEMA",
    "SIGNIFICANT_QUERY_KEYS",
    "FixtureEntry",
    "FixtureResponse",
    "FixtureSet",
    "RepeatBody",
    "canonical_path",
    "load_fixtures",
    "parse_fixtures",
]

SIGNIFICANT_QUERY_KEYS = frozenset(
    {"$filter", "$search", "$skip", "$skiptoken", "$expand", "skiptoken"}
)
"""Query keys that change *which* items Graph returns (compared case-insensitively).

A request carrying one of them is answered only by an entry that names it with the same
value, so an unfiltered page can never pass for a filtered one."""

_BODY_KEYS = ("json", "text", "base64", "repeat")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAIL_PREFIXES = ("/me/messages", "/me/mailfolders")
DRIVE_PREFIXES = ("/me/drive", "/drives/", "/sites/")
USER_SCOPED = re.compile(r"^/users/[^/]+(/.*)$", re.IGNORECASE)


# --- the loaded, checked fixture set ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepeatBody:
    """A body of ``total_bytes`` bytes cycling ``text`` (UTF-8), generated while streaming."""

    text: str
    total_bytes: int


@dataclass(frozen=True, slots=True)
class FixtureResponse:
    """What one entry answers: status, headers as written, and the body to stream."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes | RepeatBody
    is_json: bool = False
    is_text: bool = False
    delay_ms: int = 0
    """How long the answer waits before it starts (slow Graph, offline)."""


@dataclass(frozen=True, slots=True)
class FixtureEntry:
    """One checked ``responses[i]`` entry; ``label`` is how errors and logs name it."""

    index: int
    label: str
    method: str
    path: str | None
    url_key: tuple[str, str, int, str] | None
    query: Mapping[str, str]
    response: FixtureResponse


class FixtureSet:
    """All entries of one fixture file, indexed for matching; immutable once loaded."""

    def __init__(self, source: str, graph_root: str, entries: tuple[FixtureEntry, ...]) -> None:
        self.source = source
        self.graph_root = graph_root
        self.entries = entries
        self._root_scheme, self._root_host, self._root_port, self._root_path = _root_parts(
            graph_root
        )
        self._by_path: dict[tuple[str, str], list[FixtureEntry]] = {}
        self._by_url: dict[tuple[str, tuple[str, str, int, str]], list[FixtureEntry]] = {}
        for entry in entries:
            if entry.path is not None:
                key = (entry.method, canonical_path(entry.path))
                self._by_path.setdefault(key, []).append(entry)
            elif entry.url_key is not None:
                self._by_url.setdefault((entry.method, entry.url_key), []).append(entry)

    def graph_path(self, url: str) -> str | None:
        """The percent-decoded path after the Graph root, or None when ``url`` is elsewhere."""
        parts = _split(url)
        if parts is None:
            return None
        scheme, host, port, raw_path, _ = parts
        if (scheme, host, port) != (self._root_scheme, self._root_host, self._root_port):
            return None
        if not raw_path.startswith(self._root_path + "/"):
            return None
        return unquote(raw_path[len(self._root_path) :])

    def match(self, method: str, url: str) -> FixtureEntry | None:
        """The entry answering ``method url``, by the rules in docs/FIXTURES.md, or None."""
        parts = _split(url)
        if parts is None:
            return None
        scheme, host, port, raw_path, raw_query = parts
        query = decode_query(raw_query)
        rel = self.graph_path(url)
        if rel is None:
            key = (scheme, host, port, unquote(raw_path) or "/")
            for entry in self._by_url.get((method, key), ()):
                if dict(entry.query) == query:
                    return entry
            return None
        significant = {k: v for k, v in query.items() if k.casefold() in SIGNIFICANT_QUERY_KEYS}
        best: FixtureEntry | None = None
        for entry in self._by_path.get((method, canonical_path(rel)), ()):
            if any(query.get(k) != v for k, v in entry.query.items()):
                continue
            if any(entry.query.get(k) != v for k, v in significant.items()):
                continue
            if best is None or len(entry.query) > len(best.query):
                best = entry
        return best


def canonical_path(path: str) -> str:
    """The decoded Graph path used for matching: ``/me/drive/root:/a/b.txt:`` and
    ``/me/drive/root:/a/b.txt`` address the same item in Graph, so they match alike."""
    if path.endswith(":") and ":/" in path[:-1]:
        return path[:-1]
    return path


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _root_parts(root: str) -> tuple[str, str, int, str]:
    """Scheme, host, port and path (no trailing slash) of an already checked Graph root."""
    parts = urlsplit(root)
    scheme = parts.scheme.lower()
    return (
        scheme,
        (parts.hostname or "").lower(),
        parts.port or _default_port(scheme),
        parts.path.rstrip("/"),
    )


def _split(url: str) -> tuple[str, str, int, str, str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    return (
        scheme,
        (parts.hostname or "").lower(),
        port or _default_port(scheme),
        parts.path,
        parts.query,
    )


def decode_query(raw: str) -> dict[str, str]:
    """Split and percent-decode a query; ``+`` stays ``+`` (Graph does not read it as space)."""
    query: dict[str, str] = {}
    for part in raw.split("&"):
        if part:
            key, _, value = part.partition("=")
            query[unquote(key)] = unquote(value)
    return query


# --- loading and checking -----------------------------------------------------------------


def load_fixtures(path: Path | str, *, limits: Limits = DEFAULT_LIMITS) -> FixtureSet:
    """Read a fixture file once, under ``limits.fixture_file_bytes``, and check all of it.

    Raises FixtureError (one line: file, entry, problem) for anything that cannot be served,
    so start-up fails before the first request instead of in the middle of a session.
    """
    source = escape_controls(str(path))
    limit = limits.fixture_file_bytes
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise FixtureError(
            f"{source}: cannot read fixture file: {escape_controls(reason)}"
        ) from None
    if len(data) > limit:
        raise FixtureError(f"{source}: fixture file is larger than the {limit:,}-byte limit")
    return parse_fixtures(data, source=source, limits=limits)


def parse_fixtures(
    data: bytes, *, source: str = "<fixtures>", limits: Limits = DEFAULT_LIMITS
) -> FixtureSet:
    """Check fixture bytes already in memory (the caller bounds their size)."""
    return _Loader(source, limits).load(data)


def _fixture_json(limits: Limits) -> Strictness:
    """A number nothing could carry is refused at once; an object that repeats a key is
    flagged, so the checks below can say where it is."""
    return Strictness(integer_digits=limits.fixture_integer_digits, repeated_keys="flag")


class _Loader:
    """Checks a parsed fixture document entry by entry; every problem is one FixtureError."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.graph_root = DEFAULT_GRAPH_ROOT

    def fail(self, where: str, problem: str) -> NoReturn:
        prefix = f"{self.source}: {where}: " if where else f"{self.source}: "
        raise FixtureError(prefix + problem)

    def load(self, data: bytes) -> FixtureSet:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            self.fail("", f"fixture file is not UTF-8 (invalid byte at offset {err.start:,})")
        text = text.removeprefix("\ufeff")
        try:
            doc = parse_strict(text, _fixture_json(self.limits)).value
        except StrictJsonError as err:
            if err.kind == "syntax":
                self.fail("", f"malformed JSON at line {err.line} column {err.column}: {err}")
            self.fail("", f"malformed JSON: {err}")
        self.check_duplicate_keys("", doc, ())
        problem = top_problems(doc, self.limits)
        if problem is not None:
            self.fail_top(problem)
        if "graphRoot" in doc:
            self.graph_root = self.check_root(doc["graphRoot"])
        responses = doc["responses"]
        entries: list[FixtureEntry] = []
        seen: dict[tuple[object, ...], str] = {}
        for index, raw in enumerate(responses):
            entry = self.check_entry(index, raw)
            path = canonical_path(entry.path) if entry.path is not None else None
            identity = (entry.method, path, entry.url_key, frozenset(entry.query.items()))
            if identity in seen:
                self.fail(
                    entry.label, f"duplicate of {seen[identity]} (same method, target and query)"
                )
            seen[identity] = f"responses[{index}]"
            entries.append(entry)
        return FixtureSet(self.source, self.graph_root, tuple(entries))

    # --- structure: FIXTURE_SCHEMA, worded ---------------------------------------------

    def fail_top(self, problem: Problem) -> NoReturn:
        if problem.object_level:
            self.fail(problem.name(), problem.text)
        self.fail(problem.name(), problem.text if problem.path else f"the top level {problem.text}")

    def fail_entry(self, where: str, problem: Problem) -> NoReturn:
        name = problem.name()
        if problem.object_level:
            self.fail(f"{where} {name}" if name else where, problem.text)
        self.fail(where, f"{name or 'an entry'} {problem.text}")

    def check_duplicate_keys(self, where: str, obj: object, members: tuple[str, ...]) -> None:
        """A repeated key is lost by any JSON parser; say where, for the structural objects."""
        if not isinstance(obj, dict):
            return
        if isinstance(obj, RepeatedKeys):
            self.fail(where, f"key {show_value(obj.repeated)} appears twice")
        for member in members:
            inner = obj.get(member)
            if isinstance(inner, RepeatedKeys):
                self.fail(where, f"{member} has the key {show_value(inner.repeated)} twice")

    def check_root(self, root: object) -> str:
        if not isinstance(root, str):
            self.fail("graphRoot", f"must be a string URL, not {type_name(root)}")
        try:
            parts = urlsplit(root)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            self.fail("graphRoot", f"{show_value(root)} is not a URL")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self.fail("graphRoot", f"{show_value(root)} must be an http(s) URL with a host")
        if parts.query or parts.fragment or parts.username is not None or _SURROGATE.search(root):
            self.fail("graphRoot", f"{show_value(root)} must not carry a query, fragment or user")
        return root.rstrip("/")

    def check_entry(self, index: int, raw: object) -> FixtureEntry:
        where = f"responses[{index}]"
        self.check_duplicate_keys(where, raw, ("request", "response"))
        if isinstance(raw, dict):
            self.check_duplicate_keys(f"{where} request", raw.get("request"), ("query",))
        outside, inside = entry_problems(raw, self.limits)
        if outside is not None:
            self.fail_entry(where, outside)
        assert isinstance(raw, dict)
        request = raw["request"]
        method = request["method"]
        query = dict(request.get("query", {}))
        self.check_no_surrogates(where, "request.query", query)
        path: str | None = None
        url_key: tuple[str, str, int, str] | None = None
        if "path" in request:
            path = self.check_path(where, request["path"])
            label = f"{where} (GET {escape_controls(path[:160])})"
        else:
            url_key, url_query, shown = self.check_url(where, request["url"])
            label = f"{where} (GET {shown})"
            for key, value in url_query.items():
                if key in query:
                    self.fail(
                        label, f"request.query repeats {show_value(key)} from the url's own query"
                    )
                query[key] = value
        self.check_duplicate_keys(f"{label} response", raw["response"], ("headers", "repeat"))
        if inside is not None:
            self.fail_entry(label, inside)
        response = self.check_response(label, raw["response"], path)
        return FixtureEntry(index, label, method, path, url_key, query, response)

    def check_no_surrogates(self, where: str, name: str, obj: dict[str, str]) -> None:
        for key, value in obj.items():
            if _SURROGATE.search(key) or _SURROGATE.search(value):
                self.fail(where, f"{name}[{show_value(key)}] holds a lone surrogate escape")

    def check_path(self, where: str, path: str) -> str:
        if _SURROGATE.search(path):
            self.fail(where, f"request.path {show_value(path)} holds a lone surrogate escape")
        return path

    def check_url(
        self, where: str, url: object
    ) -> tuple[tuple[str, str, int, str], dict[str, str], str]:
        if not isinstance(url, str):
            self.fail(where, f"request.url must be a string, not {type_name(url)}")
        parts = _split(url)
        raw = urlsplit(url) if parts is not None else None
        if parts is None or raw is None or raw.scheme.lower() not in ("http", "https"):
            self.fail(where, "request.url must be an absolute http(s) URL")
        scheme, host, port, raw_path, raw_query = parts
        shown = escape_controls(f"{scheme}://{host}{raw_path}"[:160])
        if not host or raw.fragment or raw.username is not None or _SURROGATE.search(url):
            self.fail(where, f"request.url {shown} needs a host and no fragment or user")
        root_scheme, root_host, root_port, root_path = _root_parts(self.graph_root)
        if (scheme, host, port) == (root_scheme, root_host, root_port) and raw_path.startswith(
            root_path + "/"
        ):
            self.fail(where, f"request.url {shown} is under graphRoot; write it as request.path")
        query: dict[str, str] = {}
        for part in raw_query.split("&"):
            if part:
                key, _, value = part.partition("=")
                key = unquote(key)
                if key in query:
                    self.fail(where, f"request.url repeats the query key {show_value(key)}")
                query[key] = unquote(value)
        return (scheme, host, port, unquote(raw_path) or "/"), query, shown

    def check_response(
        self, label: str, response: dict[str, Any], path: str | None
    ) -> FixtureResponse:
        """Only what the schema cannot say: Content-Length digits, surrogates, bodies."""
        status = response.get("status", 200)
        headers: dict[str, str] = dict(response.get("headers", {}))
        self.check_no_surrogates(label, "response.headers", headers)
        for name, value in headers.items():
            if name.lower() == "content-length" and not value.isdigit():
                self.fail(label, 'response.headers["Content-Length"] must be a whole number')
        delay = response.get("delayMs", 0)
        answer = self.check_body(label, response, path, status, tuple(headers.items()))
        return dataclasses.replace(answer, delay_ms=delay) if delay else answer

    def check_body(
        self,
        label: str,
        response: dict[str, Any],
        path: str | None,
        status: int,
        pairs: tuple[tuple[str, str], ...],
    ) -> FixtureResponse:
        present = [key for key in _BODY_KEYS if key in response]
        if len(present) > 1:
            self.fail(label, f"response has more than one body: {', '.join(present)}")
        if not present:
            return FixtureResponse(status, pairs, b"")
        kind = present[0]
        value = response[kind]
        if kind == "json":
            self.check_json_body(label, value, path)
            encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            return FixtureResponse(status, pairs, encoded.encode("utf-8"), is_json=True)
        if kind == "text":
            if _SURROGATE.search(value):
                self.fail(label, "response.text holds a lone surrogate escape (not UTF-8)")
            return FixtureResponse(status, pairs, value.encode("utf-8"), is_text=True)
        if kind == "base64":
            try:
                decoded = base64.b64decode(value.encode("ascii"), validate=True)
            except (UnicodeEncodeError, binascii.Error):
                self.fail(label, "response.base64 is not valid base64")
            return FixtureResponse(status, pairs, decoded)
        return FixtureResponse(status, pairs, self.check_repeat(label, value))

    def check_repeat(self, label: str, repeat: dict[str, Any]) -> RepeatBody:
        text, size = repeat["text"], repeat["bytes"]
        if _SURROGATE.search(text):
            self.fail(label, "response.repeat.text must be a non-empty UTF-8 string")
        return RepeatBody(text, size)

    # --- json bodies ------------------------------------------------------------------

    def check_json_body(self, label: str, body: object, path: str | None) -> None:
        """Collections, paging links and message bodies, checked the way a tool reads them."""
        if isinstance(body, dict) and "value" in body:
            items = body["value"]
            if not isinstance(items, list):
                self.fail(label, f"response.json.value must be an array, not {type_name(items)}")
            for position, item in enumerate(items):
                where = f"response.json.value[{position}]"
                if not isinstance(item, dict):
                    self.fail(
                        label, f"{where}: collection item must be an object, not {type_name(item)}"
                    )
                if not isinstance(item.get("id"), str):
                    self.fail(label, f'{where}: collection item has no string "id"')
        if isinstance(body, dict) and "@odata.nextLink" in body:
            link = body["@odata.nextLink"]
            if not isinstance(link, str) or not is_graph_url(link, self.graph_root):
                self.fail(
                    label,
                    f"response.json.@odata.nextLink must be a URL under {self.graph_root}, "
                    f"not {show_value(link)}",
                )
        in_messages = path is not None and "/messages" in path.casefold()
        stack: list[tuple[object, str, int]] = [(body, "response.json", 0)]
        while stack:
            node, where, depth = stack.pop()
            if depth > self.limits.fixture_json_depth:
                self.fail(
                    label, f"{where}: nested deeper than {self.limits.fixture_json_depth} levels"
                )
            if isinstance(node, str):
                if _SURROGATE.search(node):
                    self.fail(label, f"{where}: lone surrogate escape (not UTF-8)")
            elif isinstance(node, list):
                stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(node))
            elif isinstance(node, dict):
                if isinstance(node, RepeatedKeys):
                    self.fail(label, f"{where}: key {show_value(node.repeated)} appears twice")
                self.check_message_body(label, where, node, in_messages)
                for key, value in node.items():
                    if _SURROGATE.search(key):
                        self.fail(label, f"{where}: a key holds a lone surrogate escape")
                    stack.append((value, f"{where}.{escape_controls(key[:60])}", depth + 1))

    def check_message_body(
        self, label: str, where: str, node: dict[str, Any], in_messages: bool
    ) -> None:
        body = node.get("body")
        if not isinstance(body, dict):
            return
        odata_type = node.get("@odata.type")
        message_like = (
            in_messages
            or "subject" in node
            or (isinstance(odata_type, str) and "message" in odata_type.casefold())
        )
        if not message_like:
            return
        content_type = body.get("contentType")
        if not isinstance(content_type, str) or content_type.casefold() not in ("text", "html"):
            self.fail(
                label,
                f'{where}.body: message body contentType must be "text" or "html", '
                f"not {show_value(content_type)}",
            )
        if not isinstance(body.get("content"), str):
            self.fail(label, f"{where}.body: message body content must be a string")
