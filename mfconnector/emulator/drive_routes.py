"""OneDrive / SharePoint reads: the drive, items by id and by path, children, search,
``/content`` (a 302 to a pre-authenticated URL), thumbnails, recent, sharedWithMe.

Addressing as Graph does it: ``/root``, ``/items/{id}``, ``/root:/Documents/a.txt`` (with
or without the closing ``:``), ``/root:/Documents:/children``, ``/items/{id}:/sub/path:``.
Children come sorted by name, 200 to a page by default, with ``$skiptoken`` nextLinks.
Lists carry ``@microsoft.graph.downloadUrl`` on files unless ``$select`` leaves it out,
as Graph's do.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any
from urllib.parse import quote

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError, drive_item_not_found
from mfconnector.emulator.kql import words
from mfconnector.emulator.model import Drive, DriveItem
from mfconnector.emulator.odata import parse_options, parse_orderby
from mfconnector.emulator.render import GRAPH, drive_item_json, drive_json, web_url
from mfconnector.emulator.state import EmulatorState

__all__ = ["THUMBNAIL_HOST", "download_url", "route", "thumbnail_url"]

DEFAULT_TOP = 200
MAX_TOP = 999
THUMBNAIL_HOST = "https://southcentralus1-mediap.svc.ms/transform/thumbnail"
DOWNLOAD_URL = "@microsoft.graph.downloadUrl"
ITEM_PROPERTIES = frozenset(
    {
        "id",
        "name",
        "size",
        "file",
        "folder",
        "root",
        "parentReference",
        "createdDateTime",
        "lastModifiedDateTime",
        "createdBy",
        "lastModifiedBy",
        "webUrl",
        "eTag",
        "cTag",
        "fileSystemInfo",
        "shared",
        "description",
        "searchResult",
        "thumbnails",
        "children",
        "remoteItem",
        DOWNLOAD_URL,
    }
)
_SEARCH = re.compile(r"^search\(q='((?:[^']|'')*)'\)$")
_ITEM_ID = re.compile(r"^[A-Za-z0-9!]{10,64}$")


def _answer(status: int, body: Any = None, **headers: str) -> Answer:
    return Answer(status, json=body, headers=dict(headers))


def download_url(drive: Drive, item: DriveItem) -> str:
    token = ids.tempauth(item.id, item.version)
    return (
        f"{drive.download_root}?UniqueId={item.guid}&Translate=false&tempauth={token}"
        "&ApiVersion=2.0"
    )


def thumbnail_url(item: DriveItem, size: int) -> str:
    token = ids.tempauth("thumb:" + item.id, item.version)
    extension = item.name.rsplit(".", 1)[-1].lower() if "." in item.name else "bin"
    return (
        f"{THUMBNAIL_HOST}?provider=spo&inputFormat={extension}&cs=fFNQTw&docid={item.guid}"
        f"&tempauth={token}&width={size}&height={size}"
    )


def _thumbnails(item: DriveItem) -> list[dict[str, Any]]:
    if item.is_folder:
        return []
    sizes = {"small": 96, "medium": 176, "large": 800}
    return [
        {
            "id": "0",
            **{
                name: {"height": size, "width": size, "url": thumbnail_url(item, size)}
                for name, size in sizes.items()
            },
        }
    ]


def _render(
    drive: Drive, item: DriveItem, select: list[str] | None, *, thumbnails: bool = False
) -> dict[str, Any]:
    full = drive_item_json(drive, item)
    if not item.is_folder and (select is None or DOWNLOAD_URL in select):
        full = {DOWNLOAD_URL: download_url(drive, item), **full}
    if thumbnails:
        full["thumbnails"] = _thumbnails(item)
    if select is None:
        return full
    wanted = set(select)
    return {k: v for k, v in full.items() if k in wanted or k in ("id", "@odata.etag")}


def _check_select(select: list[str] | None) -> None:
    for name in select or ():
        if name not in ITEM_PROPERTIES:
            raise GraphHttpError(
                400,
                "invalidRequest",
                f"Could not find a property named '{name[:100]}' on type 'oneDrive.item'.",
            )


def route(emulator: EmulatorState, call: Call, drive: Drive, rest: list[str]) -> Answer:
    if call.method != "GET":
        raise GraphHttpError(
            405, "notSupported", "The demo drive is read-only: only GET is answered."
        )
    joined = "/".join(rest)
    if not joined:
        return _answer(200, _select_drive(drive_json(drive), call))
    if joined in ("recent", "sharedWithMe"):
        return _special(emulator, call, drive, joined)
    if joined.startswith("root:"):
        item, tail = _by_path(drive, drive.items[drive.root_id], joined[len("root:") :])
    elif joined == "root" or joined.startswith("root/"):
        item, tail = drive.items[drive.root_id], joined[len("root") :]
    elif joined.startswith("items/"):
        item_id, _, remainder = joined[len("items/") :].partition("/")
        item_id, colon, path_part = item_id.partition(":")
        item = _item(drive, item_id)
        if colon:
            item, tail = _by_path(drive, item, path_part + ("/" + remainder if remainder else ""))
        else:
            tail = "/" + remainder if remainder else ""
    elif _SEARCH.match(joined):
        item, tail = drive.items[drive.root_id], "/" + joined
    else:
        raise GraphHttpError(400, "invalidRequest", f"Invalid request: '{joined[:100]}'.")
    return _item_route(emulator, call, drive, item, tail.strip("/"))


def _select_drive(body: dict[str, Any], call: Call) -> dict[str, Any]:
    select = call.query.get("$select")
    if not select:
        return body
    wanted = {s.strip() for s in select.split(",")}
    return {k: v for k, v in body.items() if k in wanted or k == "id" or k.startswith("@odata")}


def _item(drive: Drive, item_id: str) -> DriveItem:
    found = drive.items.get(item_id)
    if found is None:
        if not _ITEM_ID.match(item_id):
            raise GraphHttpError(
                400, "invalidRequest", "Invalid request: the item id is malformed."
            )
        raise drive_item_not_found()
    return found


def _by_path(drive: Drive, base: DriveItem, text: str) -> tuple[DriveItem, str]:
    """``/Documents/a.txt:/children`` -> (the item, ``children``); the final ``:`` optional."""
    path, colon, tail = text.partition(":")
    current: DriveItem | None = base
    for part in [p for p in path.split("/") if p]:
        assert current is not None
        matches = [c for c in drive.children(current.id) if c.name.casefold() == part.casefold()]
        current = matches[0] if matches else None
        if current is None:
            raise drive_item_not_found()
    assert current is not None
    return current, tail if colon else ""


def _item_route(
    emulator: EmulatorState, call: Call, drive: Drive, item: DriveItem, tail: str
) -> Answer:
    options = parse_options(call.query)
    _check_select(options.select)
    if tail == "":
        expand = (options.expand or "").lower()
        body = _render(drive, item, options.select, thumbnails="thumbnails" in expand)
        if "children" in expand:
            body["children"] = [_render(drive, c, None) for c in drive.children(item.id)]
        context = f"{GRAPH}/$metadata#drives('{quote(drive.id)}')/items/$entity"
        return _answer(200, {"@odata.context": context, **body})
    if tail == "children":
        if not item.is_folder:
            return _page(call, drive, [], options)
        return _page(call, drive, drive.children(item.id), options)
    if tail == "content":
        if item.is_folder:
            raise GraphHttpError(404, "itemNotFound", "The item has no content: it is a folder.")
        return Answer(302, headers={"Location": download_url(drive, item)})
    if tail == "thumbnails":
        context = f"{GRAPH}/$metadata#drives('{quote(drive.id)}')/items('{item.id}')/thumbnails"
        return _answer(200, {"@odata.context": context, "value": _thumbnails(item)})
    match = _SEARCH.match(tail)
    if match:
        query = match.group(1).replace("''", "'")
        return _page(call, drive, _search(drive, item, query), options, search=True)
    raise GraphHttpError(400, "invalidRequest", f"Invalid request: '{tail[:100]}'.")


def _search(drive: Drive, folder: DriveItem, query: str) -> list[DriveItem]:
    """Items under ``folder`` whose name or text has every query word (by word prefix)."""
    terms = words(query)
    if not terms:
        return []
    found = []
    pending = list(drive.children(folder.id))
    while pending:
        item = pending.pop()
        if item.is_folder:
            pending.extend(drive.children(item.id))
        tokens = words(item.name + " " + item.text)
        if all(any(token.startswith(term) for token in tokens) for term in terms):
            found.append(item)
    found.sort(key=lambda i: (i.modified, i.id), reverse=True)
    return found


def _skiptoken(offset: int) -> str:
    return base64.urlsafe_b64encode(f"Paged=TRUE&p_ID={offset}".encode()).decode("ascii")


def _offset(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token.encode("ascii") + b"===").decode("ascii")
    except (binascii.Error, ValueError, UnicodeError):
        text = ""
    match = re.fullmatch(r"Paged=TRUE&p_ID=(\d{1,9})", text)
    if match is None:
        raise GraphHttpError(400, "invalidRequest", "Invalid skip token.")
    return int(match.group(1))


def _page(
    call: Call, drive: Drive, items: list[DriveItem], options: Any, *, search: bool = False
) -> Answer:
    if options.filter:
        raise GraphHttpError(400, "invalidRequest", "$filter is not supported on this collection.")
    if options.orderby:
        properties = frozenset({"name", "lastModifiedDateTime", "size", "createdDateTime"})
        for order in reversed(parse_orderby(options.orderby, properties, "driveItem")):
            key = {
                "name": lambda i: i.name.casefold(),
                "lastModifiedDateTime": lambda i: i.modified,
                "createdDateTime": lambda i: i.created,
                "size": lambda i: drive.size_of(i),
            }[order.property]
            items = sorted(items, key=key, reverse=order.descending)
    top = min(options.top or call.prefer.max_page_size or DEFAULT_TOP, MAX_TOP)
    offset = _offset(options.skiptoken) if options.skiptoken else options.skip
    window = items[offset : offset + top]
    expand = (options.expand or "").lower()
    values = [_render(drive, i, options.select, thumbnails="thumbnails" in expand) for i in window]
    if search:
        for value in values:
            value["searchResult"] = {}
    body: dict[str, Any] = {"@odata.context": f"{GRAPH}/$metadata#Collection(driveItem)"}
    if options.count:
        body["@odata.count"] = len(items)
    body["value"] = values
    if offset + top < len(items):
        changes = {"$skiptoken": _skiptoken(offset + top)}
        link = call.next_link(**changes)
        if "$skip" in call.query:
            link = link.replace(f"&%24skip={call.query['$skip']}", "")
        body["@odata.nextLink"] = link
    return _answer(200, body)


def _special(emulator: EmulatorState, call: Call, drive: Drive, which: str) -> Answer:
    options = parse_options(call.query)
    if which == "recent":
        files = sorted(
            (i for i in drive.items.values() if not i.is_folder),
            key=lambda i: i.modified,
            reverse=True,
        )[:10]
        return _answer(
            200,
            {
                "@odata.context": f"{GRAPH}/$metadata#Collection(driveItem)",
                "value": [_render(drive, i, options.select) for i in files],
            },
        )
    shared = []
    for other in emulator.tenant.drives.values():
        if other.id == drive.id:
            continue
        for item in other.items.values():
            if item.is_folder or item.parent_id != other.root_id:
                continue
            shared.append(
                {
                    "id": item.id,
                    "name": item.name,
                    "remoteItem": {
                        "id": item.id,
                        "name": item.name,
                        "file": {"mimeType": item.mime},
                        "size": item.size,
                        "webUrl": web_url(other, item),
                        "parentReference": {
                            "driveId": other.id,
                            "driveType": other.drive_type,
                            "id": item.parent_id,
                        },
                        "shared": {
                            "sharedBy": {
                                "user": {"displayName": item.author[0], "email": item.author[1]}
                            }
                        },
                    },
                }
            )
    return _answer(
        200, {"@odata.context": f"{GRAPH}/$metadata#Collection(driveItem)", "value": shared}
    )
