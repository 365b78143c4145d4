"""Microsoft Graph as a ``MailBackend``: the tools' neutral calls as Graph requests.

``GraphMailbox`` is what both halves share: the client (made on first use: msal and
httpx stay off the start-up path), the mailbox path (``/me`` or ``/users/{address}``),
the active limits, the account's reference tag, and what is learnt once per process
(time zone, folder names and ids), bounded. ``graph.mail_reads`` holds the reads,
``graph.mail_acts`` the changes and sending; ``GraphMailBackend`` is both.

Two Graph rules live here and nowhere else: which mailbox path a ``mailbox`` name means
(``mailbox_path``), and what an Outlook id looks like (``outlook_native``), the check a
reference's native part passes before it is put in a request path.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from mfconnector.bounded_cache import BoundedCache
from mfconnector.errors import GraphError, ToolInputError
from mfconnector.graph.mail_acts import GraphMailActs
from mfconnector.limits import Limits
from mfconnector.mail.accounts import Account
from mfconnector.mail.backend import AttachmentContent, MailCapabilities, OnBytes, Spooled
from mfconnector.mail.failures import StaleReference
from mfconnector.mail.model import Attachment, Folder, Message, MessageSummary, Page
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import AccountTag, Reference, account_tag

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient

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

ClientFactory = Callable[[], Awaitable["GraphClient"]]

IMMUTABLE_IDS = 'IdType="ImmutableId"'
"""Outlook ids that survive a move between folders, so an id from a list stays readable."""
TEXT_BODIES = 'outlook.body-content-type="text"'

OUTLOOK_ID = re.compile(r"^[A-Za-z0-9_=+/!.-]{1,1024}$")
"""Outlook's ids: base64 (standard or URL-safe, padded) of an entry id; attachment ids of
reference attachments may carry ``!`` and ``.``. One rule for every id a Graph reference
carries (messages, folders, attachments)."""
MIN_FOLDER_ID_CHARS = 32
"""Outlook folder ids are over 100 characters; a shorter word is a folder name or a path."""
_GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_ADDRESS = re.compile(r"^[^\s@/\\?]{1,200}@[A-Za-z0-9.-]{1,200}$")

GRAPH_CAPABILITIES = MailCapabilities(
    provider="graph",
    search_syntax="kql",
    threads=True,
    conditional_flags=True,
    permanent_delete=True,
    unique_body=True,
    shared_mailboxes=True,
)


def mailbox_path(name: str | None, own: str = "/me") -> tuple[str, str | None]:
    """The Graph path of a ``mailbox`` name and the label results show (None: one's own).

    ``own`` is the signed-in user's path (``/me``, or ``/users/{id}`` for app-only sign-in).
    Another mailbox is ``/users/{upn-or-id}``, which needs Mail.Read.Shared.
    """
    if not name or name.lower() == "me":
        return own.rstrip("/") or "/me", None
    if not (_ADDRESS.match(name) or _GUID.match(name)):
        raise ToolInputError(
            f"`mailbox` {name[:80]!r} is neither an email address nor a user id",
            hint="give the shared mailbox's address, like support@contoso.com",
        )
    return "/users/" + quote(name, safe="@!$&'()*+,;=:-._~"), name


def outlook_native(ref: Reference, argument: str) -> str:
    """``ref``'s Outlook id, checked before it goes into a request path."""
    if not OUTLOOK_ID.match(ref.native):
        raise StaleReference(
            f"`{argument}` does not hold a Microsoft 365 id",
            hint="take ids from mail_list, mail_search, mail_read or mail_folders",
        )
    return ref.native


def looks_like_folder_id(value: str) -> bool:
    """An unprefixed Outlook folder id (0.2 handed these out): long, of id characters."""
    return len(value) >= MIN_FOLDER_ID_CHARS and bool(OUTLOOK_ID.match(value)) and " " not in value


class GraphMailCaches:
    """What one account's mailboxes learn once per process, keyed by mailbox path."""

    def __init__(self, limits: Limits) -> None:
        self.zones: BoundedCache[str, str] = BoundedCache(limits.cached_zones)
        """mailbox path -> Outlook's zone name ("" when the mailbox has none we can read)."""
        self.folder_names: BoundedCache[tuple[str, str], str] = BoundedCache(limits.cached_folders)
        """(mailbox path, folder id) -> display name."""
        self.folder_ids: BoundedCache[tuple[str, str], Folder] = BoundedCache(limits.cached_folders)
        """(mailbox path, lower-cased folder path) -> the folder."""
        self.well_known: BoundedCache[str, dict[str, str]] = BoundedCache(limits.cached_zones)
        """mailbox path -> {well-known folder name: its id} (``graph.folder_roles``)."""
        self.owners: BoundedCache[str, dict[str, str]] = BoundedCache(limits.cached_zones)
        """mailbox path -> the owner's name and address, who sends a draft with no from."""


@dataclass
class GraphMailbox:
    """One Graph mailbox of one account: what every Graph mail request needs."""

    tag: AccountTag
    client: ClientFactory
    limits: Limits
    path: str = "/me"
    """``/me``, or ``/users/{address}`` for a shared or delegated mailbox."""
    label: str | None = None
    """The mailbox as the operator or the call named it (None: the signed-in user's)."""
    own_path: str = "/me"
    """The signed-in user's own path, whichever mailbox this is."""
    cloud: str = "global"
    """The Microsoft cloud: permanent deletion is offered in the global cloud only."""
    caches: GraphMailCaches = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.caches is None:
            self.caches = GraphMailCaches(self.limits)

    def prefer(self, *, text_bodies: bool = False) -> dict[str, str]:
        """Immutable ids (and, for reads, bodies as text); times stay UTC."""
        return {"Prefer": f"{TEXT_BODIES}, {IMMUTABLE_IDS}" if text_bodies else IMMUTABLE_IDS}

    def ref(self, native: str) -> Reference:
        return Reference(self.tag, native)


class GraphMailBackend(GraphMailActs, GraphMailbox):
    """The Graph mail backend of one account (and, through ``for_mailbox``, of the
    mailboxes it may read). The reads are ``graph.mail_reads``; the folder rules
    ``graph.mail_folders``."""

    @property
    def capabilities(self) -> MailCapabilities:
        if self.cloud == "global":
            return GRAPH_CAPABILITIES
        return replace(
            GRAPH_CAPABILITIES,
            permanent_delete=False,
            missing=(
                (
                    "permanent_delete",
                    f"Microsoft Graph offers no permanent deletion in the {self.cloud} cloud",
                ),
            ),
        )

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
        from mfconnector.graph import mail_folders

        return await mail_folders.list_folders(self, parent, page)

    async def resolve_folder(self, value: str, argument: str) -> Folder:
        from mfconnector.graph import mail_folders

        return await mail_folders.resolve_folder(self, value, argument)

    async def list_messages(
        self, folder: Folder, where: MessageFilter, page: PageRequest
    ) -> Page[MessageSummary]:
        from mfconnector.graph import mail_reads

        return await mail_reads.list_messages(self, folder, where, page)

    async def search(
        self, text: str, folder: Folder | None, page: PageRequest
    ) -> Page[MessageSummary]:
        from mfconnector.graph import mail_reads

        return await mail_reads.search(self, text, folder, page)

    async def thread(self, message: Reference, page: PageRequest) -> Page[MessageSummary]:
        from mfconnector.graph import mail_reads

        return await mail_reads.thread(self, message, page)

    async def read(self, message: Reference, request: ReadRequest) -> Message:
        from mfconnector.graph import mail_reads

        return await mail_reads.read(self, message, request)

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent:
        from mfconnector.graph import mail_reads

        return await mail_reads.attachment(self, message, attachment, max_bytes)

    async def attachments(self, message: Reference, page: PageRequest) -> Page[Attachment]:
        """A message's attachments, one page (``mail_attachment`` without an attachment)."""
        from mfconnector.graph import mail_reads

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
        from mfconnector.graph import mail_reads

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
) -> Account:
    """One Microsoft 365 account served through Graph (what the wiring builds)."""
    backend = GraphMailBackend(
        tag=account_tag("graph", name),
        client=client,
        limits=limits,
        path=own_path.rstrip("/") or "/me",
        own_path=own_path,
        cloud=cloud,
    )
    return Account(name, "graph", backend, gates=gates, settings=dict(settings or {}))
