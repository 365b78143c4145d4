"""Graph URL rules: how we build request URLs and how we decide a URL is Graph's.

Query strings are encoded by hand with ``%20`` for spaces (httpx's ``params=`` writes
``+``, which Graph rejects in ``$filter``/``$orderby``), and every path segment is
percent-encoded on its own so a ``#`` or ``?`` in a file name cannot become a fragment
or a query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote, urlencode, urlsplit

__all__ = [
    "DEFAULT_GRAPH_ROOT",
    "build_url",
    "encode_query",
    "is_graph_url",
    "quote_segment",
    "with_select",
]

DEFAULT_GRAPH_ROOT = "https://graph.microsoft.com/v1.0"


def quote_segment(segment: str) -> str:
    """Percent-encode one path segment (``/`` included), keeping Graph's ``!``, ``:`` ids."""
    return quote(segment, safe="!$&'()*+,;=:@-._~")


def encode_query(query: Mapping[str, str]) -> str:
    """``$filter=isRead%20eq%20false``: spaces as ``%20``, ``$`` kept readable."""
    return urlencode(dict(query), quote_via=quote, safe="$,'()")


def build_url(root: str, path: str | Iterable[str], query: Mapping[str, str] | None = None) -> str:
    """Join the Graph root, a path (raw string, already safe, or segments to encode) and a query."""
    if isinstance(path, str):
        encoded_path = path if path.startswith("/") else "/" + path
    else:
        encoded_path = "/" + "/".join(quote_segment(part) for part in path)
    url = root.rstrip("/") + encoded_path
    if query:
        url += "?" + encode_query(query)
    return url


def with_select(url: str, select: str) -> str:
    """``url`` asking for ``$select=select`` unless it already names a ``$select``.

    Graph's next links usually repeat the first request's options, but not always (a
    ``$skiptoken`` link may carry none): a continuation must not fetch more fields, with
    their download URLs, than the first page did.
    """
    query = urlsplit(url).query
    names = {_param_name(part) for part in query.split("&")}
    if "$select" in names:
        return url
    joiner = "&" if query else ("" if url.endswith("?") else "?")
    return url + joiner + encode_query({"$select": select})


def _param_name(part: str) -> str:
    """A query parameter's name, decoded (only a name with an escape needs the decoder)."""
    name = part.partition("=")[0]
    return (unquote(name) if "%" in name else name).lower()


def is_graph_url(url: str, root: str) -> bool:
    """True only for an https URL on the root's host and port, under the root's path.

    The bearer token goes wherever a URL points, so anything else — another host, a
    userinfo trick, a different port, a path outside the API version, a `..` segment
    however it is percent-encoded (`%2e%2e`, `%252E%252E`) — is refused.
    """
    try:
        target = urlsplit(url)
        base = urlsplit(root)
        target_port = target.port
        base_port = base.port
    except ValueError:
        return False
    if target.scheme != base.scheme or target.scheme not in ("https", "http"):
        return False
    if target.username is not None or target.password is not None or target.fragment:
        return False
    if (target.hostname or "").lower() != (base.hostname or "").lower():
        return False
    if target_port != base_port:
        return False
    base_path = base.path.rstrip("/") + "/"
    decoded = _fully_decoded(target.path)
    return (
        decoded is not None
        and target.path.startswith(base_path)
        and decoded.startswith(base_path)
        and not _DOT_SEGMENT.search(decoded)
    )


DECODE_ROUNDS = 4
"""Percent-decodings tried on a path; one still changing after that is refused."""
_DOT_SEGMENT = re.compile(r"(?:^|[/\\])\.\.(?:[/\\;]|$)")
"""A ``..`` segment: ``/`` or ``\\`` before it, ``/``, ``\\``, ``;params`` or the end after it."""


def _fully_decoded(path: str) -> str | None:
    """``path`` percent-decoded until it stops changing (``%252e`` is ``%2e`` is ``.``).

    A server or proxy on the way may decode once or twice before it resolves dot segments,
    so the check must see what the last decoder would: None when that takes more rounds
    than ``DECODE_ROUNDS``.
    """
    for _ in range(DECODE_ROUNDS):
        decoded = unquote(path, errors="replace")
        if decoded == path:
            return path
        path = decoded
    return None
