"""Gmail through the Gmail API v1 as a ``MailBackend`` (issue 20).

    api_root   where the token may go: ``--gmail-api-root`` (https, or loopback http)
    client     the one way this package talks HTTP: capped bodies, deadlines, retries
    errors     Google's error answers as ``mail.failures``
    labels     labels as folders: roles, the path tree, counts
    query      ``MessageFilter`` and search text as Gmail's ``q``
    convert    a Message resource (metadata or full) as neutral summaries and messages
    payload    the ``format=full`` part tree walked under the MIME limits
    compose    drafts as MIME (stdlib ``email``), frozen bytes and their digest
    backend    ``GmailMailBackend``: the protocol's reads and actions
    account    an ``Account`` for the wiring

Nothing here imports Google's libraries: sign-in lives in ``mfconnector.auth.google`` and
reaches this package only as a ``TokenProvider``.
"""
