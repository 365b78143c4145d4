"""A result's text is written once, while it is built, and the text block sends it as it
is (``success_result``). So the text must say exactly what the result's dict holds, which
``structuredContent`` sends: checked here on the tools' own return values, over the demo's
read tools and views."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from mfconnector.cli import build_parser
from mfconnector.entry.wiring import build_context
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.tools.encoding import Encoded
from mfconnector.tools.mail import mail_list, mail_search

CALLS: list[tuple[Any, dict[str, Any]]] = [
    (mail_list, {"limit": 50}),
    (mail_list, {"limit": 5, "detail": "full"}),
    (mail_list, {"limit": 20, "folder": "junk"}),
    (mail_list, {"limit": 10, "counts": True}),
    (mail_search, {"query": "invoice"}),
    (mail_search, {"query": "budget", "detail": "full"}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=lambda v: str(v))
async def test_an_encoded_result_says_exactly_what_its_dict_holds(
    tool: Any, arguments: dict[str, Any]
) -> None:
    ctx, graph = build_context(build_parser().parse_args(["--demo"]), DEFAULT_LIMITS)
    try:
        with trio.fail_after(30):
            result = await tool(ctx, arguments)
    finally:
        await graph.aclose()
    assert isinstance(result, Encoded)
    assert json.loads(result.text) == dict(result)
    assert result.text == json.dumps(dict(result), ensure_ascii=False, separators=(",", ":"))
