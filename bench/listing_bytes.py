"""What a drive page and a folder list cost the model: the bytes of the text block.

    .venv/bin/python bench/listing_bytes.py [--baseline PATH]

Runs the real server (``python -m mfconnector --demo``) as a child process over pipes, from
this tree and, with ``--baseline``, from another checkout (a worktree of 0.2.0, say), and
prints for each typical listing the UTF-8 bytes of the JSON text block a client hands the
model, beside the baseline's. The calls are the same in both trees; a ``detail: "full"``
row is asked of this tree only (0.2.0 has no such argument: its one view was full).

Bytes are not tokens; see bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
TIMEOUT_SECONDS = 60
TARGET_DRIVE_PAGE_BYTES = 10_000
"""Issue 22's target for a 50-item drive page with real ids."""

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("files_list, drive root (50 items)", "files_list", {}),
    ("files_list, Documents", "files_list", {"path": "Documents"}),
    ("files_search, budget", "files_search", {"query": "budget"}),
    ("mail_folders, top level", "mail_folders", {}),
    ("mail_folders, Projects", "mail_folders", {"parent": "Projects"}),
]
FULL_ONLY_HERE = [
    ("files_list, drive root, detail full", "files_list", {"detail": "full"}),
    ("mail_folders, top level, detail full", "mail_folders", {"detail": "full"}),
]


def text_blocks(root: Path, calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Each call's (text bytes, item count) from one demo server started in ``root``."""
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {"_meta": MODERN_META, "name": name, "arguments": arguments},
            }
        )
        for index, (_, name, arguments) in enumerate(calls)
    ]
    done = subprocess.run(
        [sys.executable, "-m", "mfconnector", "--demo"],
        input=("\n".join(lines) + "\n").encode(),
        capture_output=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=TIMEOUT_SECONDS,
        check=True,
    )
    out: dict[str, Any] = {}
    for raw in done.stdout.splitlines():
        reply = json.loads(raw)
        result = reply["result"]
        data = result.get("structuredContent", {})
        items = data.get("items", data.get("folders", []))
        out[calls[reply["id"]][0]] = (len(result["content"][0]["text"].encode("utf-8")), len(items))
    return out


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    options = parser.parse_args()
    here = text_blocks(ROOT, CALLS + FULL_ONLY_HERE)
    base = text_blocks(options.baseline, CALLS) if options.baseline else {}
    root_bytes, root_items = here[CALLS[0][0]]
    assert root_items == 50, "the demo root page has 50 items"
    assert root_bytes <= TARGET_DRIVE_PAGE_BYTES, f"{root_bytes:,} bytes is over the target"
    print("## Drive and folder listings on the demo: the text block's bytes\n")
    print(row("call", "items", "this tree", "baseline", "ratio"))
    print(row("---", "---:", "---:", "---:", "---:"))
    for label, _, _ in CALLS + FULL_ONLY_HERE:
        size, items = here[label]
        old = base.get(label)
        ratio = f"{size / old[0]:.0%}" if old else ""
        print(row(label, items, f"{size:,}", f"{old[0]:,}" if old else "", ratio))
    print(
        f"\ntarget: a 50-item drive page ≤ {TARGET_DRIVE_PAGE_BYTES:,} bytes (issue 22); "
        f"baseline: {options.baseline or '(none given)'}"
    )


if __name__ == "__main__":
    main()
