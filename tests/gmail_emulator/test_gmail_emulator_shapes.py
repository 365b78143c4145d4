"""The emulator's answers have the shapes Google's Gmail API reference documents.

Each expected shape below is written from a reference page (named beside it): the
resource's fields and their JSON types (int64/uint64 fields are JSON strings, as Google's
JSON mapping writes them). The demo mailbox supplies the data.
"""

from __future__ import annotations

from collections.abc import Iterator
from email import message_from_bytes, policy
from typing import Any

import httpx
import pytest

from mfconnector.gmail_emulator import DEMO_ADDRESS, DEMO_TOKEN, GmailEmulator
from tests.support.gmail_helpers import API, client, unb64url

LIST_MESSAGES_RESPONSE = {"messages": list, "nextPageToken": str, "resultSizeEstimate": int}
"""users.messages.list, "Response body"; each item "contains only an id and a threadId"."""
MESSAGE = {
    "id": str, "threadId": str, "labelIds": list, "snippet": str, "historyId": str,
    "internalDate": str, "payload": dict, "sizeEstimate": int, "raw": str,
}  # fmt: skip
"""The Message resource (REST Resource: users.messages): historyId is uint64 and
internalDate int64, both as strings; payload only in full/metadata, raw only in raw."""
MESSAGE_PART = {
    "partId": str, "mimeType": str, "filename": str, "headers": list, "body": dict, "parts": list,
}  # fmt: skip
"""MessagePart (same page)."""
MESSAGE_PART_BODY = {"attachmentId": str, "size": int, "data": str}
"""MessagePartBody (REST Resource: users.messages.attachments)."""
LABEL = {
    "id": str, "name": str, "messageListVisibility": str, "labelListVisibility": str,
    "type": str, "messagesTotal": int, "messagesUnread": int, "threadsTotal": int,
    "threadsUnread": int, "color": dict,
}  # fmt: skip
"""The Label resource (REST Resource: users.labels)."""
PROFILE = {"emailAddress": str, "messagesTotal": int, "threadsTotal": int, "historyId": str}
"""users.getProfile, "Response body"."""
THREAD = {"id": str, "snippet": str, "historyId": str, "messages": list}
"""The Thread resource (REST Resource: users.threads)."""
DRAFT = {"id": str, "message": dict}
"""The Draft resource (REST Resource: users.drafts)."""
LIST_HISTORY_RESPONSE = {"history": list, "nextPageToken": str, "historyId": str}
"""users.history.list, "Response body"."""
HISTORY = {
    "id": str, "messages": list, "messagesAdded": list, "messagesDeleted": list,
    "labelsAdded": list, "labelsRemoved": list,
}  # fmt: skip
"""The History resource (same page)."""
SYSTEM_LABEL_IDS = {
    "INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "IMPORTANT", "UNREAD",
    "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
}  # fmt: skip
"""The system labels of the "Manage labels" guide."""


def conforms(value: dict[str, Any], shape: dict[str, type], required: set[str]) -> None:
    """Only documented fields, each of its documented type, and the required ones present."""
    assert set(value) <= set(shape), set(value) - set(shape)
    assert required <= set(value), required - set(value)
    for key, item in value.items():
        assert isinstance(item, shape[key]), (key, item)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with client(GmailEmulator(), DEMO_TOKEN) as session:
        yield session


def first_with_attachment(http: httpx.Client) -> str:
    ids: list[str] = [
        m["id"]
        for m in http.get(f"{API}/messages", params={"q": "filename:pdf"}).json()["messages"]
    ]
    return ids[0]


def test_messages_list_holds_only_ids_and_thread_ids(http: httpx.Client) -> None:
    body = http.get(f"{API}/messages", params={"maxResults": 5}).json()
    conforms(body, LIST_MESSAGES_RESPONSE, {"messages", "nextPageToken", "resultSizeEstimate"})
    assert len(body["messages"]) == 5
    for item in body["messages"]:
        assert set(item) == {"id", "threadId"}
        assert all(c in "0123456789abcdef" for c in item["id"])


def test_an_empty_result_has_no_messages_key(http: httpx.Client) -> None:
    assert http.get(f"{API}/messages", params={"q": "nosuchwordanywhere"}).json() == {
        "resultSizeEstimate": 0
    }


@pytest.mark.parametrize(
    ("fmt", "present", "absent"),
    [
        ("minimal", set(), {"payload", "raw"}),
        ("metadata", {"payload"}, {"raw"}),
        ("full", {"payload"}, {"raw"}),
        ("raw", {"raw"}, {"payload"}),
    ],
)
def test_message_formats(http: httpx.Client, fmt: str, present: set[str], absent: set[str]) -> None:
    message_id = first_with_attachment(http)
    body = http.get(f"{API}/messages/{message_id}", params={"format": fmt}).json()
    base = {"id", "threadId", "labelIds", "snippet", "historyId", "internalDate", "sizeEstimate"}
    conforms(body, MESSAGE, base | present)
    assert not absent & set(body)
    assert body["internalDate"].isdigit() and body["historyId"].isdigit()


def test_raw_is_the_rfc822_message_and_size_estimate_its_length(http: httpx.Client) -> None:
    body = http.get(f"{API}/messages/{first_with_attachment(http)}", params={"format": "raw"})
    raw = unb64url(body.json()["raw"])
    assert body.json()["sizeEstimate"] == len(raw)
    parsed = message_from_bytes(raw, policy=policy.default)
    assert parsed["Subject"] == "Invoice 2026-0412 for November"


def walk(part: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield part
    for child in part.get("parts", []):
        yield from walk(child)


def test_full_payload_is_a_part_tree_with_gmail_part_ids(http: httpx.Client) -> None:
    message_id = first_with_attachment(http)
    body = http.get(f"{API}/messages/{message_id}").json()
    parts = list(walk(body["payload"]))
    for part in parts:
        conforms(part, MESSAGE_PART, {"partId", "mimeType", "filename", "headers", "body"})
        conforms(part["body"], MESSAGE_PART_BODY, {"size"})
        for header in part["headers"]:
            assert set(header) == {"name", "value"}
    assert [p["partId"] for p in parts] == ["", "0", "1"]
    assert [p["mimeType"] for p in parts] == ["multipart/mixed", "text/plain", "application/pdf"]
    text, pdf = parts[1], parts[2]
    assert unb64url(text["body"]["data"]).decode().strip() == "Please find our invoice attached."
    assert text["body"]["size"] == len(unb64url(text["body"]["data"]))
    assert pdf["filename"] == "Invoice-2026-0412.pdf" and "data" not in pdf["body"]
    attachment = http.get(f"{API}/messages/{message_id}/attachments/{pdf['body']['attachmentId']}")
    conforms(attachment.json(), MESSAGE_PART_BODY, {"size", "data"})
    data = unb64url(attachment.json()["data"])
    assert data.startswith(b"%PDF-") and len(data) == pdf["body"]["size"]


def test_metadata_format_gives_only_the_headers_asked_for(http: httpx.Client) -> None:
    message_id = first_with_attachment(http)
    body = http.get(
        f"{API}/messages/{message_id}",
        params=[
            ("format", "metadata"),
            ("metadataHeaders", "subject"),
            ("metadataHeaders", "From"),
        ],
    ).json()
    names = [h["name"] for h in body["payload"]["headers"]]
    assert sorted(names) == ["From", "Subject"]
    assert "parts" not in body["payload"] and "body" not in body["payload"]


def test_labels_list_and_get(http: httpx.Client) -> None:
    labels = http.get(f"{API}/labels").json()["labels"]
    by_id = {label["id"]: label for label in labels}
    assert set(by_id) >= SYSTEM_LABEL_IDS
    for label in labels:
        conforms(label, LABEL, {"id", "name", "type"})
        assert "messagesTotal" not in label
    user = [label for label in labels if label["type"] == "user"]
    assert {"Projects", "Projects/Contoso", "Finance/Invoices"} <= {lb["name"] for lb in user}
    assert all(lb["id"].startswith("Label_") for lb in user)
    assert all(by_id[name]["type"] == "system" for name in SYSTEM_LABEL_IDS)
    inbox = http.get(f"{API}/labels/INBOX").json()
    conforms(inbox, LABEL, set(LABEL) - {"color", "messageListVisibility", "labelListVisibility"})


def test_label_counts_agree_with_the_messages_themselves(http: httpx.Client) -> None:
    ids = [
        m["id"]
        for m in http.get(
            f"{API}/messages", params={"includeSpamTrash": "true", "maxResults": 500}
        ).json()["messages"]
    ]
    minimal = [http.get(f"{API}/messages/{i}", params={"format": "minimal"}).json() for i in ids]
    for label_id in ("INBOX", "UNREAD", "SENT", "Label_2"):
        tagged = [m for m in minimal if label_id in m["labelIds"]]
        unread = [m for m in tagged if "UNREAD" in m["labelIds"]]
        counts = http.get(f"{API}/labels/{label_id}").json()
        assert counts["messagesTotal"] == len(tagged), label_id
        assert counts["messagesUnread"] == len(unread), label_id
        assert counts["threadsTotal"] == len({m["threadId"] for m in tagged}), label_id
        assert counts["threadsUnread"] == len({m["threadId"] for m in unread}), label_id


def test_profile(http: httpx.Client) -> None:
    body = http.get(f"{API}/profile").json()
    conforms(body, PROFILE, set(PROFILE))
    assert body["emailAddress"] == DEMO_ADDRESS
    everything = http.get(f"{API}/messages", params={"includeSpamTrash": "true", "maxResults": 500})
    assert body["messagesTotal"] == everything.json()["resultSizeEstimate"]


def test_threads_list_and_get(http: httpx.Client) -> None:
    listed = http.get(f"{API}/threads", params={"maxResults": 3}).json()
    assert set(listed) == {"threads", "nextPageToken", "resultSizeEstimate"}
    for thread in listed["threads"]:
        conforms(thread, THREAD, {"id", "snippet", "historyId"})
    whole = http.get(f"{API}/threads/{listed['threads'][0]['id']}").json()
    conforms(whole, THREAD, {"id", "historyId", "messages"})
    for message in whole["messages"]:
        conforms(message, MESSAGE, {"id", "threadId", "labelIds", "payload"})
        assert message["threadId"] == whole["id"]


def test_drafts_list_and_get(http: httpx.Client) -> None:
    listed = http.get(f"{API}/drafts").json()
    assert set(listed) == {"drafts", "resultSizeEstimate"}
    for draft in listed["drafts"]:
        conforms(draft, DRAFT, set(DRAFT))
        assert set(draft["message"]) == {"id", "threadId"}
    one = http.get(f"{API}/drafts/{listed['drafts'][0]['id']}").json()
    conforms(one, DRAFT, set(DRAFT))
    assert "DRAFT" in one["message"]["labelIds"]


def test_history_shape(http: httpx.Client) -> None:
    start = http.get(f"{API}/profile").json()["historyId"]
    message_id = first_with_attachment(http)
    http.post(f"{API}/messages/{message_id}/modify", json={"addLabelIds": ["STARRED"]})
    http.post(f"{API}/messages/{message_id}/modify", json={"removeLabelIds": ["STARRED"]})
    body = http.get(f"{API}/history", params={"startHistoryId": start}).json()
    conforms(body, LIST_HISTORY_RESPONSE, {"history", "historyId"})
    added, removed = body["history"]
    conforms(added, HISTORY, {"id", "messages", "labelsAdded"})
    conforms(removed, HISTORY, {"id", "messages", "labelsRemoved"})
    assert added["labelsAdded"][0]["labelIds"] == ["STARRED"]
    assert set(added["labelsAdded"][0]["message"]) == {"id", "threadId", "labelIds"}
    assert int(start) < int(added["id"]) < int(removed["id"]) <= int(body["historyId"])
