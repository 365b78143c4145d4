"""Every answer the demo's emulator serves, as one canonical JSON document.

Walks the demo tenant the way a client would, through ``Emulator.handle`` with real Graph
URLs: each mailbox's profile and settings, every folder (hidden ones too), every message
(full default properties with HTML bodies, again with text bodies, immutable ids, unique
bodies and headers), every attachment (``contentBytes`` and ``$value`` bytes as sha256),
every drive (root, children, ``recent``, ``sharedWithMe``) and every file's bytes, fetched
from its pre-authenticated download URL (as sha256). The answers keep their key order,
so a reordered property shows up too.

Run ``python tests/demo_data_dump.py OUT.json`` to write the document (and print its
sha256); ``tests/test_demo_data_pinned.py`` pins that hash.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mfconnector.emulator import Emulator

GRAPH = "https://graph.microsoft.com/v1.0"
AUTH = {"authorization": "Bearer demo-dump"}
TEXT = {"prefer": 'outlook.body-content-type="text"'}
IMMUTABLE = {"prefer": 'IdType="ImmutableId"'}


def _digest(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def _hash_content_bytes(value: Any) -> Any:
    """``contentBytes`` anywhere in an answer becomes its decoded bytes' digest."""
    import base64

    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "contentBytes" and isinstance(item, str):
                out[key] = _digest(base64.b64decode(item))
            else:
                out[key] = _hash_content_bytes(item)
        return out
    if isinstance(value, list):
        return [_hash_content_bytes(item) for item in value]
    return value


class _Walker:
    def __init__(self) -> None:
        self.emulator = Emulator()
        self.lines: list[str] = []

    def get(self, url: str, headers: dict[str, str] | None = None, *, auth: bool = True) -> Any:
        """One GET, recorded; the JSON answer (or None for bytes)."""
        sent = {**(AUTH if auth else {}), **(headers or {})}
        answer = self.emulator.handle("GET", url, sent, b"")
        record: dict[str, Any] = {
            "url": url,
            "prefer": sent.get("prefer"),
            "status": answer.status,
            "headers": dict(answer.headers),
        }
        if answer.content is not None:
            record["content"] = _digest(answer.content)
        else:
            record["json"] = _hash_content_bytes(answer.json)
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        return answer.json

    def get_all(self, url: str, headers: dict[str, str] | None = None) -> list[Any]:
        """Every page of a collection, following ``@odata.nextLink``."""
        values: list[Any] = []
        next_url: str | None = url
        while next_url:
            page = self.get(next_url, headers)
            values.extend(page.get("value", []))
            next_url = page.get("@odata.nextLink")
        return values

    def mailbox(self, user_id: str) -> None:
        base = f"{GRAPH}/users/{quote(user_id)}"
        self.get(base)
        self.get(f"{base}/mailboxSettings")
        folders = self._folders(f"{base}/mailFolders")
        for folder in folders:
            messages = f"{base}/mailFolders/{folder['id']}/messages"
            listed = self.get_all(f"{messages}?$top=1000&$count=true")
            self.get_all(f"{messages}?$top=1000", TEXT)
            self.get_all(f"{messages}?$top=1000&$select=id,subject", IMMUTABLE)
            for message in listed:
                self._message(f"{base}/messages/{message['id']}")

    def _folders(self, url: str) -> list[Any]:
        found = self.get_all(f"{url}?includeHiddenFolders=true&$top=1000")
        below = []
        for folder in found:
            base = url.rsplit("/mailFolders", 1)[0]
            children = f"{base}/mailFolders/{folder['id']}/childFolders"
            below.extend(self._folders(children))
        return found + below

    def _message(self, url: str) -> None:
        self.get(f"{url}?$select=uniqueBody,internetMessageHeaders,conversationIndex")
        self.get(f"{url}?$select=uniqueBody", TEXT)
        for attachment in self.get_all(f"{url}/attachments"):
            one = f"{url}/attachments/{attachment['id']}"
            if attachment["@odata.type"].endswith("itemAttachment"):
                self.get(f"{one}?$expand=item")
            elif attachment["@odata.type"].endswith("fileAttachment"):
                self.get(f"{one}/$value")

    def drive(self, drive_id: str) -> None:
        base = f"{GRAPH}/drives/{drive_id}"
        self.get(base)
        root = self.get(f"{base}/root")
        self._children(base, root["id"])

    def _children(self, base: str, item_id: str) -> None:
        for item in self.get_all(f"{base}/items/{item_id}/children?$top=1000"):
            if "folder" in item:
                self._children(base, item["id"])
                continue
            self.get(f"{base}/items/{item['id']}/content")
            self.get(item["@microsoft.graph.downloadUrl"], auth=False)


def dump() -> bytes:
    """The canonical document: one answer per line, in the order they were asked for."""
    walker = _Walker()
    walker.get(f"{GRAPH}/me")
    tenant = walker.emulator.tenant
    for user_id in sorted({box.user_id for box in tenant.mailboxes.values()}):
        walker.mailbox(user_id)
    walker.get(f"{GRAPH}/me/drive")
    walker.get(f"{GRAPH}/me/drives")
    walker.get_all(f"{GRAPH}/me/drive/recent")
    walker.get_all(f"{GRAPH}/me/drive/sharedWithMe")
    for drive_id in sorted(tenant.drives):
        walker.drive(drive_id)
    return ("[\n" + ",\n".join(walker.lines) + "\n]\n").encode("utf-8")


def main(argv: list[str]) -> None:
    data = dump()
    if len(argv) > 1:
        Path(argv[1]).write_bytes(data)
    print(hashlib.sha256(data).hexdigest(), len(data))


if __name__ == "__main__":
    main(sys.argv)
