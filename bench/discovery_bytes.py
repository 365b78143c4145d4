"""What the tools cost a client in bytes: the tools/list array, and typical results.

    .venv/bin/python bench/discovery_bytes.py

Runs the real server (``python -m mfconnector --demo``) as a child process over pipes,
asks ``tools/list`` and a few typical calls on the bundled demo data, and prints:

- the ``tools`` array as compact JSON (as on the wire: ``separators=(",", ":")``,
  ASCII-escaped), total and per tool, against ``Limits.tools_list_bytes``, with each tool's
  inputSchema, outputSchema and description bytes;
- for each typical result, the bytes of ``structuredContent`` alone and of the whole
  ``CallToolResult`` (the structured copy, the JSON text copy, isError, the modern fields),
  both compact, and the raw JSON-RPC line the server wrote.

Bytes are not tokens; see bench/README.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mfconnector.emulator import Emulator  # noqa: E402
from mfconnector.limits import DEFAULT_LIMITS  # noqa: E402
from mfconnector.textconv import html_to_text  # noqa: E402

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
TIMEOUT_SECONDS = 60


from mfconnector.mail.refs import Reference, account_tag  # noqa: E402


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def demo_ids() -> dict[str, Any]:
    """The demo's longest HTML message (and its text length) and its 10,001-character text
    file, found by content in a fresh emulator (ids as ``Prefer: IdType="ImmutableId"``)."""
    tenant = Emulator().tenant
    mailbox = tenant.mailbox("me")
    assert mailbox is not None
    html_messages = [m for m in mailbox.messages.values() if m.body_type == "html"]
    longest = max(html_messages, key=lambda m: (len(m.body), m.immutable_id))
    drive = tenant.drives[tenant.personal_drive[mailbox.user_id]]
    text_file = drive.by_path("/Documents/Notes de réunion – Tōkyō.txt")
    if text_file is None:
        raise SystemExit("the demo data no longer has the file this script reads")
    tag = account_tag("graph", "default")  # the demo's one account (its reference tag)
    return {
        "long_message": str(Reference(tag, longest.immutable_id)),
        "long_message_chars": len(html_to_text(longest.body)),
        "text_file": str(Reference(tag, text_file.id)),
    }


def run_server(calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, bytes]:
    """Send every request to one demo server; its raw reply lines, by label."""
    lines = []
    for index, (_, method, params) in enumerate(calls):
        message = {
            "jsonrpc": "2.0",
            "id": index,
            "method": method,
            "params": {"_meta": MODERN_META, **params},
        }
        lines.append(json.dumps(message))
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", "--demo"],
        input=("\n".join(lines) + "\n").encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=TIMEOUT_SECONDS,
        check=True,
    )
    replies = {}
    for raw in done.stdout.splitlines():
        reply = json.loads(raw)
        replies[calls[reply["id"]][0]] = raw
    return replies


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def main() -> None:
    ids = demo_ids()
    read_windows = [
        (f"mail_read window {n}", {"message_id": ids["long_message"], "body_offset": n * 10_000})
        for n in range(-(-ids["long_message_chars"] // DEFAULT_LIMITS.body_chars))
    ]
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("tools/list", "tools/list", {}),
        ("mail_list, 50 items (inbox)", "tools/call", {"name": "mail_list", "arguments": {}}),
        ("files_list, 50 items (root)", "tools/call", {"name": "files_list", "arguments": {}}),
        *(
            (label, "tools/call", {"name": "mail_read", "arguments": arguments})
            for label, arguments in read_windows
        ),
        (
            "files_read, 10,001-char text",
            "tools/call",
            {"name": "files_read", "arguments": {"item_id": ids["text_file"]}},
        ),
        ("account_status", "tools/call", {"name": "account_status", "arguments": {}}),
    ]
    replies = run_server(calls)

    tools = json.loads(replies["tools/list"])["result"]["tools"]
    total = len(compact(tools))
    budget = DEFAULT_LIMITS.tools_list_bytes
    print("## tools/list: the tools array, compact JSON as on the wire\n")
    print(f"total: {total:,} bytes of the {budget:,}-byte budget ({total / budget:.0%})\n")
    print(row("tool", "tool bytes", "inputSchema", "outputSchema", "description"))
    print(row("---", "---:", "---:", "---:", "---:"))
    for tool in tools:
        print(
            row(
                tool["name"],
                f"{len(compact(tool)):,}",
                f"{len(compact(tool['inputSchema'])):,}",
                f"{len(compact(tool['outputSchema'])):,}",
                f"{len(compact(tool['description'])) - 2:,}",
            )
        )
    shared = sum(len(compact(t["annotations"])) for t in tools)
    print(f"\nannotations (all tools): {shared:,} bytes\n")

    print("## Typical results on the demo data\n")
    print(row("call", "structuredContent", "CallToolResult", "JSON-RPC line", "isError"))
    print(row("---", "---:", "---:", "---:", "---"))
    read_total = [0, 0, 0]
    for label, _, _ in calls[1:]:
        raw = replies[label]
        result = json.loads(raw)["result"]
        structured = len(compact(result.get("structuredContent", {})))
        whole = len(compact(result))
        print(row(label, f"{structured:,}", f"{whole:,}", f"{len(raw):,}", result["isError"]))
        if label.startswith("mail_read window"):
            read_total[0] += structured
            read_total[1] += whole
            read_total[2] += len(raw)
    print(
        row(
            f"mail_read, whole {ids['long_message_chars']:,}-char HTML message (all windows)",
            f"{read_total[0]:,}",
            f"{read_total[1]:,}",
            f"{read_total[2]:,}",
            "",
        )
    )
    print(
        "\nCallToolResult carries the data twice (structuredContent and a JSON text block), so"
        " it is about twice structuredContent; JSON-RPC line = the bytes the server wrote."
    )
    mail_views()


def tool_call(label: str, name: str, arguments: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    return (label, "tools/call", {"name": name, "arguments": arguments})


MAIL_BUDGETS = {
    "mail_list, 25, compact": 8_000,
    "mail_list, 50, compact": 16_000,
}
"""Issue 10's budgets: the bytes of the text block a client hands the model."""


def mail_views() -> None:
    """Compact and full mail results, batches under their budget: the text block's bytes."""
    first = run_server([tool_call("ids", "mail_list", {"limit": 10})])
    listing = json.loads(first["ids"])["result"]["structuredContent"]
    ids = [values[0] for values in listing["messages"]]
    calls = [
        tool_call("mail_list, 25, compact", "mail_list", {"limit": 25}),
        tool_call("mail_list, 25, full", "mail_list", {"limit": 25, "detail": "full"}),
        tool_call("mail_list, 50, compact", "mail_list", {"limit": 50}),
        tool_call("mail_list, 50, full", "mail_list", {"limit": 50, "detail": "full"}),
        tool_call("mail_search, 25, compact", "mail_search", {"query": "budget", "limit": 25}),
        tool_call("mail_list triage, 25, compact", "mail_list", {"triage": True, "limit": 25}),
        tool_call("mail_list thread_of, compact", "mail_list", {"thread_of": ids[0]}),
        tool_call("mail_read, compact", "mail_read", {"message_id": ids[0]}),
        tool_call("mail_read, full", "mail_read", {"message_id": ids[0], "detail": "full"}),
        *(
            tool_call(
                f"mail_read 10 ids, max_response_bytes {budget:,}",
                "mail_read",
                {"message_ids": ids, "max_response_bytes": budget},
            )
            for budget in (
                DEFAULT_LIMITS.batch_response_bytes_min * 2,
                DEFAULT_LIMITS.batch_response_bytes_default,
                DEFAULT_LIMITS.batch_response_bytes_max,
            )
        ),
    ]
    replies = run_server(calls)
    id_chars = min(len(i) for i in ids)
    print(f"\n## Mail results on the demo ({id_chars}-character ids): compact and full\n")
    print(
        row(
            "call",
            "messages",
            "text block bytes",
            "per message",
            "budget",
            "JSON-RPC line",
            "isError",
        )
    )
    print(row("---", "---:", "---:", "---:", "---:", "---:", "---"))
    for label, _, params in calls:
        raw = replies[label]
        result = json.loads(raw)["result"]
        text = len(result["content"][0]["text"].encode("utf-8"))
        data = result.get("structuredContent", {})
        count = len(data.get("messages") or data.get("items") or ([1] if "message" in data else []))
        if "items" in data:
            count = sum(1 for item in data["items"] if item["status"] == "ok")
        budget: int | str = MAIL_BUDGETS.get(label, "")
        if "max_response_bytes" in params["arguments"]:
            budget = params["arguments"]["max_response_bytes"]
            assert len(raw) <= budget, f"{label}: the reply line is over its budget"
        elif isinstance(budget, int):
            assert text <= budget, f"{label}: {text:,} bytes is over the {budget:,}-byte budget"
        per = f"{text // count:,}" if count else "-"
        shown = f"{budget:,}" if isinstance(budget, int) else ""
        print(row(label, count, f"{text:,}", per, shown, f"{len(raw):,}", result["isError"]))
    print(
        "\ntext block = the JSON text content a client hands the model (UTF-8 bytes); batch rows"
        " count the messages returned `ok`, and their budget is checked on the whole reply line."
    )


if __name__ == "__main__":
    main()
