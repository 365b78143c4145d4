"""What the backend's helpers (drafts and sending, attachment spooling, threads) need of
``ImapMailBackend``: a protocol, so they depend on this and not on the backend module
(which imports them), and ``Stage``, how far an operation got."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from mfconnector.imap.connection import ImapConnection
from mfconnector.imap.refs import MessageAddress
from mfconnector.imap.settings import ServerSettings
from mfconnector.limits import Limits
from mfconnector.mail.backend import AttachmentContent
from mfconnector.mail.model import Folder, Message, Person
from mfconnector.mail.query import ReadRequest
from mfconnector.mail.refs import AccountTag, Reference

__all__ = ["ImapSession", "Stage"]

T = TypeVar("T")


class Stage:
    """How far an operation got: ``changing`` once the command that changes something
    is about to leave (from then on a lost connection means "may have happened")."""

    __slots__ = ("changing",)

    def __init__(self) -> None:
        self.changing = False


class ImapSession(Protocol):
    """The part of ``ImapMailBackend`` its helper modules use."""

    append_sent: bool
    sender: Person
    smtp: ServerSettings | None

    @property
    def tag(self) -> AccountTag: ...

    @property
    def limits(self) -> Limits: ...

    def has(self, capability: str) -> bool: ...

    def folder_name(self, folder: Folder) -> str: ...

    def summary_items(self, connection: ImapConnection, *, structure: bool = True) -> list[str]: ...

    async def role_folder(self, role: str) -> Folder | None: ...

    async def run(
        self, doing: str, operation: Callable[[ImapConnection, Stage], Awaitable[T]]
    ) -> T: ...

    async def read(self, message: Reference, request: ReadRequest) -> Message: ...

    async def attachment(
        self, message: Reference, attachment: Reference, max_bytes: int
    ) -> AttachmentContent: ...

    async def fetch_bytes(
        self,
        connection: ImapConnection,
        where: MessageAddress,
        section: str,
        count: int,
        *,
        binary: bool = False,
    ) -> bytes: ...
