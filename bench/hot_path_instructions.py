"""The read hot path in instructions: user-space instructions per tools/call on the demo,
this checkout beside 0.2.0, counted by valgrind's callgrind.

Seconds of CPU wander by a third between runs on a shared machine (``hot_path.py`` shows
them); an instruction count is the same on every run of the same code and inputs, whatever
else the machine is doing, so a change of a few percent shows. Each server runs ``--demo``
under ``valgrind --tool=callgrind`` over real pipes; for each call, after warm-up calls the
counters are zeroed (``callgrind_control -z``), ``--calls`` calls are asked, and the
counters are dumped (``-d``): the figure is the dump's total over the calls. The emulator
runs inside the server, so its share is in both columns.

Calls: the 50-message compact ``mail_list`` and the 10,000-character ``mail_read`` of
``hot_path.py``, a one-message ``mail_list`` (what any listing costs before its rows) and
``tools/list`` (the 0.3 goal: unchanged).

Usage (Linux, valgrind installed; about a minute a server):
  .venv/bin/python bench/hot_path_instructions.py \\
      --baseline-python /path/to/0.2.0-venv/bin/python [--calls 60]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hot_path import META, ROOT, Server, read_target

_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.MULTILINE)


class CountedServer(Server):
    """A ``--demo`` server under callgrind, and its instruction counter."""

    def __init__(self, python: str, cwd: Path, out_dir: str) -> None:
        self.out_dir = out_dir
        wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out_dir}/cg.%p")
        super().__init__(python, cwd, wrapper)

    def tools_list(self) -> None:
        self.ids += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/list",
            "params": {"_meta": META},
        }
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        assert "result" in json.loads(self.process.stdout.readline())

    def _control(self, flag: str) -> None:
        subprocess.run(
            ["callgrind_control", flag, str(self.process.pid)],
            stdout=subprocess.DEVNULL,
            check=True,
        )

    def counted(self, ask: Any, calls: int) -> float:
        """Instructions per call of ``calls`` calls of ``ask()``, after warm-up calls."""
        for _ in range(5):
            ask()
        self._control("-z")
        for _ in range(calls):
            ask()
        before = set(glob.glob(f"{self.out_dir}/cg.{self.process.pid}*"))
        self._control("-d")
        for _ in range(100):  # the idle server (in epoll_wait) writes the dump within a moment
            time.sleep(0.1)
            fresh = set(glob.glob(f"{self.out_dir}/cg.{self.process.pid}*")) - before
            if fresh:
                time.sleep(0.2)  # the file is complete when its totals line is there
                found = _TOTAL.search(Path(max(fresh, key=os.path.getmtime)).read_text())
                if found:
                    return int(found.group(1)) / calls
        raise RuntimeError("callgrind wrote no dump within 10 s")


def measure(python: str, cwd: Path, calls: int) -> dict[str, float]:
    """Instructions per call (millions) of each scenario on one server."""
    with tempfile.TemporaryDirectory() as out_dir:
        server = CountedServer(python, cwd, out_dir)
        try:
            read = read_target(server)
            scenarios: dict[str, Any] = {
                "mail_list (50, compact)": lambda: server.call("mail_list", {"limit": 50}),
                "mail_read (10,000 chars)": lambda: server.call("mail_read", read),
                "mail_list (1, compact)": lambda: server.call("mail_list", {"limit": 1}),
                "tools/list": server.tools_list,
            }
            return {label: server.counted(ask, calls) / 1e6 for label, ask in scenarios.items()}
        finally:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-python", required=True, help="python of a 0.2.0 venv")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as outside:
        old = measure(args.baseline_python, Path(outside), args.calls)
    new = measure(sys.executable, ROOT, args.calls)
    print(f"## user-space instructions per tools/call on --demo ({args.calls} calls each)\n")
    print("| call | 0.2.0 | this checkout | this / 0.2.0 |")
    print("| --- | ---: | ---: | ---: |")
    for label in new:
        ratio = new[label] / old[label]
        print(f"| {label} | {old[label]:.2f} M | {new[label]:.2f} M | {ratio:.2f} |")


if __name__ == "__main__":
    main()
