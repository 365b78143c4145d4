"""``mfconnector tour``: run the real server on the demo mailbox and show a person what it does.

The tour is an MCP client: it starts ``python -m mfconnector --demo`` as a child process,
speaks the 2026-07-28 revision to it over pipes, calls the tools an assistant would call,
and prints what came back in plain words, including what each result says it left out.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["run_tour"]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mfconnector-tour", "version": "1"},
}
WIDTH = 96


class _Client:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._next_id = 0
        self.progress: list[dict[str, Any]] = []
        """``notifications/progress`` received so far, in order."""

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self._next_id,
            "method": method,
            "params": {"_meta": META, **(params or {})},  # params may bring its own _meta
        }
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        self._process.stdin.flush()
        reply: dict[str, Any] = {}
        while "id" not in reply:  # notifications for this request come before its reply
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            reply = json.loads(line)
            if reply.get("method") == "notifications/progress":
                self.progress.append(reply["params"])
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']['message']}")
        result: dict[str, Any] = reply["result"]
        return result

    def call(
        self, name: str, progress_token: str | None = None, **arguments: Any
    ) -> tuple[dict[str, Any], bool]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {**META, "progressToken": progress_token}
        result = self.request("tools/call", params)
        structured = result.get("structuredContent")
        if structured is None:
            structured = json.loads(result["content"][0]["text"])
        return structured, bool(result.get("isError"))


@contextmanager
def _server(*switches: str) -> Iterator[_Client]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mfconnector", "--demo", *switches],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        yield _Client(process)
    finally:
        if process.stdin:
            process.stdin.close()
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()


def _short(text: Any, width: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _skipped_lines(result: dict[str, Any], is_error: bool) -> list[str]:
    if not result.get("incomplete"):
        return ["complete: nothing was left out"]
    skipped = result["skipped"]
    lines = [f"incomplete (isError={str(is_error).lower()}) — it says what it left out:"]
    items = skipped.get("items")
    if items:
        more = "more pages in Graph" if items.get("more_pages") else f"{items.get('count')} more"
        cursor = items.get("cursor")
        how = f"continue with cursor={cursor[:24]}…" if cursor else items.get("note", "")
        lines.append(f"  items: {more}; {how}")
    text = skipped.get("text")
    if text:
        if "next_offset" in text:
            lines.append(
                f"  text: {text.get('returned_chars')} of {text.get('total_chars')} characters; "
                f"continue with offset {text['next_offset']}"
            )
        if "note" in text:
            lines.append(f"  text: {text['note']}")
    for entry in skipped.get("fields", [])[:3]:
        kept = entry.get("kept_chars", entry.get("kept_items"))
        original = entry.get("original_chars", entry.get("original_items"))
        lines.append(f"  field {entry['path']}: kept {kept} of {original}")
    removed = skipped.get("removed")
    if removed:
        lines.append(
            f"  removed {removed['count']} download/thumbnail URL fields ({removed['why']})"
        )
    return lines


def _rows(listing: dict[str, Any], key: str = "messages") -> list[dict[str, Any]]:
    """A compact table (messages, folders, drive items) as one dict per row, with the
    values every row shares (``common``) filled in."""
    columns = listing.get("columns", [])
    common = listing.get("common", {})
    return [
        {**common, **dict(zip(columns, values, strict=False))} for values in listing.get(key, [])
    ]


KIND_NAMES = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel workbook",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
    "application/pdf": "PDF",
}
KIND_WIDTH = 24


def _kind(item: dict[str, Any]) -> str:
    """A drive row's type in a column of fixed width: long MIME types get a short name."""
    kind = str(item.get("type") or "file")
    return _short(KIND_NAMES.get(kind, kind), KIND_WIDTH)


def _folders(client: _Client, out: IO[str]) -> None:
    """Top-level folders; one with subfolders also shows what they hold, so a parent
    folder that holds nothing itself does not look empty."""
    folders, _ = client.call("mail_folders")
    for folder in _rows(folders, "folders"):
        line = (
            f"  {_short(folder['name'], 24):<24} {folder.get('unread', 0):>3} unread "
            f"{folder.get('total', 0):>4} total"
        )
        if folder.get("subfolders"):
            children, _ = client.call("mail_folders", parent=folder["id"])
            inside = _rows(children, "folders")
            unread = sum(child.get("unread", 0) for child in inside)
            total = sum(child.get("total", 0) for child in inside)
            line += f"  (+{unread} unread, {total} total in {len(inside)} subfolders)"
        out.write(line + "\n")


def _address(sender: str) -> str:
    """``Name <address>`` (a compact row's sender) as the address alone."""
    return sender.rsplit("<", 1)[-1].rstrip(">") if "<" in sender else sender


DOCUMENTS = (
    "Documents/Q1 Budget Review.docx",
    "Projects/Budget 2027/Budget 2027 model.xlsx",
    "Projects/Contoso Launch/Launch deck.pptx",
    "Documents/Contract – Fabrikam MSA.pdf",
)
"""One demo document of each kind; their text is parsed in a worker process."""
IMAGE = "Documents/Reports/2026/Report chart.png"


def _section(out: IO[str], title: str) -> None:
    out.write(f"\n== {title} " + "=" * max(0, WIDTH - len(title) - 4) + "\n")


def _longest_word(messages: list[dict[str, Any]]) -> str:
    """A word nobody chose in advance: the longest in the listed subjects."""
    words = [
        word.strip(".,:;!?()[]\"'–-")
        for message in messages
        for word in str(message.get("subject") or "").split()
    ]
    words = [word for word in words if word.isalpha() and word.isascii()]
    return max(words, key=lambda word: (len(word), word)) if words else "budget"


def _unscripted_search_and_filter(
    client: _Client, out: IO[str], newest: list[dict[str, Any]]
) -> None:
    """A search and a filter built from whatever the listing returned: the demo is a
    mailbox that answers any query, not a recording of a few."""
    word = _longest_word(newest)
    _section(out, f"A search nobody scripted (mail_search query={word!r})")
    found, is_error = client.call("mail_search", query=word, limit=5)
    for message in _rows(found):
        out.write(f"    {message['received'][:10]}  {_short(message.get('subject'), 70)}\n")
    out.writelines(line + "\n" for line in _skipped_lines(found, is_error))
    sender = next((_address(m["from"]) for m in newest if m.get("from")), None)
    if sender is None:
        return
    _section(out, f"A filter nobody scripted (mail_list from={sender}, has_attachments)")
    filtered, is_error = client.call(
        "mail_list", folder="inbox", **{"from": sender}, has_attachments=True, limit=5
    )
    for message in _rows(filtered):
        out.write(f"    {message['received'][:10]}  {_short(message.get('subject'), 70)}\n")
    if not filtered["messages"]:
        out.write("    (none: that sender sent nothing with attachments)\n")
    out.writelines(line + "\n" for line in _skipped_lines(filtered, is_error))


def _tour(client: _Client, out: IO[str]) -> None:
    discover = client.request("server/discover")
    info = discover["_meta"]["io.modelcontextprotocol/serverInfo"]
    _section(out, "The server")
    out.write(
        f"{info['name']} {info['version']} speaks MCP {', '.join(discover['supportedVersions'])}\n"
    )
    tools = client.request("tools/list")["tools"]
    size = len(json.dumps(tools, separators=(",", ":")))
    out.write(f"{len(tools)} read-only tools ({size:,} bytes of tool definitions): ")
    out.write(", ".join(tool["name"] for tool in tools) + "\n")

    status, _ = client.call("account_status")
    profile = status.get("profile", {})
    out.write(
        f"mode: {status['mode']}; mailbox of {profile.get('name')} <{profile.get('address')}>\n"
    )

    _section(out, "Mail folders (mail_folders)")
    _folders(client, out)

    _section(out, "The five newest messages in the inbox (mail_list limit=5)")
    listing, is_error = client.call("mail_list", folder="inbox", limit=5)
    out.write(
        f"  (compact rows: {', '.join(listing['columns'])}; times in {listing['time_zone']})\n"
    )
    for message in _rows(listing):
        mark = "*" if "unread" in (message.get("flags") or "") else " "
        out.write(f" {mark} {message['received']}  {_short(message.get('from'), 18):<18}  ")
        out.write(_short(message.get("subject"), 52) + "\n")
    out.writelines(line + "\n" for line in _skipped_lines(listing, is_error))
    cursor = listing.get("skipped", {}).get("items", {}).get("cursor")
    if cursor:
        more, _ = client.call("mail_list", cursor=cursor, limit=3)
        out.write("  …and with that cursor, the next three:\n")
        for message in _rows(more):
            out.write(f"    {message['received']}  {_short(message.get('subject'), 60)}\n")

    _unscripted_search_and_filter(client, out, _rows(listing))

    _section(out, "Reading a long message (mail_read)")
    search, _ = client.call("mail_search", query="transcript OR retrospective", limit=25)
    shown = False
    for message in _rows(search):
        read, is_error = client.call("mail_read", message_id=message["id"])
        body = read["message"]["body"]
        if "text" in read.get("skipped", {}):
            out.write(f"subject: {_short(read['message'].get('subject'), 80)}\n")
            out.write(textwrap.indent(textwrap.fill(_short(body, 300), WIDTH - 4), "  ") + "\n")
            out.writelines(line + "\n" for line in _skipped_lines(read, is_error))
            shown = True
            break
    if not shown:
        out.write("  (no long message found in the search results)\n")

    _section(out, "The drive (files_list path=Documents/Reports)")
    files, is_error = client.call("files_list", path="Documents/Reports")
    out.write(f"  (a compact table: {', '.join(files['columns'])}")
    shared = files.get("common", {})
    out.write(f"; every row: {', '.join(f'{k} {v}' for k, v in shared.items())})\n")
    for item in _rows(files, "items"):
        out.write(
            f"  {_short(item['name'], 40):<40} {_kind(item):<{KIND_WIDTH}} "
            f"{item.get('size', 0):>10,} bytes\n"
        )
    out.writelines(line + "\n" for line in _skipped_lines(files, is_error))
    picture, _ = client.call("files_read", path=IMAGE)
    reason = picture.get("content", {}).get("reason", "")
    out.write(f"  files_read {IMAGE}:\n")
    out.write(textwrap.indent(textwrap.fill(reason, WIDTH - 4), "    ") + "\n")

    _section(out, "Reading a text file (files_read)")
    found, _ = client.call("files_search", query="report", limit=25)
    for item in _rows(found, "items"):
        if item.get("name", "").endswith((".md", ".txt", ".csv")):
            read, is_error = client.call("files_read", item_id=item["id"])
            out.write(f"{item['name']}:\n")
            text = read.get("content", {}).get("text", "")
            out.writelines(f"  | {line}\n" for line in text.splitlines()[:8])
            out.writelines(line + "\n" for line in _skipped_lines(read, is_error))
            break

    _section(out, "Reading documents (files_read: Word, Excel, PowerPoint, PDF)")
    for path in DOCUMENTS:
        read, is_error = client.call("files_read", path=path)
        content = read.get("content", {})
        if not content.get("returned"):
            out.write(f"{path}: {read.get('error', {}).get('message', 'not read')}\n")
            continue
        parts = [part["name"] for part in content.get("parts", [])]
        count = content.get("parts_total", 0)
        out.write(f"{path} ({content.get('format')}, {count} part{'' if count == 1 else 's'}")
        out.write(f": {_short(', '.join(parts), 60)})\n" if parts else ")\n")
        lines = [line for line in content.get("text", "").splitlines() if line.strip()]
        out.writelines(
            f"  | {_short(line.replace(chr(9), ' | '), WIDTH - 6)}\n" for line in lines[:5]
        )
        out.writelines(line + "\n" for line in _skipped_lines(read, is_error))

    _progress_read(client, out)
    _attachment_from_the_drive(out)

    _section(out, "What this shows")
    out.write(
        "Every answer was bounded (≤ 50 items, ≤ 10,000 characters of text), said exactly what\n"
        "it left out and how to get it, and carried no download URL. Add the server to your MCP\n"
        "client with `mfconnector --demo` (an in-memory mailbox that answers any query) to try\n"
        "it, or sign in (`mfconnector login`) for real.\n"
    )


PROGRESS_DOCUMENT = "Documents/Contract – Fabrikam MSA.pdf"
WORKBOOK = "Projects/Budget 2027/Budget 2027 model.xlsx"


def _progress_read(client: _Client, out: IO[str]) -> None:
    """A document read that asked for progress: what the client's progress bar was told."""
    _section(out, "A document read with progress (files_read with a progressToken)")
    client.progress.clear()
    read, is_error = client.call("files_read", progress_token="tour-read", path=PROGRESS_DOCUMENT)
    for note in client.progress:
        total = f" of {note['total']:,}" if "total" in note else ""
        out.write(f"  progress {note['progress']:,}{total}: {note.get('message', '')}\n")
    content = read.get("content", {})
    out.write(
        f"  then the result: {content.get('parts_total', 0)} pages of {content.get('format')}"
    )
    out.write(f", {'an error' if is_error else 'complete'}\n")


def _attachment_from_the_drive(out: IO[str]) -> None:
    """A draft that attaches a drive file by id: the server fetches the bytes, not the model."""
    _section(out, "A draft with a workbook from the drive attached (mail_create, --enable-writes)")
    with _server("--enable-writes") as client:
        item, _ = client.call("files_read", path=WORKBOOK)
        created, is_error = client.call(
            "mail_create",
            action="draft",
            to=["lynne@contoso.com"],
            subject="Budget 2027 model",
            text="Lynne, here is the budget workbook.",
            attachments=[{"item_id": item["item"]["id"]}],
        )
        if is_error:
            out.write(f"  {created.get('error', {}).get('message')}\n")
            return
        out.write(
            f'  attachments: [{{"item_id": "{item["item"]["id"]}"}}] (no bytes in the call)\n'
        )
        review, _ = client.call("mail_review", action="draft", message_id=created["draft"]["id"])
        for attachment in review["message"]["attachments"]:
            out.write(
                f"  on the draft: {attachment['name']}, {attachment['size']:,} bytes, "
                f"SHA-256 {attachment['sha256'][:16]}…\n"
            )
        out.write(
            f"  the draft's digest (mail_prepare freezes it): {review['source_digest'][:16]}…\n"
        )


def run_tour(out: IO[str] | None = None) -> int:
    if out is None and isinstance(sys.stdout, io.TextIOWrapper):
        # A Windows console or redirect may use a code page without CJK or emoji: show those
        # characters as "?" rather than end the tour with a UnicodeEncodeError.
        sys.stdout.reconfigure(errors="replace")
    stream = out or sys.stdout
    try:
        with _server() as client:
            _tour(client, stream)
    except BrokenPipeError:
        # The reader went away (`mfconnector tour | head`): stop quietly, like other CLIs.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
