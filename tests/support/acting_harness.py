"""Test support for the acting tools: a scripted mailbox on the loopback Graph, and a
session of the real server stack with gates, a state store and a token that names its
scopes (the token provider is the only fake: it is the seam)."""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from mfconnector.graph.client import GraphClient
from mfconnector.graph.mail_backend import GraphMailBackend, graph_account
from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.accounts import AccountSet
from mfconnector.mail.backend import MailCapabilities
from mfconnector.mail.refs import account_tag
from mfconnector.tools.base import ToolContext
from mfconnector.tools.gated import hidden_tools, listed_tools
from mfconnector.writes.gates import Gates
from mfconnector.writes.setup import WriteSetup
from mfconnector.writes.store import AsyncSendStore, SendStore
from tests.support.harness import MODERN, open_session, request
from tests.support.loopback import LoopbackServer, RecordedRequest, Reply
from tests.support.mcp_schemas import assert_valid

FAST = dataclasses.replace(
    DEFAULT_LIMITS,
    graph_request_seconds=10.0,
    graph_connect_timeout_seconds=5.0,
    graph_read_timeout_seconds=5.0,
    graph_retry_after_max_seconds=0.5,
    graph_retry_total_seconds=1.0,
)
ALL_GATES = Gates(writes=True, send=True, delete=True)
ACCOUNT = "adele@contoso.com"
ALL_SCOPES = ("User.Read", "Mail.Read", "Files.Read", "Mail.ReadWrite", "Mail.Send")
TEST_SECONDS = 30
DRAFTS_FOLDER = "AAMkAGDraftsFolder" + "Dr" * 40 + "AAA="
DELETED_FOLDER = "AAMkAGDeletedItems" + "De" * 40 + "AAA="
SENT_FOLDER = "AAMkAGSentItemsFld" + "Se" * 40 + "AAA="
_counter = itertools.count()
ACCOUNT_NAME = "default"
TAG = account_tag("graph", ACCOUNT_NAME).tag
"""The reference tag of the one account the acting sessions (and the CLI) serve."""


def ref(native: str) -> str:
    """A Graph id as this server hands it out: an exact reference of the account."""
    return f"{TAG}.{native}"


def native(reference: str) -> str:
    """The Graph id inside a reference this server handed out."""
    assert reference.startswith(f"{TAG}."), reference
    return reference[len(TAG) + 1 :]


class LimitedBackend(GraphMailBackend):
    """Graph with fewer capabilities, standing in for a provider that cannot do everything
    (a fake at the seam: what the tools may ask of a backend is its capabilities)."""

    limited: MailCapabilities | None = None

    @property
    def capabilities(self) -> MailCapabilities:
        return self.limited or super().capabilities


def accounts_for(
    graph: Callable[[], Any],
    limits: Limits,
    cloud: str = "global",
    capabilities: MailCapabilities | None = None,
) -> AccountSet:
    """The one Graph account of a test session, as the CLI's wiring builds it (with
    ``capabilities``: a backend that can do only those)."""
    account = graph_account(ACCOUNT_NAME, graph, limits, cloud=cloud)
    if capabilities is not None:
        backend = LimitedBackend(tag=account.tag, client=graph, limits=limits, cloud=cloud)
        backend.limited = capabilities
        account = dataclasses.replace(account, mail=backend)
    return AccountSet([account])


def outlook_id(label: str) -> str:
    """An id of real immutable-id length (Outlook's are ~150 characters)."""
    core = f"AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A{label}".replace(" ", "-")
    return (core + "Bg" * 60)[:148] + "AA="


class ScopedTokens:
    """A signed-in account whose token reports its scopes, as msal's facts do."""

    def __init__(self, scopes: tuple[str, ...] = ALL_SCOPES, account: str = ACCOUNT) -> None:
        self.scopes = scopes
        self.account = account

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        return "t"

    async def describe(self) -> dict[str, Any]:
        return {
            "signedIn": True,
            "account": self.account,
            "scopes": list(self.scopes),
            "mode": "delegated",
        }


@dataclasses.dataclass
class Draft:
    id: str
    subject: str = "Quarterly numbers"
    body: dict[str, str] = dataclasses.field(
        default_factory=lambda: {"contentType": "html", "content": "<p>Hi Megan</p>"}
    )
    to: list[str] = dataclasses.field(default_factory=lambda: ["megan@contoso.com"])
    cc: list[str] = dataclasses.field(default_factory=list)
    bcc: list[str] = dataclasses.field(default_factory=list)
    attachments: list[tuple[str, str, bytes]] = dataclasses.field(default_factory=list)
    is_draft: bool = True
    folder: str = DRAFTS_FOLDER
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Further Graph properties as read (importance, categories, receipts, ...)."""

    def json(self) -> dict[str, Any]:
        def people(addresses: list[str]) -> list[dict[str, Any]]:
            return [{"emailAddress": {"name": a.split("@")[0], "address": a}} for a in addresses]

        return {
            "id": self.id,
            "isDraft": self.is_draft,
            "subject": self.subject,
            "body": dict(self.body),
            "from": None,
            "toRecipients": people(self.to),
            "ccRecipients": people(self.cc),
            "bccRecipients": people(self.bcc),
            "replyTo": [],
            "changeKey": "CQAAABYAAAD",
            "parentFolderId": self.folder,
            **self.extra,
        }


class ScriptedMailbox:
    """Drafts on the loopback Graph: read, attachments, createReply, send into Sent Items.

    ``send_replies`` scripts the answers to send requests (default 202). Every draft's
    content at the moment of each send request is kept in ``sent`` for the checks.
    ``files_sent``: a 202 also moves the draft into Sent Items as Graph does (same immutable
    id, ``isDraft`` false), so a later read of it is no longer a draft's.
    """

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.drafts: dict[str, Draft] = {}
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.in_sent_items: set[str] = set()
        self.send_reply: Callable[[RecordedRequest], Reply] | None = None
        self.files_sent = False
        self.attach_reply: Callable[[int], Reply | None] | None = None
        """Given the 1-based count of attachment uploads, a Reply that replaces success."""
        self._attached = 0
        self.uploading: dict[str, tuple[str, str, int, bytearray]] = {}
        self._lock = threading.Lock()
        server.route("GET", "/v1.0/me", Reply.json({"displayName": "Adele Vance", "mail": ACCOUNT}))
        server.route("POST", "/v1.0/me/messages", self._create)
        server.route("GET", "/v1.0/me/mailFolders/drafts", Reply.json({"id": DRAFTS_FOLDER}))

    def add(self, draft: Draft) -> Draft:
        base = f"/v1.0/me/messages/{draft.id}"
        self.drafts[draft.id] = draft
        route = self.server.route
        route("GET", base, lambda r: self._read(draft.id))
        route("GET", f"{base}/attachments", lambda r: self._attachments(draft.id))
        for index in range(20):
            route(
                "GET",
                f"{base}/attachments/att{index}/$value",
                lambda r, i=index: self._attachment(draft.id, i),
            )
            route("DELETE", f"{base}/attachments/att{index}", lambda r: self._detach(draft.id))
        route("POST", f"{base}/attachments", lambda r: self._attach(draft.id, r))
        route(
            "POST",
            f"{base}/attachments/createUploadSession",
            lambda r: self._upload_session(draft.id, r),
        )
        route("PUT", f"/upload/{draft.id}", lambda r: self._upload_chunk(draft.id, r))
        route("POST", f"{base}/send", lambda r: self._send(draft.id, r))
        route("POST", f"{base}/copy", lambda r: self._copy(draft.id))
        route("POST", f"{base}/move", lambda r: self._move(draft.id, r))
        route("PATCH", base, lambda r: self._patch(draft.id, r))
        route(
            "GET",
            f"/v1.0/me/mailFolders/sentitems/messages/{draft.id}",
            lambda r: (
                Reply.json({"id": draft.id})
                if draft.id in self.in_sent_items
                else Reply.json({"error": {"code": "ErrorItemNotFound", "message": "x"}}, 404)
            ),
        )
        return draft

    def add_source(self, message_id: str, sender: str, to: list[str], cc: list[str]) -> None:
        """A received message that createReply / createReplyAll / createForward answer."""
        base = f"/v1.0/me/messages/{message_id}"

        def respond(kind: str) -> Callable[[RecordedRequest], Reply]:
            def answer(recorded: RecordedRequest) -> Reply:
                doc = json.loads(recorded.body or b"{}")
                overrides = doc.get("message", {})

                def addresses(key: str, default: list[str]) -> list[str]:
                    if key in overrides:
                        return [r["emailAddress"]["address"] for r in overrides[key]]
                    return default

                derived_to = {"reply": [sender], "reply_all": [sender, *to], "forward": []}[kind]
                draft = Draft(
                    id=outlook_id(f"{kind}{next(_counter)}"),
                    subject=("FW: " if kind == "forward" else "RE: ") + "Budget",
                    body={
                        "contentType": "html",
                        "content": f"<p>{doc.get('comment', '')}</p><hr><p>original</p>",
                    },
                    to=addresses("toRecipients", derived_to),
                    cc=addresses("ccRecipients", cc if kind == "reply_all" else []),
                    bcc=addresses("bccRecipients", []),
                )
                self.add(draft)
                return Reply.json(draft.json(), 201)

            return answer

        for kind, endpoint in (
            ("reply", "createReply"),
            ("reply_all", "createReplyAll"),
            ("forward", "createForward"),
        ):
            self.server.route("POST", f"{base}/{endpoint}", respond(kind))

    def _copy(self, draft_id: str) -> Reply:
        source = self.drafts[draft_id]
        copy = dataclasses.replace(
            source,
            id=outlook_id(f"copy{next(_counter)}"),
            body=dict(source.body),
            to=list(source.to),
            cc=list(source.cc),
            bcc=list(source.bcc),
            attachments=list(source.attachments),
        )
        self.add(copy)
        return Reply.json(copy.json(), 201)

    def _move(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        draft = self.drafts[draft_id]
        destination = json.loads(recorded.body)["destinationId"]
        draft.folder = {"deleteditems": DELETED_FOLDER, "drafts": DRAFTS_FOLDER}.get(
            destination, destination
        )
        return Reply.json(draft.json(), 201)

    def _patch(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        draft = self.drafts[draft_id]
        doc = json.loads(recorded.body)
        for key, attribute in (
            ("toRecipients", "to"),
            ("ccRecipients", "cc"),
            ("bccRecipients", "bcc"),
        ):
            if key in doc:
                setattr(draft, attribute, [r["emailAddress"]["address"] for r in doc[key]])
        draft.subject = doc.get("subject", draft.subject)
        draft.body = doc.get("body", draft.body)
        return Reply.json(draft.json())

    def _read(self, draft_id: str) -> Reply:
        return Reply.json(self.drafts[draft_id].json())

    def _attachments(self, draft_id: str) -> Reply:
        items = [
            {
                "@odata.type": "#microsoft.graph.fileAttachment",
                "id": f"att{index}",
                "name": name,
                "contentType": content_type,
                "size": len(data) + 200,
                "isInline": False,
            }
            for index, (name, content_type, data) in enumerate(self.drafts[draft_id].attachments)
        ]
        return Reply.json({"value": items})

    def _detach(self, draft_id: str) -> Reply:
        """Remove one attachment. Ids are positions at listing time and revise_draft deletes
        every listed one in order, so each DELETE removes the first that remains."""
        del self.drafts[draft_id].attachments[0]
        return Reply(204, (), b"")

    def _attachment(self, draft_id: str, index: int) -> Reply:
        _, content_type, data = self.drafts[draft_id].attachments[index]
        return Reply(200, (("Content-Type", content_type),), data)

    def _create(self, recorded: RecordedRequest) -> Reply:
        doc = json.loads(recorded.body)
        draft = Draft(
            id=outlook_id(f"created{next(_counter)}"),
            subject=doc.get("subject", ""),
            body=doc.get("body", {"contentType": "text", "content": ""}),
            to=[r["emailAddress"]["address"] for r in doc.get("toRecipients", [])],
            cc=[r["emailAddress"]["address"] for r in doc.get("ccRecipients", [])],
            bcc=[r["emailAddress"]["address"] for r in doc.get("bccRecipients", [])],
        )
        self.add(draft)
        return Reply.json(draft.json(), 201)

    def _attach(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        self._attached += 1
        scripted = self.attach_reply(self._attached) if self.attach_reply else None
        if scripted is not None:
            return scripted
        doc = json.loads(recorded.body)
        data = base64.b64decode(doc["contentBytes"])
        self.drafts[draft_id].attachments.append((doc["name"], doc["contentType"], data))
        return Reply.json({"id": f"att{len(self.drafts[draft_id].attachments) - 1}"}, 201)

    def _upload_session(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        """Outlook's upload session: the pre-authenticated URL is on this same server."""
        item = json.loads(recorded.body)["AttachmentItem"]
        self.uploading[draft_id] = (item["name"], item["contentType"], item["size"], bytearray())
        url = f"{self.server.url}/upload/{draft_id}?authtoken=UPLOAD-SECRET"
        return Reply.json({"uploadUrl": url, "nextExpectedRanges": ["0-"]}, 201)

    def _upload_chunk(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        name, content_type, size, data = self.uploading[draft_id]
        first, last, total = map(
            int,
            re.fullmatch(
                r"bytes (\d+)-(\d+)/(\d+)", recorded.header("content-range") or ""
            ).groups(),  # type: ignore[union-attr]
        )
        if (
            recorded.header("authorization")
            or first != len(data)
            or total != size
            or len(recorded.body) != last - first + 1
        ):
            return Reply.json({"error": {"code": "InvalidRange", "message": "x"}}, 416)
        data += recorded.body
        if len(data) < size:
            return Reply.json({"nextExpectedRanges": [f"{len(data)}-"]}, 200)
        self.drafts[draft_id].attachments.append((name, content_type, bytes(data)))
        return Reply(201, (("Location", f"{self.server.url}/attachments/x"),), b"")

    def _send(self, draft_id: str, recorded: RecordedRequest) -> Reply:
        with self._lock:
            self.sent.append((draft_id, self.drafts[draft_id].json()))
        if self.send_reply is not None:
            return self.send_reply(recorded)
        self.file_in_sent_items(draft_id)
        return Reply(202, (), b"")

    def file_in_sent_items(self, draft_id: str) -> None:
        """What Graph does once it accepted a send."""
        with self._lock:
            self.in_sent_items.add(draft_id)
            if self.files_sent:
                draft = self.drafts[draft_id]
                draft.is_draft, draft.folder = False, SENT_FOLDER

    def sends(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if r.method == "POST" and r.path.endswith("/send")]


class Caller:
    """Calls tools through the real server stack and checks the result's MCP shape."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._ids = 0

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        await self.session.send(
            request(self._ids, "tools/call", {"name": name, "arguments": arguments})
        )
        reply = await self.session.receive(timeout=TEST_SECONDS)
        assert_valid(MODERN, "CallToolResultResponse", reply)
        result: dict[str, Any] = reply["result"]
        assert len(result["content"]) == 1
        if "structuredContent" in result:
            assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        return result

    async def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert result["isError"] is False, result["content"][0]["text"]
        data: dict[str, Any] = result["structuredContent"]
        return data

    async def data(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Structured content, complete or not (a cut list is ``isError`` by contract)."""
        result = await self.call(name, arguments)
        assert "structuredContent" in result, result["content"][0]["text"]
        data: dict[str, Any] = result["structuredContent"]
        return data

    async def fail(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(name, arguments)
        assert result["isError"] is True and "structuredContent" not in result, result
        error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
        assert isinstance(error["error_code"], str) and isinstance(error["retry_safe"], bool)
        return error


@asynccontextmanager
async def acting_session(
    server: LoopbackServer,
    *,
    gates: Gates = ALL_GATES,
    store: SendStore | None = None,
    tokens: Any = None,
    clock: Callable[[], float] = time.time,
    cloud: str = "global",
    limits: Limits = FAST,
    confirm: str = "auto",
    capabilities: MailCapabilities | None = None,
) -> AsyncIterator[Caller]:
    tokens = tokens or ScopedTokens()
    client = GraphClient(root=f"{server.url}/v1.0", token_provider=tokens, limits=limits)
    send_store = store or SendStore(None, limits=limits, clock=clock)
    setup = WriteSetup(gates, AsyncSendStore(send_store), cloud=cloud, clock=clock, confirm=confirm)

    async def graph() -> GraphClient:
        return client

    accounts = accounts_for(graph, limits, cloud, capabilities)
    offered = [account.mail.capabilities for account in accounts]
    context = ToolContext(
        limits=limits,
        mode="live",
        allow_partial=False,
        sign_in=tokens,
        writes=setup if gates.any else None,
        accounts=accounts,
    )
    with trio.fail_after(TEST_SECONDS * 2):
        async with (
            client,
            open_session(
                tools=listed_tools(gates, offered),
                context=context,
                limits=limits,
                hidden=hidden_tools(gates, offered),
            ) as session,
        ):
            yield Caller(session)
