"""The pre-authenticated hosts: SharePoint's ``download.aspx`` and the thumbnail service.

A ``/content`` request answers 302 to such a URL; the URL itself is the credential (its
``tempauth``), so a request that also carries a bearer token is refused: that is how a
client that leaks its Graph token to a download host gets caught. ``Range`` requests get
206 with ``Content-Range``, as SharePoint answers them.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qs

import mfconnector.demo_documents as docbuild
from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer
from mfconnector.emulator.drive_routes import THUMBNAIL_HOST
from mfconnector.emulator.model import Drive, DriveItem
from mfconnector.emulator.state import EmulatorState

__all__ = ["serve"]

_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$")


def _plain(status: int, text: str, **headers: str) -> Answer:
    return Answer(
        status,
        content=text.encode("utf-8"),
        headers={"Content-Type": "text/plain; charset=utf-8", **headers},
    )


def _find(emulator: EmulatorState, guid: str) -> tuple[Drive, DriveItem] | None:
    for drive in emulator.tenant.drives.values():
        for item in drive.items.values():
            if item.guid == guid:
                return drive, item
    return None


def serve(
    emulator: EmulatorState, method: str, url: SplitResult, headers: dict[str, str]
) -> Answer:
    if "authorization" in headers:
        return _plain(
            401,
            "This pre-authenticated URL refuses an Authorization header: "
            "fetch it without the Graph bearer token.",
        )
    if method not in ("GET", "HEAD"):
        return _plain(405, "Method not allowed.")
    query = {key: values[0] for key, values in parse_qs(url.query).items()}
    base = f"{url.scheme}://{url.netloc}{url.path}"
    if base == THUMBNAIL_HOST:
        found = _find(emulator, query.get("docid", ""))
        if found is None or query.get("tempauth") != ids.tempauth(
            "thumb:" + found[1].id, found[1].version
        ):
            return _plain(401, "Access denied.")
        size = min(800, max(16, int(query.get("width", "96") or 96)))
        return _bytes(docbuild.png(size, size, len(found[1].name)), "image/png", headers)
    found = _find(emulator, query.get("UniqueId", ""))
    if found is None or f"{found[0].download_root}" != base:
        return _plain(404, "File Not Found.")
    item = found[1]
    if query.get("tempauth") != ids.tempauth(item.id, item.version):
        return _plain(401, "The download link has expired or is not valid.")
    return _bytes(item.content(), item.mime or "application/octet-stream", headers)


def _bytes(data: bytes, content_type: str, headers: dict[str, str]) -> Answer:
    wanted = headers.get("range")
    if wanted is None:
        return Answer(200, content=data, headers={"Content-Type": content_type})
    match = _RANGE.match(wanted)
    total = len(data)
    if match is None or (not match.group(1) and not match.group(2)):
        return Answer(200, content=data, headers={"Content-Type": content_type})
    if match.group(1):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else total - 1
    else:
        first = max(0, total - int(match.group(2)))
        last = total - 1
    last = min(last, total - 1)
    if first >= total or first > last:
        return Answer(416, content=b"", headers={"Content-Range": f"bytes */{total}"})
    return Answer(
        206,
        content=data[first : last + 1],
        headers={"Content-Type": content_type, "Content-Range": f"bytes {first}-{last}/{total}"},
    )
