"""The Graph mail backend's core on the demo mailbox (the emulator at httpx's transport seam):
folders by reference, role, name and path; the mailbox path rule; the Outlook-id rule;
page positions whose links are checked before any request; filters as OData.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from mfconnector.auth import StaticTokenProvider
from mfconnector.emulator.transport import EmulatorTransport
from mfconnector.errors import ToolInputError
from mfconnector.graph.client import GraphClient
from mfconnector.graph.mail_backend import GraphMailBackend, graph_account, mailbox_path
from mfconnector.graph.mail_reads import odata_filter
from mfconnector.graph.urls import DEFAULT_GRAPH_ROOT
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.failures import NotFound, StaleReference, Unsupported
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import Reference


class Counting(httpx.AsyncBaseTransport):
    """The emulator, counting the requests that reach it."""

    def __init__(self) -> None:
        self.inner = EmulatorTransport()
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await self.inner.handle_async_request(request)


def backend(name: str = "default", cloud: str = "global") -> tuple[GraphMailBackend, Counting]:
    transport = Counting()
    client = GraphClient(
        token_provider=StaticTokenProvider("t"),
        limits=DEFAULT_LIMITS,
        root=DEFAULT_GRAPH_ROOT,
        transport=transport,
    )

    async def factory() -> Any:
        return client

    account = graph_account(name, factory, DEFAULT_LIMITS, cloud=cloud)
    assert isinstance(account.mail, GraphMailBackend)
    return account.mail, transport


def test_the_graph_backend_is_a_mail_backend() -> None:
    mail, _ = backend()
    assert isinstance(mail, MailBackend)
    assert mail.capabilities.provider == "graph"
    assert mail.capabilities.search_syntax == "kql"


async def test_roles_and_well_known_names_cost_no_request() -> None:
    mail, transport = backend()
    sent = await mail.resolve_folder("sent", "folder")
    assert (sent.ref.native, sent.role) == ("sentitems", "sent")
    assert (await mail.resolve_folder("SentItems", "folder")).role == "sent"
    assert (await mail.resolve_folder("trash", "folder")).ref.native == "deleteditems"
    assert transport.paths == []
    with pytest.raises(ToolInputError, match="no 'starred' folder"):
        await mail.resolve_folder("starred", "folder")


async def test_folders_by_name_and_path_are_found_once_and_remembered() -> None:
    mail, transport = backend()
    receipts = await mail.resolve_folder("Receipts", "folder")
    assert receipts.path == "Inbox/Receipts"
    asked = len(transport.paths)
    assert asked >= 2  # the top level, then Inbox's children
    again = await mail.resolve_folder("receipts", "folder")
    assert again == receipts and len(transport.paths) == asked
    under_role = await mail.resolve_folder("inbox/Receipts", "folder")
    assert under_role.ref == receipts.ref
    listed = await mail.list_messages(receipts, MessageFilter(), PageRequest(limit=3))
    assert listed.items and all(m.ref.tag == mail.tag for m in listed.items)


async def test_listed_top_folders_carry_their_roles_learnt_once() -> None:
    """Graph v1.0 lists no well-known name (only beta has ``wellKnownName``): the roles
    come from the ids behind the well-known names, looked up once per mailbox."""
    mail, transport = backend()
    top = await mail.folders(None, PageRequest(limit=50))
    roles = {f.name: f.role for f in top.items}
    assert {name: roles[name] for name in ("Inbox", "Sent Items", "Drafts", "Deleted Items")} == {
        "Inbox": "inbox",
        "Sent Items": "sent",
        "Drafts": "drafts",
        "Deleted Items": "trash",
    }
    assert (roles["Junk Email"], roles["Archive"], roles["Outbox"]) == ("junk", "archive", "outbox")
    assert roles["Projects"] is None and roles["Conversation History"] is None
    asked = len(transport.paths)
    again = await mail.folders(None, PageRequest(limit=50))
    assert [f.role for f in again.items] == [f.role for f in top.items]
    assert len(transport.paths) == asked + 1, "the well-known ids are remembered"
    inbox = next(f for f in top.items if f.role == "inbox")
    children = await mail.folders(inbox, PageRequest(limit=50))
    assert children.items and all(f.role is None for f in children.items)


async def test_a_renamed_folder_is_not_found_by_its_remembered_name_or_path() -> None:
    mail, _ = backend()
    receipts = await mail.resolve_folder("Inbox/Receipts", "folder")
    assert (await mail.resolve_folder("Receipts", "folder")).ref == receipts.ref
    renamed = await mail.rename_folder(receipts, "Bills")
    assert renamed.path == "Inbox/Bills" and renamed.ref == receipts.ref
    for old in ("Inbox/Receipts", "Receipts"):
        with pytest.raises(NotFound):
            await mail.resolve_folder(old, "folder")
    assert (await mail.resolve_folder("Inbox/Bills", "folder")).ref == receipts.ref


async def test_special_folders_are_not_renamed_and_nothing_is_asked() -> None:
    mail, transport = backend()
    for role in ("sent", "inbox", "drafts"):
        folder = await mail.resolve_folder(role, "folder")
        with pytest.raises(Unsupported, match=f"this mailbox's {role} folder"):
            await mail.rename_folder(folder, "Elsewhere")
    assert transport.paths == []


async def test_a_national_cloud_refuses_permanent_deletion_before_any_request() -> None:
    mail, transport = backend(cloud="usgov")
    assert not mail.capabilities.permanent_delete
    inbox = await mail.resolve_folder("inbox", "folder")
    item = (await mail.list_messages(inbox, MessageFilter(), PageRequest(limit=1))).items[0]
    asked = len(transport.paths)
    with pytest.raises(Unsupported, match="no permanent deletion in the usgov cloud"):
        await mail.delete_permanently(item.ref)
    assert len(transport.paths) == asked
    assert (await mail.read(item.ref, ReadRequest(with_body=False))).subject == item.subject


async def test_a_missing_folder_is_not_found_in_our_words() -> None:
    mail, _ = backend()
    with pytest.raises(NotFound, match="no folder named 'Nowhere' in `folder`"):
        await mail.resolve_folder("Nowhere", "folder")
    with pytest.raises(NotFound, match="no folder 'Nope' under Inbox"):
        await mail.resolve_folder("Inbox/Nope", "folder")


async def test_references_of_another_account_and_bare_ids_are_refused_before_any_request() -> None:
    mail, transport = backend()
    other, _ = backend("work")
    folders = await other.folders(None, PageRequest(limit=5))
    foreign = str(folders.items[0].ref)
    transport.paths.clear()
    with pytest.raises(StaleReference, match="another account"):
        await mail.resolve_folder(foreign, "folder")
    bare = folders.items[0].ref.native
    with pytest.raises(StaleReference, match="bare Outlook id"):
        await mail.resolve_folder(bare, "folder")
    bad = Reference(mail.tag, "../../users/ceo@contoso.com/messages")
    with pytest.raises(StaleReference, match="does not hold a Microsoft 365 id"):
        await mail.read(bad, ReadRequest())
    assert transport.paths == []


async def test_a_folder_reference_round_trips() -> None:
    mail, _ = backend()
    top = await mail.folders(None, PageRequest(limit=50))
    projects = next(f for f in top.items if f.name == "Projects")
    again = await mail.resolve_folder(str(projects.ref), "parent")
    assert again.ref == projects.ref and again.name == "Projects"
    children = await mail.folders(again, PageRequest(limit=10))
    assert children.items and all(f.path.startswith("Projects/") for f in children.items)


async def test_pages_continue_from_their_position_and_a_foreign_link_is_refused() -> None:
    mail, transport = backend()
    inbox = await mail.resolve_folder("inbox", "folder")
    first = await mail.list_messages(inbox, MessageFilter(), PageRequest(limit=5))
    assert first.next is not None and first.more_pages
    second = await mail.list_messages(
        inbox, MessageFilter(), PageRequest(limit=5, position=first.next)
    )
    assert not {m.ref for m in first.items} & {m.ref for m in second.items}
    rest = await mail.list_messages(
        inbox, MessageFilter(), PageRequest(limit=5, position=first.here, skip=3)
    )
    assert [m.ref for m in rest.items[:2]] == [m.ref for m in first.items[3:]]
    asked = len(transport.paths)
    for link in (
        "https://evil.example/v1.0/me/messages",
        "http://graph.microsoft.com/v1.0/me/messages",
        "https://graph.microsoft.com/v1.0/%2e%2e/beta/me/messages",
        "https://graph.microsoft.com.evil.example/v1.0/me",
    ):
        with pytest.raises(ToolInputError, match="does not point into Microsoft Graph"):
            await mail.list_messages(
                inbox, MessageFilter(), PageRequest(limit=5, position={"link": link})
            )
    with pytest.raises(ToolInputError):
        await mail.list_messages(inbox, MessageFilter(), PageRequest(limit=5, position={}))
    assert len(transport.paths) == asked


def test_filters_compile_to_odata_with_the_received_time_first() -> None:
    assert odata_filter(MessageFilter()) is None
    assert odata_filter(MessageFilter(unread_only=True)) == (
        "receivedDateTime ge 1900-01-01T00:00:00Z and isRead eq false"
    )
    since = datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert odata_filter(MessageFilter(since=since, sender="o'brien@contoso.com")) == (
        "receivedDateTime ge 2026-03-01T08:00:00Z and "
        "from/emailAddress/address eq 'o''brien@contoso.com'"
    )


def test_the_mailbox_path_rule() -> None:
    assert mailbox_path(None) == ("/me", None)
    assert mailbox_path("ME") == ("/me", None)
    assert mailbox_path("support@contoso.com") == (
        "/users/support@contoso.com",
        "support@contoso.com",
    )
    guid = "6e2a5b0f-0c1d-4d7e-9a4b-2f3c4d5e6f70"
    assert mailbox_path(guid)[0] == f"/users/{guid}"
    for bad in ("support", "a@b/../me", "x y@contoso.com", "a@b?c"):
        with pytest.raises(ToolInputError, match="neither an email address nor a user id"):
            mailbox_path(bad)


async def test_another_mailbox_shares_the_account_and_its_caches() -> None:
    mail, transport = backend()
    shared = mail.for_mailbox("support@contoso.onmicrosoft.com")
    assert shared.path == "/users/support@contoso.onmicrosoft.com"
    assert shared.tag == mail.tag and shared.caches is mail.caches
    assert mail.for_mailbox("me") is mail
    inbox = await shared.resolve_folder("inbox", "folder")
    await shared.list_messages(inbox, MessageFilter(), PageRequest(limit=1))
    assert transport.paths[-1].startswith("/v1.0/users/support@contoso.onmicrosoft.com/")


async def test_reads_pick_neutral_fields_and_search_and_threads_name_folders() -> None:
    mail, _ = backend()
    inbox = await mail.resolve_folder("inbox", "folder")
    listed = await mail.list_messages(inbox, MessageFilter(), PageRequest(limit=1, view="full"))
    summary = listed.items[0]
    assert summary.thread and summary.change_token and summary.received is not None
    assert summary.received.tzinfo is not None
    message = await mail.read(summary.ref, ReadRequest(view="full"))
    assert message.ref == summary.ref and message.body is not None and message.body.text
    assert message.internet_message_id
    found = await mail.search("invoice", None, PageRequest(limit=3))
    assert found.items and all(m.folder_name for m in found.items)
    thread = await mail.thread(summary.ref, PageRequest(limit=10))
    assert summary.ref in {m.ref for m in thread.items}
    assert await mail.time_zone() == "Pacific Standard Time"
