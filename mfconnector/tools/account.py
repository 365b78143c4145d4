"""``account_status``: who the server reads for, in which mode, under which limits."""

from __future__ import annotations

import re
from typing import Any

from mfconnector.errors import ToolError
from mfconnector.mail.accounts import Account
from mfconnector.mail.backend import MailCapabilities, SupportsProfile
from mfconnector.protocol import server_info
from mfconnector.tools.base import Tool, ToolContext
from mfconnector.tools.common import input_schema
from mfconnector.tools.mail_call import zone_choice

__all__ = ["ACCOUNT_STATUS"]

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
    "required": ["mode", "server", "signed_in", "accounts", "limits"],
}
CAPABILITY_FLAGS = (
    "threads",
    "conditional_flags",
    "permanent_delete",
    "move",
    "copy",
    "categories",
    "unique_body",
    "shared_mailboxes",
    "labels",
    "append_sent",
)
READ_OPERATIONS = (
    "folders by reference, role, name or path",
    "list, triage and thread (mail_list)",
    "search",
    "read one or 1-10 (mail_read), unique_body",
    "attachments: list, text, attached email",
    "compact or detail=full",
    "files: own drive, other drives with --all-files",
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_keys(value: Any) -> Any:
    """The sign-in facts in the server's one key style (``signedIn`` -> ``signed_in``)."""
    if isinstance(value, dict):
        return {_CAMEL.sub("_", str(k)).lower(): snake_keys(v) for k, v in value.items()}
    return value


def capabilities_of(capabilities: MailCapabilities) -> dict[str, Any]:
    """What this account's provider can do, as the tools offer it."""
    out: dict[str, Any] = {"search_syntax": capabilities.search_syntax}
    out.update({name: getattr(capabilities, name) for name in CAPABILITY_FLAGS})
    if capabilities.missing:
        out["missing"] = {name: why for name, why in capabilities.missing}
    return out


def account_record(ctx: ToolContext, account: Account) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": account.name,
        "provider": account.provider,
        "tag": account.tag.tag,
        "capabilities": capabilities_of(account.mail.capabilities),
        "files": account.files is not None,
    }
    if account.settings:
        record["settings"] = dict(account.settings)
    if account.gates:
        record["gates"] = sorted(account.gates)
    return record


def server_capabilities(ctx: ToolContext, sign_in: dict[str, Any]) -> dict[str, Any]:
    """What this server and its sign-in can read: scopes granted, mailbox, drives, operations."""
    scopes = sign_in.get("scopes")
    granted = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None
    offline = ctx.mode != "live"
    shared = offline or bool(granted and any(s.lower() == "mail.read.shared" for s in granted))
    reads = list(READ_OPERATIONS)
    files = True
    if ctx.accounts is not None:  # what the accounts' backends can do, not Graph's list
        accounts = [account_record(ctx, a) for a in ctx.accounts]
        shared = shared and any(a["capabilities"]["shared_mailboxes"] for a in accounts)
        files = any(a["files"] for a in accounts)
        if not files:
            reads = [r for r in reads if not r.startswith("files:")]
        if not any(a["capabilities"]["unique_body"] for a in accounts):
            reads = [r.replace(", unique_body", "") for r in reads]
    return {
        "scopes": granted if granted is not None else "not reported",
        "mailbox": ctx.mailbox or "me",
        "shared_mailboxes": shared,
        "other_drives": any(
            a.files is not None and a.files.capabilities.other_drives for a in ctx.accounts or ()
        ),
        "time_zone": {"name": ctx.time_zone or "unknown", "source": "not read yet"},
        "reads": reads,
    }


async def account_status(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    sign_in = snake_keys(await ctx.sign_in.describe())
    accounts = list(ctx.accounts) if ctx.accounts is not None else []
    result: dict[str, Any] = {
        "mode": ctx.mode,
        "server": server_info(),
        "signed_in": bool(sign_in.get("signed_in")),
        "account": sign_in,
        "accounts": [account_record(ctx, a) for a in accounts],
        "allow_partial": ctx.allow_partial,
        "capabilities": server_capabilities(ctx, sign_in),
        "limits": {name: getattr(ctx.limits, name) for name in SHOWN_LIMITS},
    }
    if ctx.writes is not None:  # which acting switches the operator turned on
        gates = ctx.writes.gates
        result["acting"] = {
            "writes": gates.writes,
            "send": gates.send,
            "delete": gates.delete,
            "state_file": ctx.writes.store.store.location,
        }
    if result["signed_in"] and accounts:
        try:
            backend = accounts[0].mail
            if ctx.mailbox and ctx.mailbox.lower() != "me":
                backend = backend.for_mailbox(ctx.mailbox)
            zone = await zone_choice(ctx, backend)
            result["capabilities"]["time_zone"] = {"name": zone.zone.name, "source": zone.source}
            if isinstance(accounts[0].mail, SupportsProfile):
                result["profile"] = await accounts[0].mail.profile()
        except ToolError as error:
            result["problem"] = error.to_payload()
    elif "error" in sign_in:
        hint = sign_in.get("hint") or "run `mfconnector login` in a terminal"
        result["problem"] = {"message": str(sign_in["error"]), "hint": str(hint)}
    elif not result["signed_in"]:
        result["problem"] = {
            "message": "not signed in",
            "hint": "run `mfconnector login` in a terminal",
        }
    return result


ACCOUNT_STATUS = Tool(
    name="account_status",
    title="Account status",
    description=(
        "Who the connector serves: accounts (provider, capabilities), mode, sign-in, time "
        "zone, mailboxes, drives, limits. Call it first, and on any auth problem."
    ),
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    handler=account_status,
)
