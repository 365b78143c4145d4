"""Changes through the emulator behave as Google's reference and guides say: modify,
batchModify, trash/untrash, delete; labels create/patch/delete; messages.send filing into
SENT with thread matching ("Managing threads": threadId given, In-Reply-To/References set,
subjects matching); drafts create/update/send/delete; history ids that only grow.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from mfconnector.gmail_emulator import FULL, MODIFY, GmailEmulator
from tests.support.gmail_helpers import (
    API,
    ME,
    TOKEN,
    b64url,
    client,
    empty_emulator,
    rfc822,
    unb64url,
)

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
FRIEND = "Friend <friend@example.net>"


@pytest.fixture
def emulator() -> GmailEmulator:
    return empty_emulator(NOW, {TOKEN: [FULL], "modify-only": [MODIFY]})


@pytest.fixture
def http(emulator: GmailEmulator) -> Iterator[httpx.Client]:
    with client(emulator) as session:
        yield session


def incoming(http: httpx.Client, name: str, subject: str, labels: list[str], **kw: object) -> str:
    raw = rfc822(sender=FRIEND, to=[ME], subject=subject, when=NOW, text=f"About {subject}.",
                 message_id=f"<{name}@example.net>", **kw)  # type: ignore[arg-type]  # fmt: skip
    reply = http.post(f"{API}/messages", json={"raw": b64url(raw), "labelIds": labels})
    assert reply.status_code == 200, reply.text
    message_id: str = reply.json()["id"]
    return message_id


def labels_of(http: httpx.Client, message_id: str) -> set[str]:
    body = http.get(f"{API}/messages/{message_id}", params={"format": "minimal"}).json()
    return set(body["labelIds"])


def counts(http: httpx.Client, label_id: str) -> tuple[int, int, int, int]:
    body = http.get(f"{API}/labels/{label_id}").json()
    keys = ("messagesTotal", "messagesUnread", "threadsTotal", "threadsUnread")
    return (body[keys[0]], body[keys[1]], body[keys[2]], body[keys[3]])


def test_modify_adds_and_removes_and_counts_follow(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX", "UNREAD"])
    incoming(http, "b", "Re: Lunch", ["INBOX", "UNREAD"], parent_id="<a@example.net>")
    incoming(http, "c", "Tickets", ["INBOX"])
    assert counts(http, "INBOX") == (3, 2, 2, 1)
    reply = http.post(
        f"{API}/messages/{first}/modify",
        json={"addLabelIds": ["STARRED"], "removeLabelIds": ["UNREAD"]},
    )
    assert reply.status_code == 200
    assert set(reply.json()) == {"id", "threadId", "labelIds"}
    assert set(reply.json()["labelIds"]) == {"INBOX", "STARRED"}
    assert counts(http, "INBOX") == (3, 1, 2, 1)
    assert counts(http, "STARRED") == (1, 0, 1, 0)


@pytest.mark.parametrize("label", ["SENT", "DRAFT", "Label_404"])
def test_modify_refuses_labels_gmail_applies_itself_or_that_do_not_exist(
    http: httpx.Client, label: str
) -> None:
    message_id = incoming(http, "a", "Lunch", ["INBOX"])
    reply = http.post(f"{API}/messages/{message_id}/modify", json={"addLabelIds": [label]})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == f"Invalid label: {label}"
    assert labels_of(http, message_id) == {"INBOX"}


def test_batch_modify_changes_every_message(http: httpx.Client) -> None:
    ids = [incoming(http, str(n), f"Note {n}", ["INBOX", "UNREAD"]) for n in range(3)]
    reply = http.post(
        f"{API}/messages/batchModify", json={"ids": ids, "removeLabelIds": ["UNREAD", "INBOX"]}
    )
    assert reply.status_code == 204 and reply.content == b""
    assert all(labels_of(http, i) == set() for i in ids)


@pytest.mark.parametrize(("count", "limit_error"), [(999, False), (1000, False), (1001, True)])
def test_batch_modify_takes_at_most_1000_ids(
    http: httpx.Client, count: int, limit_error: bool
) -> None:
    """The reference: "There is a limit of 1000 ids per request"."""
    ids = [format(n + 1, "x") for n in range(count)]
    reply = http.post(f"{API}/messages/batchModify", json={"ids": ids, "addLabelIds": ["INBOX"]})
    if limit_error:
        assert reply.status_code == 400 and "1000" in reply.json()["error"]["message"]
    else:  # within the limit: the ids are checked, and none of these exists
        assert reply.status_code == 404


def test_trash_hides_from_searches_and_untrash_brings_back(http: httpx.Client) -> None:
    message_id = incoming(http, "a", "Lunch", ["INBOX"])

    def listed(**params: str) -> list[str]:
        body = http.get(f"{API}/messages", params=params).json()
        return [m["id"] for m in body.get("messages", [])]

    trashed = http.post(f"{API}/messages/{message_id}/trash").json()
    assert "TRASH" in trashed["labelIds"]
    assert listed() == [] and listed(q="in:trash") == [message_id]
    assert listed(includeSpamTrash="true") == [message_id]
    untrashed = http.post(f"{API}/messages/{message_id}/untrash").json()
    assert "TRASH" not in untrashed["labelIds"] and listed() == [message_id]


def test_thread_trash_and_modify_reach_every_message(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    second = incoming(http, "b", "Re: Lunch", ["INBOX"], parent_id="<a@example.net>")
    thread = http.post(f"{API}/threads/{first}/modify", json={"addLabelIds": ["IMPORTANT"]})
    assert [m["id"] for m in thread.json()["messages"]] == [first, second]
    assert all("IMPORTANT" in labels_of(http, i) for i in (first, second))
    http.post(f"{API}/threads/{first}/trash")
    assert all("TRASH" in labels_of(http, i) for i in (first, second))


def test_delete_is_permanent_and_needs_the_full_scope(http: httpx.Client) -> None:
    message_id = incoming(http, "a", "Lunch", ["INBOX"])
    refused = http.delete(
        f"{API}/messages/{message_id}", headers={"Authorization": "Bearer modify-only"}
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["errors"][0]["reason"] == "insufficientPermissions"
    assert http.delete(f"{API}/messages/{message_id}").status_code == 204
    gone = http.get(f"{API}/messages/{message_id}")
    assert gone.status_code == 404 and gone.json()["error"]["status"] == "NOT_FOUND"


def test_labels_create_nested_patch_and_delete(http: httpx.Client) -> None:
    created = http.post(f"{API}/labels", json={"name": "Clients/Acme/2026"})
    assert created.status_code == 200
    label = created.json()
    assert label["name"] == "Clients/Acme/2026" and label["type"] == "user"
    assert http.post(f"{API}/labels", json={"name": "clients/acme/2026"}).status_code == 409
    for reserved in ("INBOX", "inbox", "Sent", "", "/leading"):
        assert http.post(f"{API}/labels", json={"name": reserved}).status_code == 400, reserved
    message_id = incoming(http, "a", "Lunch", ["INBOX", label["id"]])
    renamed = http.patch(f"{API}/labels/{label['id']}", json={"name": "Clients/Acme/Archive"})
    assert renamed.json()["name"] == "Clients/Acme/Archive" and renamed.json()["id"] == label["id"]
    assert http.delete(f"{API}/labels/{label['id']}").status_code == 204
    assert labels_of(http, message_id) == {"INBOX"}
    assert http.get(f"{API}/labels/{label['id']}").status_code == 404


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_system_labels_cannot_be_changed(http: httpx.Client, method: str) -> None:
    reply = http.request(method, f"{API}/labels/INBOX", json={"name": "Post"})
    assert reply.status_code == 400


def test_label_name_length(http: httpx.Client) -> None:
    assert http.post(f"{API}/labels", json={"name": "x" * 224}).status_code == 200
    assert http.post(f"{API}/labels", json={"name": "y" * 225}).status_code == 200
    assert http.post(f"{API}/labels", json={"name": "z" * 226}).status_code == 400


# --- sending ------------------------------------------------------------------------------


def reply_raw(subject: str, parent: str, message_id: str = "<r1@mail.example>") -> bytes:
    return rfc822(sender=ME, to=[FRIEND], subject=subject, when=NOW, text="Sounds good.",
                  message_id=message_id, parent_id=parent)  # fmt: skip


def test_a_reply_sent_with_thread_id_and_references_joins_the_thread(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    sent = http.post(
        f"{API}/messages/send",
        json={"raw": b64url(reply_raw("Re: Lunch", "<a@example.net>")), "threadId": first},
    )
    assert sent.status_code == 200
    body = sent.json()
    assert set(body) == {"id", "threadId", "labelIds"}
    assert body["threadId"] == first and body["id"] != first
    assert body["labelIds"] == ["SENT"]
    found = http.get(f"{API}/messages", params={"q": "in:sent rfc822msgid:<r1@mail.example>"})
    assert found.json()["messages"] == [{"id": body["id"], "threadId": first}]
    raw = unb64url(http.get(f"{API}/messages/{body['id']}", params={"format": "raw"}).json()["raw"])
    assert raw == reply_raw("Re: Lunch", "<a@example.net>")


@pytest.mark.parametrize(
    ("subject", "thread_given"),
    [("Re: Dinner instead", True), ("Re: Lunch", False)],
    ids=["subject-differs", "no-thread-id"],
)
def test_a_reply_that_breaks_a_threading_rule_starts_a_new_thread(
    http: httpx.Client, subject: str, thread_given: bool
) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    payload = {"raw": b64url(reply_raw(subject, "<a@example.net>"))}
    if thread_given:
        payload["threadId"] = first
    body = http.post(f"{API}/messages/send", json=payload).json()
    assert body["threadId"] == body["id"] != first


def test_send_errors(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    unknown = http.post(
        f"{API}/messages/send",
        json={"raw": b64url(reply_raw("Re: Lunch", "<a@x>")), "threadId": "ab"},
    )
    assert unknown.status_code == 404
    nobody = b"From: me@mail.example\r\nSubject: hi\r\n\r\nbody\r\n"
    assert http.post(f"{API}/messages/send", json={"raw": b64url(nobody)}).status_code == 400
    assert http.post(f"{API}/messages/send", json={"raw": "%%%not base64"}).status_code == 400
    assert http.post(f"{API}/messages/send", json={}).status_code == 400
    assert http.post(f"{API}/messages/send", content=b"{not json").status_code == 400
    assert labels_of(http, first) == {"INBOX"}


def test_mail_to_oneself_is_filed_in_sent_and_inbox(http: httpx.Client) -> None:
    raw = rfc822(sender=ME, to=[ME], subject="Note to self", when=NOW, text="x", message_id="<s@m>")
    body = http.post(f"{API}/messages/send", json={"raw": b64url(raw)}).json()
    assert set(body["labelIds"]) == {"SENT", "INBOX"}


def test_send_adds_message_id_and_date_when_missing(http: httpx.Client) -> None:
    raw = b"To: friend@example.net\r\nSubject: bare\r\n\r\nhello\r\n"
    body = http.post(f"{API}/messages/send", json={"raw": b64url(raw)}).json()
    got = http.get(f"{API}/messages/{body['id']}", params={"format": "metadata"}).json()
    names = {h["name"] for h in got["payload"]["headers"]}
    assert {"From", "Date", "Message-ID", "To", "Subject"} <= names


def test_insert_with_own_address_is_sent_and_import_takes_the_date_header(
    http: httpx.Client,
) -> None:
    when = datetime(2026, 5, 4, 3, 2, 1, tzinfo=UTC)
    raw = rfc822(sender=ME, to=[FRIEND], subject="Old", when=when, text="x", message_id="<o@m>")
    inserted = http.post(f"{API}/messages", json={"raw": b64url(raw)}).json()
    assert inserted["labelIds"] == ["SENT"]
    imported = http.post(f"{API}/messages/import", json={"raw": b64url(raw)}).json()
    got = http.get(f"{API}/messages/{imported['id']}", params={"format": "minimal"}).json()
    assert got["internalDate"] == str(int(when.timestamp() * 1000))


# --- drafts -------------------------------------------------------------------------------


def test_draft_create_update_send(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    created = http.post(
        f"{API}/drafts",
        json={
            "message": {"raw": b64url(reply_raw("Re: Lunch", "<a@example.net>")), "threadId": first}
        },
    )
    assert created.status_code == 200
    draft = created.json()
    assert draft["message"]["labelIds"] == ["DRAFT"] and draft["message"]["threadId"] == first
    listed = http.get(f"{API}/drafts").json()["drafts"]
    assert listed == [
        {"id": draft["id"], "message": {"id": draft["message"]["id"], "threadId": first}}
    ]
    newer = reply_raw("Re: Lunch", "<a@example.net>", "<r2@mail.example>")
    updated = http.put(
        f"{API}/drafts/{draft['id']}", json={"message": {"raw": b64url(newer), "threadId": first}}
    ).json()
    assert updated["id"] == draft["id"] and updated["message"]["id"] != draft["message"]["id"]
    assert http.get(f"{API}/messages/{draft['message']['id']}").status_code == 404
    got = http.get(f"{API}/drafts/{draft['id']}", params={"format": "raw"}).json()
    assert unb64url(got["message"]["raw"]) == newer
    sent = http.post(f"{API}/drafts/send", json={"id": draft["id"]})
    assert sent.status_code == 200
    assert sent.json()["labelIds"] == ["SENT"] and sent.json()["threadId"] == first
    assert http.get(f"{API}/drafts/{draft['id']}").status_code == 404
    assert http.get(f"{API}/drafts").json() == {"resultSizeEstimate": 0}
    thread = http.get(f"{API}/threads/{first}", params={"format": "minimal"}).json()
    assert [m["labelIds"] for m in thread["messages"]] == [["INBOX"], ["SENT"]]


def test_draft_delete_is_permanent(http: httpx.Client) -> None:
    raw = rfc822(sender=ME, to=[FRIEND], subject="Idea", when=NOW, text="x", message_id="<d@m>")
    draft = http.post(f"{API}/drafts", json={"message": {"raw": b64url(raw)}}).json()
    assert http.delete(f"{API}/drafts/{draft['id']}").status_code == 204
    assert http.get(f"{API}/drafts/{draft['id']}").status_code == 404
    assert http.get(f"{API}/messages/{draft['message']['id']}").status_code == 404
    assert http.get(f"{API}/drafts/not-a-draft-id").status_code == 400


# --- history ------------------------------------------------------------------------------


def test_history_ids_grow_and_history_lists_each_change(http: httpx.Client) -> None:
    start = http.get(f"{API}/profile").json()["historyId"]
    message_id = incoming(http, "a", "Lunch", ["INBOX", "UNREAD"])
    after_insert = http.get(f"{API}/messages/{message_id}", params={"format": "minimal"}).json()
    http.post(f"{API}/messages/{message_id}/modify", json={"removeLabelIds": ["UNREAD"]})
    after_modify = http.get(f"{API}/messages/{message_id}", params={"format": "minimal"}).json()
    assert int(start) < int(after_insert["historyId"]) < int(after_modify["historyId"])
    http.delete(f"{API}/messages/{message_id}")
    body = http.get(f"{API}/history", params={"startHistoryId": start}).json()
    kinds = [next(k for k in record if k not in ("id", "messages")) for record in body["history"]]
    assert kinds == ["messagesAdded", "labelsRemoved", "messagesDeleted"]
    assert body["historyId"] == http.get(f"{API}/profile").json()["historyId"]
    only = http.get(
        f"{API}/history", params={"startHistoryId": start, "historyTypes": "labelRemoved"}
    ).json()
    assert [list(r)[-1] for r in only["history"]] == ["labelsRemoved"]
    by_label = http.get(f"{API}/history", params={"startHistoryId": start, "labelId": "UNREAD"})
    assert len(by_label.json()["history"]) == 2  # added with UNREAD, then UNREAD removed
    paged = http.get(f"{API}/history", params={"startHistoryId": start, "maxResults": 2}).json()
    assert len(paged["history"]) == 2 and "nextPageToken" in paged


def test_history_from_now_is_empty_and_from_before_the_kept_records_is_404(
    emulator: GmailEmulator, http: httpx.Client
) -> None:
    incoming(http, "a", "Lunch", ["INBOX"])
    now = http.get(f"{API}/profile").json()["historyId"]
    assert http.get(f"{API}/history", params={"startHistoryId": now}).json() == {"historyId": now}
    emulator.mailbox.forget_history()
    assert http.get(f"{API}/history", params={"startHistoryId": now}).status_code == 200
    expired = http.get(f"{API}/history", params={"startHistoryId": int(now) - 1})
    assert expired.status_code == 404 and expired.json()["error"]["code"] == 404
    missing = http.get(f"{API}/history")
    assert missing.status_code == 400


def test_a_new_draft_sent_keeps_its_thread(http: httpx.Client) -> None:
    raw = rfc822(sender=ME, to=[FRIEND], subject="Plan", when=NOW, text="x", message_id="<p@m>")
    draft = http.post(f"{API}/drafts", json={"message": {"raw": b64url(raw)}}).json()
    sent = http.post(f"{API}/drafts/send", json={"id": draft["id"]}).json()
    assert sent["threadId"] == draft["message"]["threadId"] and sent["labelIds"] == ["SENT"]
    thread = http.get(f"{API}/threads/{sent['threadId']}", params={"format": "minimal"}).json()
    assert [m["id"] for m in thread["messages"]] == [sent["id"]]


def test_thread_untrash_and_delete_and_batch_delete(http: httpx.Client) -> None:
    first = incoming(http, "a", "Lunch", ["INBOX"])
    second = incoming(http, "b", "Re: Lunch", ["INBOX"], parent_id="<a@example.net>")
    other = incoming(http, "c", "Tickets", ["INBOX"])
    http.post(f"{API}/threads/{first}/trash")
    untrashed = http.post(f"{API}/threads/{first}/untrash").json()
    assert [set(m["labelIds"]) for m in untrashed["messages"]] == [{"INBOX"}, {"INBOX"}]
    assert http.delete(f"{API}/threads/{first}").status_code == 204
    assert http.get(f"{API}/threads/{first}").status_code == 404
    assert http.get(f"{API}/messages/{second}").status_code == 404
    assert http.post(f"{API}/messages/batchDelete", json={"ids": [other]}).status_code == 204
    assert http.get(f"{API}/profile").json()["messagesTotal"] == 0


def test_label_update_replaces_and_visibility_is_checked(http: httpx.Client) -> None:
    label = http.post(f"{API}/labels", json={"name": "Work", "labelListVisibility": "labelHide"})
    assert label.json()["labelListVisibility"] == "labelHide"
    label_id = label.json()["id"]
    assert http.put(f"{API}/labels/{label_id}", json={}).status_code == 400  # PUT needs a name
    replaced = http.put(
        f"{API}/labels/{label_id}", json={"name": "Job", "messageListVisibility": "hide"}
    )
    assert replaced.json()["name"] == "Job" and replaced.json()["messageListVisibility"] == "hide"
    bad = http.patch(f"{API}/labels/{label_id}", json={"labelListVisibility": "sometimes"})
    assert bad.status_code == 400


def test_the_user_is_me_or_the_own_address_and_nobody_else(http: httpx.Client) -> None:
    assert http.get(f"/gmail/v1/users/{ME}/profile").json()["emailAddress"] == ME
    other = http.get("/gmail/v1/users/someone@else.example/profile")
    assert other.status_code == 403 and "Delegation denied" in other.json()["error"]["message"]


def test_drafts_list_searches_the_drafts(http: httpx.Client) -> None:
    for subject in ("Budget idea", "Party idea"):
        raw = rfc822(sender=ME, to=[FRIEND], subject=subject, when=NOW, text="x",
                     message_id=f"<{subject[0]}@m>")  # fmt: skip
        http.post(f"{API}/drafts", json={"message": {"raw": b64url(raw)}})
    incoming(http, "a", "Budget report", ["INBOX"])
    found = http.get(f"{API}/drafts", params={"q": "budget"}).json()
    assert found["resultSizeEstimate"] == 1 and len(found["drafts"]) == 1
