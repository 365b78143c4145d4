"""Every tool on the ``--demo`` mailbox (the Graph emulator), through the real server stack.

The context is what ``mfconnector --demo`` builds (``wiring.build_context``): the real
GraphClient over the emulator's transport. Requests go through the real Runtime + McpServer over
in-memory streams, in each protocol era; replies are checked against the era's MCP schema
and each tool's own outputSchema (``check_result``), and every byte written is scanned for
secrets.

What is asserted is what a user would check: the counts a folder shows match the messages
one can page through; a filter returns exactly the listed messages that satisfy it; a
search for a word taken from a result finds every message that has the word; a file's text
comes back whole across windows. Expected sets come from the tools' own unfiltered output
or from the emulator's data model, never from the code path under test.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from mfconnector.auth import StaticTokenProvider
from mfconnector.cli import build_parser
from mfconnector.demo import DEMO_ACCOUNT, DEMO_SOURCE
from mfconnector.emulator import Emulator
from mfconnector.emulator.model import Message
from mfconnector.emulator.transport import EmulatorTransport
from mfconnector.entry.account_builders import FIXTURE_TOKEN
from mfconnector.entry.wiring import build_context
from mfconnector.graph.client import GraphClient
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT, is_graph_url
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.tools.base import ToolContext
from tests.support.harness import MODERN, graph_accounts, open_session, ref, request, rows
from tests.tools.test_tools_canned import DemoClient, RecordingTransport, Tap, assert_no_secrets

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]
FAST = dataclasses.replace(
    DEFAULT_LIMITS,
    graph_retry_after_max_seconds=1.0,
    graph_retry_total_seconds=2.0,
    graph_request_seconds=20.0,
)
BODY = DEFAULT_LIMITS.body_chars
TEST_SECONDS = 60
ME = "adelev@contoso.onmicrosoft.com"
FULL_VIEW_TOOLS = frozenset(
    {"mail_list", "mail_search", "mail_read", "mail_folders", "files_list", "files_search"}
)


@dataclasses.dataclass
class Demo:
    client: DemoClient
    emulator: Emulator
    transport: RecordingTransport

    async def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Mail results in the full view (Graph's field names), which these tests compare
        with the emulator's data; the compact view is tested in test_reads_demo.py."""
        if name in FULL_VIEW_TOOLS:
            arguments = {"detail": "full", **(arguments or {})}
        return await self.client.structured(name, arguments)

    async def every(self, name: str, key: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        """All items of a list tool, following its cursor to the end."""
        items: list[dict[str, Any]] = []
        data = await self.data(name, arguments)
        while True:
            items.extend(rows(data, key))
            cursor = (data.get("skipped") or {}).get("items", {}).get("cursor")
            if not cursor:
                return items
            data = await self.data(name, {**arguments, "cursor": cursor})


def demo_context(
    *, allow_partial: bool = False, limits: Limits = FAST
) -> tuple[ToolContext, GraphClient, RecordingTransport, Emulator]:
    """What ``wiring.build_context`` builds for ``--demo``, with the transport recorded."""
    emulator = Emulator()
    tokens = StaticTokenProvider(FIXTURE_TOKEN, account=DEMO_ACCOUNT)
    transport = RecordingTransport(EmulatorTransport(emulator))
    client = GraphClient(
        token_provider=tokens, limits=limits, root=DEFAULT_GRAPH_ROOT, transport=transport
    )

    async def graph() -> GraphClient:
        return client

    ctx = ToolContext(
        limits=limits,
        mode="demo",
        allow_partial=allow_partial,
        sign_in=tokens,
        user_path="/me",
        source=DEMO_SOURCE,
        accounts=graph_accounts(graph, limits, all_files=True),
    )
    return ctx, client, transport, emulator


@asynccontextmanager
async def demo(era: str = MODERN, *, allow_partial: bool = False) -> AsyncIterator[Demo]:
    ctx, graph, transport, emulator = demo_context(allow_partial=allow_partial)
    wire = bytearray()
    with trio.fail_after(TEST_SECONDS):
        async with graph, open_session(context=ctx, limits=FAST) as session:
            session._from_server = Tap(session._from_server, wire)
            client = DemoClient(session, era, transport, ctx)
            await client.start()
            yield Demo(client, emulator, transport)
    assert_no_secrets(bytes(wire))
    for sent in transport.requests:
        if not is_graph_url(str(sent.url), DEFAULT_GRAPH_ROOT):
            assert "authorization" not in sent.headers, "the token went to a download host"


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


def searchable(message: Message) -> str:
    people = [message.sender, *message.to, *message.cc]
    parts = [message.subject, message.texts()[0], *(f"{n} {a}" for n, a in people)]
    return " ".join(parts + [a.name for a in message.attachments]).casefold()


def without_latin_accents(text: str) -> str:
    """Exchange's default diacritic-insensitive match, for Latin letters (é is e)."""
    out = []
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(char) and out and out[-1] < "\u0250":
            continue
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out)).casefold()


def has_word(text: str, word: str) -> bool:
    prefix = without_latin_accents(word)
    return any(t.startswith(prefix) for t in re.findall(r"\w+", without_latin_accents(text)))


# --- the context the CLI builds -------------------------------------------------------------


async def test_cli_demo_context_serves_the_emulator() -> None:
    ctx, lazy = build_context(build_parser().parse_args(["--demo"]), FAST)
    try:
        assert (ctx.mode, ctx.source, ctx.user_path) == ("demo", DEMO_SOURCE, "/me")
        assert (await ctx.sign_in.describe())["account"] == DEMO_ACCOUNT
        async with open_session(context=ctx, limits=FAST) as session:
            reply = await session.call(
                request(1, "tools/call", {"name": "account_status", "arguments": {}})
            )
            data = reply["result"]["structuredContent"]
            assert data["mode"] == "demo" and data["signed_in"] is True
            assert data["profile"]["address"] == ME
            # The demo reads every drive, as its account's files say
            assert data["capabilities"]["other_drives"] is True
            assert [a["files"] for a in data["accounts"]] == [True]
            # State lives as long as the process: the same client, the same emulator.
            assert await lazy() is await lazy()
    finally:
        await lazy.aclose()


# --- mail ------------------------------------------------------------------------------------


async def test_folder_counts_match_what_can_be_paged_through(era: str) -> None:
    async with demo(era) as d:
        folders = {f["name"]: f for f in (await d.data("mail_folders"))["folders"]}
        inbox = folders["Inbox"]
        messages = await d.every("mail_list", "messages", {"folder": "inbox", "limit": 50})
        ids = [m["id"] for m in messages]
        assert len(ids) == len(set(ids)) == inbox["total"] > 50
        stamps = [m["received"] for m in messages]
        assert stamps == sorted(stamps, reverse=True)
        assert sum(m["unread"] for m in messages) == inbox["unread"]
        children = (await d.data("mail_folders", {"parent": inbox["id"]}))["folders"]
        assert {c["name"] for c in children} == {"Receipts", "Newsletters"}
        for child in children:
            inside = await d.every("mail_list", "messages", {"folder": child["id"]})
            assert len(inside) == child["total"] > 0


@pytest.mark.parametrize(
    ("arguments", "keep"),
    [
        ({"unread_only": True}, lambda m: m["unread"]),
        ({"has_attachments": True}, lambda m: m["has_attachments"]),
        (
            {"from": "BILLING@fabrikam.com"},
            lambda m: m["from"]["address"] == "billing@fabrikam.com",
        ),
        ({"since": "2026-02-15"}, lambda m: m["received"] >= "2026-02-15"),
        ({"before": "2026-02-15"}, lambda m: m["received"] < "2026-02-15"),
        (
            {"since": "2026-02-01", "before": "2026-03-01", "unread_only": True},
            lambda m: "2026-02-01" <= m["received"][:10] < "2026-03-01" and m["unread"],
        ),
    ],
)
async def test_each_filter_returns_exactly_the_listed_messages_it_describes(
    arguments: dict[str, Any], keep: Any
) -> None:
    async with demo() as d:
        everything = await d.every("mail_list", "messages", {"folder": "inbox"})
        filtered = await d.every(
            "mail_list", "messages", {"folder": "inbox", **arguments, "limit": 7}
        )
        expected = [m["id"] for m in everything if keep(m)]
        assert expected, f"the demo inbox should have messages for {arguments}"
        assert [m["id"] for m in filtered] == expected


async def test_a_filter_combination_nobody_recorded(era: str) -> None:
    """0.1's demo answered only the combinations it had canned; any combination works now."""
    async with demo(era) as d:
        everything = await d.every("mail_list", "messages", {"folder": "archive"})
        sender = everything[len(everything) // 2]["from"]["address"]
        got = await d.every(
            "mail_list",
            "messages",
            {"folder": "archive", "from": sender, "since": "2025-12-01", "has_attachments": False},
        )
        expected = [
            m["id"]
            for m in everything
            if m["from"]["address"] == sender and m["received"] >= "2025-12-01"
        ]
        assert [m["id"] for m in got] == expected and expected


@pytest.mark.slow
async def test_search_for_words_taken_from_results_finds_every_message_with_them() -> None:
    async with demo() as d:
        mailbox = d.emulator.me()
        hidden = {f.id for f in mailbox.folders.values() if f.is_hidden}
        pool = [m for m in mailbox.messages.values() if m.folder_id not in hidden]
        listed = await d.every("mail_list", "messages", {"folder": "inbox"})
        words = sorted(
            {
                w
                for m in listed
                for w in re.findall(r"[^\W\d_]{4,}", m["subject"] + " " + m["preview"])
            }
        )
        assert len(words) > 40
        for word in words[:: max(1, len(words) // 12)]:
            found = await d.every("mail_search", "messages", {"query": word})
            expected = {ref(m.immutable_id) for m in pool if has_word(searchable(m), word)}
            assert {m["id"] for m in found} == expected, word
            assert len(found) == len(expected)


@pytest.mark.slow
async def test_search_with_kql_and_in_one_folder(era: str) -> None:
    async with demo(era) as d:
        mailbox = d.emulator.me()
        from_billing = await d.every(
            "mail_search", "messages", {"query": "from:billing@fabrikam.com invoice"}
        )
        expected = {
            ref(m.immutable_id)
            for m in mailbox.messages.values()
            if m.sender[1] == "billing@fabrikam.com" and has_word(searchable(m), "invoice")
        }
        assert {m["id"] for m in from_billing} == expected and expected
        inbox = mailbox.well_known["inbox"]
        in_inbox = await d.every("mail_search", "messages", {"query": "invoice", "folder": "inbox"})
        assert {m["id"] for m in in_inbox} == {
            ref(m.immutable_id)
            for m in mailbox.messages.values()
            if m.folder_id == inbox and has_word(searchable(m), "invoice")
        }
        nothing = await d.data("mail_search", {"query": "zebraquokka"})
        assert nothing["messages"] == [] and "incomplete" not in nothing


@pytest.mark.slow
async def test_read_a_thread_reply_with_its_quoted_history_and_attachments(era: str) -> None:
    async with demo(era) as d:
        hits = await d.every("mail_search", "messages", {"query": 'subject:"Pilot feedback"'})
        replies = [m for m in hits if m["subject"].startswith("Re: ")]
        assert len({m["thread"] for m in hits}) == 1 and replies
        read = await d.data("mail_read", {"message_id": replies[0]["id"]})
        text = read["message"]["body"]["text"]
        assert "From:" in text and "Subject:" in text and "Pilot feedback" in text
        with_files = [m for m in hits if m["has_attachments"]]
        assert with_files
        read = await d.data("mail_read", {"message_id": with_files[0]["id"]})
        names = [a["name"] for a in read["attachments"]]
        assert names == ["Site survey – raw scan.png"]
        assert read["attachments"][0]["size"] > 3 * 1024 * 1024
        assert set(read["attachments"][0]) == {
            "id",
            "name",
            "kind",
            "content_type",
            "size",
            "inline",
            "content_id",
        }


@pytest.mark.slow
async def test_body_over_the_limit_is_clipped_and_continued(era: str) -> None:
    async with demo(era) as d:
        found = await d.every("mail_search", "messages", {"query": '"Store audit transcript"'})
        by_length = {
            int(m["subject"].split("(")[1].split(" ")[0].replace(",", "")): m for m in found
        }
        assert sorted(by_length) == [BODY - 1, BODY, BODY + 1]
        for length, message in by_length.items():
            result = await d.client.call(
                "mail_read", {"message_id": message["id"], "detail": "full"}
            )
            data = result["structuredContent"]
            assert data["message"]["body"]["total_chars"] == length
            if length <= BODY:
                assert "incomplete" not in data and result["isError"] is False
                continue
            assert data["skipped"]["text"]["next_offset"] == BODY
            rest = await d.data("mail_read", {"message_id": message["id"], "body_offset": BODY})
            whole = data["message"]["body"]["text"] + rest["message"]["body"]["text"]
            assert len(whole) == length


@pytest.mark.slow
async def test_long_html_newsletter_reads_whole_across_windows() -> None:
    async with demo() as d:
        mailbox = d.emulator.me()
        longest = max(
            (m for m in mailbox.messages.values() if m.body_type == "html"),
            key=lambda m: len(m.body),
        )
        expected = longest.texts()[0]
        offset, text = 0, ""
        while True:
            data = await d.data(
                "mail_read", {"message_id": ref(longest.immutable_id), "body_offset": offset}
            )
            text += data["message"]["body"]["text"]
            offset = (data.get("skipped") or {}).get("text", {}).get("next_offset", 0)
            if not offset:
                break
        assert len(text) > BODY
        assert " ".join(text.split()) == " ".join(expected.split())
        assert "track()" not in text and "<" not in text.replace("<adelev", "")


async def test_a_moved_message_stays_readable_by_its_id() -> None:
    """The tools ask for immutable ids, so an id from a list survives a move (Graph's rule)."""
    async with demo() as d:
        first = (await d.data("mail_list", {"folder": "inbox", "limit": 1}))["messages"][0]
        async with httpx.AsyncClient(
            transport=EmulatorTransport(d.emulator), headers={"Authorization": "Bearer x"}
        ) as graph:
            moved = await graph.post(
                f"{DEFAULT_GRAPH_ROOT}/me/messages/{first['id'].split('.', 1)[1]}/move",
                json={"destinationId": "archive"},
                headers={"Prefer": 'IdType="ImmutableId"'},
            )
        assert moved.status_code == 201
        read = await d.data("mail_read", {"message_id": first["id"]})
        assert read["message"]["folder"] == ref(d.emulator.me().well_known["archive"])
        archive = await d.every("mail_list", "messages", {"folder": "archive"})
        assert first["id"] in {m["id"] for m in archive}


async def test_missing_and_malformed_ids_and_throttling_are_graph_errors(era: str) -> None:
    async with demo(era) as d:
        real = (await d.data("mail_list", {"limit": 1}))["messages"][0]["id"]
        missing = real[:-12] + "AAAAAAAAAAA="
        error = await d.client.error("mail_read", {"message_id": missing})
        assert error["provider_code"] == "ErrorItemNotFound" and error["status"] == 404
        error = await d.client.error("mail_read", {"message_id": ref("not-a-message-id")})
        assert error["provider_code"] == "ErrorInvalidIdMalformed" and error["status"] == 400
        d.emulator.add_fault(429, retry_after="2.128", times=1)
        error = await d.client.error("mail_list", {})
        assert error["status"] == 429 and "retry in 3 s" in error["message"]
        assert (await d.data("mail_list", {"limit": 1}))["messages"]


# --- files -----------------------------------------------------------------------------------


async def test_files_list_root_over_two_pages_and_by_path(era: str) -> None:
    async with demo(era) as d:
        first = await d.data("files_list", {})
        assert len(first["items"]) == 50 and first["skipped"]["items"]["more_pages"] is True
        everything = await d.every("files_list", "items", {})
        drive = d.emulator.drive_of(d.emulator.me())
        assert [i["id"] for i in everything] == [ref(i.id) for i in drive.children(drive.root_id)]
        reports = next(
            i
            for i in await d.every("files_list", "items", {"path": "Documents"})
            if i["name"] == "Reports"
        )
        by_path = await d.data("files_list", {"path": "Documents/Reports"})
        by_id = await d.data("files_list", {"item_id": reports["id"]})
        assert by_path["items"] == by_id["items"] and len(by_path["items"]) == 4


async def test_files_search_finds_a_file_by_a_word_of_its_text() -> None:
    async with demo() as d:
        read = await d.data("files_read", {"path": "Projects/Contoso Launch/Launch plan.md"})
        words = re.findall(r"\b[a-z]{6,}\b", read["content"]["text"])
        drive = d.emulator.drive_of(d.emulator.me())
        for word in words[::5]:
            found = await d.every("files_search", "items", {"query": word})
            expected = {
                ref(i.id)
                for i in drive.items.values()
                if i.parent_id and has_word(i.name + " " + i.text, word)
            }
            assert {i["id"] for i in found} == expected and read["item"]["id"] in expected, word


@pytest.mark.slow
async def test_files_read_text_windows_binary_and_big_files(era: str) -> None:
    async with demo(era) as d:
        notes = await d.data("files_read", {"path": "Documents/Notes de réunion – Tōkyō.txt"})
        first_text = notes["content"]["text"]
        assert BODY - 60 < len(first_text) <= BODY and first_text[-1].isspace()
        next_offset = notes["skipped"]["text"]["next_offset"]
        assert next_offset == len(first_text.encode("utf-8"))
        rest = await d.data("files_read", {"item_id": notes["item"]["id"], "offset": next_offset})
        assert len(first_text) + len(rest["content"]["text"]) == BODY + 1, "nothing lost"
        assert rest["skipped"]["text"]["bytes_before"] == next_offset
        log = await d.data("files_read", {"path": "server.log", "offset": -200})
        assert log["content"]["total_bytes"] == log["content"]["to_byte"] == 2_600_000
        assert "disk quota exceeded" in log["content"]["text"]
        png = await d.data("files_read", {"path": "Documents/Reports/2026/Report chart.png"})
        assert png["content"]["returned"] is False and png["item"]["size"] > 100
        folder = await d.data("files_read", {"path": "Projects"})
        assert "files_list" in folder["content"]["reason"]
        error = await d.client.error("files_read", {"path": "Documents/nope.txt"})
        assert error["provider_code"] == "itemNotFound"


async def test_files_read_gives_the_text_of_each_kind_of_demo_document(era: str) -> None:
    async with demo(era) as d:
        docx = await d.data("files_read", {"path": "Documents/Q1 Budget Review.docx"})
        xlsx = await d.data("files_read", {"path": "Projects/Budget 2027/Budget 2027 model.xlsx"})
        pptx = await d.data("files_read", {"path": "Projects/Contoso Launch/Launch deck.pptx"})
        pdf = await d.data("files_read", {"path": "Documents/Contract – Fabrikam MSA.pdf"})
        page = await d.data(
            "files_read", {"path": "Documents/Contract – Fabrikam MSA.pdf", "part": 2}
        )
    assert docx["content"]["format"] == "docx"
    assert docx["content"]["text"].startswith("# Q1 Budget Review\nSummary: spending is on plan")
    assert "Decision needed: approve the revised headcount plan" in docx["content"]["text"]
    sheet = xlsx["content"]["text"]
    assert sheet.startswith("## Sheet: Budget 2027\nCost centre\tQ1 plan\tQ1 actual\tVariance\n")
    assert "Retail stores\t120000\t" in sheet and "## Sheet: Assumptions\n" in sheet
    assert [part["name"] for part in xlsx["content"]["parts"]] == [
        "Sheet: Budget 2027",
        "Sheet: Assumptions",
    ]
    deck = pptx["content"]["text"]
    assert deck.startswith("## Slide 1: Contoso Launch – kickoff\nApril 14, Redmond campus\n")
    assert "## Slide 4: Risks\nOffline sync demo\n" in deck
    assert pdf["content"]["format"] == "pdf" and pdf["content"]["parts_total"] >= 2
    contract = pdf["content"]["text"]
    assert "2.1 Fabrikam provides the Services described in each statement of work" in contract
    clauses = [line for line in contract.splitlines() if line[:1].isdigit()]
    assert len(clauses) == len(set(clauses)) > 40, "every clause once (0.2 repeated six, 9x)"
    assert page["content"]["text"].startswith("## Page 2\n")
    assert pdf["content"]["text"][pdf["content"]["parts"][1]["offset"] :].startswith(
        page["content"]["text"][:200]
    )


async def test_downloads_went_to_the_preauthenticated_host_without_the_token() -> None:
    async with demo() as d:
        await d.data("files_read", {"path": "Team contacts.csv"})
        hosts = [r.url.host for r in d.transport.requests]
        assert "contoso-my.sharepoint.com" in hosts
        download = next(
            r for r in d.transport.requests if r.url.host == "contoso-my.sharepoint.com"
        )
        assert "authorization" not in download.headers


def test_demo_dates_are_iso_utc() -> None:
    emulator = Emulator()
    for message in emulator.me().messages.values():
        assert message.received.tzinfo is not None
        assert datetime.fromisoformat(message.received.isoformat()) == message.received


@pytest.mark.slow
def test_demo_process_writes_nothing_to_disk_and_starts_the_same_every_time(
    tmp_path: Path,
) -> None:
    """Two ``--demo`` processes with a private HOME and working directory: identical answers
    (a deterministic mailbox), and no file written anywhere they could write."""
    calls = [
        ("mail_list", {"limit": 50}),
        ("mail_search", {"query": "budget"}),
        ("files_list", {}),
        ("files_read", {"path": "Documents/Reports/2026/Q1 report draft.md"}),
    ]
    lines = b"".join(
        json.dumps(request(n, "tools/call", {"name": name, "arguments": arguments})).encode()
        + b"\n"
        for n, (name, arguments) in enumerate(calls, 1)
    )
    outputs = []
    for run in range(2):
        home = tmp_path / f"home{run}"
        home.mkdir()
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_DATA_HOME": str(home / "data"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        done = subprocess.run(
            [sys.executable, "-m", "mfconnector", "--demo"],
            input=lines,
            capture_output=True,
            cwd=home,
            env=env,
            timeout=60,
            check=True,
        )
        replies = [json.loads(line) for line in done.stdout.splitlines()]
        assert [r["id"] for r in sorted(replies, key=lambda r: r["id"])] == [1, 2, 3, 4]
        assert all("structuredContent" in r["result"] for r in replies)
        # Cursors are signed with a per-process key: everything else must be identical.
        data = []
        for reply in sorted(replies, key=lambda r: r["id"]):
            structured = reply["result"]["structuredContent"]
            items = structured.get("skipped", {}).get("items")
            if items and items.get("cursor"):
                items["cursor"] = "<signed per process>"
            data.append(structured)
        outputs.append(data)
        assert list(home.rglob("*")) == [], "the demo wrote to disk"
    assert outputs[0] == outputs[1]
