"""Whatever a client sends, the emulator answers in Google's shape and never with its own
500: any search query (Gmail's parser is lenient and never fails), any path, query and
body, any raw message bytes, any batch body.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mfconnector.gmail_emulator import DEMO_TOKEN, GmailEmulator
from tests.support.gmail_helpers import API, b64url, client

QUERY_PIECES = st.sampled_from(
    ["from:", "to:", "(", ")", "{", "}", "-", '"', "OR", "AND", " ", "label:", "after:",
     "larger:", "is:", "in:", "filename:", "rfc822msgid:", "季度", "café", "x", "2026/13/45",
     "older_than:", "9999999999999999999", ":", "*", "\\", "\u202e"]
)  # fmt: skip
LENIENT = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with client(GmailEmulator(), DEMO_TOKEN) as session:
        yield session


@pytest.mark.slow
@LENIENT
@given(st.lists(QUERY_PIECES, max_size=12).map("".join) | st.text(max_size=60))
def test_any_query_is_answered(http: httpx.Client, query: str) -> None:
    reply = http.get(f"{API}/messages", params={"q": query})
    assert reply.status_code == 200, (query, reply.text)
    assert isinstance(reply.json()["resultSizeEstimate"], int)


PATHS = st.sampled_from(
    ["/messages", "/messages/{id}", "/messages/{id}/modify", "/messages/{id}/trash",
     "/messages/send", "/messages/batchModify", "/messages/import", "/threads", "/threads/{id}",
     "/threads/{id}/modify", "/drafts", "/drafts/r1000001", "/drafts/send", "/labels",
     "/labels/INBOX", "/labels/Label_1", "/history", "/profile", "/messages/{id}/attachments/x"]
)  # fmt: skip
BODIES = st.one_of(
    st.binary(max_size=80),
    st.sampled_from([b"{}", b"[]", b"null", b'{"raw": 5}', b'{"ids": "x"}',
                     b'{"addLabelIds": [1, null]}', b'{"message": []}', b'{"name": {}}',
                     b'{"raw": "' + b64url(b"\xff\xfe garbage").encode() + b'"}',
                     b'{"id": "r1000001", "message": {"raw": "%%"}}',
                     b'{"raw": "eA", "labelIds": [{}], "addLabelIds": [[]]}']),
)  # fmt: skip


@pytest.mark.slow
@LENIENT
@given(
    st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    PATHS,
    st.text(max_size=30),
    BODIES,
)
def test_any_request_gets_a_google_answer_never_a_500(
    http: httpx.Client, method: str, path: str, query: str, body: bytes
) -> None:
    message_id = http.get(f"{API}/messages", params={"maxResults": 1}).json()["messages"][0]["id"]
    url = API + path.format(id=message_id)
    reply = http.request(method, url, params={"format": query, "q": query}, content=body)
    assert reply.status_code < 500, (method, url, body, reply.text)
    if reply.status_code >= 400:
        error = reply.json()["error"]
        assert error["code"] == reply.status_code and error["errors"][0]["reason"]


@pytest.mark.slow
@LENIENT
@given(st.binary(min_size=1, max_size=300))
def test_any_raw_bytes_can_be_inserted_and_read_back(http: httpx.Client, raw: bytes) -> None:
    """``raw`` need not be a well-formed message: Gmail files what it is given."""
    reply = http.post(f"{API}/messages", json={"raw": b64url(raw), "labelIds": ["INBOX"]})
    assert reply.status_code == 200
    got = http.get(f"{API}/messages/{reply.json()['id']}", params={"format": "raw"})
    assert got.status_code == 200
    assert http.get(f"{API}/messages/{reply.json()['id']}").status_code == 200


@pytest.mark.slow
@LENIENT
@given(st.binary(max_size=200), st.sampled_from(["b", "batch_x", ""]))
def test_any_batch_body_is_answered(http: httpx.Client, body: bytes, boundary: str) -> None:
    reply = http.post(
        "/batch/gmail/v1",
        content=f"--{boundary}\r\nContent-Type: application/http\r\n\r\n".encode() + body,
        headers={"Content-Type": f"multipart/mixed; boundary={boundary}"},
    )
    assert reply.status_code in (200, 400), reply.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/messages", {"raw": b64url(b"Subject: x\r\n\r\nx"), "labelIds": [{}]}),
        ("/messages/import", {"raw": b64url(b"Subject: x\r\n\r\nx"), "labelIds": [["INBOX"]]}),
        ("/messages/batchModify", {"ids": ["1"], "addLabelIds": [{"id": "INBOX"}]}),
    ],
)
def test_label_ids_that_are_not_strings_are_400(
    http: httpx.Client, path: str, body: object
) -> None:
    reply = http.post(API + path, json=body)
    assert reply.status_code == 400 and reply.json()["error"]["message"].startswith("Invalid label")


def test_an_import_dated_before_1970_is_filed_as_received_now(http: httpx.Client) -> None:
    raw = b"Date: Mon, 1 Jan 0001 00:00:00 +0000\r\nSubject: ancient\r\n\r\nx\r\n"
    reply = http.post(f"{API}/messages/import", json={"raw": b64url(raw)})
    assert reply.status_code == 200
    got = http.get(f"{API}/messages/{reply.json()['id']}", params={"format": "minimal"}).json()
    assert int(got["internalDate"]) > 0
