"""Graph's answers read with the capped body reader (``net.capped_body``), in Graph's words.

The bounds are the shared reader's: a Graph answer never costs more memory than its byte
cap, raw or inflated. Here each ``BodyError`` becomes the ``GraphError`` (or
``ResponseTooLargeError``) the tools report, with a hint of what to ask for instead.

- ``read_capped``: JSON answers; past the cap is an error.
- ``read_prefix``: file downloads; past the cap we stop and say the data is partial.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from mfconnector.errors import GraphError, ResponseTooLargeError
from mfconnector.limits import Limits
from mfconnector.net import capped_body
from mfconnector.net.capped_body import BodyError

__all__ = [
    "as_graph_error",
    "checked_cost",
    "content_coding",
    "decode_utf8_strict",
    "graph_words",
    "parse_json_strict",
    "parse_json_text",
    "read_capped",
    "read_json",
    "read_prefix",
]

_ASK_FOR_LESS = "ask for less: fewer items ($top), fewer fields ($select), or a smaller range"


def as_graph_error(error: BodyError) -> GraphError:
    """The ``GraphError`` a body the reader refused is reported as."""
    status = error.status
    if error.problem == "too_large":
        return ResponseTooLargeError(
            f"Graph answer is larger than the {error.limit:,}-byte limit ({error.detail})",
            status=status,
            hint=_ASK_FOR_LESS,
        )
    if error.problem == "too_many_values":
        return ResponseTooLargeError(
            f"Graph answer holds {error.detail} JSON values, more than the {error.limit:,}-value "
            "limit; it was not parsed",
            hint=_ASK_FOR_LESS,
        )
    if error.problem == "coding":
        return GraphError(
            "Graph answered with a Content-Encoding this client cannot bound safely "
            f"({error.detail}); only identity, gzip and deflate are accepted",
            status=status,
            retry_safe=True,
            hint="retry later; if it persists, a proxy between you and Graph is recompressing "
            "answers",
        )
    if error.problem == "corrupt":
        return GraphError(
            "Graph's compressed answer could not be decoded (corrupt or cut short)",
            status=status,
            retry_safe=True,
            hint="retry later",
        )
    return GraphError(
        f"invalid JSON from Graph: the answer is {error.detail}",
        retry_safe=True,
        hint="retry later; if it persists, note the time and report it",
    )


@contextmanager
def graph_words() -> Iterator[None]:
    """The body reader's refusals, raised as Graph's errors (without the reader's context)."""
    try:
        yield
    except BodyError as error:
        raise as_graph_error(error) from None


async def read_json(response: httpx.Response, *, limits: Limits) -> Any:
    """A streamed JSON answer, read under ``graph_body_bytes``, its values counted (at most
    ``graph_body_values``), strict UTF-8 and standard JSON; None for an empty body. The
    bytes die as soon as they are decoded: parsing then holds text and objects only."""
    with graph_words():  # once for the four steps (each read of a page passes here)
        data = await capped_body.read_capped(response, limits.graph_body_bytes, limits=limits)
        text = capped_body.decode_utf8_strict(
            capped_body.checked_cost(data, limits.graph_body_values)
        )
        del data
        return capped_body.parse_json_text(text) if text else None


async def read_capped(response: httpx.Response, limit: int, *, limits: Limits) -> bytes:
    """The whole body of a streamed response, or ``ResponseTooLargeError`` past ``limit``.

    The declared Content-Length is checked first (refused before reading anything), then
    raw bytes are counted as they arrive, so a lying or absent Content-Length changes
    nothing. Reading stops at the first chunk past the cap.
    """
    with graph_words():
        return await capped_body.read_capped(response, limit, limits=limits)


async def read_prefix(
    response: httpx.Response, limit: int, skip: int = 0, *, limits: Limits
) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body after its first ``skip``, and True when that was
    all of it. For downloads: a file larger than the cap is not an error, we just stop."""
    with graph_words():
        return await capped_body.read_prefix(response, limit, skip, limits=limits)


def content_coding(headers: Mapping[str, str], status: int) -> str | None:
    """The one coding to undo (gzip, deflate), or None for identity; else a GraphError."""
    with graph_words():
        return capped_body.content_coding(headers, status)


def checked_cost(data: bytes, max_values: int) -> bytes:
    """``data``, unless it holds more JSON values than ``max_values`` (keys included)."""
    with graph_words():
        return capped_body.checked_cost(data, max_values)


def decode_utf8_strict(data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped); GraphError otherwise, never echoing data."""
    with graph_words():
        return capped_body.decode_utf8_strict(data)


def parse_json_text(text: str) -> Any:
    """Standard JSON only (no NaN, Infinity, ``1e999`` or absurd nesting); else GraphError."""
    with graph_words():
        return capped_body.parse_json_text(text)


def parse_json_strict(data: bytes) -> Any:
    """Parse a Graph body: strict UTF-8, standard JSON only. The error never echoes it.

    To keep peak memory down, callers holding a large body can instead write
    ``parse_json_text(decode_utf8_strict(await read_capped(...)))`` so the bytes are
    freed before the (larger) Python objects are built.
    """
    return parse_json_text(decode_utf8_strict(data))
