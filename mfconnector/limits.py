"""Every limit the server enforces, in one frozen object with the unit in each name.

Memory budget: the worst case the runtime can hold at once, by construction (payload, over
the ~30 MB interpreter; docs/LIMITS.md has the table and the measurements):

    reader, one line at a time           line_bytes of buffer and line, its text (up to
                                         4 bytes a character), <= request_values parsed
                                         values, the arguments re-encoded   ~14 MB
  + (workers + inbox_depth) tool calls   arguments <= tool_arguments_bytes,
                                         <= 0.7 MB each parsed              ~11 MB
  + workers x one parsed Graph page      graph_body_bytes at ~3.8x parsed, or
                                         graph_body_values of [{},...]: 9.9 MB  ~79 MB
                                         (at most graph_concurrency parsing at once)
  + (outbox_depth + workers + 1)
      x response_bytes                   replies queued, waiting, being sent ~17 MB

about 120 MB in all, of which the client can drive about 42 MB whatever it sends. Counting
a request's values before parsing (``request_values``) is what holds the client's part:
1 MB of ``[{},{},...]`` is 24 MB once parsed. A stalled stdout fills the outbox, then
blocks the workers and the reader, which stops reading stdin; a tool call past
``workers + inbox_depth`` is answered "busy" at once instead of waiting. Measured: a
stalled client sending 12 ``mail_list`` calls and 999 KB lines of small values, and a
1 GB line, both stay within a few MB of start-up (bench/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    # --- stdio framing and the runtime -------------------------------------------------
    line_bytes: int = 1_000_000
    """Longest accepted input line, newline included. Longer lines are drained, not held."""
    request_values: int = 10_000
    """Most JSON values in one request line, object keys included, counted before parsing
    (one per ``{``, ``[``, ``,`` and ``:`` outside strings, plus one): what a line costs once
    parsed, not its bytes. A 1 MB line of ``[{},{},...]`` would be 24 MB of Python objects."""
    name_warnings: int = 20
    """Most ``warnings`` entries (names hiding bidi, invisible or control characters) one read
    result carries; past that, ``warnings_omitted`` counts the rest."""
    request_integer_digits: int = 100
    """Longest integer (digits, sign not counted) read anywhere in a request line; a longer
    one is refused before it is converted (``-32602``, or ``-32600`` when it is the id).
    Python's own bound (4,300 digits, ``sys.set_int_max_str_digits``) is process-wide and
    answers in its own words; no id or argument needs more than 20 digits."""
    tool_arguments_bytes: int = 131_072
    """Largest ``tools/call`` ``arguments`` object, as compact UTF-8 JSON."""
    read_chunk_bytes: int = 65_536
    """Bytes asked of stdin per read (the Linux pipe capacity)."""
    inbox_depth: int = 8
    """Tool calls waiting for a free worker; past ``workers + inbox_depth`` calls in flight
    a further call is answered at once with a "busy, retry" result, never left waiting."""
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
    write_batch_bytes: int = 262_144
    """Replies already waiting are written together, up to this much, in one system call."""
    stdin_pipe_bytes: int = 1_048_576
    """Pipe size asked of the kernel for stdin so each read can return more (best effort)."""

    # --- Microsoft Graph ---------------------------------------------------------------
    graph_body_bytes: int = 2_000_000
    """Largest Graph response body read, counted as raw bytes while they arrive."""
    graph_body_values: int = 250_000
    """Most JSON values (keys included) in one Graph body, counted before it is parsed: what
    it costs once parsed, not its bytes. A real page holds about one value per 13 bytes (a
    full 2 MB page about 150,000); 2 MB of ``[{},{},...]`` holds 1,000,000 and would be
    about 100 MB of Python objects."""
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
    fixture_json_depth: int = 64
    """Deepest nesting accepted inside one fixture ``json`` body (Graph answers nest about 8
    deep); a deeper file fails at start-up with the path, never a RecursionError later."""
    fixture_chunk_bytes: int = 65_536
    """Largest chunk a fixture body is streamed in (httpcore's own network read size)."""
    fixture_repeat_bytes: int = 50_000_000
    """Largest body a fixture's ``repeat`` may generate: big enough to overrun any cap,
    small enough to stream."""
    fixture_delay_max_ms: int = 120_000
    """Longest ``delayMs`` before a fixture answer starts: past every Graph deadline, so a
    slow answer can be cut by the request timeout, a client's cancel or the shutdown grace."""
    tls_reason_chars: int = 200
    """Most characters of a TLS verification failure's reason repeated in our error."""

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
    folder_page_items: int = 100
    """Child folders asked of Graph per request while resolving a folder path."""
    folder_path_depth: int = 10
    """Most segments in a folder path such as ``Inbox/Projects/2026`` (one request each)."""
    candidates_listed: int = 10
    """Most candidates named when a folder, site or library name is ambiguous."""
    site_search_items: int = 25
    """Sites asked of Graph when a SharePoint site is found by name."""
    cached_folders: int = 512
    """Folder id <-> name entries remembered per process (all mailboxes together)."""
    cached_zones: int = 64
    """Mailbox time zones (and resolved site libraries) remembered per process."""
    compact_subject_chars: int = 160
    """Most characters of a subject in a compact list row (``omitted`` says when cut)."""

    # --- acting on mail (write, delete and send gates) ---------------------------------
    tools_list_all_gates_bytes: int = 11_742
    """Budget for the ``tools`` array with every gate on (the seed's figure for its 25
    operations, without files)."""
    draft_attachments: int = 20
    """Most attachments on a draft created here."""
    draft_attachments_bytes: int = 3_000_000
    """Most decoded attachment bytes on a draft created here, all attachments together
    (Graph's limit for one simple attachment upload)."""
    draft_recipients: int = 100
    """Most recipients (To, Cc and Bcc together) on a draft created or changed here."""
    preview_bytes: int = 800_000
    """Most wire bytes of a complete draft or send preview. Previews are never clipped: a
    larger message is refused with nothing prepared."""
    preparation_seconds: int = 900
    """How long a prepared message may be confirmed (15 minutes)."""
    outcome_retention_seconds: int = 7 * 86_400
    """How long send claims and outcomes are kept in the state file (7 days)."""
    claim_orphan_seconds: float = 180.0
    """A claim older than this with no recorded outcome was interrupted: it reads
    ``unknown`` (never resent)."""
    state_busy_seconds: float = 5.0
    """Longest wait for another process holding the state file's write lock."""
    display_name_chars: int = 255
    """Longest mail folder name created or renamed here (Exchange's display-name limit)."""
    action_list_item_chars: int = 320
    """Longest entry of a list argument of an acting tool (an address, a category)."""

    # --- documents (Word, Excel, PowerPoint, PDF, .eml) -------------------------------
    document_bytes: int = 25_000_000
    """Largest document downloaded for text extraction; spooled to a private temporary
    file, never held in memory. A larger file is refused with its size."""
    document_seconds: float = 30.0
    """Wall-clock deadline of one extraction in the worker process."""
    document_cpu_seconds: int = 20
    """CPU time one extraction may use (RLIMIT_CPU where the platform has it)."""
    document_memory_bytes: int = 1_000_000_000
    """Address space of a worker process (RLIMIT_AS where the platform has it)."""
    document_workers: int = 2
    """Worker processes parsing at once (each is one busy core)."""
    document_idle_seconds: float = 60.0
    """How long an idle worker is kept for the next document before it is stopped."""
    document_worker_jobs: int = 50
    """Documents one worker parses before it is replaced (bounds slow leaks)."""
    document_text_chars: int = 5_000_000
    """Most characters extracted from one document; past it the text is cut and marked."""
    document_parts: int = 2_000
    """Most pages, slides or sheets read from one document; past it the text is cut."""
    document_parts_listed: int = 30
    """Most page/sheet/slide/heading positions listed in one result."""
    document_part_name_chars: int = 200
    """Longest part name listed (a heading is cut there), and the longest ``part`` argument."""
    archive_members: int = 20_000
    """Most entries in a .docx/.xlsx/.pptx zip directory; more is refused unopened."""
    archive_uncompressed_bytes: int = 300_000_000
    """Most uncompressed bytes all zip entries may declare; more is refused unopened."""
    archive_ratio: int = 200
    """Highest compression ratio of one zip entry larger than ``archive_ratio_min_bytes``."""
    archive_ratio_min_bytes: int = 1_000_000
    """Entries at or under this size are not ratio-checked (tiny parts compress oddly)."""
    document_answer_bytes: int = 1_000_000
    """Largest answer line read back from a document worker (a 10,000-character window is
    far smaller); past it the worker is treated as broken."""

    # --- sign-in and the token cache ---------------------------------------------------
    login_timeout_seconds: float = 900.0
    """How long ``mfconnector login`` waits for the user to finish signing in (Entra ID's
    device codes live 15 minutes; we never wait longer than the code does)."""
    token_cache_bytes: int = 4_000_000
    """Largest token cache file read (one account is a few KB; anything near this is not
    ours): a larger one is refused, never parsed."""
    cert_file_bytes: int = 1_000_000
    """Largest certificate (PEM) file read for certificate sign-in."""


DEFAULT_LIMITS = Limits()
