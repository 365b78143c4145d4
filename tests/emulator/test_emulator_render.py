"""The emulator's Graph JSON is built from the message as it is now, never from a rendering
cached on another message: a copy (``copy``, delivery to a mailbox of the tenant) answers
with its own ids and folder even when the original was rendered the moment before."""

from __future__ import annotations

import json
from typing import Any

from mfconnector.emulator import Emulator

ROOT = "https://graph.microsoft.com/v1.0"
AUTH = {"authorization": "Bearer demo-token"}
IMMUTABLE = {"prefer": 'IdType="ImmutableId"'}


def call(emulator: Emulator, method: str, path: str, body: Any = None, **headers: str) -> Any:
    data = json.dumps(body).encode() if body is not None else b""
    answer = emulator.handle(method, ROOT + path, {**AUTH, **headers}, data)
    assert answer.status < 300, answer.json_value()
    return answer.json_value()


def test_a_copy_of_a_message_just_rendered_answers_with_its_own_id_and_folder() -> None:
    emulator = Emulator()
    listed = call(emulator, "GET", "/me/mailFolders/inbox/messages?$top=1")["value"][0]
    original = call(emulator, "GET", f"/me/messages/{listed['id']}")
    archive = call(emulator, "GET", "/me/mailFolders/archive")["id"]
    copied = call(emulator, "POST", f"/me/messages/{listed['id']}/copy", {"destinationId": archive})
    assert copied["id"] != original["id"]
    assert copied["parentFolderId"] == archive != original["parentFolderId"]
    again = call(emulator, "GET", f"/me/messages/{copied['id']}")
    assert (again["id"], again["parentFolderId"]) == (copied["id"], archive)
    assert again["subject"] == original["subject"]


def test_mail_sent_to_the_shared_mailbox_arrives_with_its_own_ids() -> None:
    emulator = Emulator()
    to = [{"emailAddress": {"address": "support@contoso.onmicrosoft.com"}}]
    new = {"subject": "For the support team", "toRecipients": to}
    draft = call(emulator, "POST", "/me/messages", new, **IMMUTABLE)
    call(emulator, "GET", f"/me/messages/{draft['id']}", **IMMUTABLE)  # rendered, cached
    call(emulator, "POST", f"/me/messages/{draft['id']}/send")
    support = "/users/support@contoso.onmicrosoft.com"
    inbox_list = f"{support}/mailFolders/inbox/messages?$top=1"
    found = call(emulator, "GET", inbox_list, **IMMUTABLE)["value"][0]
    sent = call(emulator, "GET", f"/me/messages/{draft['id']}", **IMMUTABLE)
    assert found["subject"] == "For the support team"
    assert found["id"] != sent["id"] and found["isRead"] is False and found["isDraft"] is False
    inbox = call(emulator, "GET", f"{support}/mailFolders/inbox")["id"]
    assert found["parentFolderId"] == inbox != sent["parentFolderId"]


def test_a_listed_message_changed_since_is_listed_as_it_is_now() -> None:
    """A page is joined from texts kept per message version: a change must show at once,
    and a different ``Prefer`` (ids, time zone) must not be served another's text."""
    emulator = Emulator()
    page = "/me/mailFolders/inbox/messages?$top=3&$select=subject,isRead,flag"
    before = call(emulator, "GET", page)["value"]
    first = before[0]
    call(emulator, "PATCH", f"/me/messages/{first['id']}", {"isRead": not first["isRead"]})
    after = call(emulator, "GET", page)["value"]
    assert after[0]["id"] == first["id"] and after[0]["isRead"] is (not first["isRead"])
    assert after[1:] == before[1:]
    immutable = call(emulator, "GET", page, **IMMUTABLE)["value"]
    assert [m["id"] for m in immutable] != [m["id"] for m in after]
    assert [m["subject"] for m in immutable] == [m["subject"] for m in after]


def test_outlooks_own_order_is_the_same_with_or_without_a_filter() -> None:
    """The plain ``receivedDateTime`` order takes a short path; a filter that keeps every
    message takes the general one: both must give one order, ties included."""
    emulator = Emulator()
    inbox = "/me/mailFolders/inbox/messages?$top=1000&$select=subject"
    for direction in ("desc", "asc"):
        plain = call(emulator, "GET", f"{inbox}&$orderby=receivedDateTime {direction}")
        every = "receivedDateTime ge 1900-01-01T00:00:00Z"
        filtered = call(
            emulator, "GET", f"{inbox}&$filter={every}&$orderby=receivedDateTime {direction}"
        )
        assert len(plain["value"]) > 20
        assert [m["id"] for m in plain["value"]] == [m["id"] for m in filtered["value"]]
