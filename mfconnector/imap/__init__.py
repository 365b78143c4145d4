"""IMAP and SMTP for any standards mailbox: a sans-I/O protocol core on trio streams.

Layers: ``wire`` (pure: bytes in, responses out, under named limits), ``encode`` (pure:
commands, literals, modified UTF-7 names, UID sets), ``results`` (pure: typed results),
``connection`` (the trio adapter: TLS, STARTTLS, login, one command at a time under a
deadline), ``tls`` (TLS on a memory BIO that returns every decrypted record per read),
``commands`` (the commands the backend needs), ``capabilities`` (what each one the
server lacks disables, for ``account_status``), ``pool`` (at most ``imap_connections`` per
account), ``smtp`` (submission through ``smtplib`` in a worker thread, outcomes classified
exactly).

Why our own core, not imaplib or IMAPClient in worker threads (measured in
bench/imap_bench.py; figures in bench/README.md):

- Bounded literals are natural here and impossible there. ``imaplib`` reads every
  literal whole at the size the server announces; a server (or a man in the middle of a
  plain connection) announcing ``{999999999}`` makes it try to hold a gigabyte. Our reader
  checks the announced size against ``imap_literal_bytes`` before a byte is buffered and
  drops the connection, and caps lines and whole responses too.
- Cancellation and deadlines are trio's: a command is a cancel scope, and a cancelled or
  timed-out command discards its connection. A thread running imaplib cannot be stopped;
  it keeps the socket (and a worker thread) until the server answers.
- Responses come back per command: imaplib accumulates ``untagged_responses`` across
  commands (COPYUID, APPENDUID, MODIFIED must be popped by hand), IMAPClient drops COPYUID
  and has no UNCHANGEDSINCE. We need all three for exact references and conflicts.
- No thread hop per command (a NOOP through ``trio.to_thread`` costs ~4x a direct one).

What it costs (Dovecot over TLS, 2026-12-01): one ``BODY.PEEK[]`` of a 20 MB message grows
imaplib by 20 MB while ours refuses the literal at the cap, untouched; the same message in
1 MiB partial fetches costs 206 ms of CPU here and 184 ms in imaplib; a 50-message
ENVELOPE + BODYSTRUCTURE fetch costs 27 ms of CPU here (parsed into typed results) and
8 ms in imaplib (raw bytes, still to be parsed). Bounds, cancellation and exact results
are worth that; raw speed at these sizes is far below a network round trip.

SMTP is the other way round: one short exchange per send, no literal to bound (we send,
the server answers in lines that ``smtplib`` already caps), so the stdlib in a worker
thread under a deadline is simpler and enough.
"""
