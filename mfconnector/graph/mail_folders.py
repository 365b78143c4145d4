"""Graph mail folders: listing them, and which folder a reference, role, name or path means.

A folder argument may be a reference this server handed out, a neutral role (``inbox``,
``sent``, ``trash``...), one of Graph's well-known names (``sentitems``), a display name
found anywhere in the tree (breadth-first, at most ``folder_scan_requests`` requests; a
name found more than once is an error listing the candidates) or a path from the top
(``Projects/Contoso``, or under a role: ``inbox/Receipts``). Roles cost no request; names
and paths are remembered per mailbox, bounded.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import trio

from mfconnector.errors import ToolError, ToolInputError
from mfconnector.graph.folder_roles import GRAPH_ROLES, well_known_ids
from mfconnector.graph.folders import GRAPH_WELL_KNOWN_FOLDERS
from mfconnector.graph.mail_model import FOLDER_SELECT, ROLE_FOLDERS, folder_of
from mfconnector.graph.mail_pages import fetch_page
from mfconnector.graph.mailbox import looks_like_folder_id, outlook_native
from mfconnector.graph.urls import quote_segment
from mfconnector.mail.failures import NotFound, StaleReference
from mfconnector.mail.model import FOLDER_ROLES, Folder, Page
from mfconnector.mail.query import PageRequest
from mfconnector.mail.refs import REFERENCE_PATTERN, parse_reference

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import GraphMailbox

_REFERENCE = re.compile(REFERENCE_PATTERN)

__all__ = ["folder_names", "folder_segment", "list_folders", "resolve_folder"]

_REFERENCE_PREFIX = REFERENCE_PATTERN.removeprefix("^")


def folder_segment(folder: Folder) -> str:
    """The folder as a Graph path segment (its id, or a well-known name)."""
    return quote_segment(folder.ref.native)


async def list_folders(
    mailbox: GraphMailbox, parent: Folder | None, page: PageRequest
) -> Page[Folder]:
    path = f"{mailbox.path}/mailFolders"
    if parent is not None:
        path += f"/{folder_segment(parent)}/childFolders"
    parent_path = parent.path if parent is not None else ""
    raw = await fetch_page(
        mailbox,
        path,
        {"$top": str(page.limit), "$select": FOLDER_SELECT},
        page,
        headers=mailbox.prefer(),
    )
    folders = [folder_of(item, mailbox.tag, parent_path) for item in raw.items]
    if parent is None:
        folders = await _with_roles(mailbox, folders)
    for folder in folders:
        if folder.name:
            mailbox.caches.folder_names.put((mailbox.path, folder.ref.native), folder.name)
    return raw.with_items(folders)


async def _with_roles(mailbox: GraphMailbox, folders: list[Folder]) -> list[Folder]:
    """Top-level folders with their roles. Graph v1.0 lists no well-known name (only beta
    has ``wellKnownName``), so roles come from comparing ids with the ids behind the
    well-known names, looked up once per mailbox; every folder with a role is top-level."""
    if all(folder.role is not None for folder in folders):
        return folders
    known = await well_known_ids(mailbox, tuple(GRAPH_ROLES))
    roles = {known[name]: role for name, role in GRAPH_ROLES.items() if known.get(name)}
    return [
        replace(folder, role=roles[folder.ref.native])  # type: ignore[arg-type]
        if folder.role is None and folder.ref.native in roles
        else folder
        for folder in folders
    ]


def _role_folder(mailbox: GraphMailbox, value: str) -> Folder | None:
    lowered = value.lower()
    graph_name = ROLE_FOLDERS.get(lowered)
    if graph_name is None and lowered in GRAPH_WELL_KNOWN_FOLDERS:
        graph_name = lowered
    if graph_name is None:
        return None
    role = next((r for r, g in ROLE_FOLDERS.items() if g == graph_name), None)
    return Folder(mailbox.ref(graph_name), graph_name, graph_name, role=role)  # type: ignore[arg-type]


async def resolve_folder(mailbox: GraphMailbox, value: str, argument: str) -> Folder:
    """The folder ``value`` means; ``ToolInputError`` naming ``argument`` when none or
    several do, ``StaleReference`` for another account's reference or a bare 0.2 id."""
    if _REFERENCE.match(value):
        ref = parse_reference(value, mailbox.tag, argument)
        outlook_native(ref, argument)
        if _role_folder(mailbox, ref.native) is not None:
            return _role_folder(mailbox, ref.native)  # type: ignore[return-value]
        name = mailbox.caches.folder_names.get((mailbox.path, ref.native))
        return Folder(ref, name or ref.native, name or ref.native)
    role = _role_folder(mailbox, value)
    if role is not None:
        return role
    if value.lower() in FOLDER_ROLES:
        raise ToolInputError(
            f"Microsoft 365 mailboxes have no {value.lower()!r} folder (in `{argument}`)",
            hint="use inbox, sent, drafts, trash, junk, archive or outbox, or a folder name",
        )
    if looks_like_folder_id(value) and ("/" not in value.strip("/") or len(value) >= 100):
        raise StaleReference(
            f"`{argument}` looks like a bare Outlook id; this server takes the references "
            "it hands out",
            hint="take the folder's id from mail_folders, or give its name or path",
        )
    parts = [part.strip() for part in value.strip().strip("/").split("/")]
    if (
        not parts
        or any(not part for part in parts)
        or len(parts) > mailbox.limits.folder_path_depth
    ):
        raise ToolInputError(
            f"`{argument}` {value[:80]!r} is not a folder name or path",
            hint="write a path like Projects/Contoso, or use an id from mail_folders",
        )
    key = (mailbox.path, "/".join(part.lower() for part in parts))
    cached = mailbox.caches.folder_ids.get(key)
    if cached is not None:
        return cached
    folder = await _walk(mailbox, parts, argument, value)
    mailbox.caches.folder_ids.put(key, folder)
    return folder


async def _children(mailbox: GraphMailbox, parent: str | None) -> list[dict[str, Any]]:
    graph = await mailbox.client()
    path = f"{mailbox.path}/mailFolders"
    if parent is not None:
        path += f"/{quote_segment(parent)}/childFolders"
    answer = await graph.get_json(
        path,
        query={
            "$top": str(mailbox.limits.folder_page_items),
            "$select": "id,displayName,childFolderCount",
        },
        headers=mailbox.prefer(),
    )
    values = answer.body.get("value") if isinstance(answer.body, dict) else None
    folders = [f for f in values or [] if isinstance(f, dict) and isinstance(f.get("id"), str)]
    for folder in folders:
        if isinstance(folder.get("displayName"), str):
            mailbox.caches.folder_names.put((mailbox.path, folder["id"]), folder["displayName"])
    return folders


def _named(folders: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [f for f in folders if str(f.get("displayName", "")).lower() == name.lower()]


def _found(mailbox: GraphMailbox, item: dict[str, Any], path: str) -> Folder:
    name = str(item.get("displayName", ""))
    return Folder(mailbox.ref(item["id"]), name, path, children=item.get("childFolderCount"))


async def _walk(mailbox: GraphMailbox, parts: list[str], argument: str, value: str) -> Folder:
    if len(parts) == 1:
        return await _find_by_name(mailbox, parts[0], argument, value)
    parent: str | None = None
    walked: list[str] = []
    rest = parts
    role = _role_folder(mailbox, parts[0])
    if role is not None:
        parent, walked, rest = role.ref.native, [parts[0]], parts[1:]
    found: dict[str, Any] = {}
    for part in rest:
        matches = _named(await _children(mailbox, parent), part)
        if len(matches) != 1:
            where = "/".join(walked) or "the top level"
            raise _not_found_or_ambiguous(argument, value, part, where, matches)
        found = matches[0]
        parent = found["id"]
        walked.append(str(found.get("displayName", part)))
    return _found(mailbox, found, "/".join(walked))


async def _find_by_name(mailbox: GraphMailbox, name: str, argument: str, value: str) -> Folder:
    """Breadth-first over the folder tree, at most ``folder_scan_requests`` requests."""
    limits = mailbox.limits
    queue: list[tuple[str | None, str]] = [(None, "")]
    found: list[tuple[dict[str, Any], str]] = []
    requests = 0
    complete = True
    while queue:
        if requests >= limits.folder_scan_requests:
            complete = False
            break
        parent, prefix = queue.pop(0)
        folders = await _children(mailbox, parent)
        requests += 1
        for folder in folders:
            path = f"{prefix}{folder.get('displayName', '?')}"
            if str(folder.get("displayName", "")).lower() == name.lower():
                found.append((folder, path))
            count = folder.get("childFolderCount")
            if isinstance(count, int) and count > 0:
                queue.append((folder["id"], path + "/"))
        if found and not queue:
            break
    if len(found) == 1:
        return _found(mailbox, *found[0])
    if found:
        paths = ", ".join(path for _, path in found[: limits.candidates_listed])
        raise ToolInputError(
            f"`{argument}` {value[:80]!r} names {len(found)} folders: {paths}",
            hint="give the path of the one you mean (like Projects/Contoso), or its id",
        )
    scanned = "" if complete else f" (searched the first {requests} folder levels only)"
    raise NotFound(
        f"no folder named {value[:80]!r} in `{argument}`{scanned}",
        hint="use a role (inbox, sent, drafts, trash, junk, archive), a path like "
        "Projects/Contoso, or an id from mail_folders",
    )


def _not_found_or_ambiguous(
    argument: str, value: str, part: str, where: str, matches: list[dict[str, Any]]
) -> ToolError:
    if not matches:
        return NotFound(
            f"no folder {part[:80]!r} under {where} (in `{argument}` {value[:80]!r})",
            hint="list the folders with mail_folders and give a path that exists",
        )
    return ToolInputError(
        f"{len(matches)} folders are named {part[:80]!r} under {where}",
        hint="give the folder's id from mail_folders instead",
    )


async def folder_names(mailbox: GraphMailbox, folder_ids: set[str]) -> dict[str, str]:
    """Display names of folders (cached per process); an unreadable one is left out."""
    names: dict[str, str] = {}
    missing = []
    for folder_id in folder_ids:
        cached = mailbox.caches.folder_names.get((mailbox.path, folder_id))
        if cached is not None:
            names[folder_id] = cached
        else:
            missing.append(folder_id)
    if not missing:
        return names
    graph = await mailbox.client()

    async def one(folder_id: str) -> None:
        try:
            answer = await graph.get_json(
                f"{mailbox.path}/mailFolders/{quote_segment(folder_id)}",
                query={"$select": "displayName"},
                headers=mailbox.prefer(),
            )
        except ToolError:
            return
        name = answer.body.get("displayName") if isinstance(answer.body, dict) else None
        if isinstance(name, str) and name:
            names[folder_id] = name
            mailbox.caches.folder_names.put((mailbox.path, folder_id), name)

    async with trio.open_nursery() as nursery:
        for folder_id in missing:
            nursery.start_soon(one, folder_id)
    return names
