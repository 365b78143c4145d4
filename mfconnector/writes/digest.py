"""One digest names one outgoing message everywhere, and the limits every sent one obeys.

The digest is SHA-256 over a canonical encoding of a frozen message's neutral record
(``FrozenOutgoing.record``: every recipient, the subject, the whole body, each
attachment's name, type, size and SHA-256, and what changes delivery or threading)::

    b"mfconnector-message-v3\\n" + JSON(record, keys sorted, no spaces, UTF-8)

The same digest serves the draft read (``source_digest``), ``revise_draft``,
``mail_prepare`` and the re-read before a confirmed send. Nothing is clipped: a message too
large to show in full is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from mfconnector.limits import Limits
from mfconnector.mail.failures import Unsupported

__all__ = ["DIGEST_PREFIX", "canonical", "check_sendable", "digest_of"]

DIGEST_PREFIX = b"mfconnector-message-v3\n"
"""v3: the record names the draft by its reference and its body type as ``content_type``."""


def canonical(record: Mapping[str, Any]) -> bytes:
    return DIGEST_PREFIX + json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def digest_of(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()


def check_sendable(record: Mapping[str, Any], limits: Limits) -> None:
    """The limits of a message sent from here hold for every draft, however it was written."""
    count = len(record["to"]) + len(record["cc"]) + len(record["bcc"])
    if count > limits.draft_recipients:
        raise Unsupported(
            f"the draft has {count} recipients; at most {limits.draft_recipients} in To, Cc "
            "and Bcc together are sent from here, so nothing was prepared",
            hint="send it to a distribution list, or from Outlook",
        )
    total = sum(a["size"] for a in record["attachments"])
    if total > limits.draft_attachment_total_bytes:
        raise Unsupported(
            f"the draft's attachments hold {total:,} bytes; at most "
            f"{limits.draft_attachment_total_bytes:,} are sent from here, so nothing was "
            "prepared",
            hint="share a link to the file instead",
        )
