"""Issue 17 sections 2, 5 and 6: each gate reaches only its own risk class, every acting
call leaves an audit record, and the state file refuses links, foreign databases and a
directory others can write. Reproductions of what 0.2.0 allowed."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from acting import Draft, ScopedTokens, ScriptedMailbox, acting_session, outlook_id, ref
from loopback import LoopbackServer, Reply

from mfconnector.errors import AuthError
from mfconnector.writes.gates import Gates
from mfconnector.writes.store import SendStore, StateStoreError

BASE = "/v1.0/me"
MESSAGE = outlook_id("message")
FOLDER = outlook_id("folder")
DESTINATIONS = ("inbox", "archive", "junkemail", "deleteditems")
REFUSED = (
    "sentitems",
    "drafts",
    "outbox",
    "msgfolderroot",
    "recoverableitemsdeletions",
    "searchfolders",
    "syncissues",
    "conflicts",
    "localfailures",
    "serverfailures",
    "conversationhistory",
    "clutter",
    "scheduled",
)
WELL_KNOWN = DESTINATIONS + REFUSED
"""Graph v1.0's well-known folder names (learn.microsoft.com/graph/api/resources/mailfolder)."""


@pytest.mark.parametrize("name", REFUSED)
async def test_writes_cannot_file_mail_into_a_system_folder_by_name(
    graph: LoopbackServer, name: str
) -> None:
    async with acting_session(graph, gates=Gates(writes=True)) as tools:
        for arguments in (
            {"action": "move", "message_id": ref(MESSAGE), "destination": name},
            {"action": "move", "message_id": ref(MESSAGE), "destination": name.upper()},
        ):
            error = await tools.fail("mail_modify", arguments)
            assert error["error_code"] == "unsupported", error
        copy = await tools.fail(
            "mail_create", {"action": "copy", "message_id": ref(MESSAGE), "destination": name}
        )
        parent = await tools.fail("mail_create", {"action": "folder", "name": "x", "parent": name})
        rename = await tools.fail("mail_modify", {"action": "rename", "folder": name, "name": "x"})
    for error in (copy, parent, rename):
        assert error["error_code"] == "unsupported", error
    assert graph.requests == [], "refused by name before any request"


def well_known_routes(graph: LoopbackServer) -> dict[str, str]:
    ids = {name: outlook_id(f"wk{name}") for name in WELL_KNOWN}
    for name, folder_id in ids.items():
        body = {"id": folder_id, "parentFolderId": ids["msgfolderroot"]}
        graph.route("GET", f"{BASE}/mailFolders/{name}", Reply.json(body))
        graph.route("GET", f"{BASE}/mailFolders/{folder_id}", Reply.json(body))
    return ids


@pytest.mark.parametrize(
    ("name", "described"),
    [
        ("recoverableitemsdeletions", "a system folder"),
        ("outbox", "the outbox folder"),
        ("sentitems", "the sent folder"),
        ("conflicts", "a system folder"),
    ],
)
async def test_writes_cannot_file_mail_into_a_system_folder_by_id(
    graph: LoopbackServer, name: str, described: str
) -> None:
    ids = well_known_routes(graph)
    graph.route("POST", f"{BASE}/messages/{MESSAGE}/move", Reply.json({"id": MESSAGE}, 201))
    async with acting_session(graph, gates=Gates(writes=True)) as tools:
        error = await tools.fail(
            "mail_modify",
            {"action": "move", "message_id": ref(MESSAGE), "destination": ref(ids[name])},
        )
        inbox = await tools.ok(
            "mail_modify",
            {"action": "move", "message_id": ref(MESSAGE), "destination": ref(ids["inbox"])},
        )
    # The refusal names the folder's neutral role (Graph's name for it is the backend's).
    assert error["error_code"] == "unsupported" and described in error["message"]
    assert inbox["moved"]["id"] == ref(MESSAGE)
    assert [r.method for r in graph.requests].count("POST") == 1, "only the inbox move was sent"


@pytest.mark.parametrize("name", ["outbox", "conversationhistory", "inbox", "msgfolderroot"])
async def test_rename_refuses_every_well_known_folder_however_spelled(
    graph: LoopbackServer, name: str
) -> None:
    ids = well_known_routes(graph)
    async with acting_session(graph, gates=Gates(writes=True)) as tools:
        for spelled in (name, name.title(), ref(ids[name])):
            error = await tools.fail(
                "mail_modify", {"action": "rename", "folder": spelled, "name": "Mine"}
            )
            assert error["error_code"] == "unsupported", (spelled, error)
    assert not [r for r in graph.requests if r.method != "GET"]


async def test_rename_refuses_a_child_of_a_system_folder(graph: LoopbackServer) -> None:
    ids = well_known_routes(graph)
    child = {"id": FOLDER, "parentFolderId": ids["searchfolders"]}
    graph.route("GET", f"{BASE}/mailFolders/{FOLDER}", Reply.json(child))
    async with acting_session(graph, gates=Gates(writes=True)) as tools:
        error = await tools.fail(
            "mail_modify", {"action": "rename", "folder": ref(FOLDER), "name": "Mine"}
        )
    assert error["error_code"] == "unsupported" and "system folder" in error["message"]


@pytest.mark.parametrize(
    ("gates", "flags"),
    [
        (Gates(send=True), "mfconnector login --enable-send"),
        (Gates(writes=True, send=True), "mfconnector login --enable-writes --enable-send"),
    ],
)
async def test_scope_hints_name_the_login_command_with_every_gate(
    graph: LoopbackServer, gates: Gates, flags: str
) -> None:
    graph.route(
        "POST",
        f"{BASE}/messages",
        Reply.json({"error": {"code": "ErrorAccessDenied", "message": "Access is denied."}}, 403),
    )
    arguments = {"action": "new", "to": ["megan@contoso.com"], "text": "x"}
    found: list[dict[str, Any]] = []
    for tokens in (ScopedTokens(scopes=("User.Read", "Mail.Read")), ScopedTokens(), SignedOut()):
        async with acting_session(graph, gates=gates, tokens=tokens) as tools:
            found.append(await tools.fail("mail_prepare", arguments))
            if gates.writes:
                found.append(
                    await tools.fail("mail_review", {"action": "draft", "message_id": ref(MESSAGE)})
                )
    signing_in = [e for e in found if e["error_code"] in ("insufficient_scope", "auth_required")]
    assert {e["error_code"] for e in signing_in} == {"insufficient_scope", "auth_required"}
    assert len(signing_in) == (4 if gates.writes else 3), found  # review: signed out only
    for error in signing_in:
        assert f"`{flags}`" in error["hint"], error


async def test_every_acting_call_is_logged_and_kept_for_recent(
    graph: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(Draft(outlook_id("audited"), subject="Secret merger"))
    caplog.set_level(logging.INFO, logger="mfconnector.audit")
    async with acting_session(graph) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
        prepared = await tools.ok(
            "mail_prepare",
            {
                "action": "draft",
                "message_id": ref(draft.id),
                "source_digest": read["source_digest"],
            },
        )
        await tools.ok(
            "mail_send_confirmed",
            {"prepared_id": prepared["prepared_id"], "confirmed_digest": prepared["digest"]},
        )
        await tools.fail("mail_modify", {"action": "trash", "message_id": "short"})
        recent = await tools.ok("mail_review", {"action": "recent"})
    lines = [r.getMessage() for r in caplog.records if r.name == "mfconnector.audit"]
    assert len(lines) == 3, lines
    assert all("Secret merger" not in line and "megan" not in line for line in lines)
    entries = recent["recent"]
    assert [(e["tool"], e.get("action"), e["outcome"]) for e in entries] == [
        ("mail_modify", "trash", "stale_reference"),
        ("mail_send_confirmed", None, "verified"),
        ("mail_prepare", "draft", "prepared"),
    ]
    assert entries[1]["target"] == prepared["prepared_id"] and entries[2]["target"] == ref(draft.id)
    assert json.loads(lines[1].split(" ", 2)[2])["outcome"] == "verified"


class SignedOut(ScopedTokens):
    """No token can be had: the provider says to sign in."""

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        raise AuthError("not signed in", hint="run `mfconnector login` in a terminal")


# --- the state file ----------------------------------------------------------------------

posix_only = pytest.mark.skipif(os.name != "posix", reason="links and modes are POSIX")


@posix_only
def test_a_dangling_link_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere.sqlite3"
    (state / "state.sqlite3").symlink_to(elsewhere)
    with pytest.raises(StateStoreError) as caught:
        SendStore(state / "state.sqlite3").check()
    assert "symbolic link" in caught.value.message and not elsewhere.exists()


@posix_only
def test_another_apps_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("INSERT INTO notes VALUES ('keep me')")
    db.commit()
    db.close()
    other.chmod(0o644)
    before = other.read_bytes()
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    for target in (other, state / "state.sqlite3"):
        if target != other:
            target.symlink_to(other)
        with pytest.raises(StateStoreError) as caught:
            SendStore(target).check()
        assert "link" in caught.value.message or "another program" in caught.value.message
    assert other.read_bytes() == before and stat.S_IMODE(other.stat().st_mode) == 0o644
    assert not Path(f"{other}-wal").exists()


@posix_only
def test_a_state_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(StateStoreError) as caught:
        SendStore(shared / "state.sqlite3").check()
    assert "others can write" in caught.value.message and "chmod 700" in caught.value.hint
    assert not (shared / "state.sqlite3").exists()
    fresh = tmp_path / "new" / "state"
    SendStore(fresh / "state.sqlite3").check()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700


def test_a_02_state_file_is_upgraded_in_place(tmp_path: Path) -> None:
    from mfconnector.writes.store import _SCHEMA

    path = tmp_path / "state.sqlite3"
    # sqlite3's own context manager commits but never closes: closing() does (3.13 warns)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(_SCHEMA)
        db.execute("PRAGMA user_version = 1")
        db.commit()
    SendStore(path).check()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0x6D66636E
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2


@pytest.mark.parametrize("calls", [2, 3, 4])
async def test_recent_shows_the_newest_entries_up_to_its_limit(
    graph: LoopbackServer, calls: int
) -> None:
    import dataclasses

    from acting import FAST

    limits = dataclasses.replace(FAST, audit_recent_entries=3)
    async with acting_session(graph, limits=limits) as tools:
        for index in range(calls):
            await tools.fail("mail_modify", {"action": "trash", "message_id": f"bad{index}"})
        recent = await tools.ok("mail_review", {"action": "recent"})
        extra = await tools.fail("mail_review", {"action": "recent", "message_id": ref(MESSAGE)})
    assert [e["target"] for e in recent["recent"]] == [f"bad{i}" for i in reversed(range(calls))][
        :3
    ]
    assert ("older" in recent) is (calls > 3)
    assert extra["error_code"] == "invalid_arguments"
