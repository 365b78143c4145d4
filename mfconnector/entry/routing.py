"""Several accounts in one server: every tool takes ``account`` and runs in that account's
context, behind that account's own gates.

With one account nothing here is used, so its tools and ``tools/list`` stay as they were.
With several, each tool's input schema gains one property, ``account`` (an enum of the
configured names; required except for ``account_status``, which lists them all), and each
call runs in the context of the account it names: its Graph client, sign-in and caches,
with the one cursor signer of the server, so a cursor of one account is refused for
another (the cursor scope carries the account's reference tag). References are checked
against the named account by the tools themselves (``mail.refs.parse_reference``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from mfconnector.entry.providers import ServedAccount
from mfconnector.errors import ToolError
from mfconnector.mail.accounts import AccountSet
from mfconnector.tools.base import Handler, Tool, ToolContext
from mfconnector.tools.gated import GATED_TOOLS
from mfconnector.writes.errors import WriteError

__all__ = [
    "UNBOUND_TOOLS",
    "account_contexts",
    "file_gate_errors",
    "routed_tools",
    "with_account_argument",
]

UNBOUND_TOOLS = frozenset({"account_status"})
"""Tools that may leave ``account`` out: they then speak of every account."""

_GATES_OF: Mapping[str, tuple[str, ...]] = {tool.name: names for tool, names in GATED_TOOLS}
_FILE_KEYS = {"writes": "enable_writes", "send": "enable_send", "delete": "enable_delete"}


def account_contexts(main: ToolContext, served: Sequence[ServedAccount]) -> dict[str, ToolContext]:
    """One tool context per account: that account's client, sign-in and read caches, and
    the server's one cursor signer (cursors are bound to the account by their scope)."""
    contexts: dict[str, ToolContext] = {}
    for item in served:
        context = dataclasses.replace(
            main,
            sign_in=item.token_provider,
            user_path=item.user_path,
            mailbox=item.mailbox,
            account_name=item.account.name,
        )
        context.cursors = main.cursors
        contexts[item.account.name] = context
    return contexts


def with_account_argument(tool: Tool, names: Sequence[str]) -> Tool:
    """``tool`` whose input schema takes ``account``, one of ``names``."""
    schema = dict(tool.input_schema)
    schema["properties"] = {
        **schema.get("properties", {}),
        "account": {"enum": list(names)},
    }
    if tool.name not in UNBOUND_TOOLS:
        schema["required"] = [*schema.get("required", []), "account"]
    # keep additionalProperties last, as every schema writes it
    if "additionalProperties" in schema:
        schema["additionalProperties"] = schema.pop("additionalProperties")
    return dataclasses.replace(tool, input_schema=schema)


def _gate_closed(tool: str, account: str, gate: str) -> WriteError:
    return WriteError(
        "gate_disabled",
        f"{tool} is turned off for account {account!r} on this server",
        hint=f"the operator can set {_FILE_KEYS[gate]} = true in the [[account]] table "
        f"named {account!r} of the accounts file and restart the server",
        details={"account": account},
    )


def _routed_handler(
    tool: Tool, accounts: AccountSet, contexts: Mapping[str, ToolContext], main: ToolContext
) -> Handler:
    gates = _GATES_OF.get(tool.name)

    async def handler(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        if tool.name in UNBOUND_TOOLS and "account" not in arguments:
            return await tool.handler(main, arguments)
        account = accounts.choose(arguments)  # refuses a missing or unknown name
        if gates is not None and not any(gate in account.gates for gate in gates):
            raise _gate_closed(tool.name, account.name, gates[0])
        return await tool.handler(contexts[account.name], arguments)

    return handler


def routed_tools(
    tools: Sequence[Tool], main: ToolContext, contexts: Mapping[str, ToolContext]
) -> tuple[Tool, ...]:
    """``tools`` taking ``account`` and running in its context, behind its gates."""
    accounts = main.accounts
    if accounts is None or not accounts.several:
        return tuple(tools)
    names = [account.name for account in accounts]
    return tuple(
        dataclasses.replace(
            with_account_argument(tool, names),
            handler=_routed_handler(tool, accounts, contexts, main),
        )
        for tool in tools
    )


def file_gate_errors(hidden: Mapping[str, ToolError]) -> dict[str, ToolError]:
    """What the hidden acting tools of an accounts-file server answer: their gate is off
    for every account, and the file (not a flag, refused with ``--accounts``) opens it."""
    answers = dict(hidden)
    for name, error in hidden.items():
        if isinstance(error, WriteError) and error.error_code == "gate_disabled":
            key = _FILE_KEYS[_GATES_OF[name][0]]
            answers[name] = WriteError(
                "gate_disabled",
                f"{name} is turned off for every account on this server",
                hint=f"the operator can set {key} = true in an [[account]] table of the "
                "accounts file and restart the server",
            )
    return answers
