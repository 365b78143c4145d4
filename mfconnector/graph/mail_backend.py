"""Microsoft Graph as a ``MailBackend``: the tools' neutral calls as Graph requests.

``GraphMailbox`` (``graph.mailbox``) is what both halves share; ``graph.mail_reads`` and
``graph.mail_folders`` hold the reads, ``graph.mail_acts`` the changes and sending;
``GraphMailBackend`` is both. ``graph_account`` builds the account the wiring serves, with
its files (``graph.files_backend``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import replace

from mfconnector.errors import GraphError
from mfconnector.graph import mail_folders, mail_reads
from mfconnector.graph.files_backend import GraphFilesBackend
from mfconnector.graph.mail_acts import GraphMailActs
from mfconnector.graph.mailbox import (
    GRAPH_CAPABILITIES,
    IMMUTABLE_IDS,
    ClientFactory,
    GraphMailbox,
    GraphMailCaches,
    graph_capabilities,
    mailbox_path,
    outlook_native,
)
from mfconnector.limits import Limits
from mfconnector.mail.accounts import Account
from mfconnector.mail.backend import AttachmentContent, MailCapabilities, OnBytes, Spooled
from mfconnector.mail.model import Attachment, Folder, Message, MessageSummary, Page
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import Reference, account_tag

__all__ = [
    "GRAPH_CAPABILITIES",
    "IMMUTABLE_IDS",
    "ClientFactory",
    "GraphMailBackend",
    "GraphMailCaches",
    "GraphMailbox",
    "graph_account",
    "mailbox_path",
    "outlook_native",
]


class GraphMailBackend(GraphMailActs, GraphMailbox):
    """The Graph mail backend of one account (and, through ``for_mailbox``, of the
    mailboxes it may read). The reads are ``graph.mail_reads``; the folder rules
    ``graph.mail_folders``."""

    @property
    def capabilities(self) -> MailCapabilities:
        return graph_capabilities(self.cloud)

    def for_mailbox(self, mailbox: str) -> GraphMailBackend:
        path, label = mailbox_path(mailbox, self.own_path)
        if path == self.path:
            return self
        return replace(self, path=path, label=label)

    async def time_zone(self) -> str | None:
        """``mailboxSettings.timeZone`` (Outlook's name, often a Windows one), read once per
        mailbox; None when the mailbox has none or it cannot be read (a passing failure is
        asked again next time)."""
        cached = self.caches.zones.get(self.path)
        if cached is not None:
            return cached or None
        graph = await self.client()
        try:
            answer = await graph.get_json(
                f"{self.path}/mailboxSettings", query={"$select": "timeZone"}
            )
        except GraphError as error:
            if not error.retry_safe:
                self.caches.zones.put(self.path, "")
            return None
        body = answer.body if isinstance(answer.body, dict) else {}
        name = body.get("timeZone", body.get("value"))
        zone = name.strip()[:100] if isinstance(name, str) else ""
        self.caches.zones.put(self.path, zone)
        return zone or None

    async def profile(self) -> dict[str, str]:
        """The signed-in user (``/me`` or the app-only user), for ``account_status``."""
        graph = await self.client()
        answer = await graph.get_json(
            self.own_path, query={"$select": "id,displayName,mail,userPrincipalName"}
        )
        body = answer.body if isinstance(answer.body, dict) else {}
        names = {
            "displayName": "name",
            "mail": "address",
            "id": "id",
            "userPrincipalName": "user_principal_name",
        }
        return {
            ours: body[theirs]
            for theirs, ours in names.items()
            if isinstance(body.get(theirs), str)
        }

    # reads ---------------------------------------------------------------------------

    async def folders(self, parent: Folder | None, page: PageRequest) -> Page[Folder]:

        return await mail_folders.list_folders(self, parent, page)

    async def resolve_folder(self, value: str, argument: str) -> Folder:

        return await mail_folders.resolve_folder(self, value, argument)

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:

        return await mail_reads.list_messages(self, folder, where, page)

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:

        return await mail_reads.search(self, text, folder, page)

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:

        return await mail_reads.thread(self, message, page)

    async def read(self, message: Reference, request: ReadRequest) -> Message:

        return await mail_reads.read(self, message, request)

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:

        return await mail_reads.attachment(self, message, attachment, max_bytes)

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        """A message's attachments, one page (``mail_attachment`` without an attachment)."""

        return await mail_reads.attachments(self, message, page)

    def spool_attachment(
        self,
        message: Reference,
        attachment: Reference,
        *,
        limit: int,
        suffix: str = "",
        on_bytes: OnBytes | None = None,
    ) -> AbstractAsyncContextManager[Spooled]:

        return mail_reads.spool_attachment(
            self, message, attachment, limit=limit, suffix=suffix, on_bytes=on_bytes
        )


def graph_account(
    name: str,
    client: ClientFactory,
    limits: Limits,
    *,
    own_path: str = "/me",
    cloud: str = "global",
    gates: frozenset[str] = frozenset(),
    settings: Mapping[str, object] | None = None,
    all_files: bool = False,
) -> Account:
    """One Microsoft 365 account served through Graph (what the wiring builds): its mail,
    and its files (other drives with ``all_files``)."""
    tag = account_tag("graph", name)
    files = GraphFilesBackend(tag, client, limits, own_path=own_path, all_files=all_files)
    backend = GraphMailBackend(
        tag=tag,
        client=client,
        limits=limits,
        path=own_path.rstrip("/") or "/me",
        own_path=own_path,
        cloud=cloud,
    )
    return Account(name, "graph", backend, files=files, gates=gates, settings=dict(settings or {}))
