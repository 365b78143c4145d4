"""An in-memory Microsoft Graph (mail and files) for the demo and for tests.

``--demo`` serves it; ``EmulatorTransport`` plugs it in at httpx's transport seam. The
pieces, one concern each:

- ``seed`` (a package): the demo tenant's data, generated deterministically from its text
  corpus (``seed/corpus.json``); its Office and PDF files come from
  ``mfconnector.demo_documents``, its ids of real length from ``ids``;
- ``quoting``: the history Outlook quotes below a reply (seeded threads and createReply);
- ``model``: mailboxes, messages, attachments, drives, items (state only); ``render``:
  their Graph JSON;
- ``odata`` and ``kql``: ``$filter``/``$orderby``/``$select``/``$top``/``$skip``/``$count``
  and ``$search``;
- ``call``: one request as the routes see it (``Call``) and their ``Answer``;
  ``state``: what lives between requests (tenant, clock, indexes, upload sessions);
- ``mail_routes`` (profile, settings, folders), ``message_routes`` (lists, one message),
  ``attachment_routes`` and ``message_mime`` (``$value``), over ``mail_paging`` (``$top``,
  ``$select``, nextLinks) and ``mail_lookup`` (finding folders and messages, rendering a
  message as asked); writes in ``mail_writes``, ``mail_replies`` and ``folder_writes``,
  reading request bodies with ``mail_input``; ``drive_routes``, ``downloads``, ``batch``
  (``$batch``) and ``uploads`` (upload sessions): the endpoints;
- ``errors``: Graph's error answers; ``core``: dispatch and fault knobs, on top of all;
- ``transport``: the httpx adapter.

Imports point one way, from ``core`` down to ``model``: no module imports one that
imports it back. Of the connector it imports only ``mfconnector.demo_documents``, the
stdlib-only document builder it shares with the Gmail emulator (both checked by
``tests/test_emulator_layering.py``).

What it supports and refuses: ``docs/EMULATOR.md``.
"""

from __future__ import annotations

from mfconnector.emulator.core import Emulator, Fault

__all__ = ["Emulator", "Fault"]
