"""The limits every message sent from here obeys, however its draft was written.

Checked at ``mail_prepare`` on the frozen record (``mail.digest`` names it), so an Outlook
draft with 5,000 recipients is refused like one the tools wrote. Nothing is clipped: a
message too large to send from here is refused whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mfconnector.limits import Limits
from mfconnector.mail.failures import Unsupported

__all__ = ["check_sendable"]


def check_sendable(record: Mapping[str, Any], limits: Limits) -> None:
    """Recipients and attachment bytes within the limits, or ``Unsupported``."""
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
