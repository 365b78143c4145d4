"""Opaque continuation cursors: how the assistant asks for the rest, on purpose.

A cursor is base64url (no padding) of ``{"v":1,"s":scope,"u":url,"k":skip}``: the Graph
URL of the page to read (a nextLink, or the current page when we showed only part of it),
and how many items of that page were already shown. It is not signed: it comes back from
the assistant, so ``decode_cursor`` treats it as untrusted input and checks everything
(above all that the URL is one our bearer token may be sent to) before any request.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from mfconnector.errors import ToolInputError
from mfconnector.graph.urls import is_graph_url

__all__ = [
    "CURSOR_VERSION",
    "MAX_CURSOR_CHARS",
    "MAX_CURSOR_SKIP",
    "Continuation",
    "decode_cursor",
    "encode_cursor",
]

CURSOR_VERSION = 1
MAX_CURSOR_CHARS = 4_096
"""Longest cursor accepted (and issued)."""
MAX_CURSOR_SKIP = 1_000
"""Most items of one page a cursor may skip (Graph's largest ``$top``)."""

_UNCHANGED = "pass the `cursor` value from the previous result unchanged"
_NOT_OURS = f"this cursor is not one mfconnector issued; {_UNCHANGED}"
_BASE64URL_RE = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")
_SCOPE_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Continuation:
    """Where to continue: the Graph URL to GET and how many of its items to skip."""

    url: str
    skip: int


def encode_cursor(*, scope: str, url: str, skip: int = 0) -> str:
    """The cursor for ``url`` (skipping ``skip`` items), for the tool named by ``scope``.

    Raises ValueError for a skip out of range or a URL too long to fit a cursor: the
    caller should then report the result as incomplete without a cursor.
    """
    if type(skip) is not int or not 0 <= skip <= MAX_CURSOR_SKIP:
        raise ValueError(f"skip must be an int in 0..{MAX_CURSOR_SKIP}")
    doc = {"v": CURSOR_VERSION, "s": scope, "u": url, "k": skip}
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=True)
    cursor = base64.urlsafe_b64encode(text.encode("ascii")).rstrip(b"=").decode("ascii")
    if len(cursor) > MAX_CURSOR_CHARS:
        raise ValueError(f"cursor would be {len(cursor):,} characters (max {MAX_CURSOR_CHARS:,})")
    return cursor


CURSOR_HINT = (
    "pass skipped.items.cursor from this tool's previous result unchanged, "
    "or call without a cursor to start from the first page"
)


def _refuse(message: str) -> ToolInputError:
    return ToolInputError(message, hint=CURSOR_HINT)


def _load(cursor: str) -> dict[str, Any]:
    text = cursor.strip()
    if not text or not _BASE64URL_RE.match(text):
        raise _refuse(f"{_NOT_OURS} (it is not base64url text)")
    text = text.rstrip("=")
    if len(text) % 4 == 1:
        raise _refuse(f"{_NOT_OURS} (it is cut short or has extra characters)")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (binascii.Error, UnicodeDecodeError, ValueError, RecursionError):
        raise _refuse(f"{_NOT_OURS} (its content is not readable)") from None
    if not isinstance(doc, dict):
        raise _refuse(f"{_NOT_OURS} (its content is not readable)")
    return doc


def _no_constants(name: str) -> Any:
    raise ValueError(name)


def _check_path(url: str, root: str, path_prefixes: Sequence[str], scope: str) -> None:
    path = urlsplit(url).path
    segments = unquote(path).replace("\\", "/").split("/")
    if "." in segments or ".." in segments:
        raise _refuse(f"{_NOT_OURS} (its link has a dot segment)")
    base = urlsplit(root).path.rstrip("/")
    if not any(path.startswith(base + prefix) for prefix in path_prefixes):
        raise _refuse(
            f"this cursor does not continue a `{scope}` listing (its link points elsewhere "
            f"in Graph); {_UNCHANGED}"
        )


def decode_cursor(
    cursor: str, *, scope: str, root: str, path_prefixes: Sequence[str]
) -> Continuation:
    """The continuation a cursor names, or ToolInputError saying what to do instead.

    ``scope`` is the tool expected to have issued it; the URL must be under ``root``
    (scheme, host, port, path) and under ``root``'s path plus one of ``path_prefixes``.
    """
    if not isinstance(cursor, str):
        raise _refuse(f"the cursor must be a string; {_UNCHANGED}")
    if len(cursor) > MAX_CURSOR_CHARS:
        raise _refuse(
            f"the cursor is longer than {MAX_CURSOR_CHARS:,} characters, so it is not one "
            f"mfconnector issued; {_UNCHANGED}"
        )
    doc = _load(cursor)
    version = doc.get("v")
    if type(version) is not int or version != CURSOR_VERSION:
        raise _refuse(
            f"this cursor comes from another mfconnector version; start the listing again "
            f"without a cursor, then {_UNCHANGED}"
        )
    issued_by = doc.get("s")
    if not isinstance(issued_by, str):
        raise _refuse(_NOT_OURS)
    if issued_by != scope:
        named = f"`{issued_by}`" if _SCOPE_RE.match(issued_by) else "another tool"
        raise _refuse(
            f"this cursor belongs to {named}, not `{scope}`: pass it to the tool that "
            "returned it, or call this tool without a cursor"
        )
    url = doc.get("u")
    if not isinstance(url, str) or not is_graph_url(url, root):
        raise _refuse(f"{_NOT_OURS} (its link does not point into Microsoft Graph)")
    _check_path(url, root, path_prefixes, scope)
    skip = doc.get("k")
    if type(skip) is not int or not 0 <= skip <= MAX_CURSOR_SKIP:
        raise _refuse(f"{_NOT_OURS} (its item offset is out of range)")
    return Continuation(url=url, skip=skip)
