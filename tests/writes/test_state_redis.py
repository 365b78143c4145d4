"""``--state-url redis://`` from the operator's side and when Redis goes away.

Start-up: a bad URL exits 2 naming the setting, an unreachable Redis exits 1 saying so,
in stdio mode and serve-http alike, and no password is ever printed. The stdio server
without the setting never imports redis. During a call: Redis gone before the claim is a
``state_unavailable`` tool error with nothing sent; Redis lost between the send and its
outcome is one send and a result that says the outcome was not recorded, and the send is
never repeated: a loopback Graph counts the send requests.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mfconnector.writes.redis_store import CLAIM_SCRIPT, FINISH_SCRIPT, KEY_PREFIX, RedisState
from tests.support.acting_harness import (
    FAST,
    Draft,
    ScriptedMailbox,
    acting_session,
    outlook_id,
    ref,
)
from tests.support.loopback import LoopbackServer
from tests.support.redis_proxy import redis_proxy
from tests.support.redis_server import RedisServer, free_port, redis_server

HOSTED = [
    "serve-http",
    "--demo",
    "--public-url",
    "https://mail.example.test/mcp",
    "--oauth-issuer",
    "https://login.example.test/t/v2.0",
    "--oauth-jwks-url",
    "https://login.example.test/keys",
    "--oauth-scope",
    "Mail.Connector",
]
STDIO = ["--demo", "--enable-send"]


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mfconnector", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", [STDIO, HOSTED], ids=["stdio", "serve-http"])
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:6379/0", "must be a redis:// or rediss:// URL"),
        ("redis://", "names no host"),
        ("redis://127.0.0.1:99999/0", "invalid port"),
        ("redis://127.0.0.1:6379/16", "database number 0-15"),
        ("redis://127.0.0.1:6379/zero", "database number 0-15"),
        ("redis://127.0.0.1:6379/0?ssl_cert_reqs=none", "query or fragment"),
        ("redis://:hunter2-secret@127.0.0.1:0/0", "port 0"),
    ],
)
def test_a_bad_state_url_exits_2_naming_the_setting(mode: list[str], url: str, says: str) -> None:
    result = run(*mode, "--state-url", url)
    assert result.returncode == 2, result.stderr
    assert "--state-url" in result.stderr and says in result.stderr
    assert "hunter2" not in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("mode", [STDIO, HOSTED], ids=["stdio", "serve-http"])
def test_an_unreachable_redis_exits_1_at_start(mode: list[str]) -> None:
    import os

    url = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    result = run(*mode, env={**os.environ, "MFC_STATE_URL": url})
    assert result.returncode == 1, result.stderr
    assert "cannot be reached" in result.stderr and "did not start" in result.stderr
    assert "redis://:***@127.0.0.1" in result.stderr
    assert "hunter2" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_stdio_start_up_never_imports_redis() -> None:
    code = (
        "import sys; from mfconnector.cli import build_parser; "
        "from mfconnector.entry.wiring import build_context; "
        "from mfconnector.writes.gates import gates_from_args; "
        "args = build_parser().parse_args(['--demo', '--enable-send']); "
        "build_context(args, __import__('mfconnector.limits').limits.DEFAULT_LIMITS, "
        "gates_from_args(args, {})); print('redis' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "False", result.stderr


def test_every_key_expires(redis: RedisServer) -> None:
    """Nothing is kept forever: each key carries the retention it was written with."""
    import time

    from tests.writes.test_state_store import preparation

    redis.command("FLUSHALL")
    state = RedisState(redis.url, limits=FAST)
    store = state.store("subject-a")
    store.save(preparation("p1", time.time()))
    store.record("adele@contoso.com", "/me", {"tool": "mail_prepare"})
    store.token_put("assertion", b"sealed", 30)
    keys = redis.command("KEYS", f"{KEY_PREFIX}subject-a:*").split()
    assert len(keys) == 4, keys  # the preparation, its draft's list, the audit list, a token
    for key in keys:
        assert 0 < int(redis.command("TTL", key)) <= FAST.outcome_retention_seconds
    state.close()


@pytest.fixture
def graph_mailbox(graph: LoopbackServer) -> tuple[ScriptedMailbox, Draft]:
    mailbox = ScriptedMailbox(graph)
    return mailbox, mailbox.add(Draft(outlook_id("redisdraft")))


async def prepare(tools: object, draft: Draft) -> dict[str, str]:
    read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})  # type: ignore[attr-defined]
    prepared = await tools.ok(  # type: ignore[attr-defined]
        "mail_prepare",
        {"action": "draft", "message_id": ref(draft.id), "source_digest": read["source_digest"]},
    )
    return {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}


@pytest.mark.slow
async def test_redis_gone_before_the_claim_is_a_tool_error_and_nothing_is_sent(
    graph: LoopbackServer, graph_mailbox: tuple[ScriptedMailbox, Draft], tmp_path: Path
) -> None:
    mailbox, draft = graph_mailbox
    limits = dataclasses.replace(FAST, state_busy_seconds=1.0)
    with redis_server(tmp_path / "redis") as server:
        state = RedisState(server.url, limits=limits)
        async with acting_session(graph, store=state.store(), limits=limits) as tools:  # type: ignore[arg-type]
            confirm = await prepare(tools, draft)
            server.stop()
            error = await tools.fail("mail_send_confirmed", confirm)
            assert error["error_code"] == "state_unavailable", error
            assert (
                "redis://127.0.0.1" in error["message"] and "cannot be reached" in error["message"]
            )
            await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        state.close()
    assert mailbox.sends() == [], "nothing was sent"


@pytest.mark.slow
async def test_redis_lost_between_the_send_and_its_outcome_never_sends_again(
    graph: LoopbackServer,
    graph_mailbox: tuple[ScriptedMailbox, Draft],
    redis: RedisServer,
) -> None:
    """The relay lets the claim through and swallows what follows (the outcome): the
    client times out; the send's result says it was not recorded; once Redis is reachable
    again the outcome is written from memory, and a second confirmation sends nothing."""
    mailbox, draft = graph_mailbox
    redis.command("FLUSHALL")
    for script in (CLAIM_SCRIPT, FINISH_SCRIPT):
        redis.command("SCRIPT", "LOAD", script)
    limits = dataclasses.replace(FAST, state_busy_seconds=1.0)
    claim_sha = hashlib.sha1(CLAIM_SCRIPT.encode()).hexdigest().encode()
    with redis_proxy(redis.port, freeze_after=claim_sha) as proxy:
        state = RedisState(proxy.url, limits=limits)
        async with acting_session(graph, store=state.store(), limits=limits) as tools:  # type: ignore[arg-type]
            confirm = await prepare(tools, draft)
            sent = await tools.ok("mail_send_confirmed", confirm)
            assert proxy.held.is_set()
            assert sent["recorded"] is False and sent["status"] == "verified", sent
            assert "could not be written" in sent["warning"]
            proxy.frozen.clear()  # Redis is reachable again
            status = await tools.ok(
                "mail_review", {"action": "send_status", "prepared_id": confirm["prepared_id"]}
            )
            assert status["status"] == "verified", status
            again = await tools.ok("mail_send_confirmed", confirm)
            assert again["resent"] is False
        state.close()
    assert len(mailbox.sends()) == 1


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_state_connections_bound_the_calls_in_flight(redis: RedisServer, delta: int) -> None:
    """L-1, L, L+1 calls at once while Redis holds every write: at most L connections,
    and the call past L waits its turn instead of failing."""
    import time

    import trio

    from mfconnector.writes.store import AsyncSendStore
    from tests.writes.test_state_store import preparation

    redis.command("FLUSHALL")
    redis.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    limits = dataclasses.replace(FAST, state_connections=3)
    state = RedisState(redis.url, limits=limits)
    store = AsyncSendStore(state.store("subject-a"), limiter=state.limiter)
    calls = limits.state_connections + delta
    for n in range(calls):
        await store.save(preparation(f"p{n}", time.time()))
    statuses: list[str] = []

    async def claim(n: int) -> None:
        statuses.append((await store.claim(f"p{n}", "adele@contoso.com", "/me", "a" * 64)).status)

    redis.command("CLIENT", "PAUSE", "300", "WRITE")
    async with trio.open_nursery() as nursery:
        for n in range(calls):
            nursery.start_soon(claim, n)
    clients = redis.command("CLIENT", "LIST").splitlines()
    state.close()
    assert statuses == ["claimed"] * calls
    assert len(clients) - 1 == min(calls, limits.state_connections), clients  # less redis-cli


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_local_store_keeps_at_most_state_local_tokens(tmp_path: Path, delta: int) -> None:
    from mfconnector.writes.store import SendStore

    limits = dataclasses.replace(FAST, state_local_tokens=5)
    store = SendStore(None, limits=limits)
    count = limits.state_local_tokens + delta
    for n in range(count):
        store.token_put(f"slot{n}", b"sealed", 60)
    assert (store.token_get("slot0") is not None) is (count <= limits.state_local_tokens)
    assert store.token_get(f"slot{count - 1}") == b"sealed"


@pytest.mark.slow
async def test_two_stdio_demo_processes_share_one_redis(redis: RedisServer) -> None:
    """The CLI's own path: ``mfconnector --demo --enable-send --state-url``. What one
    process prepared the other sees and confirms; the first then finds it sent."""
    import json
    import subprocess

    import trio

    from tests.process.test_send_processes import Process

    redis.command("FLUSHALL")

    async def start() -> Process:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "mfconnector", *STDIO, "--state-url", redis.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        return Process(process)

    with trio.fail_after(60):
        one, two = await start(), await start()
        try:
            drafts = (await one.call("mail_list", {"folder": "drafts", "limit": 1}))[
                "structuredContent"
            ]
            draft_id = drafts["messages"][0][drafts["columns"].index("id")]
            review = await one.call("mail_review", {"action": "draft", "message_id": draft_id})
            prepared = (
                await one.call(
                    "mail_prepare",
                    {
                        "action": "draft",
                        "message_id": draft_id,
                        "source_digest": review["structuredContent"]["source_digest"],
                    },
                )
            )["structuredContent"]
            status = await two.call(
                "mail_review", {"action": "send_status", "prepared_id": prepared["prepared_id"]}
            )
            assert status["structuredContent"]["status"] == "prepared", status
            confirm = {
                "prepared_id": prepared["prepared_id"],
                "confirmed_digest": prepared["digest"],
            }
            sent = await two.call("mail_send_confirmed", confirm)
            assert sent["structuredContent"]["status"] == "verified", sent
            again = await one.call("mail_send_confirmed", confirm)
            assert json.loads(again["content"][0]["text"])["resent"] is False, again
            account = (await two.call("account_status", {}))["structuredContent"]
            assert redis.url in json.dumps(account), account
        finally:
            for process in (one, two):
                assert process.process.stdin is not None
                await process.process.stdin.aclose()
                await process.process.wait()


def test_replicas_on_one_store_read_one_demo_clock(redis: RedisServer) -> None:
    """Replicas started apart date preparations alike: a preparation made on the younger
    one is not expired on the older one, nor a live claim stale."""
    import time

    from mfconnector.demo import DemoClock

    redis.command("FLUSHALL")
    first, second = RedisState(redis.url), RedisState(redis.url)
    older = DemoClock(first.demo_epoch())
    alone = DemoClock()
    time.sleep(0.3)
    younger = DemoClock(second.demo_epoch())
    assert second.demo_epoch() == first.demo_epoch()
    assert abs(older() - younger()) < 0.1
    assert alone() - DemoClock()() >= 0.25, "without the shared epoch they would differ"
    first.close()
    second.close()
