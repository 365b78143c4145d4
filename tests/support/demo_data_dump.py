"""Every answer the demo's emulator serves, as one canonical JSON document.

Walks the demo tenant the way a client would, through ``Emulator.handle`` with real Graph
URLs: each mailbox's profile and settings, every folder (hidden ones too), every message
(full default properties with HTML bodies, again with text bodies, immutable ids, unique
bodies and headers), every attachment (``contentBytes`` and ``$value`` bytes as sha256),
every drive (root, children, ``recent``, ``sharedWithMe``) and every file's bytes, fetched
from its pre-authenticated download URL (as sha256). Then a fixed script of writes (drafts,
edits, copy, move, replies, forwards, sends, deliveries, folders, attachments, ``$batch``,
an upload session, deletes), each followed by a read of what it changed. The answers keep
their key order, so a reordered property shows up too.

Run ``python tests/support/demo_data_dump.py OUT.json`` to write the document (and print its
sha256); ``tests/test_demo_data_pinned.py`` pins that hash.
"""

from __future__ import annotations

import base64
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
        return self.send("GET", url, headers, auth=auth)

    def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        body: Any = None,
        data: bytes = b"",
        auth: bool = True,
    ) -> Any:
        """One request, recorded; the JSON answer (or None for bytes)."""
        sent = {**(AUTH if auth else {}), **(headers or {})}
        payload = json.dumps(body).encode() if body is not None else data
        answer = self.emulator.handle(method, url, sent, payload)
        record: dict[str, Any] = {
            "method": method,
            "url": url,
            "prefer": sent.get("prefer"),
            "status": answer.status,
            "headers": dict(answer.headers),
        }
        if answer.content is not None:
            record["content"] = _digest(answer.content)
        else:
            record["json"] = _hash_content_bytes(answer.json_value())
        self.lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        return answer.json_value()

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

    def writes(self) -> None:
        """A fixed script of writes, each read back: what ``--demo`` does with them."""
        me = f"{GRAPH}/me"
        ids = {"prefer": 'IdType="ImmutableId"'}
        inbox = self.get(f"{me}/mailFolders/inbox/messages?$top=3", ids)["value"]
        first, second, third = (m["id"] for m in inbox)
        archive = self.get(f"{me}/mailFolders/archive")["id"]
        to = [
            {"emailAddress": {"name": "Megan Bowen", "address": "meganb@contoso.onmicrosoft.com"}}
        ]
        attachment = {
            "@odata.type": "#microsoft.graph.fileAttachment",
            "name": "note.txt",
            "contentBytes": base64.b64encode(b"a small note").decode(),
        }
        draft = self.send(
            "POST",
            f"{me}/messages",
            ids,
            body={"subject": "Dump draft", "toRecipients": to, "attachments": [attachment]},
        )["id"]
        self.get(f"{me}/messages/{draft}", ids)
        self.send(
            "PATCH",
            f"{me}/messages/{draft}",
            ids,
            body={"subject": "Dump draft v2", "flag": {"flagStatus": "flagged"}, "isRead": False},
        )
        self.get(f"{me}/messages/{draft}?$expand=attachments", ids)
        self.send("POST", f"{me}/messages/{draft}/attachments", ids, body=attachment)
        for item in self.get_all(f"{me}/messages/{draft}/attachments"):
            self.send("DELETE", f"{me}/messages/{draft}/attachments/{item['id']}", ids)
            break
        copy = self.send(
            "POST", f"{me}/messages/{first}/copy", ids, body={"destinationId": archive}
        )["id"]
        self.get(f"{me}/messages/{copy}", ids)
        folder = self.send("POST", f"{me}/mailFolders", body={"displayName": "Dump folder"})["id"]
        self.send("PATCH", f"{me}/mailFolders/{folder}", body={"displayName": "Dump folder 2"})
        self.send("POST", f"{me}/messages/{second}/move", ids, body={"destinationId": folder})
        self.get_all(f"{me}/mailFolders/{folder}/messages", ids)
        reply = self.send(
            "POST", f"{me}/messages/{third}/createReply", ids, body={"comment": "Thanks <all>"}
        )["id"]
        self.send(
            "POST",
            f"{me}/messages/{third}/createForward",
            {**ids, "prefer": 'IdType="ImmutableId", outlook.timezone="Tokyo Standard Time"'},
            body={"toRecipients": to},
        )
        self.send("POST", f"{me}/messages/{third}/createReplyAll", ids)
        self.send("POST", f"{me}/messages/{reply}/send", ids)
        self.get(f"{me}/messages/{reply}", ids)
        support = {"emailAddress": {"address": "support@contoso.onmicrosoft.com"}}
        mail = {"subject": "Dump to support", "toRecipients": [support], "body": {"content": "Hi"}}
        self.send("POST", f"{me}/sendMail", body={"message": mail})
        self.get(f"{GRAPH}/users/support@contoso.onmicrosoft.com/mailFolders/inbox/messages")
        self.get_all(f"{me}/mailFolders/sentitems/messages?$top=5", ids)
        self.get_all(f"{me}/mailFolders/drafts/messages", ids)
        self.send("PATCH", f"{me}/mailboxSettings", body={"timeZone": "W. Europe Standard Time"})
        requests = [
            {"id": "1", "method": "GET", "url": "/me/mailFolders/inbox"},
            {"id": "2", "method": "GET", "url": f"/me/messages/{first}"},
        ]
        self.send("POST", f"{GRAPH}/$batch", body={"requests": requests})
        big = bytes(range(256)) * 16_000
        item = {"AttachmentItem": {"attachmentType": "file", "name": "big.bin", "size": len(big)}}
        session = self.send(
            "POST", f"{me}/messages/{draft}/attachments/createUploadSession", body=item
        )
        half = len(big) // 2
        for start, end in ((0, half), (half, len(big))):
            self.send(
                "PUT",
                session["uploadUrl"],
                {"content-range": f"bytes {start}-{end - 1}/{len(big)}"},
                data=big[start:end],
                auth=False,
            )
        self.get_all(f"{me}/messages/{draft}/attachments")
        self.send("DELETE", f"{me}/messages/{copy}", ids)
        self.send("POST", f"{me}/messages/{draft}/permanentDelete", ids)
        self.send("DELETE", f"{me}/mailFolders/{folder}")
        self.get_all(f"{me}/mailFolders/deleteditems/childFolders")
        self.get_all(f"{me}/mailFolders/deleteditems/messages?$top=3", ids)


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
    walker.writes()
    return ("[\n" + ",\n".join(walker.lines) + "\n]\n").encode("utf-8")


def main(argv: list[str]) -> None:
    data = dump()
    if len(argv) > 1:
        Path(argv[1]).write_bytes(data)
    print(hashlib.sha256(data).hexdigest(), len(data))


if __name__ == "__main__":
    main(sys.argv)
