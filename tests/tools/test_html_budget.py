"""HTML bodies are converted under a budget that holds for any markup (issue 16 §1).

0.2.0 fed bodies to an HTML5 tree builder: 243 KB of ``<b id=N>`` x 250 then ``<p>x`` x
60,000 made 15 million nodes and 5.6 GB. These tests send that and markup built to hit the
tree builder's other costly corners, through the converter, the tools and the real process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from mfconnector.auth import StaticTokenProvider
from mfconnector.emulator.seed.hostile import HOSTILE_HTML
from mfconnector.graph.client import GraphClient
from mfconnector.graph.fixture_transport import FixtureTransport
from mfconnector.graph.fixtures import parse_fixtures
from mfconnector.graph.mail_reads import body_text
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.textconv import convert_html
from tests.support.harness import client_context, initialize, open_session, ref, request

PEAK_RSS_BYTES = 256 * 1024 * 1024
REPLY_SECONDS = 10.0
MESSAGE_ID = "AAMkAGI2budget0001="


def memory_budget(markup: str) -> int:
    """What one conversion may allocate: a few copies of the body, never nodes per tag."""
    return 10 * sys.getsizeof(markup) + 256 * 1024


def traced_peak(markup: str) -> tuple[int, str | None]:
    tracemalloc.start()
    try:
        result = convert_html(markup)
        return tracemalloc.get_traced_memory()[1], result.limit
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_the_formatting_element_reproduction_costs_a_few_copies_of_its_size() -> None:
    peak, limit = traced_peak(HOSTILE_HTML)
    assert limit is None
    assert peak <= memory_budget(HOSTILE_HTML)
    text = convert_html(HOSTILE_HTML).text
    assert text == "\n\n".join(["x"] * 60_000)  # what a browser shows: 60,000 paragraphs


def tags(count: int) -> str:
    """A body of exactly ``count`` tags, the last one a line break."""
    return "<p>one " + "<i>" * (count - 2) + "two<br>three"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("limit", "cut"),
    [
        (DEFAULT_LIMITS.html_tags - 1, True),
        (DEFAULT_LIMITS.html_tags, False),
        (DEFAULT_LIMITS.html_tags + 1, False),
    ],
)
def test_html_tags_at_l_minus_1_l_and_l_plus_1(limit: int, cut: bool) -> None:
    """A body of exactly ``html_tags`` tags keeps its layout; past the limit the rest is
    plain words (the line break is lost, no word is) and the limit is named."""
    result = convert_html(tags(DEFAULT_LIMITS.html_tags), max_tags=limit)
    assert result.limit == ("html_tags" if cut else None)
    assert result.text == ("one two three" if cut else "one two\nthree")


def fixture_client(body: str) -> GraphClient:
    doc = {
        "id": MESSAGE_ID,
        "subject": "budget",
        "hasAttachments": False,
        "body": {"contentType": "html", "content": body},
    }
    entry = {
        "request": {"method": "GET", "path": f"/me/messages/{MESSAGE_ID}"},
        "response": {"json": doc},
    }
    fixtures = parse_fixtures(json.dumps({"responses": [entry]}).encode())
    return GraphClient(
        token_provider=StaticTokenProvider("t"), transport=FixtureTransport(fixtures)
    )


@pytest.mark.parametrize("over", [False, True], ids=["at the limit", "past it"])
async def test_mail_read_past_the_tag_limit_answers_the_words_and_names_the_limit(
    over: bool,
) -> None:
    """The server's own limits decide (here 50 tags), and the answer is never -32603."""
    limits = replace(DEFAULT_LIMITS, html_tags=50)
    body = "<div>" + "<p>word" * (50 if over else 49)
    client = fixture_client(body)
    arguments = {"message_id": ref(MESSAGE_ID)}
    call = request(1, "tools/call", {"name": "mail_read", "arguments": arguments})
    async with client, open_session(context=client_context(client, limits)) as session:
        reply = await session.call(call)
    result = reply["result"]
    data = result["structuredContent"]
    assert data["message"]["body"].split() == ["word"] * (50 if over else 49)
    if over:
        assert result["isError"] is True and data["incomplete"] is True
        (record,) = data["skipped"]["fields"]
        assert record["path"] == "message.body" and record["limit"] == "html_tags"
        assert record["kept_tags"] == 50
    else:
        assert "incomplete" not in data and result["isError"] is False


async def test_a_cancelled_conversion_leaves_no_thread_converting() -> None:
    """0.2.0 abandoned the thread on cancel and it converted on; now the thread stops."""
    body = {"contentType": "html", "content": "<p>x" * 500_000}
    with trio.move_on_after(0.05) as scope:
        await body_text(body, DEFAULT_LIMITS)
    assert scope.cancelled_caught  # 2 MB takes far longer than 50 ms
    converting = [
        frame
        for frame in sys._current_frames().values()
        if any(f.f_code.co_name == "convert_html" for f in _stack(frame))
    ]
    assert converting == []


def _stack(frame: Any) -> list[Any]:
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


FORMATTING = [
    "a",
    "b",
    "big",
    "code",
    "em",
    "font",
    "i",
    "nobr",
    "s",
    "small",
    "strike",
    "strong",
    "tt",
    "u",
]
BLOCKS = ["p", "div", "li", "td", "tr", "table", "h1", "blockquote", "ul", "dd", "address"]


@st.composite
def hostile_markup(draw: st.DrawFn) -> str:
    """Pieces that make an HTML5 tree builder work per tag: distinct formatting elements
    (reconstructed at every block), adoption-agency misnesting, tables with stray content,
    many attributes, unclosed constructs; each repeated."""
    pieces = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["format", "adopt", "table", "attrs", "blocks", "odd"]))
        count = draw(st.integers(1, 1_500))
        tag = draw(st.sampled_from(FORMATTING))
        block = draw(st.sampled_from(BLOCKS))
        if kind == "format":
            piece = "".join(f"<{tag} id={n} class=c{n}>" for n in range(min(count, 400)))
        elif kind == "adopt":
            piece = f"<{tag}><{block}>x</{tag}>y</{block}>" * count
        elif kind == "table":
            piece = f"<table><{tag}><tr><td>c<{block}></table>t" * count
        elif kind == "attrs":
            piece = f"<{tag} " + " ".join(f'a{n}="{n}"' for n in range(count)) + ">"
        elif kind == "blocks":
            piece = f"<{block}>x" * count
        else:
            piece = draw(st.sampled_from(["<!--", "<a b='", "<![CDATA[", "</", "<", "<?x", "&amp"]))
            piece *= count
        pieces.append(piece)
    return "".join(pieces)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(hostile_markup())
def test_hostile_markup_never_takes_the_converter_past_its_memory_budget(markup: str) -> None:
    peak, _ = traced_peak(markup)
    assert peak <= memory_budget(markup)


def vm_hwm_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_the_demo_server_reads_the_hostile_junk_mail_within_its_budget() -> None:
    """The whole process, as a user has it: ``--demo``, the message in Junk, ``mail_read``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mfconnector", "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None

    def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        message = request(request_id, "tools/call", {"name": name, "arguments": arguments})
        process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        reply: dict[str, Any] = json.loads(process.stdout.readline())  # type: ignore[union-attr]
        assert reply["id"] == request_id
        return reply

    try:
        process.stdin.write(json.dumps(initialize()).encode() + b"\n")
        process.stdin.flush()
        json.loads(process.stdout.readline())
        listed = call(1, "mail_list", {"folder": "junkemail", "detail": "full"})
        messages = listed["result"]["structuredContent"]["messages"]
        (hostile,) = [m for m in messages if m["subject"] == "Your parcel is waiting"]
        started = time.monotonic()
        reply = call(2, "mail_read", {"message_id": hostile["id"]})
        elapsed = time.monotonic() - started
        peak = vm_hwm_bytes(process.pid)
    finally:
        process.kill()
        process.communicate()
    assert "error" not in reply
    body = reply["result"]["structuredContent"]["message"]["body"]
    assert body.startswith("x\n\nx\n\nx")
    assert elapsed < REPLY_SECONDS, elapsed
    assert peak < PEAK_RSS_BYTES, f"peak RSS {peak / 2**20:.0f} MiB"


@pytest.mark.slow
def test_the_demo_seeds_the_hostile_message_with_the_emulators_own_text() -> None:
    from mfconnector.emulator.htmltext import html_to_text
    from mfconnector.emulator.seed.hostile import HOSTILE_TEXT

    assert html_to_text(HOSTILE_HTML) == HOSTILE_TEXT
