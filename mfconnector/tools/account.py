"""``account_status``: who the server reads for, in which mode, under which limits."""

from __future__ import annotations

from typing import Any

from mfconnector.errors import ToolError
from mfconnector.protocol import server_info
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import input_schema

__all__ = ["ACCOUNT_STATUS"]

PROFILE_FIELDS = ("id", "displayName", "mail", "userPrincipalName")
SHOWN_LIMITS = (
    "list_items",
    "body_chars",
    "field_chars",
    "list_field_items",
    "result_bytes",
    "graph_body_bytes",
    "line_bytes",
)
"""The limits that shape what the assistant sees (all of them: docs/LIMITS.md)."""

INPUT_SCHEMA = input_schema({})

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"enum": ["demo", "fixtures", "live"]},
        "server": {"type": "object"},
        "signedIn": {"type": "boolean"},
        "account": {"type": "object"},
        "profile": {"type": "object"},
        "problem": {"type": "object"},
        "allowPartial": {"type": "boolean"},
        "limits": {"type": "object"},
    },
    "required": ["mode", "server", "signedIn", "limits"],
}


async def account_status(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    account = await ctx.token_provider.describe()
    result: dict[str, Any] = {
        "mode": ctx.mode,
        "server": server_info(),
        "signedIn": bool(account.get("signedIn")),
        "account": account,
        "allowPartial": ctx.allow_partial,
        "limits": {name: getattr(ctx.limits, name) for name in SHOWN_LIMITS},
    }
    if ctx.writes is not None:  # which acting switches the operator turned on
        gates = ctx.writes.gates
        result["acting"] = {
            "writes": gates.writes,
            "send": gates.send,
            "delete": gates.delete,
            "stateFile": ctx.writes.store.store.location,
        }
    if result["signedIn"]:
        try:
            graph = await ctx.graph()
            answer = await graph.get_json(
                ctx.user_path, query={"$select": ",".join(PROFILE_FIELDS)}
            )
            body = answer.body if isinstance(answer.body, dict) else {}
            result["profile"] = {
                key: body[key] for key in PROFILE_FIELDS if isinstance(body.get(key), str)
            }
        except ToolError as error:
            result["problem"] = error.to_payload()
    elif "error" in account:
        hint = account.get("hint") or "run `mfconnector login` in a terminal"
        result["problem"] = {"message": str(account["error"]), "hint": str(hint)}
    else:
        result["problem"] = {
            "message": "not signed in",
            "hint": "run `mfconnector login` in a terminal",
        }
    return result


ACCOUNT_STATUS = Tool(
    name="account_status",
    title="Account status",
    description=(
        "Who the connector reads mail and files for, in which mode (demo, fixtures, live), "
        "whether sign-in works, and the limits in force. Call it first when a tool reports "
        "an auth problem."
    ),
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    handler=account_status,
)
