"""An in-memory Microsoft Graph (mail and files) for the demo and for tests.

``--demo`` serves it; ``EmulatorTransport`` plugs it in at httpx's transport seam. The
pieces, one concern each:

- ``seed`` (a package): the demo tenant's data, generated deterministically from its text
  corpus (``seed/corpus.json``); its Office and PDF files come from
  ``mfconnector.demo_documents``, its ids of real length from ``ids``;
- ``quoting``: the history Outlook quotes below a reply (seeded threads and createReply);
- ``model``: mailboxes, messages, attachments, drives, items, and their Graph JSON;
- ``odata`` and ``kql``: ``$filter``/``$orderby``/``$select``/``$top``/``$skip``/``$count``
  and ``$search``;
- ``mail_routes``, ``mail_writes``, ``drive_routes``, ``downloads``, ``batch``
  (``$batch`` and upload sessions): the endpoints;
- ``errors``: Graph's error answers; ``core``: requests, dispatch, fault knobs;
- ``transport``: the httpx adapter.

What it supports and refuses: ``docs/EMULATOR.md``.
"""

from __future__ import annotations

from mfconnector.emulator.core import Emulator, Fault

__all__ = ["Emulator", "Fault"]
