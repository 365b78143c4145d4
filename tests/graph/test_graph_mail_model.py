"""Graph's message JSON into the neutral model: every field lands where it belongs.

``summary_of`` passes the summary's fields by position (the hot path builds fifty per
page): a field moved in ``MessageSummary`` or in the builder would put one value in
another's place, so every value here is distinct and checked by name.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

from mfconnector.graph.mail_model import message_of, summary_of
from mfconnector.mail.model import MessageSummary, Person
from mfconnector.mail.refs import PROVIDER_LETTERS, Reference, account_tag

TAG = account_tag(next(iter(PROVIDER_LETTERS)), "work")
ITEM = {
    "id": "AAMkAGI2-message-id=",
    "subject": "Quarterly numbers",
    "from": {"emailAddress": {"name": "Lynne Robbins", "address": "lynne@contoso.com"}},
    "sender": {"emailAddress": {"name": "Assistant", "address": "assistant@contoso.com"}},
    "receivedDateTime": "2026-03-06T16:42:00Z",
    "sentDateTime": "2026-03-06T16:41:00Z",
    "isRead": False,
    "flag": {"flagStatus": "flagged"},
    "importance": "high",
    "hasAttachments": True,
    "isDraft": True,
    "categories": ["Finance"],
    "parentFolderId": "AQMk-folder-id",
    "toRecipients": [{"emailAddress": {"name": "To", "address": "to@contoso.com"}}],
    "ccRecipients": [{"emailAddress": {"name": "Cc", "address": "cc@contoso.com"}}],
    "bccRecipients": [{"emailAddress": {"name": "Bcc", "address": "bcc@contoso.com"}}],
    "conversationId": "AAQk-conversation",
    "bodyPreview": "The numbers for Q1",
    "changeKey": "CQAAABYAAA-change",
    "internetMessageId": "<id@contoso.com>",
    "webLink": "https://outlook.office365.com/owa/?ItemID=x",
}
EXPECTED = {
    "ref": Reference(TAG, "AAMkAGI2-message-id="),
    "subject": "Quarterly numbers",
    "sender": Person("Lynne Robbins", "lynne@contoso.com"),
    "received": datetime(2026, 3, 6, 16, 42, tzinfo=UTC),
    "unread": True,
    "flag": "flagged",
    "importance": "high",
    "has_attachments": True,
    "is_draft": True,
    "categories": ("Finance",),
    "folder": Reference(TAG, "AQMk-folder-id"),
    "folder_name": "Projects",
    "to": (Person("To", "to@contoso.com"),),
    "cc": (Person("Cc", "cc@contoso.com"),),
    "thread": "AAQk-conversation",
    "preview": "The numbers for Q1",
    "change_token": "CQAAABYAAA-change",
    "native": {},
}


def test_every_summary_field_is_filled_from_its_own_graph_property() -> None:
    summary = summary_of(ITEM, TAG, {"AQMk-folder-id": "Projects"})
    assert [f.name for f in fields(MessageSummary)] == list(EXPECTED)
    got = {name: getattr(summary, name) for name in EXPECTED}
    got["categories"] = tuple(got["categories"])
    assert got == EXPECTED


def test_a_read_message_keeps_the_summary_fields_and_adds_its_own() -> None:
    message = message_of(ITEM, TAG, body=None)
    assert message.subject == "Quarterly numbers"
    assert message.change_token == EXPECTED["change_token"]
    assert message.thread == "AAQk-conversation" and message.preview == "The numbers for Q1"
    assert message.bcc == (Person("Bcc", "bcc@contoso.com"),)
    assert message.on_behalf == Person("Assistant", "assistant@contoso.com")
    assert message.sent == datetime(2026, 3, 6, 16, 41, tzinfo=UTC)
    assert message.internet_message_id == "<id@contoso.com>"
