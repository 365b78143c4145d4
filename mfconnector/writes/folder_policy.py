"""Which folders ``--enable-writes`` may file mail into or rename: its own risk class only.

Moves, copies and new folders' parents go to the person's own folders or to Inbox,
Archive, Junk Email and Deleted Items. Every other folder Graph names well-known is
refused: a move into ``recoverableitemsdeletions`` would be a hidden deletion without
``--enable-delete``, one into ``outbox`` a send without ``--enable-send``, and Sent Items,
Drafts, the root, Search Folders, Sync Issues and Conversation History belong to the
mailbox, not to the person. Rename refuses every well-known folder.

A name is refused before any request. An id is first resolved by Graph (so no spelling
of it escapes the check) and compared with the ids behind every well-known name (looked
up once per process, together); children of the system folders and folders outside the
top of the mailbox (``msgfolderroot``) are system folders too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import GraphError
from mfconnector.graph.folders import GRAPH_WELL_KNOWN_FOLDERS
from mfconnector.graph.urls import quote_segment
from mfconnector.writes.errors import WriteError

if TYPE_CHECKING:
    from mfconnector.tools.base import ToolContext
    from mfconnector.writes.setup import WriteSetup

__all__ = ["DESTINATIONS", "WELL_KNOWN", "check_destination", "check_renamable", "in_drafts"]

DESTINATIONS = frozenset({"inbox", "archive", "junkemail", "deleteditems"})
"""The well-known folders mail may be moved or copied into, and new folders made in."""
WELL_KNOWN = tuple(sorted(GRAPH_WELL_KNOWN_FOLDERS))
"""Every name Graph gives a folder; looked up in this order (stable, for the logs)."""
"""Graph v1.0's well-known folder names (mailFolder resource, learn.microsoft.com)."""
SYSTEM_PARENTS = ("searchfolders", "syncissues", "recoverableitemsdeletions")
_OUTSIDE = "msgfolderroot:parent"
"""Key of the folder above the top of the mailbox: its children are not the person's."""
_SELECT = {"$select": "id,parentFolderId"}
_PREFER = {"Prefer": 'IdType="ImmutableId"'}


def _refusal(value: str, name: str, doing: str, allowed: str) -> WriteError:
    return WriteError(
        "unsupported_operation",
        f"{value[:60]!r} is {name}; mail_create and mail_modify do not {doing} it, so "
        "nothing was changed",
        hint=allowed,
    )


async def _well_known(ctx: ToolContext, setup: WriteSetup) -> dict[str, str]:
    """Name -> id of every well-known folder this mailbox has ("" where it has none)."""
    cache = setup.well_known_folder_ids
    missing = [name for name in WELL_KNOWN if name not in cache]
    if not missing:
        return cache
    graph = await ctx.graph()
    user = ctx.user_path.rstrip("/")
    found: dict[str, dict[str, Any] | None] = {}

    async def look_up(name: str) -> None:
        try:
            answer = await graph.get_json(
                f"{user}/mailFolders/{name}", query=_SELECT, headers=_PREFER
            )
        except GraphError as error:
            if error.status not in (400, 404):
                raise  # unsure which folder is which: act on none
            found[name] = None
            return
        found[name] = answer.body if isinstance(answer.body, dict) else None

    async with trio.open_nursery() as nursery:
        for name in missing:
            nursery.start_soon(look_up, name)
    for name in missing:
        body = found.get(name) or {}
        cache[name] = str(body.get("id") or "")
        if name == "msgfolderroot":
            cache[_OUTSIDE] = str(body.get("parentFolderId") or "")
    return cache


async def _classify(ctx: ToolContext, setup: WriteSetup, folder_id: str) -> str | None:
    """The well-known name behind an id, "a system folder", or None for the person's own."""
    graph = await ctx.graph()
    answer = await graph.get_json(
        f"{ctx.user_path.rstrip('/')}/mailFolders/{quote_segment(folder_id)}",
        query=_SELECT,
        headers=_PREFER,
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    resolved, parent = str(body.get("id") or folder_id), str(body.get("parentFolderId") or "")
    known = await _well_known(ctx, setup)
    for name in WELL_KNOWN:
        if known.get(name) and known[name] in (resolved, folder_id):
            return name
    system = {known.get(name) for name in SYSTEM_PARENTS} | {known.get(_OUTSIDE)}
    if parent and parent in system - {None, ""}:
        return "a system folder"
    return None


def _described(name: str) -> str:
    return name if name == "a system folder" else f"the well-known folder {name}"


async def check_destination(ctx: ToolContext, setup: WriteSetup, target: str, argument: str) -> str:
    """``target`` (a lower-cased well-known name or a checked id) if mail may go there."""
    allowed = (
        f"`{argument}`: one of your own folders (ids from mail_folders), or inbox, archive, "
        "junkemail, deleteditems"
    )
    if target in WELL_KNOWN or target.lower() in WELL_KNOWN:
        if target.lower() in DESTINATIONS:
            return target.lower()
        raise _refusal(target, _described(target.lower()), "file mail into", allowed)
    name = await _classify(ctx, setup, target)
    if name is not None and name not in DESTINATIONS:
        raise _refusal(target, _described(name), "file mail into", allowed)
    return target


async def check_renamable(ctx: ToolContext, setup: WriteSetup, folder_id: str) -> None:
    """Refuse a well-known or system folder, however the caller spelled it."""
    allowed = "rename a folder you created (ids from mail_folders)"
    if folder_id.strip().lower() in WELL_KNOWN:
        raise _refusal(folder_id, _described(folder_id.strip().lower()), "rename", allowed)
    name = await _classify(ctx, setup, folder_id)
    if name is not None:
        raise _refusal(folder_id, _described(name), "rename", allowed)


async def in_drafts(ctx: ToolContext, setup: WriteSetup, folder_id: str) -> bool:
    """Whether ``folder_id`` (a draft's ``parentFolderId``) is the Drafts folder."""
    cache = setup.well_known_folder_ids
    if "drafts" not in cache:
        graph = await ctx.graph()
        answer = await graph.get_json(
            f"{ctx.user_path.rstrip('/')}/mailFolders/drafts", query=_SELECT, headers=_PREFER
        )
        body = answer.body if isinstance(answer.body, dict) else {}
        cache["drafts"] = str(body.get("id") or "")
    return bool(folder_id) and folder_id == cache["drafts"]
