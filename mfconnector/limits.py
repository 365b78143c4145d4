"""Every limit the server enforces, in one frozen object with the unit in each name.

Memory budget (the worst case the runtime can hold at once, by construction):

    (inbox_depth + 1) x line_bytes       parsed requests waiting, and the reader's own
  + workers x graph_body_bytes           one Graph body per busy worker (4 downloading
                                         at once, the rest holding a parsed answer)
  + (outbox_depth + workers + 1)
      x response_bytes                   replies queued, waiting to be queued, being sent
  + read_chunk_bytes                     the reader's one chunk in flight

With the defaults: 9 x 1 MB + 8 x 2 MB + 17 x 1 MB + 64 KiB ~= 42 MB of payload. Parsed
JSON costs a small multiple of its bytes in Python objects (about 2.5x for Graph pages,
bench/README.md), so the true ceiling is near 100 MB; typical use stays near 30 MB. A stalled
stdout fills the outbox, then blocks the workers, then the inbox, then the reader:
nothing grows past this product. ``docs/LIMITS.md`` lists each attack beside the
limit that bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    # --- stdio framing and the runtime -------------------------------------------------
    line_bytes: int = 1_000_000
    """Longest accepted input line, newline included. Longer lines are drained, not held."""
    read_chunk_bytes: int = 65_536
    """Bytes asked of stdin per read (the Linux pipe capacity)."""
    inbox_depth: int = 8
    """Parsed requests waiting for a free worker."""
    workers: int = 8
    """Requests handled at once; a fixed pool, never one task per request."""
    outbox_depth: int = 8
    """Encoded responses waiting for the writer."""
    response_bytes: int = 1_000_000
    """Largest encoded response line; a larger one is replaced by an internal error."""
    eof_grace_seconds: float = 10.0
    """After end of input (or SIGTERM), how long in-flight requests may still run."""
    shutdown_flush_seconds: float = 5.0
    """After the grace period, how long the writer may still take to flush replies."""

    # --- Microsoft Graph ---------------------------------------------------------------
    graph_body_bytes: int = 2_000_000
    """Largest Graph response body read, counted as raw bytes while they arrive."""
    graph_concurrency: int = 4
    """Graph requests in flight at once (Outlook allows 4 per app and mailbox)."""
    graph_connect_timeout_seconds: float = 10.0
    graph_read_timeout_seconds: float = 30.0
    """Longest silence between two chunks of one response."""
    graph_request_seconds: float = 60.0
    """Whole request, body included: a slow trickle cannot hold a worker past this."""
    graph_retries: int = 2
    """Extra attempts after a 429/503/504, each after its Retry-After."""
    graph_retry_after_max_seconds: float = 30.0
    """Longest single Retry-After honoured; longer answers fail fast with the wait."""
    graph_retry_total_seconds: float = 45.0
    """Longest total wait across retries of one call."""
    graph_close_seconds: float = 1.0
    """Longest a response may take to close (shielded from cancellation) before it is dropped."""
    graph_inflate_step_bytes: int = 65_536
    """Most decoded bytes one ``decompress`` call may produce (a gzip bomb never lands whole)."""
    graph_stream_finish_steps: int = 8
    """Most reads spent finishing a half-read response stream after stopping early."""
    graph_stream_finish_seconds: float = 1.0
    """Longest time spent finishing a half-read response stream after stopping early."""
    graph_error_message_chars: int = 500
    """Most characters of Graph's own error message kept in ours."""
    graph_error_nesting_depth: int = 8
    """Most nested ``innerError`` levels read for the specific error code."""
    retry_after_reported_max_seconds: float = 86_400.0
    """Longest wait an error repeats back; longer Retry-After values read as a day."""
    challenge_header_chars: int = 8_192
    """Most characters of a ``WWW-Authenticate`` header parsed (and of one of its values)."""
    claims_challenge_chars: int = 8_192
    """Longest base64 claims challenge decoded."""
    fixture_file_bytes: int = 2_000_000
    """Largest fixture file read at start-up."""

    html_nesting_depth: int = 256
    """Deepest element nesting an HTML body may open before it is read as plain words:
    HTML5 parsers (lexbor included) check scope over the open elements at each tag,
    so their cost is tags x depth. Browsers stop nesting at 512."""

    # --- tool arguments (published in the input schemas of tools/list) -------------------
    query_chars: int = 500
    """Longest search text (mail KQL, drive search)."""
    path_chars: int = 1_024
    """Longest folder name or id, and longest drive path."""
    outlook_id_chars: int = 1_024
    """Longest Outlook message id accepted (real ones are 150-200 characters)."""
    drive_id_chars: int = 400
    """Longest drive item id accepted (real ones are 20-40 characters)."""

    # --- results shown to the assistant ------------------------------------------------
    list_items: int = 50
    """Most items in one list result."""
    body_chars: int = 10_000
    """Most characters of a mail body or file text in one result."""
    field_chars: int = 1_000
    """Most characters of any other string field (subjects, names, previews)."""
    list_field_items: int = 20
    """Most entries of a list inside an item (recipients, categories, attachments)."""
    result_bytes: int = 800_000
    """Most bytes a list's items may cost on the wire, counted as structured content plus
    its text copy, both escaped as sent; past it a list stops early with a cursor. The
    rest of ``response_bytes`` is left for the envelope and the ``skipped`` record."""
    cursor_chars: int = 4_096
    """Longest continuation cursor issued or accepted (published as the ``cursor`` maxLength)."""
    skipped_paths_listed: int = 10
    """``skipped.removed`` counts every removal but names only this many paths."""
    argument_errors_listed: int = 3
    """Most problems named when arguments fail the tool's schema."""
    tools_list_bytes: int = 8_192
    """Budget for the compact JSON of the whole ``tools`` array of ``tools/list``."""
    batch_read_ids: int = 10
    """Most messages one ``mail_read`` call may name in ``message_ids``."""
    batch_response_bytes_min: int = 4_096
    batch_response_bytes_max: int = 131_072
    batch_response_bytes_default: int = 65_536
    """Range and default of ``max_response_bytes``: a batch read's whole result, counted as
    sent (structured copy plus text copy, escaped) with room for the reply around it."""
    folder_scan_requests: int = 12
    """Most Graph requests spent finding a mail folder by bare name (breadth-first)."""


DEFAULT_LIMITS = Limits()
