"""Reading a window of a file's bytes, and what the download host's answers mean.

``/content`` and ``/$value`` answer either the bytes (200, or 206 to a Range) or a redirect
to a pre-authenticated URL that ``GraphClient`` fetches without the token. Either way the
body is read under a cap and the result says whether it is the whole file (``complete``) and,
where the answer says so, the file's total size. A window that starts past the first byte
(``first``) is asked for with ``Range: bytes=first-last`` (RFC 9110 §14); a host that
ignores the Range and answers 200 with the whole file is read through, the bytes before
the window dropped as they arrive, so memory stays within the cap either way. The download
host's own errors name only the status, never its URL or body text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from http import HTTPStatus

import httpx

from mfconnector.errors import GraphError
from mfconnector.graph.body import read_prefix
from mfconnector.graph.errors import clean_text, graph_error_from_response
from mfconnector.graph.retry import RETRIED, Answer
from mfconnector.limits import Limits

__all__ = ["Download", "download_host_error", "parse_content_range", "read_download"]

_CONTENT_RANGE_RE = re.compile(r"^\s*bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Download:
    """``max_bytes`` of a file from byte ``first``. ``complete`` is False when bytes after
    the window were left unread."""

    data: bytes
    content_type: str | None
    complete: bool
    total_size: int | None
    first: int = 0

    def __repr__(self) -> str:
        return (
            f"Download(<{len(self.data):,} bytes>, content_type={self.content_type!r}, "
            f"complete={self.complete}, total_size={self.total_size})"
        )


def parse_content_range(value: str | None) -> tuple[int | None, int | None]:
    """(first byte, total size) from ``bytes 0-99/1234``; None where unknown."""
    match = _CONTENT_RANGE_RE.match(value or "")
    if not match:
        return None, None
    first = int(match.group(1)) if match.group(1) is not None else None
    total = int(match.group(3)) if match.group(3) != "*" else None
    return first, total


def download_host_error(answer: Answer, limits: Limits) -> GraphError:
    """An error from the download host: status only, never its URL or body text."""
    if answer.status in RETRIED:
        return graph_error_from_response(answer.status, answer.headers, b"", limits=limits)
    try:
        phrase = HTTPStatus(answer.status).phrase
    except ValueError:
        phrase = "unexpected status"
    expired = answer.status in (401, 403, 404, 410)
    return GraphError(
        f"the file's download host answered {answer.status} {phrase}",
        status=answer.status,
        retry_safe=expired or answer.status >= 500,
        hint=(
            "the download link expired or was withdrawn: ask for the download again"
            if expired
            else "retry later"
        ),
    )


async def read_download(
    response: httpx.Response, cap: int, first: int = 0, *, limits: Limits
) -> Download:
    """Read at most ``cap`` bytes from byte ``first`` of a 200 or 206 answer and say how
    complete they are."""
    raw_type = response.headers.get("content-type")
    content_type = clean_text(raw_type, limits.content_type_chars) if raw_type else None
    encoded = response.headers.get("content-encoding", "identity").strip().lower() != "identity"
    if response.status_code == 206:
        started, total = parse_content_range(response.headers.get("content-range"))
        if started not in (first, None) or (started is None and first):
            raise GraphError(
                "the file's download host answered a range that was not asked for",
                retry_safe=True,
                hint="retry later",
            )
        data, whole = await read_prefix(response, cap, limits=limits)
        if total is None and whole and len(data) < cap:
            total = first + len(data)  # the range came back short: that was the end
        complete = whole and total is not None and first + len(data) >= total
        return Download(data, content_type, complete, total, first)
    data, whole = await read_prefix(response, cap, skip=first, limits=limits)
    declared = response.headers.get("content-length")
    total = int(declared) if declared and declared.isdigit() and not encoded else None
    if whole and total is None:
        total = first + len(data)
    return Download(data, content_type, whole, total, first)
