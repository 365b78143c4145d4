"""Runtime bench: ``python -m mfconnector`` beside the official SDK's bench/sdk_server.py.

Every scenario runs against both servers in the same run, over real pipes, and the script
prints one table with the ratio (ours / sdk) and, for our server, pass/fail against the
targets of the runtime issue:

  oversized   a 10 MB / 100 MB / 1 GB line: drain rate (line bytes / time until the reply
              for that line has arrived and the line is fully written), peak RSS (VmHWM of
              the server), and whether the next request is still answered.
              Target: a 1 GB line drains at >= 1 GB/s with peak RSS <= 64 MB.
  throughput  tools/list requests/s and p50/p99 latency, 1 and 16 in flight, legacy (after
              initialize) and modern (2026-07-28 _meta on every request; the SDK 2.3.0 server
              serves that era over stdio too). Target: >= 5x the SDK server (same era).
  stalled     stdout not read for 10 s while the client writes tools/list requests with
              non-blocking writes as long as the pipe accepts them: RSS growth of the server.
              Target: growth <= 32 MB. Afterwards stdout is read again and the replies counted.
  eof         16 tools/call account_status, then stdin closed at once: replies counted.
              Target: all 16 answered.
  startup     spawn to the first server/discover answer (ours) / initialize answer (sdk);
              the other pairing is printed too. Median of N runs. Target: <= 0.3 s.

Usage:
  .venv/bin/python bench/runtime_bench.py [--quick] [--only NAME[,NAME...]] [--json PATH]
                                          [--stdio auto|fd|thread]

``--stdio`` picks our server's protocol stream (MFC_STDIO): trio's FdStream or the thread
stream that Windows uses; ``auto`` (the default) leaves the server's own choice.

``--quick`` runs 10 MB / 100 MB lines only and shortens every phase. Every loop is bounded
in count and time, the servers only ever talk over pipes, and a watchdog kills a server
whose RSS passes 8 GiB (the SDK server reads a whole line into memory).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SDK_SERVER = str(ROOT / "bench" / "sdk_server.py")
COMMANDS = {
    "ours": [sys.executable, "-m", "mfconnector"],
    # The SDK's low-level Server publishing OUR tool definitions (same tools/list payload);
    # main() appends "--tools-json <file>" once it has fetched them from our server.
    "sdk": [sys.executable, SDK_SERVER],
    # The SDK's MCPServer (FastMCP) with its one account_status tool, for context.
    "fastmcp": [sys.executable, SDK_SERVER],
}
ENVIRONMENTS: dict[str, dict[str, str]] = {}
"""Extra environment per server kind (main() sets MFC_STDIO for ours from --stdio)."""
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LEGACY_VERSION = "2025-11-25"
MiB = 1 << 20
GiB = 1 << 30
RSS_KILL_BYTES = 8 * GiB
"""A server past this RSS is killed (the machine has 24 GiB)."""
RSS_POLL_SECONDS = 0.02
SCENARIOS = (
    "oversized",
    "throughput",
    "stalled",
    "stalled-calls",
    "control",
    "limits",
    "eof",
    "startup",
)


# --- wire helpers -----------------------------------------------------------------------


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def request(request_id: Any, method: str, era: str, params: dict[str, Any] | None = None) -> bytes:
    params = dict(params or {})
    if era == "modern":
        params["_meta"] = MODERN_META
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params:
        message["params"] = params
    return encode(message)


def proc_status(pid: int, key: str) -> int:
    """A ``kB`` field of /proc/<pid>/status in bytes, or 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(key.encode() + b":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return float("nan")
    # after the ")" of comm: field 3 (state) is index 0, so utime (14) / stime (15) are 11 / 12
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ServerDied(Exception):
    pass


class Server:
    """One server process on real pipes, with an RSS watchdog thread."""

    def __init__(self, kind: str, stderr_dir: Path, args: list[str] | None = None) -> None:
        self.kind = kind
        self._stderr = open(stderr_dir / f"{kind}-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115
        self.t_spawn = time.perf_counter()
        self.proc = subprocess.Popen(
            [*COMMANDS[kind], *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=ROOT,
            bufsize=0,
            env={**os.environ, **ENVIRONMENTS.get(kind, {})},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.in_fd = self.proc.stdin.fileno()
        self.out_fd = self.proc.stdout.fileno()
        os.set_blocking(self.out_fd, False)
        self._buffer = bytearray()
        self.eof = False
        self.peak_rss = 0
        self.killed_for_rss = False
        self._stop = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()

    # memory ---------------------------------------------------------------------------

    def _watch(self) -> None:
        while not self._stop.is_set() and self.proc.poll() is None:
            rss = proc_status(self.proc.pid, "VmRSS")
            self.peak_rss = max(self.peak_rss, rss)
            if rss > RSS_KILL_BYTES:
                self.killed_for_rss = True
                self.proc.kill()
                return
            self._stop.wait(RSS_POLL_SECONDS)

    def rss(self) -> int:
        return proc_status(self.proc.pid, "VmRSS")

    def reset_peak(self) -> int:
        """Reset the kernel's VmHWM to the current RSS (``clear_refs`` 5); returns that RSS."""
        with suppress(OSError), open(f"/proc/{self.proc.pid}/clear_refs", "w") as refs:
            refs.write("5")
        self.peak_rss = self.rss()
        return self.peak_rss

    def hwm(self) -> int:
        """Peak RSS: the kernel's VmHWM while alive, else the watchdog's highest sample."""
        return max(proc_status(self.proc.pid, "VmHWM"), self.peak_rss)

    # input ----------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Blocking write of everything (stdin stays a blocking fd unless a scenario changes it)."""
        view = memoryview(data)
        while view:
            written = os.write(self.in_fd, view)
            view = view[written:]

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            with suppress(OSError):
                self.proc.stdin.close()

    # output ---------------------------------------------------------------------------

    def _fill(self, timeout: float) -> bool:
        """Read what is available (waiting up to ``timeout``); False on timeout or EOF."""
        if self.eof:
            return False
        ready, _, _ = select.select([self.out_fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        try:
            data = os.read(self.out_fd, MiB)
        except BlockingIOError:
            return True
        if not data:
            self.eof = True
            return False
        self._buffer += data
        return True

    def pop_lines(self) -> list[bytes]:
        end = self._buffer.rfind(b"\n")
        if end < 0:
            return []
        lines = bytes(self._buffer[:end]).split(b"\n")
        del self._buffer[: end + 1]
        return lines

    def read_lines(self, timeout: float) -> list[bytes]:
        """Complete lines available within ``timeout`` (at least one unless it times out)."""
        deadline = time.perf_counter() + timeout
        while True:
            lines = self.pop_lines()
            if lines:
                return lines
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or self.eof:
                return []
            self._fill(remaining)

    def wait_reply(self, request_id: Any, timeout: float) -> dict[str, Any]:
        """The reply to ``request_id`` (or to any id in a tuple), skipping other lines."""
        wanted = request_id if isinstance(request_id, tuple) else (request_id,)
        deadline = time.perf_counter() + timeout
        while True:
            for line in self.read_lines(deadline - time.perf_counter()):
                message: dict[str, Any] = json.loads(line)
                if message.get("id", "absent") in wanted and "method" not in message:
                    return message
            if time.perf_counter() >= deadline:
                raise TimeoutError(f"{self.kind}: no reply to {request_id!r} within {timeout:g} s")
            if self.eof:
                raise ServerDied(f"{self.kind}: stdout closed before the reply to {request_id!r}")

    def handshake(self, era: str, timeout: float = 20.0) -> None:
        if era == "legacy":
            self.send(
                request(
                    "init",
                    "initialize",
                    "legacy",
                    {
                        "protocolVersion": LEGACY_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "runtime-bench", "version": "1"},
                    },
                )
            )
            self.wait_reply("init", timeout)
            self.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        else:
            self.send(request("discover", "server/discover", "modern"))
            self.wait_reply("discover", timeout)

    # end ------------------------------------------------------------------------------

    def finish(self, timeout: float = 10.0) -> int | None:
        """Close stdin, wait for exit (kill after ``timeout``), release everything."""
        self.close_stdin()
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            code = None
        self._stop.set()
        self._watchdog.join(2)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._stderr.close()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)


@contextmanager
def running(kind: str, stderr_dir: Path, args: list[str] | None = None) -> Iterator[Server]:
    """A server that is closed (stdin EOF, then a kill after 5 s) however the block ends."""
    server = Server(kind, stderr_dir, args)
    try:
        yield server
    except BaseException:
        server.kill()
        raise
    finally:
        server.finish(timeout=5)


# --- results --------------------------------------------------------------------------


@dataclass
class Row:
    scenario: str
    metric: str
    ours: float | str | None = None
    sdk: float | str | None = None
    unit: str = ""
    fastmcp: float | str | None = None
    target: str = ""
    passed: bool | None = None
    ratio_ok: bool = True
    notes: list[str] = field(default_factory=list)


def fmt(value: float | str | None, unit: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if unit == "B/s":
        return f"{value / 1e9:.2f} GB/s" if value >= 1e9 else f"{value / 1e6:.1f} MB/s"
    if unit == "B":
        return f"{value / MiB:.1f} MiB"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.2f} ms"
    if unit == "us":
        return f"{value:,.0f} us"
    if unit == "req/s":
        return f"{value:,.0f} req/s"
    return f"{value:g}{(' ' + unit) if unit else ''}"


def ratio(row: Row, other: float | str | None) -> str:
    if not row.ratio_ok or not isinstance(row.ours, (int, float)):
        return "-"
    if not isinstance(other, (int, float)) or other == 0:
        return "-"
    return f"{row.ours / other:.2f}x"


def print_table(rows: list[Row]) -> None:
    header = [
        "scenario",
        "metric",
        "ours",
        "sdk",
        "ours/sdk",
        "sdk MCPServer (1 tool)",
        "ours/that",
        "target (ours)",
        "result",
    ]
    body = [
        [
            r.scenario,
            r.metric,
            fmt(r.ours, r.unit),
            fmt(r.sdk, r.unit),
            ratio(r, r.sdk),
            fmt(r.fastmcp, r.unit),
            ratio(r, r.fastmcp),
            r.target or "-",
            "-" if r.passed is None else ("PASS" if r.passed else "FAIL"),
        ]
        for r in rows
    ]
    widths = [
        max(len(h), *(len(line[i]) for line in body)) if body else len(h)
        for i, h in enumerate(header)
    ]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in body:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |")
    notes = [(r.scenario, r.metric, n) for r in rows for n in r.notes]
    if notes:
        print()
        for scenario, metric, note in notes:
            print(f"- {scenario} / {metric}: {note}")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- scenario: oversized line ----------------------------------------------------------


@dataclass
class OversizedResult:
    drain: float | None = None
    peak_rss: int = 0
    served_next: str = "-"
    note: str = ""


def oversized_once(kind: str, size: int, timeout: float, tmp: Path) -> OversizedResult:
    result = OversizedResult()
    head = b'{"jsonrpc":"2.0","id":"big","method":"tools/list","params":{"pad":"'
    tail = b'"}}\n'
    chunk = b"a" * MiB
    pad = size - len(head) - len(tail)
    writer_state: dict[str, Any] = {"done": None, "error": None}

    with running(kind, tmp) as server:
        server.handshake("legacy")

        def write_line() -> None:
            try:
                server.send(head)
                full, rest = divmod(pad, len(chunk))
                for _ in range(full):
                    server.send(chunk)
                server.send(chunk[:rest] + tail)
                writer_state["done"] = time.perf_counter()
            except OSError as exc:  # the server died or closed stdin
                writer_state["error"] = exc

        writer = threading.Thread(target=write_line, daemon=True)
        start = time.perf_counter()
        writer.start()
        reply_at: float | None = None
        try:
            # The reply for that line: ours answers id null (-32600), the SDK parses the line.
            server.wait_reply(("big", None), timeout)
            reply_at = time.perf_counter()
        except (TimeoutError, ServerDied, json.JSONDecodeError) as exc:
            result.note = type(exc).__name__
        if reply_at is not None:
            writer.join(timeout=max(1.0, timeout - (reply_at - start)))
            if writer_state["done"] is not None:
                result.drain = size / (max(reply_at, writer_state["done"]) - start)
        result.peak_rss = server.hwm()
        if server.killed_for_rss:
            elapsed = time.perf_counter() - start
            result.note = (
                f"killed by the bench at RSS > {RSS_KILL_BYTES // GiB} GiB after {elapsed:.1f} s"
            )
        elif reply_at is None:
            elapsed = time.perf_counter() - start
            alive = server.proc.poll() is None
            result.note = (
                f"no reply within {elapsed:.0f} s ({result.note}); "
                f"{'still running, killed' if alive else f'exited with {server.proc.returncode}'}"
            )
            server.kill()
        if reply_at is not None and server.proc.poll() is None:
            try:
                server.send(request("after", "tools/list", "legacy"))
                server.wait_reply("after", 10)
                result.served_next = "yes"
            except (OSError, TimeoutError, ServerDied) as exc:
                result.served_next = f"no ({type(exc).__name__})"
        elif reply_at is None:
            result.served_next = "no"
        writer.join(timeout=5)
    return result


def scenario_oversized(quick: bool, tmp: Path) -> list[Row]:
    sizes = [10_000_000, 100_000_000] if quick else [10_000_000, 100_000_000, 1_000_000_000]
    rows: list[Row] = []
    for size in sizes:
        label = f"{size // 1_000_000:,} MB line" if size < 1_000_000_000 else "1 GB line"
        results = {}
        for kind in ("ours", "sdk"):
            # ours is expected at >= 1 GB/s; the SDK server gets a generous 20 s + 40 MB/s.
            timeout = 20 + size / 40e6
            log(f"oversized {label}: {kind} (timeout {timeout:.0f} s)")
            results[kind] = oversized_once(kind, size, timeout, tmp)
        ours, sdk = results["ours"], results["sdk"]
        is_target = size >= 1_000_000_000
        drain = Row("oversized", f"{label}: drain rate", ours.drain, sdk.drain, "B/s")
        drain.target = ">= 1 GB/s" + ("" if is_target else " (1 GB target)")
        drain.passed = ours.drain is not None and ours.drain >= 1e9
        rss = Row("oversized", f"{label}: peak RSS (VmHWM)", ours.peak_rss, sdk.peak_rss, "B")
        rss.target = "<= 64 MB" + ("" if is_target else " (1 GB target)")
        rss.passed = ours.peak_rss <= 64 * MiB
        nxt = Row("oversized", f"{label}: next request answered", ours.served_next, sdk.served_next)
        nxt.target = "yes"
        nxt.passed = ours.served_next == "yes"
        for kind, r in results.items():
            if r.note:
                drain.notes.append(f"{kind}: {r.note}")
        rows += [drain, rss, nxt]
    return rows


# --- scenario: throughput --------------------------------------------------------------


@dataclass
class Throughput:
    rps: float
    p50_ms: float
    p99_ms: float
    completed: int
    latencies: list[float] = field(default_factory=list, repr=False)
    cpu_us: float = float("nan")
    """Server CPU time (user + system) per request, in microseconds."""


def percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def throughput_once(
    kind: str, era: str, in_flight: int, seconds: float, max_requests: int, tmp: Path
) -> Throughput:
    with running(kind, tmp) as server:
        server.handshake(era)
        sent_at: dict[int, float] = {}
        latencies: list[float] = []
        next_id = 0

        def send_one() -> None:
            nonlocal next_id
            next_id += 1
            sent_at[next_id] = time.perf_counter()
            server.send(request(next_id, "tools/list", era))

        def run(count: int, limit: float) -> tuple[int, float]:
            begin = time.perf_counter()
            deadline = begin + limit
            done = 0
            started = 0
            for _ in range(min(in_flight, count)):
                send_one()
                started += 1
            while done < started and time.perf_counter() < deadline:
                for line in server.read_lines(deadline - time.perf_counter()):
                    message = json.loads(line)
                    rid = message.get("id")
                    if rid not in sent_at:
                        continue
                    latencies.append(time.perf_counter() - sent_at.pop(rid))
                    done += 1
                    if started < count and time.perf_counter() < deadline:
                        send_one()
                        started += 1
                if server.eof:
                    raise ServerDied(f"{kind} closed stdout during the throughput run")
            return done, time.perf_counter() - begin

        run(min(200, max_requests), 10.0)  # warm-up
        latencies.clear()
        cpu_before = cpu_seconds(server.proc.pid)
        done, elapsed = run(max_requests, seconds)
        cpu = cpu_seconds(server.proc.pid) - cpu_before
        ordered = sorted(latencies)
        return Throughput(
            done / elapsed,
            percentile(ordered, 0.50) * 1e3,
            percentile(ordered, 0.99) * 1e3,
            done,
            ordered,
            cpu / done * 1e6 if done else float("nan"),
        )


def combine(runs: list[Throughput]) -> Throughput:
    """Median requests/s over the repeats; latency percentiles over all their samples."""
    latencies = sorted(x for run in runs for x in run.latencies)
    return Throughput(
        statistics.median(run.rps for run in runs),
        percentile(latencies, 0.50) * 1e3,
        percentile(latencies, 0.99) * 1e3,
        sum(run.completed for run in runs),
        cpu_us=statistics.median(run.cpu_us for run in runs),
    )


def scenario_throughput(quick: bool, tmp: Path) -> list[Row]:
    seconds = 1.0 if quick else 3.0
    repeats = 1 if quick else 3
    max_requests = 5_000 if quick else 200_000
    rows: list[Row] = []
    for era in ("legacy", "modern"):
        for in_flight in (1, 16):
            runs: dict[str, list[Throughput]] = {kind: [] for kind in COMMANDS}
            notes = []
            # Alternate the servers so that a noisy neighbour hurts them alike.
            for repeat in range(repeats):
                for kind in COMMANDS:
                    log(
                        f"throughput tools/list {era} x{in_flight}: {kind} ({repeat + 1}/{repeats})"
                    )
                    try:
                        runs[kind].append(
                            throughput_once(kind, era, in_flight, seconds, max_requests, tmp)
                        )
                    except (TimeoutError, ServerDied, OSError) as exc:
                        notes.append(f"{kind}: {exc}")
            got = {kind: combine(r) if r else None for kind, r in runs.items()}
            ours, sdk, fast = got["ours"], got["sdk"], got["fastmcp"]
            label = f"tools/list {era}, {in_flight} in flight"
            rps = Row("throughput", f"{label}: requests/s", ours.rps if ours else None)
            rps.sdk = sdk.rps if sdk else None
            rps.unit, rps.fastmcp = "req/s", fast.rps if fast else None
            rps.target = ">= 5x sdk"
            rps.passed = bool(ours and sdk and ours.rps >= 5 * sdk.rps)
            rps.notes = notes
            p50 = Row(
                "throughput",
                f"{label}: p50 latency",
                ours.p50_ms if ours else None,
                sdk.p50_ms if sdk else None,
            )
            p50.unit, p50.fastmcp = "ms", fast.p50_ms if fast else None
            p99 = Row(
                "throughput",
                f"{label}: p99 latency",
                ours.p99_ms if ours else None,
                sdk.p99_ms if sdk else None,
            )
            p99.unit, p99.fastmcp = "ms", fast.p99_ms if fast else None
            cpu = Row("throughput", f"{label}: server CPU per request")
            cpu.ours, cpu.sdk, cpu.fastmcp = (
                ours.cpu_us if ours else None,
                sdk.cpu_us if sdk else None,
                fast.cpu_us if fast else None,
            )
            cpu.unit = "us"
            rows += [rps, p50, p99, cpu]
    return rows


# --- scenario: stalled reader ----------------------------------------------------------


@dataclass
class Stalled:
    growth: int
    base_rss: int
    accepted_bytes: int
    requests_written: int
    answered: int
    exit_code: int | None
    note: str = ""


def stalled_once(kind: str, stall_seconds: float, recover_seconds: float, tmp: Path) -> Stalled:
    with running(kind, tmp) as server:
        server.handshake("legacy")
        time.sleep(0.2)
        base = server.rss()
        peak = base
        os.set_blocking(server.in_fd, False)
        next_id = 0
        accepted = 0
        written = 0
        last_poll = 0.0

        def make_batch() -> tuple[bytes, int]:
            """Whole request lines, at most PIPE_BUF bytes: a non-blocking pipe write of that
            size is atomic (all or EAGAIN), so a line is never cut."""
            nonlocal next_id
            parts: list[bytes] = []
            size = 0
            while True:
                line = request(next_id + 1, "tools/list", "legacy")
                if size + len(line) > select.PIPE_BUF:
                    return b"".join(parts), len(parts)
                next_id += 1
                parts.append(line)
                size += len(line)

        batch, count = make_batch()
        start = time.perf_counter()
        while time.perf_counter() - start < stall_seconds and server.proc.poll() is None:
            try:
                n = os.write(server.in_fd, batch)
            except BlockingIOError:
                time.sleep(0.002)
            except BrokenPipeError:
                break
            else:
                assert n == len(batch), "a write of at most PIPE_BUF bytes to a pipe is atomic"
                accepted += n
                written += count
                batch, count = make_batch()
            now = time.perf_counter()
            if now - last_poll >= RSS_POLL_SECONDS:
                peak = max(peak, server.rss())
                last_poll = now
        peak = max(peak, server.rss())
        note = ""
        if server.killed_for_rss:
            peak = max(peak, server.peak_rss)
            note = f"killed by the bench at RSS > {RSS_KILL_BYTES // GiB} GiB"

        # Recovery: read stdout again until every request written is answered (or no reply
        # comes for 5 s), then close stdin and count the rest until EOF. Bounded in time.
        answered = 0
        deadline = time.perf_counter() + recover_seconds
        last_reply = time.perf_counter()
        while not server.eof and time.perf_counter() < deadline:
            for line in server.read_lines(min(0.5, deadline - time.perf_counter())):
                message = json.loads(line)
                if "result" in message or "error" in message:
                    answered += 1
                    last_reply = time.perf_counter()
            quiet = time.perf_counter() - last_reply
            if answered >= written or quiet > 5:
                server.close_stdin()
            if quiet > 15:
                note = (note + "; " if note else "") + "no reply for 15 s while reading again"
                break
        if not server.eof and time.perf_counter() >= deadline:
            note = (
                note + "; " if note else ""
            ) + f"still answering after {recover_seconds:g} s; stopped"
        server.close_stdin()
        try:
            code: int | None = server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            code = None
        return Stalled(peak - base, base, accepted, written, answered, code, note)


def scenario_stalled(quick: bool, tmp: Path) -> list[Row]:
    stall = 3.0 if quick else 10.0
    recover = 30.0 if quick else 90.0
    results: dict[str, Stalled | None] = {}
    notes = []
    for kind in ("ours", "sdk"):
        log(f"stalled reader {stall:g} s: {kind}")
        try:
            results[kind] = stalled_once(kind, stall, recover, tmp)
        except (TimeoutError, ServerDied, OSError) as exc:
            results[kind] = None
            notes.append(f"{kind}: {exc}")
    ours, sdk = results["ours"], results["sdk"]
    growth = Row(
        "stalled",
        f"stdout unread {stall:g} s: RSS growth",
        ours.growth if ours else None,
        sdk.growth if sdk else None,
        "B",
    )
    growth.target = "<= 32 MB"
    growth.passed = ours is not None and ours.growth <= 32 * MiB
    growth.notes = notes + [f"{k}: {r.note}" for k, r in results.items() if r and r.note]
    accepted = Row(
        "stalled",
        "bytes the server let in while stalled",
        ours.accepted_bytes if ours else None,
        sdk.accepted_bytes if sdk else None,
        "B",
    )
    written = Row(
        "stalled",
        "requests written while stalled",
        ours.requests_written if ours else None,
        sdk.requests_written if sdk else None,
    )
    answered = Row(
        "stalled",
        "of those, answered after reading resumed",
        ours.answered if ours else None,
        sdk.answered if sdk else None,
    )
    answered.target = "all"
    answered.passed = ours is not None and ours.answered >= ours.requests_written
    exit_row = Row(
        "stalled",
        "exit status after EOF",
        str(ours.exit_code) if ours else None,
        str(sdk.exit_code) if sdk else None,
    )
    return [growth, accepted, written, answered, exit_row]


# --- scenario: stalled reader with real tool calls and costly lines --------------------

BIG_LINE_BYTES = 999_000
BIG_UNITS = (b"{}", b"[]", b"0")
"""``[{},{},...]``, ``[[],[],...]``, ``[0,0,...]``: cheap to send, 24 MB each once parsed."""


def tool_call(request_id: Any, name: str, arguments: dict[str, Any]) -> bytes:
    return request(request_id, "tools/call", "modern", {"name": name, "arguments": arguments})


def big_call(request_id: int, unit: bytes) -> bytes:
    """A ~999,000-byte tools/call line whose arguments hold one array of small values."""
    head = tool_call(request_id, "mail_list", {"limit": 50, "x": []})
    count = (BIG_LINE_BYTES - len(head)) // (len(unit) + 1)
    return head.replace(b'"x":[]', b'"x":[' + b",".join([unit] * count) + b"]")


@dataclass
class StalledCalls:
    growth: int
    lines_written: int
    big_lines: int
    answered_once: int
    answered_more: int
    exit_code: int | None
    note: str = ""


def stalled_calls_once(
    kind: str, stall_seconds: float, recover_seconds: float, tmp: Path
) -> StalledCalls:
    args = ["--demo"] if kind == "ours" else []
    with running(kind, tmp, args) as server:
        server.handshake("modern")
        # Warm-up: the first tool call imports httpx and builds the Graph client.
        server.send(tool_call("warm", "mail_list", {"limit": 50}))
        server.wait_reply("warm", 30)
        time.sleep(0.2)
        base = server.reset_peak()
        lines = [tool_call(i, "mail_list", {"limit": 50}) for i in range(12)]
        next_id = len(lines)
        os.set_blocking(server.in_fd, False)
        pending = memoryview(b"")
        written = 0
        big = 0
        start = time.perf_counter()
        while time.perf_counter() - start < stall_seconds and server.proc.poll() is None:
            if not pending:
                if lines:
                    pending = memoryview(lines.pop(0))
                else:
                    pending = memoryview(big_call(next_id, BIG_UNITS[big % len(BIG_UNITS)]))
                    next_id += 1
                    big += 1
                written += 1
            try:
                pending = pending[os.write(server.in_fd, pending) :]
            except BlockingIOError:
                time.sleep(0.005)
            except BrokenPipeError:
                break
        note = (
            f"killed by the bench at RSS > {RSS_KILL_BYTES // GiB} GiB"
            if server.killed_for_rss
            else ""
        )

        # Recovery: finish the line in progress and close stdin from a thread, read stdout.
        def finish_input() -> None:
            os.set_blocking(server.in_fd, True)
            with suppress(OSError):
                server.send(bytes(pending))
            server.close_stdin()

        closer = threading.Thread(target=finish_input, daemon=True)
        closer.start()
        answers: dict[Any, int] = {}
        deadline = time.perf_counter() + recover_seconds
        while not server.eof and time.perf_counter() < deadline:
            for line in server.read_lines(min(0.5, deadline - time.perf_counter())):
                message = json.loads(line)
                if "result" in message or "error" in message:
                    answers[message.get("id")] = answers.get(message.get("id"), 0) + 1
        if not server.eof:
            note = (note + "; " if note else "") + f"still answering after {recover_seconds:g} s"
        closer.join(10)
        growth = server.hwm() - base
        try:
            code: int | None = server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            code = None
        ids = range(next_id)
        once = sum(1 for i in ids if answers.get(i) == 1)
        more = sum(1 for i in ids if answers.get(i, 0) > 1)
        return StalledCalls(growth, written, big, once, more, code, note)


def scenario_stalled_calls(quick: bool, tmp: Path) -> list[Row]:
    stall = 3.0 if quick else 10.0
    recover = 60.0 if quick else 120.0
    results: dict[str, StalledCalls | None] = {}
    notes = []
    for kind in ("ours", "sdk"):
        log(f"stalled reader with 12 mail_list calls and costly lines, {stall:g} s: {kind}")
        try:
            results[kind] = stalled_calls_once(kind, stall, recover, tmp)
        except (TimeoutError, ServerDied, OSError) as exc:
            results[kind] = None
            notes.append(f"{kind}: {exc}")
    ours, sdk = results["ours"], results["sdk"]
    label = f"stdout unread {stall:g} s, 12 mail_list + 999 KB lines"
    growth = Row("stalled-calls", f"{label}: peak RSS growth", ours.growth if ours else None)
    growth.sdk, growth.unit, growth.target = (sdk.growth if sdk else None), "B", "<= 64 MB"
    growth.passed = ours is not None and ours.growth <= 64 * MiB
    growth.notes = notes + [f"{k}: {r.note}" for k, r in results.items() if r and r.note]
    lines = Row("stalled-calls", "requests written (12 calls, then 999 KB lines)")
    lines.ours = ours.lines_written if ours else None
    lines.sdk = sdk.lines_written if sdk else None
    bigs = Row("stalled-calls", "of those, 999 KB lines", ours.big_lines if ours else None)
    bigs.sdk = sdk.big_lines if sdk else None
    once = Row("stalled-calls", "answered exactly once after reading resumed")
    once.ours = ours.answered_once if ours else None
    once.sdk = sdk.answered_once if sdk else None
    once.target = "all"
    once.passed = (
        ours is not None and ours.answered_once == ours.lines_written and not ours.answered_more
    )
    exit_row = Row(
        "stalled-calls",
        "exit status after EOF",
        str(ours.exit_code) if ours else None,
        str(sdk.exit_code) if sdk else None,
    )
    return [growth, lines, bigs, once, exit_row]


# --- scenario: control messages while every worker is busy ----------------------------

SLOW_MS = 60_000


def slow_fixture_file(tmp: Path) -> Path:
    path = tmp / "slow-fixtures.json"
    entry = {
        "request": {"method": "GET", "path": "/me/mailFolders/inbox/messages"},
        "response": {"delayMs": SLOW_MS, "json": {"value": [{"id": "AAMk-1", "subject": "x"}]}},
    }
    path.write_text(json.dumps({"responses": [entry]}))
    return path


@dataclass
class Control:
    latencies_ms: dict[str, list[float]]
    tool_replies_after_cancel: int
    exit_seconds: float


def control_once(kind: str, rounds: int, tmp: Path) -> Control:
    # ours: mail_list whose Graph answer takes 60 s (fixture delayMs); sdk: a tool that
    # sleeps 60 s. 16 calls: for ours 8 running and 8 queued.
    args = ["--fixtures", str(slow_fixture_file(tmp))] if kind == "ours" else []
    name = "mail_list" if kind == "ours" else "slow"
    with running(kind, tmp, args) as server:
        server.handshake("modern")
        calls = 16
        server.send(b"".join(tool_call(i, name, {"limit": 50}) for i in range(calls)))
        time.sleep(0.5)
        latencies: dict[str, list[float]] = {"ping": [], "server/discover": [], "cancel": []}
        for r in range(rounds):
            for method in ("ping", "server/discover"):
                rid = f"{method}-{r}"
                era = "legacy" if method == "ping" else "modern"
                begin = time.perf_counter()
                server.send(request(rid, method, era))
                server.wait_reply(rid, 30)
                latencies[method].append((time.perf_counter() - begin) * 1e3)
            if r < calls:
                # A cancel has no reply: the ping behind it shows it was read and handled.
                rid = f"after-cancel-{r}"
                begin = time.perf_counter()
                cancel = {"method": "notifications/cancelled", "params": {"requestId": r}}
                server.send(encode({"jsonrpc": "2.0", **cancel}) + request(rid, "ping", "legacy"))
                server.wait_reply(rid, 30)
                latencies["cancel"].append((time.perf_counter() - begin) * 1e3)
        server.close_stdin()
        closed = time.perf_counter()
        tool_replies = 0
        deadline = closed + 30
        while not server.eof and time.perf_counter() < deadline:
            for line in server.read_lines(deadline - time.perf_counter()):
                if json.loads(line).get("id") in range(calls):
                    tool_replies += 1
        with suppress(subprocess.TimeoutExpired):
            server.proc.wait(max(0.1, deadline - time.perf_counter()))
        return Control(latencies, tool_replies, time.perf_counter() - closed)


def scenario_control(quick: bool, tmp: Path) -> list[Row]:
    rounds = 16 if quick else 50
    results: dict[str, Control | None] = {}
    notes = []
    for kind in ("ours", "sdk"):
        log(f"control messages with 16 slow calls in flight, {rounds} rounds: {kind}")
        try:
            results[kind] = control_once(kind, rounds, tmp)
        except (TimeoutError, ServerDied, OSError) as exc:
            results[kind] = None
            notes.append(f"{kind}: {exc}")
    ours, sdk = results["ours"], results["sdk"]
    rows = []
    for method in ("ping", "server/discover", "cancel"):
        what = "cancel + ping behind it" if method == "cancel" else method
        for stat, pick in (("p50", 0.5), ("max", 1.0)):
            row = Row("control", f"16 slow calls in flight: {what} {stat} latency")
            values = {
                k: percentile(sorted(r.latencies_ms[method]), pick) if r else None
                for k, r in results.items()
            }
            row.ours, row.sdk, row.unit = values["ours"], values["sdk"], "ms"
            if stat == "max":
                row.target = "<= 100 ms"
                row.passed = (
                    ours is not None and values["ours"] is not None and values["ours"] <= 100
                )
            rows.append(row)
    rows[0].notes = notes
    after = Row(
        "control",
        "tool replies after all 16 were cancelled / time to exit after EOF",
        f"{ours.tool_replies_after_cancel} / {ours.exit_seconds:.2f} s" if ours else None,
        f"{sdk.tool_replies_after_cancel} / {sdk.exit_seconds:.2f} s" if sdk else None,
    )
    after.target = "0"
    after.passed = ours is not None and ours.tool_replies_after_cancel == 0
    return [*rows, after]


# --- scenario: the queue and the reader at their limits --------------------------------


def at_limit_arguments(kind: int) -> dict[str, Any]:
    """``tools/call`` arguments that cost the most once parsed within the limits: an ASCII
    string just under 131,072 bytes (``tool_arguments_bytes``) made 4 bytes a character by
    one emoji, or empty objects up to 10,000 values (``request_values``)."""
    if kind % 2:
        return {"limit": 50, "x": "\U0001f600" + "a" * 130_900}
    return {"limit": 50, "x": [{}] * 4_900}


def limits_once(kind: str, tmp: Path) -> tuple[int, int, int]:
    args = ["--fixtures", str(slow_fixture_file(tmp))] if kind == "ours" else []
    name = "mail_list" if kind == "ours" else "slow"
    with running(kind, tmp, args) as server:
        server.handshake("modern")
        server.send(tool_call("warm", "account_status", {}))
        server.wait_reply("warm", 30)
        time.sleep(0.2)
        base = server.reset_peak()
        # 8 slow calls hold every worker, 8 calls at the argument limits wait in the queue,
        # then 999 KB lines that parse to 4 MB strings (in _meta) go through the reader and
        # are answered busy (ours; the SDK runs every call at once).
        server.send(b"".join(tool_call(i, name, {"limit": 50}) for i in range(8)))
        server.send(b"".join(tool_call(8 + i, name, at_limit_arguments(i)) for i in range(8)))
        meta = dict(MODERN_META, pad="\U0001f600" + "a" * 990_000)
        heavy = [
            encode(
                {
                    "jsonrpc": "2.0",
                    "id": f"heavy-{i}",
                    "method": "tools/call",
                    "params": {"_meta": meta, "name": name, "arguments": {"limit": 50}},
                }
            )
            for i in range(8)
        ]
        answered = 0
        for line in heavy:
            server.send(line)
            with suppress(TimeoutError, ServerDied):
                server.wait_reply(json.loads(line)["id"], 5)
                answered += 1
        time.sleep(0.5)
        return server.hwm() - base, answered, len(heavy)


def scenario_limits(quick: bool, tmp: Path) -> list[Row]:
    results: dict[str, tuple[int, int, int] | None] = {}
    notes = []
    for kind in ("ours", "sdk"):
        log(f"queue and reader at their limits: {kind}")
        try:
            results[kind] = limits_once(kind, tmp)
        except (TimeoutError, ServerDied, OSError) as exc:
            results[kind] = None
            notes.append(f"{kind}: {exc}")
    ours, sdk = results["ours"], results["sdk"]
    growth = Row(
        "limits",
        "8 slow calls + 8 queued at the argument limits + 999 KB lines: peak RSS growth",
        ours[0] if ours else None,
        sdk[0] if sdk else None,
        "B",
    )
    growth.notes = notes
    answered = Row(
        "limits",
        "999 KB lines answered at once (busy: the queue is full)",
        f"{ours[1]}/{ours[2]}" if ours else None,
        f"{sdk[1]}/{sdk[2]}" if sdk else None,
    )
    return [growth, answered]


# --- scenario: EOF with requests in flight ---------------------------------------------


def eof_once(kind: str, era: str, count: int, tmp: Path) -> tuple[int, int | None, float]:
    with running(kind, tmp) as server:
        server.handshake(era)
        lines = b"".join(
            request(i, "tools/call", era, {"name": "account_status", "arguments": {}})
            for i in range(1, count + 1)
        )
        server.send(lines)
        server.close_stdin()
        start = time.perf_counter()
        answered: set[Any] = set()
        deadline = start + 30
        while not server.eof and time.perf_counter() < deadline:
            for line in server.read_lines(deadline - time.perf_counter()):
                message = json.loads(line)
                if message.get("id") in range(1, count + 1) and (
                    "result" in message or "error" in message
                ):
                    answered.add(message["id"])
        try:
            code: int | None = server.proc.wait(max(0.1, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired:
            code = None
        return len(answered), code, time.perf_counter() - start


def scenario_eof(quick: bool, tmp: Path) -> list[Row]:
    count = 16
    rows = []
    for era in ("legacy", "modern"):
        results: dict[str, tuple[int, int | None, float]] = {}
        for kind in ("ours", "sdk"):
            log(f"eof with {count} tools/call in flight ({era}): {kind}")
            results[kind] = eof_once(kind, era, count, tmp)
        answered = Row(
            "eof", f"{era}: answered of {count} in flight", results["ours"][0], results["sdk"][0]
        )
        answered.target = f"{count}/{count}"
        answered.passed = results["ours"][0] == count
        exit_row = Row(
            "eof",
            f"{era}: exit status / time to exit",
            f"{results['ours'][1]} / {results['ours'][2]:.2f} s",
            f"{results['sdk'][1]} / {results['sdk'][2]:.2f} s",
        )
        rows += [answered, exit_row]
    return rows


# --- scenario: start-up ----------------------------------------------------------------


def startup_once(kind: str, era: str, tmp: Path) -> float:
    with running(kind, tmp) as server:
        server.handshake(era)
        return time.perf_counter() - server.t_spawn


def scenario_startup(quick: bool, tmp: Path) -> list[Row]:
    runs = 3 if quick else 11
    medians: dict[tuple[str, str], float] = {}
    for kind in COMMANDS:
        for era in ("modern", "legacy"):
            log(f"start-up {kind} {era} x{runs}")
            samples = [startup_once(kind, era, tmp) for _ in range(runs)]
            medians[(kind, era)] = statistics.median(samples)
    main = Row(
        "startup",
        f"spawn to first answer, median of {runs} (ours: server/discover, sdk: initialize)",
        medians[("ours", "modern")],
        medians[("sdk", "legacy")],
        "s",
        medians[("fastmcp", "legacy")],
    )
    main.target = "<= 0.3 s"
    main.passed = medians[("ours", "modern")] <= 0.3
    rows = [main]
    for era, method in (("modern", "server/discover"), ("legacy", "initialize")):
        rows.append(
            Row(
                "startup",
                f"spawn to {method} answer",
                medians[("ours", era)],
                medians[("sdk", era)],
                "s",
                medians[("fastmcp", era)],
            )
        )
    return rows


# --- main -------------------------------------------------------------------------------

RUNNERS: dict[str, Callable[[bool, Path], list[Row]]] = {
    "oversized": scenario_oversized,
    "throughput": scenario_throughput,
    "stalled": scenario_stalled,
    "stalled-calls": scenario_stalled_calls,
    "control": scenario_control,
    "limits": scenario_limits,
    "eof": scenario_eof,
    "startup": scenario_startup,
}


def our_tools(tmp: Path) -> list[dict[str, Any]]:
    """Our tools/list, so the SDK server can publish the same definitions."""
    with running("ours", tmp) as server:
        server.send(request("tools", "tools/list", "modern"))
        tools = server.wait_reply("tools", 20)["result"]["tools"]
    assert isinstance(tools, list)
    return tools


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as info:
            total = int(info.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        total = 0
    return (
        f"{os.cpu_count()} cores ({cpu}), {total / GiB:.0f} GiB RAM, Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10 MB / 100 MB lines only, short runs"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help=f"run only these scenarios: {', '.join(SCENARIOS)}",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH")
    parser.add_argument(
        "--stdio",
        choices=["auto", "fd", "thread"],
        default="auto",
        help="our server's protocol stream, passed as MFC_STDIO (default: the server's choice)",
    )
    args = parser.parse_args(argv)
    if args.stdio != "auto":
        ENVIRONMENTS["ours"] = {"MFC_STDIO": args.stdio}
    chosen = [name for item in args.only for name in item.split(",") if name] or list(SCENARIOS)
    unknown = [name for name in chosen if name not in RUNNERS]
    if unknown:
        parser.error(
            f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}"
        )

    from importlib.metadata import version

    print(f"# runtime bench, {datetime.date.today().isoformat()}")
    print(f"machine: {machine()}")
    print(
        f"mcp SDK {version('mcp')}. ours: python -m mfconnector (live mode, not signed in, "
        f"stdio stream: {args.stdio}). "
        "sdk: bench/sdk_server.py --tools-json (low-level Server, our 8 tool definitions). "
        "sdk MCPServer: bench/sdk_server.py (FastMCP style, 1 tool)."
    )
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"load average at start: {loadavg()}")
    print()
    rows: list[Row] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="runtime-bench-") as tmp:
        tools_json = Path(tmp) / "tools.json"
        tools_json.write_text(json.dumps(our_tools(Path(tmp))))
        COMMANDS["sdk"] += ["--tools-json", str(tools_json)]
        for name in chosen:
            rows += RUNNERS[name](args.quick, Path(tmp))
    print_table(rows)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; load average at end: {loadavg()}")
    if args.json:
        Path(args.json).write_text(
            json.dumps([row.__dict__ for row in rows], indent=2, default=str)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
