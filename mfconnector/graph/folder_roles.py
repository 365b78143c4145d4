"""The neutral role of a Graph folder, however its id is spelled.

Graph names 17 folders well-known (``graph.folders``). Six have a neutral role (inbox,
sent, drafts, trash, junk, archive) and Outbox is ``outbox``; every other one, their
children under Search Folders, Sync Issues and Recoverable Items, and folders outside the
top of the mailbox (``msgfolderroot``) are ``other``: system folders that belong to the
mailbox, not the person. A person's own folder has no role.

An id is resolved by Graph first (so no spelling of it escapes) and compared with the ids
behind every well-known name, looked up once per mailbox and process, together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import GraphError
from mfconnector.graph.folders import GRAPH_WELL_KNOWN_FOLDERS
from mfconnector.graph.urls import quote_segment

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import GraphMailbox

__all__ = ["GRAPH_ROLES", "ROLE_NAMES", "folder_role", "well_known_ids"]

GRAPH_ROLES = {
    "inbox": "inbox",
    "sentitems": "sent",
    "drafts": "drafts",
    "deleteditems": "trash",
    "junkemail": "junk",
    "archive": "archive",
    "outbox": "outbox",
}
"""Graph's well-known name -> the neutral role; the other ten are ``other``."""
ROLE_NAMES = {role: name for name, role in GRAPH_ROLES.items()}
"""The neutral role -> the Graph well-known name a request may use in place of an id."""
WELL_KNOWN = tuple(sorted(GRAPH_WELL_KNOWN_FOLDERS))
SYSTEM_PARENTS = ("searchfolders", "syncissues", "recoverableitemsdeletions")
_OUTSIDE = "msgfolderroot:parent"
"""Key of the folder above the top of the mailbox: its children are not the person's."""
_SELECT = {"$select": "id,parentFolderId"}
_PREFER = {"Prefer": 'IdType="ImmutableId"'}


def role_of_name(name: str) -> str:
    return GRAPH_ROLES.get(name, "other")


async def well_known_ids(box: GraphMailbox, names: tuple[str, ...] = WELL_KNOWN) -> dict[str, str]:
    """Name -> id of the well-known folders this mailbox has ("" where it has none)."""
    cache = box.caches.well_known.get(box.path)
    if cache is None:
        cache = {}
        box.caches.well_known.put(box.path, cache)
    missing = [name for name in names if name not in cache]
    if not missing:
        return cache
    graph = await box.client()
    user = box.path.rstrip("/")
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


async def folder_role(box: GraphMailbox, folder: str) -> tuple[str, str | None]:
    """(the folder's id as Graph resolves it, its role or None for the person's own).

    ``folder`` is an id or a well-known name."""
    if folder.lower() in GRAPH_WELL_KNOWN_FOLDERS:
        return folder.lower(), role_of_name(folder.lower())  # no request for a name
    graph = await box.client()
    answer = await graph.get_json(
        f"{box.path.rstrip('/')}/mailFolders/{quote_segment(folder)}",
        query=_SELECT,
        headers=_PREFER,
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    resolved, parent = str(body.get("id") or folder), str(body.get("parentFolderId") or "")
    known = await well_known_ids(box)
    for name in WELL_KNOWN:
        if known.get(name) and known[name] in (resolved, folder):
            return resolved, role_of_name(name)
    system = {known.get(name) for name in SYSTEM_PARENTS} | {known.get(_OUTSIDE)}
    if parent and parent in system - {None, ""}:
        return resolved, "other"
    return resolved, None


async def drafts_id(box: GraphMailbox) -> str:
    """The id of this mailbox's Drafts folder (looked up alone, cached)."""
    return (await well_known_ids(box, ("drafts",))).get("drafts", "")
