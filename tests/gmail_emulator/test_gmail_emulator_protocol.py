"""The emulator's wire behaviour: Google's error shape, OAuth scopes per method, paging,
the multipart batch endpoint, the rate-limit fault knob, and the same over a real HTTP
server on 127.0.0.1.

Error bodies are checked against the "Resolve errors" guide of the Gmail API and Google's
error model (AIP-193): ``{"error": {"code", "message", "status", "errors": [{"domain",
"reason", "message"}]}}``. The batch format is the one of the "Batching requests" guide.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import Message
from typing import Any

import httpx
import pytest

from mfconnector.gmail_emulator import (
    COMPOSE,
    FULL,
    METADATA,
    READONLY,
    SEND,
    GmailEmulator,
    build_demo_mailbox,
    serve_on_loopback,
    transport,
)
from tests.support.gmail_helpers import API, all_ids, client

TOKENS = {
    "full": [FULL],
    "read": [READONLY],
    "send": [SEND],
    "compose": [COMPOSE],
    "metadata": [METADATA],
}
ERROR_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}  # fmt: skip


@pytest.fixture
def emulator() -> GmailEmulator:
    return GmailEmulator(build_demo_mailbox(), tokens=TOKENS)


@pytest.fixture
def http(emulator: GmailEmulator) -> Iterator[httpx.Client]:
    with client(emulator, "full") as session:
        yield session


def error_of(reply: httpx.Response, code: int, reason: str) -> dict[str, Any]:
    """Checks Google's error shape and returns the error object."""
    assert reply.status_code == code, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert {"code", "message", "status", "errors"} <= set(error)
    assert error["code"] == code and error["status"] == ERROR_STATUS[code]
    assert isinstance(error["message"], str) and error["message"]
    [detail] = error["errors"]
    assert {"domain", "reason", "message"} <= set(detail)
    assert set(detail) <= {"domain", "reason", "message", "location", "locationType"}
    assert detail["reason"] == reason
    return error


# The examples of the Gmail API's "Resolve errors" guide (the ``errors`` entry of each).
DOCUMENTED_401 = {"domain": "global", "reason": "authError", "message": "Invalid Credentials",
                  "locationType": "header", "location": "Authorization"}  # fmt: skip
DOCUMENTED_403_USER_RATE = {"domain": "usageLimits", "reason": "userRateLimitExceeded",
                            "message": "User Rate Limit Exceeded"}  # fmt: skip
DOCUMENTED_403_RATE = {"domain": "usageLimits", "reason": "rateLimitExceeded",
                       "message": "Rate Limit Exceeded"}  # fmt: skip


def first_id(http: httpx.Client) -> str:
    found: str = http.get(f"{API}/messages", params={"maxResults": 1}).json()["messages"][0]["id"]
    return found


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic dXNlcjpwYXNz", "Bearer"])
def test_no_or_unknown_token_is_401_with_a_bearer_challenge(
    emulator: GmailEmulator, header: str | None
) -> None:
    with httpx.Client(
        transport=transport_sync(emulator), base_url="https://gmail.googleapis.com"
    ) as h:
        reply = h.get(f"{API}/profile", headers={"Authorization": header} if header else {})
    assert error_of(reply, 401, "authError")["errors"] == [DOCUMENTED_401]
    assert reply.headers["www-authenticate"].startswith(
        'Bearer realm="https://accounts.google.com/"'
    )


def transport_sync(emulator: GmailEmulator) -> httpx.BaseTransport:
    from mfconnector.gmail_emulator import GmailSyncTransport

    return GmailSyncTransport(emulator)


@pytest.mark.parametrize(
    ("token", "method", "path", "allowed"),
    [
        ("read", "GET", "/messages", True),
        ("read", "POST", "/messages/{id}/modify", False),
        ("read", "POST", "/messages/send", False),
        ("send", "POST", "/messages/send", True),
        ("send", "GET", "/messages", False),
        ("send", "POST", "/drafts", False),
        ("compose", "POST", "/drafts", True),
        ("compose", "GET", "/messages", False),
        ("metadata", "GET", "/labels", True),
        ("metadata", "GET", "/messages/{id}/attachments/x", False),
        ("full", "DELETE", "/messages/{id}", True),
        ("read", "DELETE", "/messages/{id}", False),
    ],
)
def test_each_method_needs_one_of_its_documented_scopes(
    emulator: GmailEmulator, http: httpx.Client, token: str, method: str, path: str, allowed: bool
) -> None:
    url = API + path.format(id=first_id(http))
    with client(emulator, token) as session:
        reply = session.request(method, url, json={"raw": "eA"} if method == "POST" else None)
    if allowed:
        assert reply.status_code != 403, reply.text
    else:
        error = error_of(reply, 403, "insufficientPermissions")
        assert error["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
        assert 'error="insufficient_scope"' in reply.headers["www-authenticate"]


def test_metadata_scope_allows_neither_q_nor_bodies(
    emulator: GmailEmulator, http: httpx.Client
) -> None:
    message_id = first_id(http)
    with client(emulator, "metadata") as session:
        assert session.get(f"{API}/messages", params={"q": "is:unread"}).status_code == 403
        assert session.get(f"{API}/messages/{message_id}").status_code == 403
        ok = session.get(f"{API}/messages/{message_id}", params={"format": "metadata"})
        assert ok.status_code == 200 and "payload" in ok.json()


@pytest.mark.parametrize(
    ("path", "code", "reason"),
    [
        ("/messages/0123456789abcdef", 404, "notFound"),
        ("/messages/not-an-id!", 400, "invalidArgument"),
        ("/messages?format=bogus&maxResults=0", 400, "invalidArgument"),
        ("/messages?maxResults=ten", 400, "invalidArgument"),
        ("/messages?includeSpamTrash=maybe", 400, "invalidArgument"),
        ("/threads/0123456789abcdef", 404, "notFound"),
        ("/labels/Label_999", 404, "notFound"),
        ("/nothing-here", 404, "notFound"),
        ("/history?startHistoryId=abc", 400, "invalidArgument"),
    ],
)
def test_bad_requests_answer_in_googles_shape(
    http: httpx.Client, path: str, code: int, reason: str
) -> None:
    error_of(http.get(API + path), code, reason)


def test_a_format_that_does_not_exist_is_400(http: httpx.Client) -> None:
    error_of(http.get(f"{API}/messages/{first_id(http)}", params={"format": "html"}), 400,
             "invalidArgument")  # fmt: skip


# --- paging -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 100, 499, 500, 501])
def test_pages_cover_every_message_once(http: httpx.Client, size: int) -> None:
    everything = all_ids(http, maxResults=500)
    assert len(everything) == http.get(f"{API}/messages").json()["resultSizeEstimate"]
    paged = all_ids(http, maxResults=size)
    assert paged == everything and len(set(paged)) == len(paged)


def test_default_page_is_100_and_the_largest_500(emulator: GmailEmulator) -> None:
    box = emulator.mailbox
    template = next(iter(box.messages.values()))
    for _ in range(520):
        box.add_message(template.raw, ["INBOX"])
    with client(emulator, "full") as http:
        assert len(http.get(f"{API}/messages").json()["messages"]) == 100
        assert (
            len(http.get(f"{API}/messages", params={"maxResults": 500}).json()["messages"]) == 500
        )
        assert (
            len(http.get(f"{API}/messages", params={"maxResults": 501}).json()["messages"]) == 500
        )


def test_a_page_token_only_continues_its_own_query(http: httpx.Client) -> None:
    token = http.get(f"{API}/messages", params={"maxResults": 2, "q": "in:inbox"}).json()
    assert (
        http.get(
            f"{API}/messages", params={"q": "in:inbox", "pageToken": token["nextPageToken"]}
        ).status_code
        == 200
    )
    error_of(
        http.get(f"{API}/messages", params={"q": "in:sent", "pageToken": token["nextPageToken"]}),
        400,
        "invalidArgument",
    )
    error_of(http.get(f"{API}/messages", params={"pageToken": "garbage"}), 400, "invalidArgument")


# --- batch --------------------------------------------------------------------------------


def batch_body(requests: list[tuple[str, str]], boundary: str = "batch_test") -> bytes:
    parts = []
    for content_id, line in requests:
        parts.append(
            f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <{content_id}>\r\n\r\n"
            f"{line}\r\n\r\n"
        )
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


def batch(http: httpx.Client, requests: list[tuple[str, str]]) -> httpx.Response:
    return http.post(
        "/batch/gmail/v1",
        content=batch_body(requests),
        headers={"Content-Type": "multipart/mixed; boundary=batch_test"},
    )


def answers(reply: httpx.Response) -> dict[str, tuple[int, Any]]:
    """Content-ID -> (status, JSON body) of a multipart/mixed batch answer."""
    envelope = f"Content-Type: {reply.headers['content-type']}\r\n\r\n".encode() + reply.content
    outer = message_from_bytes(envelope, policy=policy.compat32)
    out: dict[str, tuple[int, Any]] = {}
    for part in outer.get_payload():
        assert isinstance(part, Message)
        assert part.get_content_type() == "application/http"
        inner = part.get_payload(decode=True)
        assert isinstance(inner, bytes)
        head, _, body = inner.partition(b"\r\n\r\n")
        status = int(head.split(b"\r\n")[0].split()[1])
        out[part["Content-ID"]] = (status, json.loads(body) if body.strip() else None)
    return out


def test_batch_answers_each_call_matched_by_content_id(http: httpx.Client) -> None:
    message_id = first_id(http)
    reply = batch(http, [
        ("one", f"GET /gmail/v1/users/me/messages/{message_id}?format=minimal HTTP/1.1"),
        ("two", "GET /gmail/v1/users/me/messages/0123456789abcdef"),
        ("three", "GET https://gmail.googleapis.com/gmail/v1/users/me/labels/INBOX HTTP/1.1"),
    ])  # fmt: skip
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("multipart/mixed; boundary=")
    got = answers(reply)
    assert set(got) == {"<response-one>", "<response-two>", "<response-three>"}
    assert got["<response-one>"][0] == 200 and got["<response-one>"][1]["id"] == message_id
    assert got["<response-two>"][0] == 404
    assert got["<response-two>"][1]["error"]["status"] == "NOT_FOUND"
    assert got["<response-three>"][1]["id"] == "INBOX"


def test_batch_calls_with_a_body_and_their_own_token(
    emulator: GmailEmulator, http: httpx.Client
) -> None:
    message_id = first_id(http)
    modify = (
        f"POST /gmail/v1/users/me/messages/{message_id}/modify HTTP/1.1\r\n"
        "Content-Type: application/json\r\nAuthorization: Bearer read\r\n\r\n"
        '{"addLabelIds": ["STARRED"]}'
    )
    allowed = f'POST /gmail/v1/users/me/messages/{message_id}/modify\r\nContent-Type: application/json\r\n\r\n{{"addLabelIds": ["STARRED"]}}'  # noqa: E501
    got = answers(batch(http, [("mine", modify), ("outer", allowed)]))
    assert got["<response-mine>"][0] == 403
    assert got["<response-outer>"][0] == 200
    assert "STARRED" in got["<response-outer>"][1]["labelIds"]


@pytest.mark.parametrize(("count", "accepted"), [(99, True), (100, True), (101, False)])
def test_a_batch_holds_at_most_100_calls(http: httpx.Client, count: int, accepted: bool) -> None:
    reply = batch(http, [(str(n), "GET /gmail/v1/users/me/labels/INBOX") for n in range(count)])
    if accepted:
        assert reply.status_code == 200 and len(answers(reply)) == count
    else:
        error_of(reply, 400, "invalidArgument")


def test_a_batch_that_is_not_multipart_is_400(http: httpx.Client) -> None:
    error_of(http.post("/batch/gmail/v1", json={"requests": []}), 400, "invalidArgument")


# --- the fault knob -----------------------------------------------------------------------


def test_every_third_call_is_throttled_with_retry_after(
    emulator: GmailEmulator, http: httpx.Client
) -> None:
    emulator.add_fault(status=429, reason="rateLimitExceeded", every=3, retry_after="7")
    statuses = [http.get(f"{API}/labels/INBOX") for _ in range(7)]
    assert [r.status_code for r in statuses] == [200, 200, 429, 200, 200, 429, 200]
    error_of(statuses[2], 429, "rateLimitExceeded")
    assert statuses[2].headers["retry-after"] == "7"


@pytest.mark.parametrize("reason", ["rateLimitExceeded", "userRateLimitExceeded"])
def test_403_rate_limits_in_the_usage_limits_domain(
    emulator: GmailEmulator, http: httpx.Client, reason: str
) -> None:
    emulator.add_fault(status=403, reason=reason, times=1)
    error = error_of(http.get(f"{API}/profile"), 403, reason)
    documented = DOCUMENTED_403_RATE if reason == "rateLimitExceeded" else DOCUMENTED_403_USER_RATE
    assert error["errors"] == [documented] and error["message"] == documented["message"]
    assert http.get(f"{API}/profile").status_code == 200


def test_calls_inside_a_batch_count_one_by_one(emulator: GmailEmulator, http: httpx.Client) -> None:
    emulator.add_fault(every=2, path_contains="/labels")
    got = answers(batch(http, [(str(n), "GET /gmail/v1/users/me/labels/INBOX") for n in range(4)]))
    assert [got[f"<response-{n}>"][0] for n in range(4)] == [200, 429, 200, 429]
    assert emulator.calls == 4 and emulator.http_requests == 1


# --- the transports -----------------------------------------------------------------------


async def test_the_async_transport_serves_an_async_client() -> None:
    from mfconnector.gmail_emulator import DEMO_TOKEN

    async with httpx.AsyncClient(
        transport=transport(), base_url="https://gmail.googleapis.com",
        headers={"Authorization": f"Bearer {DEMO_TOKEN}"},
    ) as session:  # fmt: skip
        reply = await session.get(f"{API}/labels/INBOX")
    assert reply.status_code == 200 and reply.json()["id"] == "INBOX"


@pytest.mark.slow
def test_the_loopback_server_speaks_real_http(emulator: GmailEmulator) -> None:
    with serve_on_loopback(emulator) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=server.url, headers={"Authorization": "Bearer full"}) as http:
            profile = http.get(f"{API}/profile")
            assert profile.status_code == 200 and profile.json()["messagesTotal"] >= 60
            ids = all_ids(http, q="has:attachment", maxResults=2)
            assert (
                len(ids)
                == http.get(f"{API}/messages", params={"q": "has:attachment"}).json()[
                    "resultSizeEstimate"
                ]
            )
            got = answers(
                batch(http, [("a", f"GET /gmail/v1/users/me/messages/{ids[0]}?format=metadata")])
            )
            assert got["<response-a>"][0] == 200
            error_of(
                http.get(f"{API}/profile", headers={"Authorization": "Bearer no"}), 401, "authError"
            )


@pytest.mark.slow
def test_the_loopback_server_serves_concurrent_writers_consistently(
    emulator: GmailEmulator,
) -> None:
    """Eight clients at once, each starring its own messages: no change is lost."""
    from concurrent.futures import ThreadPoolExecutor

    ids = list(emulator.mailbox.messages)[:24]
    with serve_on_loopback(emulator) as server:

        def star(chunk: list[str]) -> list[int]:
            with httpx.Client(base_url=server.url, headers={"Authorization": "Bearer full"}) as h:
                return [
                    h.post(
                        f"{API}/messages/{i}/modify", json={"addLabelIds": ["STARRED"]}
                    ).status_code
                    for i in chunk
                ]

        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = [s for part in pool.map(star, [ids[n::8] for n in range(8)]) for s in part]
    assert statuses == [200] * 24
    assert all("STARRED" in emulator.mailbox.messages[i].label_ids for i in ids)
