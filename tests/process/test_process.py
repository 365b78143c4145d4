"""The real server process over real pipes: bad input, end of input, signals, a closed stdout.

Tests of stdio behaviour run over both protocol streams (``MFC_STDIO=fd`` and ``thread``,
the one Windows uses), through the ``stdio`` fixture; the others use the default stream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any

import pytest
import trio

from tests.support.harness import initialize, request, slow_inbox_fixtures
from tests.support.mcp_schemas import schema_errors

pytestmark = pytest.mark.slow  # every test here starts the real server process

SERVER = [sys.executable, "-m", "mfconnector"]
CHUNK = b"y" * (1 << 20)
STREAMS = ["fd", "thread"] if hasattr(trio.lowlevel, "FdStream") else ["thread"]


@pytest.fixture(params=STREAMS)
def stdio(request: pytest.FixtureRequest) -> str:
    """The protocol stream the server is started with (MFC_STDIO)."""
    value: str = request.param
    return value


def server_env(stdio: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "MFC_STDIO"}
    if stdio is not None:
        env["MFC_STDIO"] = stdio
    return env


async def start(*args: str, stdio: str | None = None) -> trio.Process:
    return await trio.lowlevel.open_process(
        [*SERVER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(stdio),
    )


async def read_all(stream: Any) -> bytes:
    data = bytearray()
    while chunk := await stream.receive_some(1 << 16):
        data += chunk
    return bytes(data)


async def exchange(process: trio.Process, writer: Any) -> tuple[bytes, bytes]:
    """Write with ``writer`` while collecting stdout and stderr; wait for exit."""
    out: dict[str, bytes] = {}

    async def collect(name: str, stream: Any) -> None:
        out[name] = await read_all(stream)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect, "stdout", process.stdout)
        nursery.start_soon(collect, "stderr", process.stderr)
        await writer(process.stdin)
        await process.stdin.aclose()
    await process.wait()
    return out["stdout"], out["stderr"]


def lines(stdout: bytes) -> list[dict[str, Any]]:
    assert stdout.endswith(b"\n")
    messages = []
    for line in stdout.split(b"\n")[:-1]:
        line.decode("ascii")
        message = json.loads(line)
        assert set(message) <= {"jsonrpc", "id", "result", "error", "method", "params"}
        assert message["jsonrpc"] == "2.0"
        if message.get("id") is not None:
            problems = [
                schema_errors(v, "JSONRPCMessage", message) for v in ("2026-07-28", "2025-11-25")
            ]
            assert not all(problems), problems
        messages.append(message)
    return messages


def send_lines(*messages: Any) -> Any:
    async def writer(stdin: Any) -> None:
        for message in messages:
            data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
            await stdin.send_all(data)

    return writer


@pytest.mark.slow
async def test_a_100_mb_line_is_drained_and_the_next_request_answered(stdio: str) -> None:
    async def writer(stdin: Any) -> None:
        await stdin.send_all(b'{"jsonrpc":"2.0","id":1,"method":"')
        for _ in range(100):
            await stdin.send_all(CHUNK)
        await stdin.send_all(b'"}\n' + json.dumps(request(2, "server/discover")).encode() + b"\n")

    with trio.fail_after(60):
        process = await start(stdio=stdio)
        stdout, stderr = await exchange(process, writer)
    replies = lines(stdout)
    assert process.returncode == 0
    assert "id" not in replies[0] and replies[0]["error"]["code"] == -32600
    assert "1,000,000-byte limit" in replies[0]["error"]["message"]
    assert replies[1]["id"] == 2 and "supportedVersions" in replies[1]["result"]
    assert b"Traceback" not in stderr


async def test_invalid_utf8_and_garbage_then_serving_continues(stdio: str) -> None:
    with trio.fail_after(20):
        process = await start(stdio=stdio)
        stdout, stderr = await exchange(
            process,
            send_lines(
                b"\xff\xfe\xfd\n",
                b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}\n',
                b"[1,2]\n",
                b"\n",
                b"NaN\n",
                initialize(3),
                request(4, "tools/list", modern=False),
            ),
        )
    replies = lines(stdout)
    assert [r["error"]["code"] for r in replies[:4]] == [-32700, -32700, -32600, -32700]
    assert replies[4]["id"] == 3 and replies[5]["id"] == 4
    assert process.returncode == 0
    assert b"Traceback" not in stderr


async def test_end_of_input_exits_zero_after_answering(stdio: str) -> None:
    messages = [
        request(i, "tools/call", {"name": "account_status", "arguments": {}}) for i in range(16)
    ]
    with trio.fail_after(20):
        process = await start(stdio=stdio)
        stdout, _ = await exchange(process, send_lines(*messages))
    assert sorted(reply["id"] for reply in lines(stdout)) == list(range(16))
    assert process.returncode == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_signals_end_the_process_quietly(signum: int, stdio: str) -> None:
    """stdin stays open: the thread stream's blocked read must not keep the process alive."""
    with trio.fail_after(20):
        process = await start(stdio=stdio)
        await process.stdin.send_all(json.dumps(request(1, "server/discover")).encode() + b"\n")
        first = await process.stdout.receive_some(1 << 16)
        process.send_signal(signum)
        await process.wait()
        stderr = await read_all(process.stderr)
    assert json.loads(first)["id"] == 1
    assert process.returncode == 0
    assert b"Traceback" not in stderr


async def test_a_closed_stdout_ends_the_process_quietly(stdio: str) -> None:
    with trio.fail_after(20):
        process = await start(stdio=stdio)
        await process.stdout.aclose()
        for i in range(50):
            try:
                await process.stdin.send_all(
                    json.dumps(request(i, "server/discover")).encode() + b"\n"
                )
            except trio.BrokenResourceError:
                break
        await process.wait()
        stderr = await read_all(process.stderr)
    assert process.returncode == 0
    assert b"Traceback" not in stderr


def padded_tools_list(request_id: int) -> bytes:
    """A 1,000-byte request line (one atomic pipe write) whose reply is the 7.5 KB tool list."""
    line = json.dumps(request(request_id, "tools/list", {"pad": ""})).encode()
    return line.replace(b'"pad": ""', b'"pad": "' + b"p" * (999 - len(line)) + b'"') + b"\n"


async def fill_until_stalled(process: trio.Process) -> int:
    """Write requests without reading stdout until the server stops taking them.

    Returns how many were written. Stalled means 20 tries in a row, 20 ms apart, found the
    stdin pipe full; a server that kept reading would empty it again. The server must be
    serving first (one round trip), or a slow start-up would look like a stall.
    """
    await process.stdin.send_all(json.dumps(request("ready", "server/discover")).encode() + b"\n")
    reply = b""
    while not reply.endswith(b"\n"):
        reply += await process.stdout.receive_some(1 << 16)
    assert json.loads(reply)["id"] == "ready"
    fd = process.stdin.fileno()  # non-blocking: trio set it so
    count = idle = 0
    while idle < 20:
        assert count * 1000 < 64 << 20, "the server kept reading while nobody read stdout"
        try:
            os.write(fd, padded_tools_list(count))
        except BlockingIOError:
            idle += 1
            await trio.sleep(0.02)
            continue
        count += 1
        idle = 0
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs F_GETPIPE_SZ (Linux)")
async def test_a_client_that_stops_reading_stops_the_server_reading(stdio: str) -> None:
    """Backpressure end to end: input is let in only up to a bound, and nothing is lost."""
    import fcntl

    from mfconnector.limits import DEFAULT_LIMITS

    with trio.fail_after(60):
        process = await start(stdio=stdio)
        written = await fill_until_stalled(process)
        stdin_pipe = fcntl.fcntl(process.stdin.fileno(), fcntl.F_GETPIPE_SZ)
        await process.stdin.aclose()
        stdout = await read_all(process.stdout)
        await process.wait()
    # Let in: what the stdin pipe holds, the reader's one chunk, and the lines whose
    # replies are queued (outbox, writer's batch, the 64 KiB stdout pipe: about 55).
    assert written * 1000 <= stdin_pipe + DEFAULT_LIMITS.read_chunk_bytes + 100 * 1000
    ids = [json.loads(line)["id"] for line in stdout.splitlines()]
    assert ids == list(range(written)), "every request written must be answered, in order"
    assert process.returncode == 0


async def test_signals_end_a_process_whose_client_stopped_reading(stdio: str) -> None:
    """The first signal finishes what is in flight; the second stops a writer stuck on a
    stdout nobody reads (for the thread stream: a thread blocked in a write) at once."""
    with trio.fail_after(30):
        process = await start("--log-level", "info", stdio=stdio)
        await fill_until_stalled(process)
        log = bytearray()
        process.send_signal(signal.SIGTERM)
        while b"finishing in-flight requests" not in log:
            chunk = await process.stderr.receive_some(1 << 16)
            assert chunk, f"stderr ended before the first signal was seen: {bytes(log)!r}"
            log += chunk
        process.send_signal(signal.SIGTERM)
        await process.wait()
        log += await read_all(process.stderr)
    assert process.returncode == 0
    assert b"stopping now" in log
    assert b"Traceback" not in log


async def test_an_unknown_stdio_stream_is_refused_at_start_up() -> None:
    with trio.fail_after(20):
        process = await start(stdio="threads")
        stdout, stderr = await exchange(process, send_lines(request(1, "server/discover")))
    assert process.returncode == 2
    assert stdout == b""
    assert stderr.decode().strip().splitlines() == [
        "mfconnector: MFC_STDIO='threads' is not a stdio stream; use 'fd' (Unix), 'thread', "
        "or leave it unset for the platform's default"
    ]


async def test_nothing_but_protocol_reaches_stdout_even_from_stray_writes(stdio: str) -> None:
    code = (
        "import os, sys, runpy; sys.argv=['mfconnector'];"
        "import mfconnector.stdio as s; orig=s.claim_stdio\n"
        "def claim(**settings):\n"
        "    fds = orig(**settings); print('stray print'); os.write(1, b'stray fd write\\n')\n"
        "    return fds\n"
        "s.claim_stdio = claim\n"
        "from mfconnector.cli import main; raise SystemExit(main([]))"
    )
    with trio.fail_after(20):
        process = await trio.lowlevel.open_process(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(stdio),
        )
        stdout, stderr = await exchange(process, send_lines(request(1, "server/discover")))
    assert [reply["id"] for reply in lines(stdout)] == [1]
    assert b"stray print" in stderr and b"stray fd write" in stderr


@pytest.mark.parametrize("fd", [0, 1])
def test_a_missing_stdin_or_stdout_is_one_clear_line_and_exit_2(fd: int) -> None:
    code = (
        f"import os; os.close({fd}); from mfconnector.cli import main; raise SystemExit(main([]))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=20, check=False
    )
    assert completed.returncode == 2
    assert completed.stderr.decode().splitlines() == [
        "mfconnector: stdin and stdout must be open for the protocol: Bad file descriptor"
    ]


def test_version_flag_and_bad_flags() -> None:
    version = subprocess.run([*SERVER, "--version"], capture_output=True, timeout=20, check=False)
    assert version.returncode == 0 and b"mfconnector" in version.stdout
    bad = subprocess.run([*SERVER, "--no-such-flag"], capture_output=True, timeout=20, check=False)
    assert bad.returncode == 2 and b"--no-such-flag" in bad.stderr and bad.stdout == b""


def test_environment_is_not_needed_for_a_c_locale() -> None:
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": ""}
    completed = subprocess.run(
        SERVER,
        input=json.dumps(request(1, "server/discover")).encode() + b"\n",
        capture_output=True,
        timeout=20,
        env=env,
        check=False,
    )
    assert completed.returncode == 0
    assert lines(completed.stdout)[0]["id"] == 1


@pytest.mark.parametrize("mode", [["--demo"], []])
def test_msal_and_httpx_stay_off_the_start_up_path(mode: list[str]) -> None:
    """Start-up imports neither msal (loaded on the first token), httpx (the first call) nor
    any document parser (the first document, and then only in a worker process)."""
    call = request(1, "tools/call", {"name": "account_status", "arguments": {}})
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mfconnector", *mode],
        input=json.dumps(request(0, "server/discover")).encode() + b"\n",
        capture_output=True,
        timeout=30,
        check=False,
    )
    imported = {line.split("|")[-1].strip() for line in completed.stderr.decode().splitlines()}
    assert completed.returncode == 0
    assert "msal" not in imported
    assert "httpx" not in imported
    assert "selectolax" not in imported  # loaded on the first HTML body
    # Document parsing lives in worker processes, loaded on the first document read.
    assert not {
        name for name in imported if name.startswith(("mfconnector.documents", "pypdfium2"))
    }
    assert "mfconnector.graph.spool" not in imported
    # ...and a demo tool call still works, loading httpx then (but never msal).
    if mode:
        completed = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mfconnector", *mode],
            input=json.dumps(call).encode() + b"\n",
            capture_output=True,
            timeout=30,
            check=False,
        )
        imported = {line.split("|")[-1].strip() for line in completed.stderr.decode().splitlines()}
        assert "httpx" in imported and "msal" not in imported
        assert "pypdfium2" not in imported
        assert json.loads(completed.stdout)["result"]["structuredContent"]["mode"] == "demo"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            b'{"responses": [{"request": {"method": "POST", "path": "/me"}, "response": {}}]}',
            "responses[0]",
        ),
        (b'{"responses": [', "line 1"),
        (b" " * 2_000_001, "2,000,000-byte limit"),
    ],
)
def test_a_bad_fixture_file_exits_2_with_one_line_naming_the_problem(
    tmp_path: Any, content: bytes, fragment: str
) -> None:
    path = tmp_path / "fixtures.json"
    path.write_bytes(content)
    completed = subprocess.run(
        [*SERVER, "--fixtures", str(path)], input=b"", capture_output=True, timeout=30, check=False
    )
    assert completed.returncode == 2
    assert completed.stdout == b""
    lines = completed.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines
    assert "Traceback" not in completed.stderr.decode()


def mail_list_call(request_id: int) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": "mail_list", "arguments": {"limit": 50}})


async def test_control_messages_get_through_while_every_worker_is_busy(tmp_path: Any) -> None:
    """20 calls whose Graph answer takes 60 s: 16 run or wait, 4 are answered busy at once,
    ping and discovery are answered, and a cancel for each of the 16 leaves nothing to
    answer, so end of input exits at once instead of after the grace period with errors."""
    path = tmp_path / "slow.json"
    path.write_bytes(slow_inbox_fixtures(60_000))
    calls = [mail_list_call(i) for i in range(20)]
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    cancels = [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}}
        for i in range(16)
    ]
    early: list[dict[str, Any]] = []
    with trio.fail_after(20):  # hang guard only
        process = await start("--fixtures", str(path))
        await process.stdin.send_all(b"".join(json.dumps(m).encode() + b"\n" for m in calls))
        await process.stdin.send_all(json.dumps(ping).encode() + b"\n")
        buffer = b""
        while not any(reply.get("id") == "p" for reply in early):
            buffer += await process.stdout.receive_some(1 << 16)
            *complete, buffer = buffer.split(b"\n")
            early += [json.loads(line) for line in complete]
        stdout, stderr = await exchange(
            process, send_lines(request("d", "server/discover"), *cancels)
        )
    assert buffer == b""
    assert [reply["id"] for reply in early] == [16, 17, 18, 19, "p"]
    assert all(
        json.loads(r["result"]["content"][0]["text"])["error"]["error_code"] == "busy"
        for r in early[:4]
    )
    assert [reply["id"] for reply in lines(stdout)] == ["d"]
    assert process.returncode == 0
    assert b"Traceback" not in stderr
