"""The demo tenant: Adele Vance's mailbox and OneDrive, a shared support mailbox, and a
SharePoint library, generated deterministically with the standard library.

Everything is built from fixed text (``corpus.json``, read by ``corpus``) and one
``random.Random`` with a fixed seed, so every ``--demo`` start serves the same mailbox.
Message and folder data is built when the emulator first needs it (tens of milliseconds);
attachment and file bytes are built only when a request asks for them, then kept.

One concern per module:

- ``facts``: the demo's "now", its domain and its people; ``corpus``: the text;
- ``prose``: sentences and HTML bodies from the pools; ``mail_builder``: folders,
  messages and attachments with ids of real length;
- ``documents``: the Office, PDF, mail and image files mail and drives carry;
- ``adele``, ``adele_threads``, ``adele_notices``, ``adele_folders``, ``hostile``: the
  user's mailbox, script by script; ``support``: the shared mailbox;
- ``drive_builder``, ``personal_drive``, ``personal_files``, ``marketing_drive``: the drives;
- ``tenant``: all of it, as the emulator serves it (``build_tenant``).

The quoting Outlook writes below a reply lives in ``mfconnector.emulator.quoting``: the
emulator's createReply writes it too. People and companies are fictional (names from
Microsoft's own documentation); every pre-authenticated URL is fake.
"""
