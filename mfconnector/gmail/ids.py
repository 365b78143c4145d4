"""What a Gmail native id looks like, checked before any request: a reference of this
account that cannot be a Gmail id (garbled, edited, of another kind) is
``stale_reference``, never sent to Google.

Message and thread ids are hexadecimal; draft ids are ``r`` and digits (possibly ``r-``);
label ids are ``INBOX``-style names or ``Label_<digits>``; attachment references are MIME
part ids (``1``, ``0.2``).
"""

from __future__ import annotations

import re

from mfconnector.mail.failures import StaleReference
from mfconnector.mail.refs import Reference

__all__ = ["checked_label", "checked_message", "checked_part", "is_draft_id"]

_MESSAGE = re.compile(r"[0-9a-f]{1,40}")
_DRAFT = re.compile(r"r-?[0-9]{1,40}")
_LABEL = re.compile(r"[A-Za-z0-9_]{1,100}")
_PART = re.compile(r"[0-9]{1,4}(?:\.[0-9]{1,4}){0,20}")


def _stale(what: str) -> StaleReference:
    return StaleReference(
        f"that id is not a Gmail {what} id this server handed out",
        hint="take ids from mail_list, mail_search, mail_read or mail_folders",
    )


def is_draft_id(native: str) -> bool:
    return _DRAFT.fullmatch(native) is not None


def checked_message(ref: Reference, *, drafts: bool = True) -> str:
    """A message id (or, with ``drafts``, a draft id)."""
    native = ref.native
    if _MESSAGE.fullmatch(native) or (drafts and is_draft_id(native)):
        return native
    raise _stale("message")


def checked_label(ref: Reference) -> str:
    if _LABEL.fullmatch(ref.native):
        return ref.native
    raise _stale("label")


def checked_part(ref: Reference) -> str:
    if _PART.fullmatch(ref.native):
        return ref.native
    raise _stale("attachment")
