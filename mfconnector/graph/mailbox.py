"""What every Graph mail request of one account needs, shared by the backend's halves.

``GraphMailbox`` holds the client (made on first use: msal and httpx stay off the start-up
path), the mailbox path (``/me`` or ``/users/{address}``), the active limits, the account's
reference tag, and what is learnt once per process (``GraphMailCaches``), bounded. The
reads (``graph.mail_reads``, ``graph.mail_folders``), the changes (``graph.mail_acts``) and
``graph.mail_backend``, which joins them, all import this module and none of each other's
core, so the backend has no import cycle.

Two Graph rules live here and nowhere else: which mailbox path a ``mailbox`` name means
(``mailbox_path``), and what an Outlook id looks like (``outlook_native``), the check a
reference's native part passes before it is put in a request path.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from mfconnector.bounded_cache import BoundedCache
from mfconnector.errors import ToolInputError
from mfconnector.limits import Limits
from mfconnector.mail.backend import MailCapabilities
from mfconnector.mail.failures import StaleReference
from mfconnector.mail.model import Folder
from mfconnector.mail.refs import AccountTag, Reference

if TYPE_CHECKING:
    from mfconnector.graph.client import GraphClient

__all__ = [
    "GRAPH_CAPABILITIES",
    "IMMUTABLE_IDS",
    "OUTLOOK_ID",
    "ClientFactory",
    "GraphMailCaches",
    "GraphMailbox",
    "graph_capabilities",
    "looks_like_folder_id",
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
    stable_ids=True,
)
"""Graph in the global cloud. Immutable ids (``IMMUTABLE_IDS``) keep a message's reference
through moves."""


def graph_capabilities(cloud: str) -> MailCapabilities:
    """What Graph offers in ``cloud``: the national clouds have no ``permanentDelete``."""
    if cloud == "global":
        return GRAPH_CAPABILITIES
    return replace(
        GRAPH_CAPABILITIES,
        permanent_delete=False,
        missing=(
            (
                "permanent_delete",
                f"Microsoft Graph offers no permanent deletion in the {cloud} cloud",
            ),
        ),
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
