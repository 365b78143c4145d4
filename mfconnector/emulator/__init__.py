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
- ``call``: one request as the routes see it (``Call``) and their ``Answer``;
  ``state``: what lives between requests (tenant, clock, indexes, upload sessions);
- ``mail_routes`` (reads) and ``mail_writes``, both over ``mail_lookup`` (finding folders
  and messages, rendering a message as asked); ``drive_routes``, ``downloads``, ``batch``
  (``$batch``) and ``uploads`` (upload sessions): the endpoints;
- ``errors``: Graph's error answers; ``core``: dispatch and fault knobs, on top of all;
- ``transport``: the httpx adapter.

Imports point one way, from ``core`` down to ``model``: no module imports one that
imports it back (``tests/test_emulator_layering.py``).

What it supports and refuses: ``docs/EMULATOR.md``.
"""

from __future__ import annotations

from mfconnector.emulator.core import Emulator, Fault

__all__ = ["Emulator", "Fault"]
