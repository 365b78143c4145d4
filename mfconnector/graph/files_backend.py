"""Microsoft Graph as a ``FilesBackend``: OneDrive and SharePoint drives.

Owns every Graph rule of the files tools: which drive a call means (``/me/drive``,
``/drives/{id}``, or a SharePoint ``site`` / ``site/library`` found by name and cached),
the item paths (``/items/{id}``, ``/root:/{path}:``), the ``$select`` of an item, paging
through ``graph.mail_pages`` (positions are Graph links, checked before any request), and
the downloads (a Range request for a text window, ``graph.spool`` for documents). A drive
item is picked into the neutral ``DriveItem`` once; its download URL is never read.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from mfconnector.bounded_cache import BoundedCache
from mfconnector.errors import GraphError, ToolInputError
from mfconnector.graph.mail_pages import fetch_page
from mfconnector.graph.mailbox import ClientFactory
from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.mail.backend import OnBytes, Spooled
from mfconnector.mail.failures import StaleReference
from mfconnector.mail.files import (
    Drive,
    DriveItem,
    FileRange,
    FilesCapabilities,
    ItemLocation,
)
from mfconnector.mail.model import Page
from mfconnector.mail.query import PageRequest
from mfconnector.mail.refs import AccountTag, Reference

__all__ = ["DRIVE_ID", "ITEM_SELECT", "GraphFilesBackend"]

ITEM_SELECT = (
    "id,name,size,file,folder,parentReference,createdDateTime,lastModifiedDateTime,"
    "lastModifiedBy,webUrl"
)
"""What a drive item is asked for: never ``@microsoft.graph.downloadUrl``."""
DRIVE_ID = re.compile(r"^[A-Za-z0-9!_=-]+$")
"""Graph's drive and drive item ids (base32-ish, ``!`` in SharePoint ones)."""
FORBIDDEN_NAME_CHARS = re.compile(r'[\\*<>?:|"\x00-\x1f]')
"""Characters OneDrive and SharePoint do not allow in a file or folder name."""
ITEM_HINT = "take ids from files_list or files_search"


def _needs_all_files(argument: str) -> ToolInputError:
    return ToolInputError(
        f"`{argument}` reads a drive other than your own, which this server was not started for",
        hint="start mfconnector with --all-files (Files.Read.All and Sites.Read.All), "
        "sign in again, then retry",
    )


def _text(value: Any) -> str | None:
    """A string Graph gave, or None; the tools bound what they show (``Bounds``)."""
    return value if isinstance(value, str) else None


def _parent_path(parent: Mapping[str, Any]) -> str | None:
    """``/drive/root:/Documents`` (Graph, percent-encoded) as ``/Documents``; root ``/``."""
    path = parent.get("path")
    if not isinstance(path, str) or "root:" not in path:
        return None
    return unquote(path.split("root:", 1)[1]) or "/"


@dataclass
class GraphFilesBackend:
    """The drives of one Microsoft 365 account."""

    tag: AccountTag
    client: ClientFactory
    limits: Limits
    own_path: str = "/me"
    """The signed-in user's path: their drive is ``{own_path}/drive``."""
    all_files: bool = False
    """``--all-files`` (Files.Read.All, Sites.Read.All): other drives may be read."""
    libraries: BoundedCache[str, str] = field(init=False)
    """Lower-cased ``site/library`` -> the drive's Graph path, learnt once."""

    def __post_init__(self) -> None:
        self.libraries = BoundedCache(self.limits.cached_zones)

    @property
    def capabilities(self) -> FilesCapabilities:
        if self.all_files:
            return FilesCapabilities("graph", other_drives=True)
        why = "other drives need --all-files (Files.Read.All and Sites.Read.All)"
        return FilesCapabilities("graph", missing=(("other_drives", why),))

    # drives --------------------------------------------------------------------------

    async def drive(self, drive_id: str | None = None, site: str | None = None) -> Drive:
        if drive_id is not None and site is not None:
            raise ToolInputError("give `drive_id` or `site`, not both")
        if drive_id is not None:
            if not self.all_files:
                raise _needs_all_files("drive_id")
            if not DRIVE_ID.match(drive_id):
                raise ToolInputError(f"`drive_id` {drive_id[:80]!r} is not a Graph drive id")
            return Drive(drive_id, f"/drives/{quote_segment(drive_id)}")
        if site is not None:
            if not self.all_files:
                raise _needs_all_files("site")
            return await self._library(site)
        return Drive("me", self.own_path.rstrip("/") + "/drive")

    def _candidates(self, values: list[dict[str, Any]], *keys: str) -> str:
        names = []
        for value in values[: self.limits.candidates_listed]:
            names.append(next((str(value[k]) for k in keys if isinstance(value.get(k), str)), "?"))
        return ", ".join(names)

    async def _library(self, spec: str) -> Drive:
        site_name, _, library = (part.strip() for part in spec.strip().strip("/").partition("/"))
        if not site_name:
            raise ToolInputError(
                f"`site` {spec[:80]!r} names no site", hint="like Marketing/Documents"
            )
        cached = self.libraries.get(spec.lower())
        if cached is not None:
            return Drive(spec, cached)
        graph = await self.client()
        found = await graph.get_json(
            "/sites",
            query={
                "search": site_name,
                "$select": "id,name,displayName,webUrl",
                "$top": str(self.limits.site_search_items),
            },
        )
        values = found.body.get("value") if isinstance(found.body, dict) else None
        sites = [v for v in values or [] if isinstance(v, dict) and isinstance(v.get("id"), str)]
        exact = [
            s
            for s in sites
            if site_name.lower()
            in (str(s.get("displayName", "")).lower(), str(s.get("name", "")).lower())
        ]
        if len(exact) != 1:
            if exact:
                raise ToolInputError(
                    f"{len(exact)} SharePoint sites are named {site_name[:80]!r}: "
                    f"{self._candidates(exact, 'webUrl', 'displayName')}",
                    hint="give the drive_id of the library you mean instead",
                )
            found_names = self._candidates(sites, "displayName", "name")
            close = f"; sites found: {found_names}" if sites else ""
            raise ToolInputError(
                f"no SharePoint site named {site_name[:80]!r}{close}",
                hint="give the site's display name exactly, or a drive_id",
            )
        site_path = f"/sites/{quote_segment(exact[0]['id'])}"
        if not library:
            answer = await graph.get_json(f"{site_path}/drive", query={"$select": "id,name"})
            drive = answer.body if isinstance(answer.body, dict) else {}
        else:
            answer = await graph.get_json(f"{site_path}/drives", query={"$select": "id,name"})
            listed = answer.body.get("value") if isinstance(answer.body, dict) else None
            drives = [
                d for d in listed or [] if isinstance(d, dict) and isinstance(d.get("id"), str)
            ]
            named = [d for d in drives if str(d.get("name", "")).lower() == library.lower()]
            if len(named) != 1:
                raise ToolInputError(
                    f"{'no' if not named else len(named)} libraries named {library[:80]!r} in "
                    f"site {site_name[:80]!r}; its libraries: {self._candidates(drives, 'name')}",
                    hint="give one of the listed library names, or a drive_id",
                )
            drive = named[0]
        if not isinstance(drive.get("id"), str):
            raise ToolInputError(f"the site {site_name[:80]!r} has no document library to read")
        path = f"/drives/{quote_segment(drive['id'])}"
        self.libraries.put(spec.lower(), path)
        return Drive(spec, path)

    # items ---------------------------------------------------------------------------

    def _native(self, ref: Reference, argument: str = "item_id") -> str:
        if not DRIVE_ID.match(ref.native) or len(ref.native) > self.limits.drive_id_chars:
            raise StaleReference(f"`{argument}` does not hold a drive item id", hint=ITEM_HINT)
        return ref.native

    def _item_path(self, drive: Drive, where: ItemLocation, suffix: str = "") -> str:
        """``/items/{id}``, ``/root:/{path}:`` or ``/root`` of the drive, each segment
        encoded."""
        if where.ref is not None:
            return f"{drive.handle}/items/{quote_segment(self._native(where.ref))}{suffix}"
        if where.segments:
            if any(FORBIDDEN_NAME_CHARS.search(part) for part in where.segments):
                shown = "/".join(where.segments)[:80]
                raise ToolInputError(
                    f"`path` {shown!r} has a character OneDrive does not allow in names",
                    hint='names cannot contain \\ * < > ? : | "',
                )
            encoded = "/".join(quote_segment(part) for part in where.segments)
            return f"{drive.handle}/root:/{encoded}:{suffix}"
        return f"{drive.handle}/root{suffix}"

    def _item(self, raw: Mapping[str, Any]) -> DriveItem | None:
        """The neutral item of Graph's JSON (None without an id); strings bounded."""
        native = raw.get("id")
        if not isinstance(native, str):
            return None
        file_facet = raw.get("file") if isinstance(raw.get("file"), dict) else None
        folder_facet = raw.get("folder") if isinstance(raw.get("folder"), dict) else None
        parent = raw.get("parentReference")
        parent = parent if isinstance(parent, dict) else {}
        by = raw.get("lastModifiedBy")
        user = by.get("user") if isinstance(by, dict) else None
        size = raw.get("size")
        children = folder_facet.get("childCount") if folder_facet else None
        parent_id = parent.get("id")
        return DriveItem(
            ref=Reference(self.tag, native),
            name=_text(raw.get("name")) or "",
            kind="folder" if folder_facet is not None else "file",
            parent=_parent_path(parent),
            parent_ref=Reference(self.tag, parent_id) if isinstance(parent_id, str) else None,
            size=size if type(size) is int else None,
            mime_type=_text(file_facet.get("mimeType")) if file_facet else None,
            children=children if type(children) is int else None,
            created=_text(raw.get("createdDateTime")),
            modified=_text(raw.get("lastModifiedDateTime")),
            modified_by=_text(user.get("displayName")) if isinstance(user, dict) else None,
            web_link=_text(raw.get("webUrl")),
        )

    def _page(self, raw: Any) -> Page[DriveItem]:
        items = [self._item(entry) for entry in raw.items if isinstance(entry, dict)]
        page: Page[DriveItem] = raw.with_items([item for item in items if item is not None])
        return page

    async def children(
        self, drive: Drive, folder: ItemLocation, page: PageRequest
    ) -> Page[DriveItem]:
        path = self._item_path(drive, folder, "/children")
        query = {"$select": ITEM_SELECT, "$top": str(page.limit)}
        return self._page(await fetch_page(self, path, query, page))

    async def search(self, drive: Drive, text: str, page: PageRequest) -> Page[DriveItem]:
        literal = text.replace("'", "''")
        path = f"{drive.handle}/root/{quote_segment(f'search(q={chr(39)}{literal}{chr(39)})')}"
        query = {"$select": ITEM_SELECT, "$top": str(page.limit)}
        return self._page(await fetch_page(self, path, query, page))

    async def item(self, drive: Drive, where: ItemLocation) -> DriveItem:
        graph = await self.client()
        answer = await graph.get_json(self._item_path(drive, where), query={"$select": ITEM_SELECT})
        item = self._item(answer.body) if isinstance(answer.body, dict) else None
        if item is None:
            raise GraphError("Graph returned the item without an id", retry_safe=True)
        return item

    def _content(self, drive: Drive, item: DriveItem) -> str:
        return f"{drive.handle}/items/{quote_segment(self._native(item.ref))}/content"

    async def read_range(
        self, drive: Drive, item: DriveItem, first_byte: int, max_bytes: int
    ) -> FileRange:
        graph = await self.client()
        download = await graph.download(
            self._content(drive, item), max_bytes=max_bytes, first_byte=first_byte
        )
        return FileRange(download.data, first_byte, download.complete, download.total_size)

    def spool(
        self,
        drive: Drive,
        item: DriveItem,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:
        return _spooled(self, self._content(drive, item), limit, suffix, on_bytes)


@contextlib.asynccontextmanager
async def _spooled(
    backend: GraphFilesBackend, path: str, limit: int, suffix: str, on_bytes: OnBytes | None
) -> AsyncIterator[Spooled]:
    """``graph.spool``'s download (httpx is imported on the first document read)."""
    from mfconnector.graph.spool import spooled_download

    graph = await backend.client()
    async with spooled_download(
        graph, path, limit=limit, suffix=suffix, on_bytes=on_bytes
    ) as spooled:
        yield spooled
