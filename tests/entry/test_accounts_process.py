"""Several accounts in one server, driven as a client drives it: the real server process
over pipes, on the demo (each Graph account its own emulated mailbox) and on two loopback
Graph servers (which prove each call goes to its own account's Graph)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.refs import account_tag
from tests.support.harness import request, rows
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.tools.test_reads_loopback import message
from tests.tools.test_tools_loopback import query_of

REPO = Path(__file__).resolve().parents[2]
LOOPBACK_SERVER = REPO / "tests" / "support" / "accounts_server.py"
WORK, HOME = account_tag("graph", "work").tag, account_tag("graph", "home").tag
TWO_ACCOUNTS = """
[[account]]
name = "work"
provider = "graph"
enable_writes = true

[[account]]
name = "home"
provider = "graph"
"""
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("MFC_")}


class Server:
    """One server process: JSON lines in, JSON lines out, stderr kept for the end."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**CLEAN_ENV, "PYTHONPATH": str(REPO), **(env or {})},
        )
        self._ids = 0

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self._ids += 1
        line = json.dumps(request(self._ids, method, params)) + "\n"
        self.process.stdin.write(line.encode())
        self.process.stdin.flush()
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        assert reply["id"] == self._ids
        result: dict[str, Any] = reply["result"]
        return result

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.ask("tools/call", {"name": name, "arguments": arguments})

    def tools(self) -> dict[str, dict[str, Any]]:
        return {tool["name"]: tool for tool in self.ask("tools/list")["tools"]}

    def close(self) -> str:
        _, stderr = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, stderr
        return stderr.decode()


def error_of(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True, result
    payload: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return payload


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "accounts.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Server]:
    server = Server(
        [
            sys.executable,
            "-m",
            "mfconnector",
            "--demo",
            "--accounts",
            str(write(tmp_path, TWO_ACCOUNTS)),
        ]
    )
    yield server
    assert "Traceback" not in server.close()


# --- the demo: two Graph accounts, each its own emulated mailbox -----------------------------


@pytest.mark.slow
def test_every_tool_takes_the_account_and_only_the_opened_gates_are_listed(demo: Server) -> None:
    tools = demo.tools()
    assert "mail_modify" in tools and "mail_create" in tools  # work opens writes
    assert "mail_prepare" not in tools and "mail_delete_permanently" not in tools
    for name, tool in tools.items():
        schema = tool["inputSchema"]
        assert schema["properties"]["account"] == {"enum": ["work", "home"]}
        assert ("account" in schema.get("required", [])) is (name != "account_status")
        assert schema["additionalProperties"] is False


@pytest.mark.slow
def test_the_instructions_name_the_accounts_first(demo: Server) -> None:
    instructions = demo.ask("server/discover")["instructions"]
    assert instructions.startswith("This server serves 2 accounts (work, home): every tool")


@pytest.mark.slow
def test_a_call_without_or_with_an_unknown_account_is_refused_and_serving_continues(
    demo: Server,
) -> None:
    assert "'account' is a required property" in error_of(demo.call("mail_list"))["message"]
    assert "'office' is not one of" in error_of(demo.call("mail_list", account="office"))["message"]
    assert demo.call("mail_folders", account="home")["isError"] is False


@pytest.mark.slow
def test_references_are_bound_to_their_account(demo: Server) -> None:
    listed = demo.call("mail_list", account="work", limit=3)["structuredContent"]
    ids = [row["id"] for row in rows(listed)]
    assert ids and all(i.startswith(WORK + ".") for i in ids)
    read = demo.call("mail_read", account="work", message_id=ids[0])
    assert read["isError"] is False
    foreign = error_of(demo.call("mail_read", account="home", message_id=ids[0]))
    assert foreign["error_code"] == "stale_reference"
    assert "another account or provider than `home`" in foreign["message"]
    # the same native id under home's own tag is home's message: the mailboxes are separate
    native = ids[0].split(".", 1)[1]
    assert demo.call("mail_read", account="home", message_id=f"{HOME}.{native}")["isError"] is False


@pytest.mark.slow
def test_a_cursor_of_one_account_is_refused_for_another(demo: Server) -> None:
    first = demo.call("mail_list", account="work", limit=2)["structuredContent"]
    cursor = first["skipped"]["items"]["cursor"]
    refused = error_of(demo.call("mail_list", account="home", cursor=cursor, limit=2))
    assert refused["error_code"] == "invalid_arguments"
    assert "listing of another account, mailbox or drive" in refused["message"]
    again = demo.call("mail_list", account="work", cursor=cursor, limit=2)
    assert "structuredContent" in again, again  # a page (incomplete: more follow), no error
    assert rows(again["structuredContent"])[0]["id"] not in {r["id"] for r in rows(first)}


@pytest.mark.slow
def test_gates_are_per_account(demo: Server) -> None:
    target = rows(demo.call("mail_list", account="home", limit=1)["structuredContent"])[0]["id"]
    closed = error_of(
        demo.call("mail_modify", account="home", action="flags", message_id=target, flag="flagged")
    )
    assert closed["error_code"] == "gate_disabled"
    assert closed["account"] == "home"
    assert "'home'" in closed["message"] and "enable_writes = true" in closed["hint"]

    mine = rows(demo.call("mail_list", account="work", limit=1)["structuredContent"])[0]["id"]
    assert mine.split(".", 1)[1] == target.split(".", 1)[1]  # the same demo message in each
    done = demo.call(
        "mail_modify", account="work", action="flags", message_id=mine, categories_add=["Tagged"]
    )
    assert "Tagged" in done["structuredContent"]["updated"]["categories"], done

    def categories(account: str, reference: str) -> list[str]:
        read = demo.call("mail_read", account=account, message_id=reference)
        found: list[str] = read["structuredContent"]["message"]["categories"]
        return found

    assert "Tagged" in categories("work", mine)
    assert "Tagged" not in categories("home", target)  # home's mailbox is its own


@pytest.mark.slow
def test_account_status_lists_each_account_with_its_provider_and_capabilities(
    demo: Server,
) -> None:
    status = demo.call("account_status")["structuredContent"]
    accounts = {a["name"]: a for a in status["accounts"]}
    assert list(accounts) == ["work", "home"]
    assert accounts["work"]["provider"] == "graph" and accounts["work"]["tag"] == WORK
    assert accounts["work"]["gates"] == ["writes"] and "gates" not in accounts["home"]
    assert accounts["home"]["capabilities"]["search_syntax"] == "kql"
    named = demo.call("account_status", account="home")["structuredContent"]
    assert named["account"]["account"].endswith(" home")


@pytest.mark.slow
def test_a_files_cursor_of_one_account_is_refused_for_another(demo: Server) -> None:
    first = demo.call("files_list", account="work", limit=2)["structuredContent"]
    cursor = first["skipped"]["items"]["cursor"]
    refused = error_of(demo.call("files_list", account="home", cursor=cursor, limit=2))
    assert refused["error_code"] == "invalid_arguments"
    assert "listing of another account, mailbox or drive" in refused["message"]
    assert "structuredContent" in demo.call("files_list", account="work", cursor=cursor, limit=2)


# --- two loopback Graph servers: each call goes to its own account's Graph -----------------


def inbox(server: LoopbackServer, subject: str) -> None:
    server.route("GET", "/v1.0/me/mailboxSettings", Reply.json({"timeZone": "UTC"}))
    items = [message(i, subject=f"{subject} {i}") for i in range(6)]

    def answer(recorded: RecordedRequest) -> Reply:
        query = query_of(recorded)
        skip, top = int(query.get("$skip", "0")), int(query["$top"])
        doc: dict[str, Any] = {"value": items[skip : skip + top]}
        if skip + top < len(items):
            doc["@odata.nextLink"] = (
                f"{server.url}/v1.0/me/mailFolders/inbox/messages?$top={top}&$skip={skip + top}"
            )
        return Reply.json(doc)

    server.route("GET", "/v1.0/me/mailFolders/inbox/messages", answer)
    server.route(
        "GET",
        "/v1.0/me/drive/root/children",
        Reply.json(
            {
                "value": [
                    {
                        "id": f"01{subject[:4].upper()}ITEM{i}",
                        "name": f"{subject} {i}.txt",
                        "size": 10,
                    }
                    for i in range(2)
                ]
            }
        ),
    )


@pytest.fixture
def loopback(tmp_path: Path) -> Iterator[tuple[Server, LoopbackServer, LoopbackServer]]:
    with LoopbackServer() as work, LoopbackServer() as home:
        inbox(work, "Work mail")
        inbox(home, "Home mail")
        server = Server(
            [
                sys.executable,
                str(LOOPBACK_SERVER),
                f"work={work.url}/v1.0",
                f"home={home.url}/v1.0",
                "--",
                "--accounts",
                str(write(tmp_path, TWO_ACCOUNTS)),
            ]
        )
        yield server, work, home
        assert "Traceback" not in server.close()


@pytest.mark.slow
def test_each_account_reads_its_own_graph(
    loopback: tuple[Server, LoopbackServer, LoopbackServer],
) -> None:
    server, work, home = loopback
    mine = rows(server.call("mail_list", account="home", limit=2)["structuredContent"])
    assert [r["subject"] for r in mine] == ["Home mail 0", "Home mail 1"]
    assert all(r["id"].startswith(HOME + ".") for r in mine)
    assert work.requests == [] and home.requests_to("/v1.0/me/mailFolders/inbox/messages")
    theirs = rows(server.call("mail_list", account="work", limit=2)["structuredContent"])
    assert [r["subject"] for r in theirs] == ["Work mail 0", "Work mail 1"]
    assert all(r["id"].startswith(WORK + ".") for r in theirs)


@pytest.mark.slow
def test_each_account_lists_its_own_drive(
    loopback: tuple[Server, LoopbackServer, LoopbackServer],
) -> None:
    server, work, home = loopback
    listed = server.call("files_list", account="work")["structuredContent"]
    assert [row["name"] for row in rows(listed, "items")] == ["Work mail 0.txt", "Work mail 1.txt"]
    assert work.requests_to("/v1.0/me/drive/root/children") and home.requests == []


@pytest.mark.slow
def test_a_foreign_reference_or_cursor_costs_no_request(
    loopback: tuple[Server, LoopbackServer, LoopbackServer],
) -> None:
    server, work, home = loopback
    listed = server.call("mail_list", account="work", limit=2)["structuredContent"]
    reference, cursor = rows(listed)[0]["id"], listed["skipped"]["items"]["cursor"]
    server.call("mail_folders", account="home")  # home's zone is learnt: no more asking
    before = len(home.requests), len(work.requests)
    assert (
        error_of(server.call("mail_read", account="home", message_id=reference))["error_code"]
        == "stale_reference"
    )
    assert error_of(server.call("mail_list", account="home", cursor=cursor))["error_code"] == (
        "invalid_arguments"
    )
    assert (len(home.requests), len(work.requests)) == before
    following = server.call("mail_list", account="work", cursor=cursor, limit=2)
    assert [r["subject"] for r in rows(following["structuredContent"])] == [
        "Work mail 2",
        "Work mail 3",
    ]


# --- start-up: every malformed input is one stderr line and exit status 2 ------------------


def start_up(
    tmp_path: Path, text: str | None, *flags: str, env: dict[str, str] | None = None
) -> str:
    argv = [sys.executable, "-m", "mfconnector", *flags]
    if text is not None:
        argv += ["--accounts", str(write(tmp_path, text))]
    done = subprocess.run(
        argv,
        input=b"",
        capture_output=True,
        env={**CLEAN_ENV, "PYTHONPATH": str(REPO), **(env or {})},
        timeout=60,
    )
    assert done.returncode == 2, done
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("mfconnector: ")
    return lines[0]


IMAP = (
    '[[account]]\nname = "home"\nprovider = "imap"\nimap = "imap.example.org"\nimap_user = "me"\n'
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "flags", "env", "expected"),
    [
        (
            IMAP + 'password = "hunter2"\n',
            (),
            None,
            "key 'account.password' would put a secret in the file",
        ),
        (
            IMAP.replace('"imap.example.org"', '"imap.example.org"\nimap_security = "plain"'),
            (),
            None,
            "plain",
        ),
        (TWO_ACCOUNTS, ("--tenant", "contoso.com"), None, "--tenant defines the one account"),
        (TWO_ACCOUNTS, ("--enable-send",), None, "--enable-send defines the one account"),
        (TWO_ACCOUNTS, (), {"MFC_ENABLE_WRITES": "1"}, "MFC_ENABLE_WRITES is set"),
        (TWO_ACCOUNTS, ("--fixtures", "x.json"), None, "--fixtures defines the one account"),
        ("[[account]\n", (), None, "not valid TOML at line 1"),
        (
            "".join(f'[[account]]\nname = "a{i}"\nprovider = "graph"\n' for i in range(9)),
            (),
            None,
            "defines 9 accounts; at most 8 (accounts) are served",
        ),
    ],
)
def test_a_bad_accounts_setup_is_one_clear_line_and_exit_2(
    tmp_path: Path, text: str, flags: tuple[str, ...], env: dict[str, str] | None, expected: str
) -> None:
    line = start_up(tmp_path, text, *flags, env=env)
    assert expected in line
    assert "hunter2" not in line


@pytest.mark.slow
def test_mfc_accounts_names_the_file_too(tmp_path: Path) -> None:
    server = Server(
        [sys.executable, "-m", "mfconnector", "--demo"],
        env={"MFC_ACCOUNTS": str(write(tmp_path, TWO_ACCOUNTS))},
    )
    try:
        assert server.tools()["mail_list"]["inputSchema"]["properties"]["account"]["enum"] == [
            "work",
            "home",
        ]
    finally:
        server.close()


def test_the_limit_in_the_table_is_the_default_one() -> None:
    assert DEFAULT_LIMITS.accounts == 8  # the start-up case above writes 9


@pytest.mark.slow
def test_live_accounts_each_say_what_blocks_their_sign_in(tmp_path: Path) -> None:
    """Live mode with no app registration configured: every account says so at start-up,
    by name, and its tools answer the same problem instead of calling anyone."""
    server = Server(
        [sys.executable, "-m", "mfconnector", "--accounts", str(write(tmp_path, TWO_ACCOUNTS))]
    )
    try:
        status = server.call("account_status", account="home")["structuredContent"]
        assert status["signed_in"] is False and "client id" in status["problem"]["message"]
        refused = error_of(server.call("mail_list", account="work"))
        assert "client id" in refused["message"]
    finally:
        stderr = server.close()
    lines = [line for line in stderr.splitlines() if "cannot sign in" in line]
    assert [line.split(":")[1] for line in lines] == [
        " live mode cannot sign in account 'work'",
        " live mode cannot sign in account 'home'",
    ]


def test_a_secret_variable_is_named_after_its_account() -> None:
    from mfconnector.entry.providers import secret_variable

    assert secret_variable("MFC_IMAP_PASSWORD", "home") == "MFC_IMAP_PASSWORD_HOME"
    assert secret_variable("MFC_SMTP_PASSWORD", "my-box_2") == "MFC_SMTP_PASSWORD_MY_BOX_2"


@pytest.mark.slow
def test_a_preparation_of_one_account_cannot_be_sent_through_another(tmp_path: Path) -> None:
    text = (
        '[[account]]\nname = "work"\nprovider = "graph"\nenable_send = true\n'
        '[[account]]\nname = "home"\nprovider = "graph"\nenable_send = true\n'
    )
    server = Server(
        [sys.executable, "-m", "mfconnector", "--demo", "--accounts", str(write(tmp_path, text))]
    )
    try:
        prepared = server.call(
            "mail_prepare",
            account="work",
            action="new",
            to=["adelev@contoso.onmicrosoft.com"],
            subject="Numbers",
            text="Here they are.",
        )["structuredContent"]
        confirm = {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]}
        other = error_of(server.call("mail_send_confirmed", account="home", **confirm))
        assert other["error_code"] == "not_found"
        assert "for this account" in other["message"]
        sent = server.call("mail_send_confirmed", account="work", **confirm)["structuredContent"]
        assert sent["status"] == "verified" and sent["draft_id"].startswith(WORK + ".")
    finally:
        server.close()


@pytest.mark.slow
def test_a_tool_no_account_opens_names_the_file_key_not_a_flag(tmp_path: Path) -> None:
    server = Server(
        [
            sys.executable,
            "-m",
            "mfconnector",
            "--demo",
            "--accounts",
            str(write(tmp_path, TWO_ACCOUNTS)),
        ]
    )
    try:
        closed = error_of(server.call("mail_prepare", account="work", action="new"))
    finally:
        server.close()
    assert closed["error_code"] == "gate_disabled"
    assert "for every account" in closed["message"]
    assert "enable_send = true" in closed["hint"] and "--enable" not in closed["hint"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        [
            "serve-http",
            "--demo",
            "--public-url=https://mcp.contoso.com",
            "--oauth-issuer=https://login.microsoftonline.com/contoso/v2.0",
            "--oauth-scope=api://mfc/mail.read",
        ],
        ["login"],
        ["tour"],
    ],
    ids=["serve-http", "login", "tour"],
)
def test_a_subcommand_refuses_the_accounts_file(tmp_path: Path, command: list[str]) -> None:
    path = write(tmp_path, TWO_ACCOUNTS)
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", "--accounts", str(path), *command],
        input=b"",
        capture_output=True,
        env={**CLEAN_ENV, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        f"mfconnector: --accounts is for serving on stdio; {command[0]} does not take it"
    ]
