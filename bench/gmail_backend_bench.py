"""The Gmail backend on the Gmail demo beside the Graph backend on the Graph demo.

At the backend level (``MailBackend`` calls, in process, the emulator behind the httpx
transport seam, as ``--demo`` and ``--demo gmail`` serve them): a 50-message list, a
long read (the message with the longest body among the first 50, ``view="full"``; the
Gmail demo's bodies are all short, so a 10,000-character HTML mail is added for it) and
a thread. For
each: CPU per call (median of N, ``time.process_time``) split into the provider's share
(time inside the emulator's transport) and ours, HTTP requests per call, answer bytes
read per call, and the bytes of the neutral result as compact JSON (what a tool encodes,
before its own shaping).

The Graph side needs ``GraphMailBackend`` (``mfconnector.graph.mail_backend``, from the
``seam-reads`` branch); without it only Gmail is measured.

Usage:
  .venv/bin/python bench/gmail_backend_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mfconnector.auth import StaticTokenProvider  # noqa: E402
from mfconnector.limits import DEFAULT_LIMITS  # noqa: E402
from mfconnector.mail.backend import MailBackend  # noqa: E402
from mfconnector.mail.model import MessageSummary  # noqa: E402
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest  # noqa: E402


class Metered(httpx.AsyncBaseTransport):
    """Counts requests, answer bytes and the CPU spent answering (the provider's share)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests = 0
        self.bytes = 0
        self.cpu = 0.0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        start = time.process_time()
        response = await self.inner.handle_async_request(request)
        self.cpu += time.process_time() - start
        self.requests += 1
        self.bytes += int(response.headers.get("content-length", "0"))
        return response


def neutral_bytes(value: Any) -> int:
    def plain(item: Any) -> Any:
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            return {f.name: plain(getattr(item, f.name)) for f in dataclasses.fields(item)}
        if isinstance(item, (list, tuple)):
            return [plain(x) for x in item]
        if isinstance(item, dict):
            return {str(k): plain(v) for k, v in item.items()}
        if isinstance(item, (str, int, float, bool)) or item is None:
            return item
        return str(item)

    return len(json.dumps(plain(value), ensure_ascii=False, separators=(",", ":")).encode())


async def measure(
    meter: Metered, work: Callable[[], Awaitable[Any]], runs: int
) -> tuple[float, float, int, int, int]:
    """(median CPU ms, median provider CPU ms, requests, bytes, neutral bytes) per call."""
    totals, provider = [], []
    result: Any = None
    requests = size = 0
    for _ in range(runs):
        before_requests, before_bytes, before_cpu = meter.requests, meter.bytes, meter.cpu
        start = time.process_time()
        result = await work()
        totals.append((time.process_time() - start) * 1000)
        provider.append((meter.cpu - before_cpu) * 1000)
        requests, size = meter.requests - before_requests, meter.bytes - before_bytes
    return (
        statistics.median(totals),
        statistics.median(provider),
        requests,
        size,
        neutral_bytes(result),
    )


async def longest(backend: MailBackend, items: list[MessageSummary]) -> MessageSummary:
    best, length = items[0], -1
    for item in items:
        read = await backend.read(item.ref, ReadRequest(view="full"))
        size = len(read.body.text) if read.body else 0
        if size > length:
            best, length = item, size
    return best


def long_html_mail(chars: int = 10_000) -> bytes:
    """A 10,000-character HTML mail (the Gmail demo's own bodies are all short)."""
    from email.message import EmailMessage

    sentence = "The quarterly review covers revenue, hiring and the launch plan in detail. "
    paragraphs, size = [], 0
    while size < chars:
        paragraphs.append(f"<p>{sentence * 4}</p>")
        size += len(sentence) * 4
    message = EmailMessage()
    message["From"] = "Megan Bowen <megan@contoso.example>"
    message["To"] = "demo@gmail.example"
    message["Subject"] = "Long read: the quarterly review"
    message["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
    message["Message-ID"] = "<long-read@contoso.example>"
    message.set_content("<html><body>" + "".join(paragraphs) + "</body></html>", subtype="html")
    return message.as_bytes()


async def bench(name: str, backend: MailBackend, meter: Metered, folder: str, runs: int) -> None:
    where = await backend.resolve_folder(folder, "folder")
    page = PageRequest(limit=50)
    first = await backend.list_messages(where, MessageFilter(), page)
    long = await longest(backend, list(first.items))
    threaded = max(first.items, key=lambda m: m.thread is not None)
    works: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        (
            f"list {len(first.items)} ({folder})",
            lambda: backend.list_messages(where, MessageFilter(), page),
        ),
        ("long read (full)", lambda: backend.read(long.ref, ReadRequest(view="full"))),
        ("thread of a listed message", lambda: backend.thread(threaded.ref, PageRequest(limit=50))),
    ]
    for label, work in works:
        cpu, provider, requests, size, neutral = await measure(meter, work, runs)
        print(
            f"{name:<6} {label:<28} {cpu:8.2f} {provider:9.2f} {cpu - provider:8.2f} "
            f"{requests:5d} {size:9d} {neutral:9d}"
        )


async def main(runs: int) -> None:
    from mfconnector.gmail.account import gmail_account
    from mfconnector.gmail_emulator import DEMO_TOKEN, GmailTransport

    print(
        f"{'':<6} {'call':<28} {'CPU ms':>8} {'provider':>9} {'ours':>8} {'reqs':>5} "
        f"{'bytes in':>9} {'neutral':>9}"
    )
    transport = GmailTransport()
    transport.emulator.mailbox.add_message(long_html_mail(), ["INBOX"])
    gmail_meter = Metered(transport)
    gmail = gmail_account(
        "gmail",
        token_provider=StaticTokenProvider(DEMO_TOKEN),
        limits=DEFAULT_LIMITS,
        transport=gmail_meter,
    )
    await bench("gmail", gmail.mail, gmail_meter, "all", runs)
    try:
        from mfconnector.graph.mail_backend import graph_account  # type: ignore[attr-defined]
    except ImportError:
        print("graph  (GraphMailBackend not on this branch: merge seam-reads to compare)")
        return
    from mfconnector.emulator.transport import EmulatorTransport
    from mfconnector.graph.client import GraphClient

    graph_meter = Metered(EmulatorTransport())
    client = GraphClient(
        token_provider=StaticTokenProvider("demo"), limits=DEFAULT_LIMITS, transport=graph_meter
    )

    async def factory() -> GraphClient:
        return client

    graph = graph_account("demo", factory, DEFAULT_LIMITS)
    await bench("graph", graph.mail, graph_meter, "inbox", runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    trio.run(main, parser.parse_args().runs)
