"""Which drive a files call reads: the user's own, a drive by id, or a SharePoint library.

``drive_id`` names any drive the grant reaches (``/drives/{id}``); ``site`` names a
SharePoint site by name, optionally with a document library (``Marketing/Campaigns``; the
site's default library otherwise). Both need ``--all-files`` (Files.Read.All and
Sites.Read.All). A site or library name found more than once is an error listing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.graph.urls import quote_segment
from mfconnector.limits import Limits
from mfconnector.tools.base import ToolContext

__all__ = ["Drive", "drive_of"]


@dataclass(frozen=True, slots=True)
class Drive:
    """The Graph path of the drive a call reads, and the name the caller used."""

    path: str
    label: str

    @property
    def other(self) -> bool:
        return self.label != "me"

    @property
    def cursor_scope(self) -> dict[str, str] | None:
        """What a cursor is bound to beyond the account: another drive's path."""
        return {"drive": self.path} if self.other else None


def _needs_all_files(argument: str) -> ToolInputError:
    return ToolInputError(
        f"`{argument}` reads a drive other than your own, which this server was not started for",
        hint="start mfconnector with --all-files (Files.Read.All and Sites.Read.All), "
        "sign in again, then retry",
    )


async def drive_of(ctx: ToolContext, arguments: dict[str, Any]) -> Drive:
    """The call's ``drive_id`` or ``site``; the signed-in user's drive without either."""
    if "drive_id" in arguments and "site" in arguments:
        raise ToolInputError("give `drive_id` or `site`, not both")
    if "drive_id" in arguments:
        if not ctx.all_files:
            raise _needs_all_files("drive_id")
        return Drive(f"/drives/{quote_segment(arguments['drive_id'])}", arguments["drive_id"])
    if "site" in arguments:
        if not ctx.all_files:
            raise _needs_all_files("site")
        return await _library(ctx, arguments["site"])
    return Drive(ctx.user_path.rstrip("/") + "/drive", "me")


def _candidates(limits: Limits, values: list[dict[str, Any]], *keys: str) -> str:
    names = []
    for value in values[: limits.candidates_listed]:
        names.append(next((str(value[k]) for k in keys if isinstance(value.get(k), str)), "?"))
    return ", ".join(names)


async def _library(ctx: ToolContext, spec: str) -> Drive:
    site_name, _, library = (part.strip() for part in spec.strip().strip("/").partition("/"))
    if not site_name:
        raise ToolInputError(f"`site` {spec[:80]!r} names no site", hint="like Marketing/Documents")
    cached = ctx.state.drives.get(spec.lower())
    if cached is not None:
        return Drive(cached, spec)
    graph = await ctx.graph()
    found = await graph.get_json(
        "/sites",
        query={
            "search": site_name,
            "$select": "id,name,displayName,webUrl",
            "$top": str(ctx.limits.site_search_items),
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
                f"{_candidates(ctx.limits, exact, 'webUrl', 'displayName')}",
                hint="give the drive_id of the library you mean instead",
            )
        found_names = _candidates(ctx.limits, sites, "displayName", "name")
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
        drives = [d for d in listed or [] if isinstance(d, dict) and isinstance(d.get("id"), str)]
        named = [d for d in drives if str(d.get("name", "")).lower() == library.lower()]
        if len(named) != 1:
            raise ToolInputError(
                f"{'no' if not named else len(named)} libraries named {library[:80]!r} in site "
                f"{site_name[:80]!r}; its libraries: {_candidates(ctx.limits, drives, 'name')}",
                hint="give one of the listed library names, or a drive_id",
            )
        drive = named[0]
    if not isinstance(drive.get("id"), str):
        raise ToolInputError(f"the site {site_name[:80]!r} has no document library to read")
    path = f"/drives/{quote_segment(drive['id'])}"
    ctx.state.drives.put(spec.lower(), path)
    return Drive(path, spec)
