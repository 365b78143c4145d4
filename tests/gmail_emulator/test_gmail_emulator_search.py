"""Gmail search (``q``) in the emulator, against Google's "Search operators you can use with
Gmail" page and the Gmail API's "Search for messages" guide (dates are midnight Pacific
time unless given as epoch seconds; Spam and Trash are searched only when asked for).

The mailbox is built by the test through ``messages.import`` with eight messages whose
contents the test chose, so every expected result is known by construction.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from tests.support.gmail_helpers import (
    API,
    ME,
    all_ids,
    client,
    empty_emulator,
    import_message,
    rfc822,
)

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[httpx.Client, dict[str, str]]]:
    http = client(empty_emulator(NOW))
    ids: dict[str, str] = {}

    def add(name: str, labels: list[str], **fields: object) -> None:
        raw = rfc822(message_id=f"<{name}@test.example>", **fields)  # type: ignore[arg-type]
        ids[name] = import_message(http, raw, labels)["id"]

    amy, rory = "Amy Pond <amy@example.com>", "Rory Williams <rory@example.org>"
    add("m1", ["INBOX", "UNREAD"], sender=amy, to=[ME], subject="Dinner plans",
        when=datetime(2026, 11, 20, 10, 0, tzinfo=UTC), text="Let's meet at the café on Friday.",
        )  # fmt: skip
    add("m2", ["INBOX"], sender=rory, to=[ME], cc=["amy@example.com"], subject="Re: Dinner plans",
        when=datetime(2026, 11, 21, 12, 0, tzinfo=UTC), text="Friday works. Bring the resume.",
        parent_id="<m1@test.example>")  # fmt: skip
    add("m3", ["SENT"], sender=f"Tester <{ME}>", to=[rory], subject="Invoice attached",
        when=datetime(2026, 11, 20, 7, 0, tzinfo=UTC), text="See attachment.",
        attachments=[("invoice-77.pdf", "application/pdf", b"%PDF-1.4 tiny")])  # fmt: skip
    add("m4", ["INBOX", "CATEGORY_PROMOTIONS", "STARRED"], sender="Shop <news@shop.example>",
        to=[ME], subject="Weekly deals 🎉", when=datetime(2026, 10, 1, 8, 0, tzinfo=UTC),
        html="<p>Big <b>savings</b> today</p><style>.hidden{}</style>")  # fmt: skip
    add("m5", ["INBOX", "IMPORTANT"], sender="王伟 <wei@example.cn>", to=[ME], subject="季度报告",
        when=datetime(2026, 11, 25, 3, 0, tzinfo=UTC), text="请审阅附件")  # fmt: skip
    add("m6", ["SPAM"], sender="spam@bad.example", to=[ME], subject="You won a dinner",
        when=datetime(2026, 11, 26, 3, 0, tzinfo=UTC), text="prize")  # fmt: skip
    add("m7", ["TRASH"], sender=amy, to=[ME], subject="Old dinner",
        when=datetime(2026, 11, 2, 3, 0, tzinfo=UTC), text="cancelled")  # fmt: skip
    trips = http.post(f"{API}/labels", json={"name": "Trips/2026"}).json()["id"]
    add("m8", ["INBOX", trips], sender=rory, to=[ME], subject="Photos",
        when=datetime(2026, 11, 28, 3, 0, tzinfo=UTC), text="From the trip.",
        attachments=[("holiday.jpg", "image/jpeg", bytes(range(256)) * 1200)])  # fmt: skip
    yield http, ids
    http.close()


def found(box: tuple[httpx.Client, dict[str, str]], q: str, **params: object) -> set[str]:
    http, ids = box
    names = {value: key for key, value in ids.items()}
    return {names[i] for i in all_ids(http, q=q, **params)}


CASES = [
    ("from:amy", {"m1"}),
    ("from:amy@example.com", {"m1"}),
    ("from:Rory", {"m2", "m8"}),
    ("from:example.org", {"m2", "m8"}),
    ("from:me", {"m3"}),
    ("to:me", {"m1", "m2", "m4", "m5", "m8"}),
    ("cc:amy", {"m2"}),
    ("subject:dinner", {"m1", "m2"}),
    ('subject:"dinner plans"', {"m1", "m2"}),
    ("subject:(plans dinner)", {"m1", "m2"}),
    ('"plans dinner"', set()),
    ("dinner -from:rory", {"m1"}),
    ("cafe", {"m1"}),
    ("CAFÉ", {"m1"}),
    ("café friday", {"m1"}),
    ("résumé", {"m2"}),
    ("savings", {"m4"}),
    ("hidden", set()),
    ("季度", {"m5"}),
    ("审阅", {"m5"}),
    ("has:attachment", {"m3", "m8"}),
    ("filename:pdf", {"m3"}),
    ("filename:invoice-77.pdf", {"m3"}),
    ("filename:holiday", {"m8"}),
    ("is:unread", {"m1"}),
    ("is:read", {"m2", "m3", "m4", "m5", "m8"}),
    ("is:starred", {"m4"}),
    ("is:important", {"m5"}),
    ("in:inbox", {"m1", "m2", "m4", "m5", "m8"}),
    ("in:sent", {"m3"}),
    ("in:trash", {"m7"}),
    ("in:spam", {"m6"}),
    ("in:anywhere dinner", {"m1", "m2", "m6", "m7"}),
    ("label:trips-2026", {"m8"}),
    ("label:Trips/2026", {"m8"}),
    ("label:nosuchlabel", set()),
    ("category:promotions", {"m4"}),
    # m3 is 2026-11-20 07:00 UTC = 2026-11-19 23:00 in Pacific time: before the 20th there.
    ("after:2026/11/20", {"m1", "m2", "m5", "m8"}),
    ("before:2026/11/20", {"m3", "m4"}),
    ("after:2026/11/20 before:2026/11/22", {"m1", "m2"}),
    (f"after:{int(datetime(2026, 11, 21, tzinfo=UTC).timestamp())}", {"m2", "m5", "m8"}),
    ("newer_than:7d", {"m5", "m8"}),
    ("older_than:30d", {"m4"}),
    # m5 is 2026-11-25 03:00 UTC, still the 24th in Pacific time.
    ("newer:2026/11/25", {"m8"}),
    ("newer:2026/11/24", {"m5", "m8"}),
    ("after:someday", set()),
    ("larger:100K", {"m8"}),
    ("smaller:100K", {"m1", "m2", "m3", "m4", "m5"}),
    ("larger:1M", set()),
    ("rfc822msgid:<m2@test.example>", {"m2"}),
    ("rfc822msgid:m2@test.example", {"m2"}),
    ("from:amy OR from:rory", {"m1", "m2", "m8"}),
    ("{from:amy from:rory}", {"m1", "m2", "m8"}),
    ("from:(amy OR rory)", {"m1", "m2", "m8"}),
    ("dinner (from:amy OR cc:amy)", {"m1", "m2"}),
    ("-in:inbox", {"m3"}),
    ("-(from:amy OR from:rory) in:inbox", {"m4", "m5"}),
    ("friday AND café", {"m1"}),
    ("(dinner from:amy", {"m1"}),
    ("dinner from:amy)", {"m1"}),
    ("", {"m1", "m2", "m3", "m4", "m5", "m8"}),
]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_search_operator(
    mailbox: tuple[httpx.Client, dict[str, str]], query: str, expected: set[str]
) -> None:
    assert found(mailbox, query) == expected


def test_include_spam_trash_searches_everywhere(
    mailbox: tuple[httpx.Client, dict[str, str]],
) -> None:
    assert found(mailbox, "dinner", includeSpamTrash="true") == {"m1", "m2", "m6", "m7"}


def test_label_ids_must_all_match(mailbox: tuple[httpx.Client, dict[str, str]]) -> None:
    http, _ = mailbox
    assert found(mailbox, "", labelIds=["INBOX", "UNREAD"]) == {"m1"}
    reply = http.get(f"{API}/messages", params=[("labelIds", "INBOX"), ("labelIds", "STARRED")])
    assert [m["id"] for m in reply.json()["messages"]] == [mailbox[1]["m4"]]


def test_results_are_newest_first(mailbox: tuple[httpx.Client, dict[str, str]]) -> None:
    http, ids = mailbox
    order = all_ids(http, q="in:inbox")
    assert order == [ids[n] for n in ("m8", "m5", "m2", "m1", "m4")]


def test_a_reply_joins_its_thread_and_threads_list_searches_threads(
    mailbox: tuple[httpx.Client, dict[str, str]],
) -> None:
    http, ids = mailbox
    first = http.get(f"{API}/messages/{ids['m1']}", params={"format": "minimal"}).json()
    reply = http.get(f"{API}/messages/{ids['m2']}", params={"format": "minimal"}).json()
    assert reply["threadId"] == first["threadId"] == ids["m1"]
    threads = http.get(f"{API}/threads", params={"q": "from:amy"}).json()
    assert [t["id"] for t in threads["threads"]] == [ids["m1"]]
    assert threads["resultSizeEstimate"] == 1
