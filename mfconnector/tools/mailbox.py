"""Which mailbox a call reads, in which time zone, and which folder a name or path means.

A call reads the signed-in user's mailbox (``/me``), or a shared or delegated one named by
its ``mailbox`` argument or the server's ``--mailbox`` (``/users/{upn-or-id}``, which needs
Mail.Read.Shared). The mailbox's time zone is read once (``mailboxSettings``) unless
``--time-zone`` names one. Folders may be given by id, well-known name, display name or path
(``Projects/Contoso``); a name found more than once is an error that lists the candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import trio

from mfconnector.errors import GraphError, ToolError, ToolInputError
from mfconnector.graph.folders import GRAPH_WELL_KNOWN_FOLDERS, WELL_KNOWN_FOLDERS
from mfconnector.graph.urls import quote_segment
from mfconnector.timezones import UTC_ZONE, MailboxZone, ZoneChoice, resolve_zone
from mfconnector.tools.base import ToolContext

__all__ = [
    "Mailbox",
    "folder_names",
    "mailbox_of",
    "mailbox_zone",
    "prefer_header",
    "resolve_folder",
    "zone_record",
]

MIN_FOLDER_ID_CHARS = 32
"""Outlook folder ids are over 100 characters; a shorter word is a folder name or a path."""
LONG_ID_CHARS = 100
"""An id this long is an id even with a ``/`` in it (standard base64), never a path."""
IMMUTABLE_IDS = 'IdType="ImmutableId"'
"""Outlook ids that survive a move between folders, so an id from a list stays readable."""
TEXT_BODIES = 'outlook.body-content-type="text"'

_OUTLOOK_ID = re.compile(r"^[A-Za-z0-9_=+/-]{1,1024}$")
_GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_ADDRESS = re.compile(r"^[^\s@/\\?]{1,200}@[A-Za-z0-9.-]{1,200}$")


@dataclass(frozen=True, slots=True)
class Mailbox:
    """Where a call reads mail: the Graph path prefix, and the name the caller used."""

    path: str
    label: str

    @property
    def shared(self) -> bool:
        return self.label != "me"

    @property
    def cursor_scope(self) -> dict[str, str] | None:
        """What a cursor is bound to beyond the account: another mailbox's path."""
        return {"mailbox": self.path} if self.shared else None


def mailbox_of(ctx: ToolContext, arguments: dict[str, Any]) -> Mailbox:
    """The call's ``mailbox`` argument, else ``--mailbox``, else the signed-in user."""
    name = arguments.get("mailbox") or ctx.mailbox
    if not name or name.lower() == "me":
        return Mailbox(ctx.user_path.rstrip("/") or "/me", "me")
    if not (_ADDRESS.match(name) or _GUID.match(name)):
        raise ToolInputError(
            f"`mailbox` {name[:80]!r} is neither an email address nor a user id",
            hint="give the shared mailbox's address, like support@contoso.com",
        )
    return Mailbox("/users/" + quote(name, safe="@!$&'()*+,;=:-._~"), name)


def prefer_header(zone: MailboxZone, *, text_bodies: bool = False) -> dict[str, str]:
    """Immutable ids, times in the mailbox's zone, and (for reads) bodies as text."""
    parts = [IMMUTABLE_IDS, f'outlook.timezone="{zone.name}"']
    if text_bodies:
        parts.insert(0, TEXT_BODIES)
    return {"Prefer": ", ".join(parts)}


async def mailbox_zone(ctx: ToolContext, mailbox: Mailbox) -> MailboxZone:
    return (await zone_record(ctx, mailbox)).zone


async def zone_record(ctx: ToolContext, mailbox: Mailbox) -> ZoneChoice:
    """``--time-zone``, else the mailbox's ``timeZone`` (read once), else UTC."""
    if ctx.time_zone:
        zone = resolve_zone(ctx.time_zone)
        if zone is not None:
            return ZoneChoice(zone, "--time-zone")
    cached = ctx.state.zones.get(mailbox.path)
    if cached is not None:
        return cached
    graph = await ctx.graph()
    try:
        answer = await graph.get_json(
            f"{mailbox.path}/mailboxSettings", query={"$select": "timeZone"}
        )
    except GraphError as error:
        if error.retry_safe:  # a passing failure: ask again next time
            return ZoneChoice(UTC_ZONE, "UTC (mailboxSettings did not answer; asked again later)")
        choice = ZoneChoice(
            UTC_ZONE,
            f"UTC (mailboxSettings unreadable: {error.code or error.status}; "
            "grant MailboxSettings.Read or pass --time-zone)",
        )
        ctx.state.zones.put(mailbox.path, choice)
        return choice
    body = answer.body if isinstance(answer.body, dict) else {}
    name = body.get("timeZone", body.get("value"))
    zone = resolve_zone(name) if isinstance(name, str) else None
    if zone is None:
        choice = ZoneChoice(UTC_ZONE, f"UTC (unknown mailbox zone {str(name)[:60]!r})")
    else:
        choice = ZoneChoice(zone, "mailboxSettings")
    ctx.state.zones.put(mailbox.path, choice)
    return choice


def _is_folder_id(value: str) -> bool:
    return len(value) >= MIN_FOLDER_ID_CHARS and bool(_OUTLOOK_ID.match(value))


async def resolve_folder(ctx: ToolContext, mailbox: Mailbox, value: str, argument: str) -> str:
    """A folder argument as a path segment: well-known name, id, display name or path."""
    lowered = value.lower()
    if lowered in GRAPH_WELL_KNOWN_FOLDERS:
        return lowered
    if _is_folder_id(value) and ("/" not in value.strip("/") or len(value) >= LONG_ID_CHARS):
        return quote_segment(value)
    parts = [part.strip() for part in value.strip().strip("/").split("/")]
    if not parts or any(not part for part in parts) or len(parts) > ctx.limits.folder_path_depth:
        raise ToolInputError(
            f"`{argument}` {value[:80]!r} is not a folder name or path",
            hint="write a path like Projects/Contoso, or use an id from mail_folders",
        )
    key = (mailbox.path, "/".join(part.lower() for part in parts))
    cached = ctx.state.folder_ids.get(key)
    if cached is not None:
        return quote_segment(cached)
    folder_id = await _walk(ctx, mailbox, parts, argument, value)
    ctx.state.folder_ids.put(key, folder_id)
    return quote_segment(folder_id)


async def _children(ctx: ToolContext, mailbox: Mailbox, parent: str | None) -> list[dict[str, Any]]:
    graph = await ctx.graph()
    path = f"{mailbox.path}/mailFolders"
    if parent is not None:
        path += f"/{parent}/childFolders"
    answer = await graph.get_json(
        path,
        query={
            "$top": str(ctx.limits.folder_page_items),
            "$select": "id,displayName,childFolderCount",
        },
        headers={"Prefer": IMMUTABLE_IDS},
    )
    values = answer.body.get("value") if isinstance(answer.body, dict) else None
    folders = [f for f in values or [] if isinstance(f, dict) and isinstance(f.get("id"), str)]
    for folder in folders:
        if isinstance(folder.get("displayName"), str):
            ctx.state.folder_names.put((mailbox.path, folder["id"]), folder["displayName"])
    return folders


def _named(folders: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [f for f in folders if str(f.get("displayName", "")).lower() == name.lower()]


async def _walk(
    ctx: ToolContext, mailbox: Mailbox, parts: list[str], argument: str, value: str
) -> str:
    if len(parts) > 1:
        first = parts[0].lower()
        parent: str | None = None
        walked: list[str] = []
        rest = parts
        if first in GRAPH_WELL_KNOWN_FOLDERS:
            parent, walked, rest = first, [parts[0]], parts[1:]
        folder_id = ""
        for part in rest:
            matches = _named(await _children(ctx, mailbox, parent), part)
            if len(matches) != 1:
                where = "/".join(walked) or "the top level"
                raise _not_found_or_ambiguous(argument, value, part, where, matches)
            folder_id = matches[0]["id"]
            parent = quote_segment(folder_id)
            walked.append(part)
        return folder_id
    return await _find_by_name(ctx, mailbox, parts[0], argument, value)


async def _find_by_name(
    ctx: ToolContext, mailbox: Mailbox, name: str, argument: str, value: str
) -> str:
    """Breadth-first over the folder tree, at most MAX_FOLDER_SCAN_REQUESTS requests."""
    queue: list[tuple[str | None, str]] = [(None, "")]
    found: list[tuple[str, str]] = []
    requests = 0
    complete = True
    while queue:
        if requests >= ctx.limits.folder_scan_requests:
            complete = False
            break
        parent, prefix = queue.pop(0)
        folders = await _children(ctx, mailbox, parent)
        requests += 1
        for folder in folders:
            path = f"{prefix}{folder.get('displayName', '?')}"
            if str(folder.get("displayName", "")).lower() == name.lower():
                found.append((folder["id"], path))
            count = folder.get("childFolderCount")
            if isinstance(count, int) and count > 0:
                queue.append((quote_segment(folder["id"]), path + "/"))
        if found and not queue:
            break
    if len(found) == 1:
        return found[0][0]
    if found:
        paths = ", ".join(path for _, path in found[: ctx.limits.candidates_listed])
        raise ToolInputError(
            f"`{argument}` {value[:80]!r} names {len(found)} folders: {paths}",
            hint="give the path of the one you mean (like Projects/Contoso), or its id",
        )
    scanned = "" if complete else f" (searched the first {requests} folder levels only)"
    raise ToolInputError(
        f"no folder named {value[:80]!r} in `{argument}`{scanned}",
        hint=f"use a well-known name ({', '.join(WELL_KNOWN_FOLDERS)}), a path like "
        "Projects/Contoso, or an id from mail_folders",
    )


def _not_found_or_ambiguous(
    argument: str, value: str, part: str, where: str, matches: list[dict[str, Any]]
) -> ToolError:
    if not matches:
        return ToolInputError(
            f"no folder {part[:80]!r} under {where} (in `{argument}` {value[:80]!r})",
            hint="list the folders with mail_folders and give a path that exists",
        )
    return ToolInputError(
        f"{len(matches)} folders are named {part[:80]!r} under {where}",
        hint="give the folder's id from mail_folders instead",
    )


async def folder_names(ctx: ToolContext, mailbox: Mailbox, folder_ids: set[str]) -> dict[str, str]:
    """Display names of folders (cached per process); an unreadable one keeps its id."""
    names: dict[str, str] = {}
    missing = []
    for folder_id in folder_ids:
        cached = ctx.state.folder_names.get((mailbox.path, folder_id))
        if cached is not None:
            names[folder_id] = cached
        else:
            missing.append(folder_id)
    if not missing:
        return names
    graph = await ctx.graph()

    async def one(folder_id: str) -> None:
        try:
            answer = await graph.get_json(
                f"{mailbox.path}/mailFolders/{quote_segment(folder_id)}",
                query={"$select": "displayName"},
                headers={"Prefer": IMMUTABLE_IDS},
            )
        except ToolError:
            return
        name = answer.body.get("displayName") if isinstance(answer.body, dict) else None
        if isinstance(name, str) and name:
            names[folder_id] = name
            ctx.state.folder_names.put((mailbox.path, folder_id), name)

    async with trio.open_nursery() as nursery:
        for folder_id in missing:
            nursery.start_soon(one, folder_id)
    return names
