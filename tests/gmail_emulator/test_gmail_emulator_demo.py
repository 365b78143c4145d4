"""The demo mailbox holds what the issue asks for, read back through the API as a client
would: 60+ messages, nested labels, a long thread oldest first, real attachments of every
kind (their text read by the connector's own document extractor), CJK/RTL/emoji, HTML,
Spam/Trash/drafts, a phishing attachment with a right-to-left override, a fixed clock,
and the same bytes and ids on every build.
"""

from __future__ import annotations

import itertools
import re
import struct
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import httpx
import pytest

from mfconnector.documents.extract import extract
from mfconnector.gmail_emulator import DEMO_NOW, DEMO_TOKEN, GmailEmulator
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.visible import find_hidden, true_extension
from tests.support.gmail_helpers import API, all_ids, client, unb64url


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with client(GmailEmulator(), DEMO_TOKEN) as session:
        yield session


@pytest.fixture(scope="module")
def messages(http: httpx.Client) -> list[dict[str, Any]]:
    ids = all_ids(http, includeSpamTrash="true", maxResults=500)
    return [http.get(f"{API}/messages/{i}").json() for i in ids]


def parts(payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield payload
    for child in payload.get("parts", []):
        yield from parts(child)


def header(message: dict[str, Any], name: str) -> str:
    return next(
        (h["value"] for h in message["payload"]["headers"] if h["name"].lower() == name.lower()),
        "",
    )


def attachment(http: httpx.Client, messages: list[dict[str, Any]], suffix: str) -> bytes:
    for message in messages:
        for part in parts(message["payload"]):
            if part["filename"].endswith(suffix):
                url = f"{API}/messages/{message['id']}/attachments/{part['body']['attachmentId']}"
                data = unb64url(http.get(url).json()["data"])
                assert len(data) == part["body"]["size"]
                return data
    raise AssertionError(f"no {suffix} attachment")


def test_more_than_sixty_messages_in_threads(messages: list[dict[str, Any]]) -> None:
    assert len(messages) >= 60
    threads: dict[str, int] = {}
    for message in messages:
        threads[message["threadId"]] = threads.get(message["threadId"], 0) + 1
    assert max(threads.values()) >= 12
    assert sum(1 for n in threads.values() if n >= 2) >= 6


def test_the_long_thread_is_oldest_first_and_each_reply_refers_to_the_one_before(
    http: httpx.Client, messages: list[dict[str, Any]]
) -> None:
    counts: dict[str, int] = {}
    for message in messages:
        counts[message["threadId"]] = counts.get(message["threadId"], 0) + 1
    longest = max(counts, key=lambda t: counts[t])
    thread = http.get(f"{API}/threads/{longest}", params={"format": "metadata"}).json()
    found = thread["messages"]
    assert len(found) >= 12
    dates = [int(m["internalDate"]) for m in found]
    assert dates == sorted(dates)
    for earlier, later in itertools.pairwise(found):
        assert header(later, "In-Reply-To") == header(earlier, "Message-ID")
        assert header(later, "Subject") == "Re: " + header(found[0], "Subject")


def test_labels_nest_with_slashes(http: httpx.Client) -> None:
    names = {
        lb["name"] for lb in http.get(f"{API}/labels").json()["labels"] if lb["type"] == "user"
    }
    assert {"Projects", "Projects/Contoso", "Projects/Fabrikam", "Finance/Invoices"} <= names
    assert "Receipts/2026" in names and "Receipts" not in names  # a child without its parent


@pytest.mark.parametrize(
    ("suffix", "kind", "text"),
    [
        (".pdf", "pdf", "Total due: EUR 14,400.00"),
        (".docx", "docx", "Either party may end it with 60 days notice."),
        (".xlsx", "xlsx", "Licences"),
        (".pptx", "pptx", "GA on 15 January"),
        (".eml", "eml", "Deliveries move to Tuesdays."),
    ],
)
def test_document_attachments_are_real_files_with_text(
    http: httpx.Client,
    messages: list[dict[str, Any]],
    tmp_path: Path,
    suffix: str,
    kind: str,
    text: str,
) -> None:
    path = tmp_path / f"attachment{suffix}"
    path.write_bytes(attachment(http, messages, suffix))
    assert text in extract(str(path), kind, DEFAULT_LIMITS).text


def test_images_are_valid_pngs_one_of_them_inline_and_one_large(
    http: httpx.Client, messages: list[dict[str, Any]]
) -> None:
    data = attachment(http, messages, "garden.png")
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", data[16:24]) == (64, 32)
    [photo] = [m for m in messages if header(m, "Subject") == "Photos from the weekend"]
    image = next(p for p in parts(photo["payload"]) if p["mimeType"] == "image/png")
    content_id = next(h["value"] for h in image["headers"] if h["name"] == "Content-ID")
    html = next(p for p in parts(photo["payload"]) if p["mimeType"] == "text/html")
    assert f"cid:{content_id.strip('<>')}" in unb64url(html["body"]["data"]).decode()
    assert len(attachment(http, messages, "boarding-passes.png")) > 300_000


def test_subjects_in_many_scripts(messages: list[dict[str, Any]]) -> None:
    subjects = " ".join(header(m, "Subject") for m in messages)
    for name, script in {
        "Chinese/Japanese": r"[\u4e00-\u9fff]",
        "Korean": r"[\uac00-\ud7af]",
        "Arabic": r"[\u0600-\u06ff]",
        "Hebrew": r"[\u0590-\u05ff]",
        "emoji": r"[\U0001F300-\U0001FAFF]",
        "diacritics": r"[éëü]",
    }.items():
        assert re.search(script, subjects), name


def test_html_bodies_and_the_rtl_message(messages: list[dict[str, Any]]) -> None:
    html = [p for m in messages for p in parts(m["payload"]) if p["mimeType"] == "text/html"]
    assert len(html) >= 10
    rtl = [m for m in messages if re.search(r"[\u0600-\u06ff]", header(m, "Subject"))]
    body = next(p for p in parts(rtl[0]["payload"]) if p["mimeType"] == "text/html")
    assert 'dir="rtl"' in unb64url(body["body"]["data"]).decode()


def test_the_phishing_attachment_hides_its_extension(
    http: httpx.Client, messages: list[dict[str, Any]]
) -> None:
    names = [p["filename"] for m in messages for p in parts(m["payload"]) if p["filename"]]
    hidden = [n for n in names if find_hidden(n) is not None]
    assert hidden == ["INV-2026-0877_\u202efdp.scr"]
    assert true_extension(hidden[0]) == "scr"
    assert attachment(http, messages, "fdp.scr").startswith(b"MZ")
    found = http.get(f"{API}/messages", params={"q": "filename:scr"}).json()
    assert found["resultSizeEstimate"] == 1


def test_spam_trash_drafts_and_categories_are_there(http: httpx.Client) -> None:
    for label in ("SPAM", "TRASH", "DRAFT", "CATEGORY_PROMOTIONS", "CATEGORY_SOCIAL", "STARRED"):
        assert http.get(f"{API}/labels/{label}").json()["messagesTotal"] >= 1, label
    assert len(http.get(f"{API}/drafts").json()["drafts"]) >= 2


def test_the_clock_is_fixed_and_older_history_has_expired(
    http: httpx.Client, messages: list[dict[str, Any]]
) -> None:
    now_ms = int(DEMO_NOW.timestamp() * 1000)
    assert all(int(m["internalDate"]) <= now_ms for m in messages)
    newest = max(messages, key=lambda m: int(m["internalDate"]))
    assert now_ms - int(newest["internalDate"]) < 86_400_000
    start = http.get(f"{API}/profile").json()["historyId"]
    assert http.get(f"{API}/history", params={"startHistoryId": start}).status_code == 200
    too_old = http.get(f"{API}/history", params={"startHistoryId": int(start) - 1})
    assert too_old.status_code == 404


def test_every_build_is_the_same(messages: list[dict[str, Any]]) -> None:
    with client(GmailEmulator(), DEMO_TOKEN) as again:
        raw = [
            again.get(f"{API}/messages/{m['id']}", params={"format": "raw"}).json()["raw"]
            for m in messages
        ]
    assert [m["sizeEstimate"] for m in messages] == [len(unb64url(r)) for r in raw]
    first = message_from_bytes(unb64url(raw[0]), policy=policy.default)
    assert first["Message-ID"] == header(messages[0], "Message-ID")


def test_no_conversation_is_there_twice(http: httpx.Client) -> None:
    """Every thread starts with its own subject (a demo written twice would repeat them)."""
    threads = http.get(
        f"{API}/threads", params={"includeSpamTrash": "true", "maxResults": 500}
    ).json()["threads"]
    firsts = []
    for thread in threads:
        whole = http.get(
            f"{API}/threads/{thread['id']}",
            params={"format": "metadata", "metadataHeaders": "Subject"},
        ).json()
        firsts.append(header(whole["messages"][0], "Subject"))
    assert len(firsts) == len(set(firsts)), sorted(f for f in firsts if firsts.count(f) > 1)
