"""The tool registry: an explicit, ordered list, identical in every era."""

from __future__ import annotations

from mfconnector.tools.account import ACCOUNT_STATUS
from mfconnector.tools.attachments import MAIL_ATTACHMENT
from mfconnector.tools.base import Tool
from mfconnector.tools.files import FILES_LIST, FILES_READ, FILES_SEARCH
from mfconnector.tools.mail import MAIL_FOLDERS, MAIL_LIST, MAIL_SEARCH
from mfconnector.tools.mail_read import MAIL_READ

__all__ = ["ALL_TOOLS", "Tool"]

ALL_TOOLS: tuple[Tool, ...] = (
    MAIL_FOLDERS,
    MAIL_LIST,
    MAIL_SEARCH,
    MAIL_READ,
    MAIL_ATTACHMENT,
    FILES_LIST,
    FILES_SEARCH,
    FILES_READ,
    ACCOUNT_STATUS,
)
