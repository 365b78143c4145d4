"""``account_status``: who the server reads for, in which mode, under which limits."""

from __future__ import annotations

from typing import Any

from mfconnector.errors import ToolError
from mfconnector.protocol import server_info
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import input_schema
from mfconnector.tools.mailbox import mailbox_of, zone_record

__all__ = ["ACCOUNT_STATUS"]

PROFILE_FIELDS = ("id", "displayName", "mail", "userPrincipalName")
SHOWN_LIMITS = (
    "list_items",
    "body_chars",
    "text_window_bytes",
    "field_chars",
    "list_field_items",
    "result_bytes",
    "graph_body_bytes",
    "line_bytes",
    "batch_read_ids",
    "batch_response_bytes_default",
    "batch_response_bytes_max",
)
"""The limits that shape what the assistant sees (all of them: docs/LIMITS.md)."""

INPUT_SCHEMA = input_schema({})

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"mode": {"enum": ["demo", "fixtures", "live"]}},
    "required": ["mode", "server", "signedIn", "capabilities", "limits"],
}
SHARED_MAIL_SCOPE = "Mail.Read.Shared"


def capabilities(ctx: ToolContext, account: dict[str, Any]) -> dict[str, Any]:
    """What this server and account can read: scopes granted, mailbox, drives, operations."""
    scopes = account.get("scopes")
    granted = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None
    offline = ctx.mode != "live"
    shared = offline or bool(granted and any(s.lower() == "mail.read.shared" for s in granted))
    return {
        "scopes": granted if granted is not None else "not reported",
        "mailbox": ctx.mailbox or "me",
        "sharedMailboxes": shared,
        "otherDrives": ctx.all_files,
        "timeZone": {"name": ctx.time_zone or "unknown", "source": "not read yet"},
        "reads": list(READ_OPERATIONS),
    }


READ_OPERATIONS = (
    "folders by id, well-known name or path",
    "list, triage and thread (mail_list)",
    "search",
    "read one or 1-10 (mail_read), unique_body",
    "attachments: list, text, attached email",
    "compact or detail=full",
    "files: own drive, other drives with --all-files",
)


async def account_status(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    account = await ctx.token_provider.describe()
    result: dict[str, Any] = {
        "mode": ctx.mode,
        "server": server_info(),
        "signedIn": bool(account.get("signedIn")),
        "account": account,
        "allowPartial": ctx.allow_partial,
        "capabilities": capabilities(ctx, account),
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
            mailbox = mailbox_of(ctx, {})
            zone = await zone_record(ctx, mailbox)
            result["capabilities"]["timeZone"] = {"name": zone.zone.name, "source": zone.source}
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
        "Who the connector serves, its mode, whether sign-in works, capabilities (scopes, "
        "time zone, mailboxes, drives) and limits. Call it first, and on any auth problem."
    ),
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    handler=account_status,
)
