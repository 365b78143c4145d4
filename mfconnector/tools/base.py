"""What a tool is, what it gets to work with, and how its answer becomes a CallToolResult.

A tool's input schema is a template: where it names a limit (``ActiveLimit("list_items")``)
the published schema, and the validator that enforces it, carry the value of the limits
the server runs with, so ``tools/list`` never promises more or less than is enforced.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mfconnector.errors import ToolError
from mfconnector.jsonrpc import encode_json
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.failures import Unsupported
from mfconnector.tools.cursors import CursorSigner
from mfconnector.tools.encoding import Encoded
from mfconnector.tools.progress import report_progress
from mfconnector.tools.state import ReadState

if TYPE_CHECKING:
    from mfconnector.mail.accounts import Account, AccountSet
    from mfconnector.mail.backend import FilesBackend, MailBackend
    from mfconnector.writes.setup import WriteSetup

__all__ = [
    "READ_ONLY",
    "ActiveLimit",
    "SignInFacts",
    "Tool",
    "ToolContext",
    "error_result",
    "resolve_limits",
    "success_result",
    "wire_bytes",
]

READ_ONLY: dict[str, Any] = {"readOnlyHint": True}
"""All a read tool needs to say: MCP reads destructiveHint and idempotentHint only when
readOnlyHint is false, and openWorldHint defaults to true. Every byte here is paid on
every tools/list, once per tool."""


class SignInFacts(Protocol):
    """What the tools may learn of the sign-in: who and how (``account_status``, the audit
    record), never a token. Requests go through the account's backends."""

    async def describe(self) -> dict[str, Any]: ...


@dataclass
class ToolContext:
    """Everything a handler may use. Built once by the CLI; handlers never see stdio."""

    limits: Limits
    mode: str
    allow_partial: bool
    sign_in: SignInFacts
    user_path: str = "/me"
    source: str | None = None
    writes: WriteSetup | None = None
    """Gates, state store and caches of the acting tools; None when every gate is off."""
    mailbox: str | None = None
    """``--mailbox``: the shared or delegated mailbox read when a call names none."""
    time_zone: str | None = None
    """``--time-zone``: shown and filtered in this zone instead of the mailbox's own."""
    accounts: AccountSet | None = None
    """The accounts this server serves, each a provider backend (built by the wiring)."""
    per_account: dict[str, ToolContext] = field(default_factory=dict)
    """Several accounts: the context each account's calls run in (``entry.routing``)."""
    account_name: str | None = None
    """Several accounts: the account this context runs calls for (bound into cursors)."""
    state: ReadState = field(init=False)
    """Time zones, folder names and ids learnt once, bounded by ``limits``."""
    cursors: CursorSigner = field(init=False)
    """Issues and redeems this process's signed continuation cursors."""

    def __post_init__(self) -> None:
        self.cursors = CursorSigner(max_chars=self.limits.cursor_chars)
        self.state = ReadState(self.limits)

    def account(self, arguments: dict[str, Any]) -> Account:
        """The account a call names (``account``), or the only one."""
        if self.accounts is None:
            raise RuntimeError("this server was built without accounts")
        return self.accounts.choose(arguments)

    def mail(self, arguments: dict[str, Any]) -> MailBackend:
        """The mailbox a call means: its account's, or another (``mailbox``) where the
        provider has shared mailboxes."""
        backend = self.account(arguments).mail
        mailbox = arguments.get("mailbox") or self.mailbox
        return backend.for_mailbox(mailbox) if mailbox else backend

    def files(self, arguments: dict[str, Any]) -> FilesBackend:
        """The call's account's files; ``unsupported`` for an account without them."""
        account = self.account(arguments)
        if account.files is None:
            raise Unsupported(
                f"account {account.name!r} ({account.provider}) has no files",
                hint="the files tools read Microsoft 365 accounts (OneDrive, SharePoint)",
            )
        return account.files

    @staticmethod
    def report_progress(
        done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """How far this call's work is (``notifications/progress`` when the client asked)."""
        report_progress(done, total, message)


@dataclass(frozen=True, slots=True)
class ActiveLimit:
    """A value in a schema template taken from the running server's ``Limits.<name>``."""

    name: str


def resolve_limits(template: Any, limits: Limits) -> Any:
    """``template`` with every ``ActiveLimit`` replaced by the value of ``limits``."""
    if isinstance(template, ActiveLimit):
        return getattr(limits, template.name)
    if isinstance(template, dict):
        return {key: resolve_limits(value, limits) for key, value in template.items()}
    if isinstance(template, list):
        return [resolve_limits(value, limits) for value in template]
    return template


Description = str | Callable[[Limits], str]


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    """One read-only tool: its published contract and the handler that fulfils it."""

    name: str
    title: str
    description: Description
    """Text, or text written from the active limits (``lambda limits: f"..."``)."""
    input_schema: dict[str, Any]
    """A template: ``ActiveLimit`` values are filled in by ``input_schema_for``."""
    output_schema: dict[str, Any] | None
    handler: Handler
    annotations: dict[str, Any] = field(default_factory=lambda: dict(READ_ONLY))

    def input_schema_for(self, limits: Limits) -> dict[str, Any]:
        """The input schema published and enforced under ``limits``."""
        schema: dict[str, Any] = resolve_limits(self.input_schema, limits)
        return schema

    def definition(self, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
        """The ``Tool`` object of ``tools/list`` under ``limits``; the same in every era."""
        description = self.description
        definition = {
            "name": self.name,
            "title": self.title,
            "description": description if isinstance(description, str) else description(limits),
            "inputSchema": self.input_schema_for(limits),
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        }
        if self.output_schema is None:
            del definition["outputSchema"]
        return definition


def _text(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def wire_bytes(payload: Any) -> int:
    """What ``payload`` costs in a reply: as structured content and again as its text copy.

    Both are ASCII-escaped on the wire; the copy is a JSON string, so its quotes and
    backslashes are escaped once more (a subject of 1,000 quotes costs 2,000 bytes there).
    """
    return len(encode_json(payload)) + len(encode_json(_text(payload)))


def success_result(structured: dict[str, Any], *, allow_partial: bool) -> dict[str, Any]:
    """Structured data twice (object and JSON text); incomplete data is an error unless allowed.

    A result the tool already encoded (``Encoded``) sends the text it was built with.
    """
    text = structured.text if isinstance(structured, Encoded) else _text(structured)
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
    }
    if structured.get("incomplete") is True:
        result["isError"] = not allow_partial
    else:
        result["isError"] = False
    return result


def error_result(error: ToolError) -> dict[str, Any]:
    """A failure the assistant can act on: what happened and what to do, no structured data."""
    return {
        "content": [{"type": "text", "text": _text({"error": error.to_payload()})}],
        "isError": True,
    }
