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
    progress_interval_seconds: float = 0.25
    """Shortest time between two ``notifications/progress`` for one request (four a second
    at most); reports in between are dropped, and one still waiting in the outbox is
    replaced by the newer one, so a slow client never makes progress pile up."""
    progress_message_chars: int = 200
    """Longest ``message`` of a progress notification; a longer one is cut."""

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
    accounts: int = 8
    """Most accounts one ``--accounts`` file may define: each is a sign-in, a client and an
    entry in every tool's ``account`` enum (tools/list grows with each name)."""
    accounts_file_bytes: int = 65_536
    """Largest ``--accounts`` file read at start-up (eight accounts take about 2 KB)."""
    account_name_chars: int = 32
    """Longest account name (letters, digits, ``-`` and ``_``): it is in every schema."""
    fixture_json_depth: int = 64
    """Deepest nesting accepted inside one fixture ``json`` body (Graph answers nest about 8
    deep); a deeper file fails at start-up with the path, never a RecursionError later."""
    fixture_integer_digits: int = 4_000
    """Most digits of an integer in a fixture file (Python's own limit is 4,300, in its
    words; past this one the file is refused in ours)."""
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
    content_type_chars: int = 200
    """Most characters of a download's ``Content-Type`` kept (a media type with its
    parameters is well under 100); a longer one is cut and marked with an ellipsis."""

    html_tags: int = 200_000
    """Most tags of one HTML body read with its layout (``mfconnector.textconv``, which
    builds no tree); past it the rest is read as plain words and the answer is marked
    incomplete. A 2 MB body of real mail has about 40,000-70,000 tags; this bounds the
    conversion's work at about one second on a slow core, whatever the markup."""

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
    text_window_bytes: int = 40_000
    """Most bytes of a text file fetched for one files_read window (a Range request): room
    for ``body_chars`` characters of UTF-8 at four bytes each."""
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
    tools_list_accounts_bytes: int = 17_408
    """Budget for the ``tools`` array of the largest ``--accounts`` file: every gate on and
    ``accounts`` accounts with names of ``account_name_chars`` (each name is in every
    tool's ``account`` enum; measured 16,382 bytes). One account stays within the budgets
    above, byte for byte the flags' array."""
    draft_attachments: int = 20
    """Most attachments on a draft created here."""
    draft_attachments_bytes: int = 3_000_000
    """Most decoded attachment bytes on a draft created here, all attachments together
    (Graph's limit for one simple attachment upload)."""
    draft_attachment_total_bytes: int = 150_000_000
    """Most bytes of all attachments on a draft created here, whatever their source (a
    drive file, another message's attachment, inline content): Outlook's limit for
    attachments sent through upload sessions. Checked from the sizes Graph declares before
    the first write, and again while the bytes arrive."""
    attachment_simple_upload_bytes: int = 3_000_000
    """Largest attachment sent in one request (Graph's simple upload, base64 in JSON);
    a larger one goes through an upload session."""
    upload_chunk_bytes: int = 3_932_160
    """Bytes per PUT of an upload session: 12 x 320 KiB, under Outlook's 4 MB a chunk.
    At most this much of a file is in memory at once."""
    draft_recipients: int = 100
    """Most recipients (To, Cc and Bcc together) on a draft created or changed here."""
    reply_quote_chars: int = 20_000
    """Most characters of the original that a reply quotes, or a forward carries in its
    text, on an IMAP or Gmail account (Graph writes its own); past it the text says the rest
    is not quoted."""
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
    audit_recent_entries: int = 20
    """Most audit entries ``mail_review recent`` shows (newest first); older ones stay in
    the state file for ``outcome_retention_seconds``."""
    state_busy_seconds: float = 5.0
    """Longest wait for another process holding the state file's write lock; with
    ``--state-url``, the longest a Redis command (or connecting) may take."""
    state_connections: int = 16
    """With ``--state-url``: connections one process keeps to Redis, and so its state
    calls in flight at once (the rest wait their turn)."""
    state_local_tokens: int = 1_000
    """Sealed tokens a local (SQLite) store keeps, in memory only; least recently used
    goes first."""
    display_name_chars: int = 255
    """Longest mail folder name created or renamed here (Exchange's display-name limit)."""
    action_list_item_chars: int = 320
    """Longest entry of a list argument of an acting tool (an address, a category)."""
    attachment_name_chars: int = 255
    """Longest attachment file name accepted by an acting tool (the common file-system
    limit for one name; Outlook shows no more)."""
    confirm_excerpt_chars: int = 280
    """Most body characters shown to the person when the client asks them to confirm a
    send (the recipients, subject and attachment names are shown whole)."""
    confirm_wait_seconds: float = 600.0
    """How long a 2025 session's ``elicitation/create`` may wait for the person's answer;
    past it nothing is done (a 2026 ``input_required`` answer's ``requestState`` expires
    after the same time)."""

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

    # --- IMAP and SMTP (mfconnector.imap) and the bounded MIME reader (mfconnector.mime) ----
    imap_line_bytes: int = 65_536
    """Longest IMAP response line (between literals), CRLF included; a longer one breaks the
    connection instead of being held (RFC 7162 asks clients to take lines of 8,192)."""
    imap_literal_bytes: int = 8_388_608
    """Largest literal a server may announce (``{N}``); a larger announcement is refused
    before one byte of it is buffered, and the connection is dropped."""
    imap_response_bytes: int = 16_777_216
    """Most bytes of one whole response (its lines and literals together)."""
    imap_nesting_depth: int = 32
    """Deepest parenthesised list in a response (a BODYSTRUCTURE nests one level a part)."""
    imap_connections: int = 2
    """Connections per account at once (servers cap them per user; Gmail allows 15)."""
    imap_connect_seconds: float = 15.0
    """Longest TCP connect, TLS handshake and greeting."""
    imap_command_seconds: float = 60.0
    """Longest one command may take, its whole response included."""
    imap_fetch_chunk_bytes: int = 1_048_576
    """Bytes asked per partial fetch (``BODY.PEEK[]<offset.count>``) of a large message."""
    imap_list_scan_messages: int = 500
    """Most messages a filtered listing checks for one page when the server cannot filter
    exactly (instants finer than SEARCH's days, "has attachments"); past it the page says
    so and the next one goes on from there."""
    imap_thread_messages: int = 100
    """Most messages of one conversation gathered over IMAP (THREAD or the References walk)."""
    smtp_seconds: float = 120.0
    """Longest a whole SMTP submission may take, connect to the reply after DATA."""
    mime_message_bytes: int = 5_242_880
    """Largest raw message prefix the MIME reader parses; the rest is reported as cut."""
    mime_depth: int = 12
    """Deepest multipart nesting read; deeper parts are listed as skipped, never recursed."""
    mime_parts: int = 100
    """Most MIME parts read from one message."""
    mime_header_lines: int = 1_000
    """Most header fields read from one part's header; the rest are counted, not parsed."""
    mime_header_bytes: int = 262_144
    """Largest header block of one part (bytes up to the blank line)."""
    mime_text_bytes: int = 262_144
    """Most decoded bytes kept of each text body (plain and HTML)."""

    # --- Gmail (mfconnector.gmail; its HTTP bounds are the graph_* ones above) ----------
    gmail_concurrency: int = 8
    """Gmail API requests in flight at once per account: the metadata ``messages.get`` of
    a list page run this many at a time (``messages.list`` returns only ids). Google
    answers 429 "Too many concurrent requests for user" well above this."""
    gmail_batch_calls: int = 50
    """Most calls in one request to the Gmail batch endpoint (a list page's metadata goes
    in one batch): Google allows 100 and advises no more than 50."""

    # --- sign-in and the token cache ---------------------------------------------------
    login_timeout_seconds: float = 900.0
    """How long ``mfconnector login`` waits for the user to finish signing in (Entra ID's
    device codes live 15 minutes; we never wait longer than the code does)."""
    token_cache_bytes: int = 4_000_000
    """Largest token cache file read (one account is a few KB; anything near this is not
    ours): a larger one is refused, never parsed."""
    cert_file_bytes: int = 1_000_000
    """Largest certificate (PEM) file read for certificate sign-in."""

    # --- hosted mode: OAuth protected resource ----------------------------------------
    bearer_token_bytes: int = 16_384
    """Longest bearer token accepted in ``Authorization`` (an Entra access token is 1-3 KB;
    a longer one is refused before it is decoded)."""
    jwks_body_bytes: int = 262_144
    """Largest JWKS or OIDC discovery document read from the issuer (Entra's is ~10 KB)."""
    jwks_keys: int = 64
    """Most keys kept from one JWKS; a set with more is refused (no issuer publishes that many)."""
    jwks_cache_seconds: float = 3_600.0
    """How long a fetched JWKS is trusted before it is fetched again."""
    jwks_refresh_min_seconds: float = 60.0
    """Least time between two fetches caused by an unknown ``kid``: a flood of tokens with
    made-up key ids costs one fetch a minute, not one per request."""
    jwks_fetch_seconds: float = 10.0
    """Whole fetch of a JWKS or discovery document, body included."""
    token_leeway_seconds: int = 60
    """Clock skew allowed on ``exp``, ``nbf`` and ``iat``."""

    # --- hosted mode: the on-behalf-of exchange (mfconnector.hosted.obo) ---------------
    obo_cached_tokens: int = 10_000
    """Graph tokens from the exchange kept in memory at once (one per user and bearer
    token, a few KB each); past it the least recently used is forgotten, and that user's
    next request exchanges again."""
    obo_exchanges: int = 4
    """Exchanges with Entra at once (each a blocking msal call in a worker thread); more
    wait their turn."""
    obo_call_seconds: float = 30.0
    """Longest one exchange may take, msal's own HTTP requests included; past it the tool
    call is answered "did not answer in time" and the thread is abandoned."""
    obo_http_seconds: float = 20.0
    """msal's time-out for each HTTP request to Entra in the exchange (connect and read)."""

    # --- hosted mode: Streamable HTTP (mfconnector.hosted.http_app) --------------------
    http_header_bytes: int = 16_384
    """Most bytes of one request's header block (hypercorn refuses a longer one before the
    app sees it; the app checks the same sum again)."""
    http_request_seconds: float = 120.0
    """Longest one POST may take, reading its body and running its tool call included; past
    it the request is answered with an error that says so."""
    http_drain_bytes: int = 1_000_000
    """After a body over ``line_bytes`` is refused, up to this many more of its bytes are
    read and dropped so that the client, still sending, can read the 413; a larger body
    has its connection closed instead."""
    http_idle_seconds: float = 30.0
    """How long an idle keep-alive connection is held open (hypercorn's keep-alive timeout)."""
    http_send_stall_seconds: float = 30.0
    """Longest a connection may keep response bytes the client does not take (its window
    shut) or does not acknowledge; then the kernel closes it (``TCP_USER_TIMEOUT``) and the
    request's slot and buffers are freed. hypercorn has no write timeout of its own."""
    http_requests: int = 64
    """Requests served at once by the whole process; more are answered 503 with Retry-After."""
    http_requests_per_subject: int = 8
    """Requests served at once for one user; more are answered 429 with Retry-After."""
    http_retry_after_seconds: int = 1
    """The ``Retry-After`` sent with 429 and 503."""
    http_sessions: int = 1_000
    """Legacy (2025) sessions kept at once; the least recently used goes first past it."""
    http_session_idle_seconds: float = 1_800.0
    """A legacy session unused this long is expired (its id then answers 404)."""
    http_subjects: int = 256
    """Users whose server state (tool context, demo tenant) is kept at once, least recently
    used dropped first; a dropped user's next request builds it again."""


DEFAULT_LIMITS = Limits()
"""The limits of a server started without others. Only the roots (``serve``, ``serve_http``,
a component's ``limits: Limits = DEFAULT_LIMITS`` parameter) name it: every reader takes the
``Limits`` it was given (tests/test_limits_threaded.py keeps it so)."""
