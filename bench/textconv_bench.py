"""HTML-to-text converters on the demo's mail bodies and on hostile markup: quality, time, growth.

    .venv/bin/python bench/textconv_bench.py            # after: pip install inscriptis html2text
    .venv/bin/python bench/textconv_bench.py --converters mfconnector,selectolax

Converters: ``mfconnector`` (mfconnector.textconv since 0.3: one streaming pass with the
HTML5 tokenizer's rules and no tree), ``stdlib`` (0.1's HTMLParser with a linear pre-pass,
bench/textconv_stdlib.py), and, when installed, ``selectolax`` (lexbor's HTML5 tree
builder, which 0.2 used, here with its own ``text()``), ``inscriptis`` (lxml,
layout-aware, links shown) and ``html2text`` (stdlib HTMLParser, Markdown out). For the
whole server on the issue 16 reproduction, against 0.2.0, see bench/hostile_bench.py.

Quality, on the HTML bodies of the 0.1 demo recording (fixtures/canned.json) and Graph's
"Get message" HTML sample: how many http(s) link targets the text keeps, whether a data
table keeps each row on one line with its cells apart, whether CSS or script text leaks,
and the output size. Speed: median of five conversions of all those bodies.

Hostile markup at 0.5, 1 and 2 MB (a mail body may be up to 2 MB): each conversion runs in
a fresh child process, under a 20 s limit, reporting its time (best of two when under
5 s), its peak RSS growth and how many characters of text came out; "x2" is
time(2 MB) / time(1 MB): about 2 when linear, 4 when quadratic.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

SIZES = (500_000, 1_000_000, 2_000_000)
CHILD_SECONDS = 20
RUNS = 5

HOSTILE: dict[str, Callable[[int], str]] = {
    "deep nesting <div>": lambda n: "<div>" * (n // 11) + "deep" + "</div>" * (n // 11),
    "1 MB of <": lambda n: "<" * n,
    "unclosed <a<a<a": lambda n: "<a" * (n // 2),
    "unclosed <b><i><u>": lambda n: "<b><i><u>x" * (n // 10),
    "many attributes": lambda n: "<p " + 'a="1" ' * (n // 6) + ">text</p>",
    "unclosed comments": lambda n: "<!--" * (n // 4),
    "unclosed quotes": lambda n: '<a b="' * (n // 6),
    "unclosed CDATA": lambda n: "<![CDATA[>" * (n // 10),
    "conditional comments": lambda n: "<![if x>" * (n // 8),
    "nested tables": lambda n: "<table><tr><td>" * (n // 15) + "cell",
    "255 deep, then <div>s": lambda n: "<div>" * 255 + "<div>x</div>" * ((n - 1275) // 12),
    "long text, one <p>": lambda n: "<p>" + "word " * (n // 5) + "</p>",
    "250 <b id=N>, then <p>x": lambda n: (
        "<div>" + "".join(f"<b id={i}>" for i in range(250)) + "</div>" + "<p>x" * (n // 4)
    ),
}

DATA_TABLE = (
    "<table><tr><th>Region</th><th>Q1</th><th>Q2</th></tr>"
    "<tr><td>North</td><td>1,200</td><td>1,350</td></tr>"
    "<tr><td>South</td><td>980</td><td>1,010</td></tr></table>"
)
TABLE_ROWS = ("North", "1,200", "1,350"), ("South", "980", "1,010")


def converters() -> dict[str, Callable[[str], str]]:
    from textconv_stdlib import html_to_text as stdlib

    from mfconnector.textconv import html_to_text as streaming

    found: dict[str, Callable[[str], str]] = {"mfconnector": streaming, "stdlib": stdlib}
    try:
        from selectolax.lexbor import LexborHTMLParser

        def lexbor(markup: str) -> str:
            tree = LexborHTMLParser(markup)
            return str(tree.body.text(separator=" ") if tree.body is not None else "")

        found["selectolax"] = lexbor
    except ImportError:
        pass
    try:
        from inscriptis import get_text
        from inscriptis.model.config import ParserConfig

        config = ParserConfig(display_links=True)
        found["inscriptis"] = lambda markup: get_text(markup, config)
    except ImportError:
        pass
    try:
        import html2text

        def h2t(markup: str) -> str:
            converter = html2text.HTML2Text()
            converter.body_width = 0
            return str(converter.handle(markup))

        found["html2text"] = h2t
    except ImportError:
        pass
    return found


def demo_bodies() -> list[str]:
    doc = json.loads((ROOT / "fixtures" / "canned.json").read_text(encoding="utf-8"))
    bodies: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            body = value.get("body")
            if isinstance(body, dict) and str(body.get("contentType", "")).lower() == "html":
                bodies.append(str(body.get("content", "")))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(doc)
    try:
        from tests.support.shared_paths import GRAPH_SAMPLES

        sample = json.loads((GRAPH_SAMPLES / "message-get-html.json").read_text())
        bodies.append(sample["body"]["content"])
    except (ImportError, FileNotFoundError, OSError):
        pass
    return sorted(set(bodies), key=len)


def quality(name: str, convert: Callable[[str], str], bodies: list[str]) -> dict[str, Any]:
    links = kept = 0
    leaked = 0
    out_chars = 0
    for body in bodies:
        text = convert(body)
        out_chars += len(text)
        targets = set(re.findall(r'href="(https?://[^"]+)"', body))
        links += len(targets)
        kept += sum(1 for url in targets if url.replace("&amp;", "&") in text)
        leaked += int("font-family" in text or "text-align" in text)
    table = convert(DATA_TABLE)
    lines = table.splitlines()
    rows_ok = all(
        any(re.search(r"\W+".join(map(re.escape, row)), line) for line in lines)
        for row in TABLE_ROWS
    )
    samples = [convert(body) for body in bodies[:2]]
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        for body in bodies:
            convert(body)
        times.append(time.perf_counter() - started)
    return {
        "name": name,
        "links": f"{kept}/{links}",
        "table rows on one line": rows_ok,
        "css/script leaked": leaked,
        "output chars": out_chars,
        "demo ms": round(statistics.median(times) * 1000, 2),
        "table": table,
        "samples": samples,
    }


def child(name: str, pattern: str, size: int) -> None:
    """In a fresh process: convert one hostile input once, print seconds and RSS growth."""
    convert = converters()[name]
    markup = HOSTILE[pattern](size)
    convert("<p>warm</p>")
    before = _rss_kib()
    _clear_peak()
    started = time.perf_counter()
    text = convert(markup)
    seconds = time.perf_counter() - started
    if seconds < 5:  # a shared machine is noisy: the best of two runs
        started = time.perf_counter()
        convert(markup)
        seconds = min(seconds, time.perf_counter() - started)
    grew = max(0, _peak_kib() - before)
    print(json.dumps({"seconds": seconds, "peak_mb": grew / 1024, "chars": len(text)}))


def _rss_kib() -> int:
    return _status_kib("VmRSS")


def _peak_kib() -> int:
    return _status_kib("VmHWM")


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _clear_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def run_child(name: str, pattern: str, size: int) -> dict[str, Any] | None:
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, pattern, str(size)],
            capture_output=True,
            text=True,
            timeout=CHILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1][:80]}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    found = converters()
    if "--converters" in sys.argv:  # e.g. --converters mfconnector,selectolax
        wanted = sys.argv[sys.argv.index("--converters") + 1].split(",")
        found = {name: convert for name, convert in found.items() if name in wanted}
    bodies = demo_bodies()
    print(f"# textconv bench — Python {platform.python_version()}, {os.cpu_count()} CPUs")
    chars = sum(map(len, bodies))
    print(f"{len(bodies)} HTML bodies ({chars:,} chars): fixtures/canned.json + sample")
    print()
    print("| converter | links kept | table rows | CSS leaked | output chars | all bodies (ms) |")
    print("|---|---|---|---|---|---|")
    reports = [quality(name, convert, bodies) for name, convert in found.items()]
    for r in reports:
        print(
            f"| {r['name']} | {r['links']} | {'yes' if r['table rows on one line'] else 'no'} "
            f"| {r['css/script leaked']} | {r['output chars']:,} | {r['demo ms']} |"
        )
    print()
    for r in reports:
        print(f"{r['name']} renders the data table as: {r['table']!r}")
    print()
    header = " | ".join(f"{size / 1e6:g} MB" for size in SIZES)
    print(f"| hostile input | converter | {header} | x2 | RSS growth, 2 MB | text chars, 2 MB |")
    print("|---|---|" + "---|" * len(SIZES) + "---|---|---|")
    for pattern in HOSTILE:
        for name in found:
            cells, seconds = [], []
            last: dict[str, Any] | None = None
            for size in SIZES:
                if seconds and seconds[-1] is None:
                    cells.append("skipped")
                    seconds.append(None)
                    continue
                last = run_child(name, pattern, size)
                if last is None:
                    cells.append(f"> {CHILD_SECONDS} s")
                    seconds.append(None)
                elif "error" in last:
                    cells.append("error: " + last["error"])
                    seconds.append(None)
                else:
                    cells.append(f"{last['seconds'] * 1000:,.0f} ms")
                    seconds.append(last["seconds"])
            ratio = (
                f"{seconds[-1] / seconds[-2]:.1f}"
                if seconds[-1] and seconds[-2] and seconds[-2] > 0.005
                else "-"
            )
            done = last is not None and "peak_mb" in last and seconds[-1] is not None
            peak = f"{last['peak_mb']:.0f} MB" if done and last else "-"
            chars = f"{last['chars']:,}" if done and last else "-"
            print(f"| {pattern} | {name} | {' | '.join(cells)} | {ratio} | {peak} | {chars} |")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
