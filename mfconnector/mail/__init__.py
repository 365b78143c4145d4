"""The neutral mail model: what every tool speaks and every provider backend implements.

Pure: no trio, no httpx, no I/O. The tools (``mfconnector.tools``) check arguments, bound
results and say what is incomplete over these types; a backend (``graph``, ``imap``,
``gmail``) turns them into its provider's requests and back and classifies its own errors
into ``failures``. docs/TOOLS.md documents the neutral names once.

    refs        exact references: provider + account + native id (+ what refuses a stale one)
    model       folders, message summaries, messages, attachments, pages
    query       list filters, searches, reads, flag changes
    outgoing    drafts to write and the frozen message a confirmation sends
    failures    the action failures every backend raises (not_found, conflict, ...)
    backend     the MailBackend and FilesBackend protocols and their capabilities
    accounts    one or more accounts, each a provider backend and its gates
"""
