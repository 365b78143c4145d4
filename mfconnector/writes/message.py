"""The complete outgoing message, frozen from a draft, and its SHA-256 digest.

Freezing reads the draft as Graph holds it: everything that changes what recipients get
or how it threads (from, sender, To, Cc, Bcc, Reply-To, subject, the body exactly as
stored, importance, categories, internetMessageId, the read and delivery receipt
requests, the internet headers, the conversation, the extended properties named in
``EXTENDED_PROPERTIES``, and every attachment's name, type, content id, size and SHA-256
of its bytes). Graph returns extended properties only when each is named, so those that
change delivery, sensitivity or threading are named here.
The digest is SHA-256 over a canonical encoding of that record::

    b"mfconnector-message-v2\\n" + JSON(record, keys sorted, no spaces, UTF-8)

The same function serves the draft read (``source_digest``), ``revise_draft``,
``mail_prepare`` and the re-read before a confirmed send, so one digest names one message
everywhere. Nothing is clipped: a message too large to show in full is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from mfconnector.graph.urls import quote_segment
from mfconnector.tools.base import ToolContext, wire_bytes
from mfconnector.writes.errors import WriteError
from mfconnector.writes.outgoing import record_warnings

__all__ = [
    "DIGEST_PREFIX",
    "DRAFT_SELECT",
    "EXTENDED_PROPERTIES",
    "PREFER_IDS",
    "FrozenMessage",
    "check_sendable",
    "digest_of",
    "freeze_draft",
    "preview",
    "recipients",
]

DIGEST_PREFIX = b"mfconnector-message-v2\n"
PREFER_IDS = {"Prefer": 'IdType="ImmutableId"'}
DRAFT_SELECT = (
    "id,isDraft,subject,body,from,sender,toRecipients,ccRecipients,bccRecipients,replyTo,"
    "changeKey,parentFolderId,conversationId,importance,categories,internetMessageId,"
    "isReadReceiptRequested,isDeliveryReceiptRequested,internetMessageHeaders"
)
EXTENDED_PROPERTIES = (
    "SystemTime 0x3FEF",  # PidTagDeferredSendTime: delivery held until then
    "SystemTime 0x0015",  # PidTagExpiryTime
    "Integer 0x0036",  # PidTagSensitivity: personal, private, confidential
    "String 0x1042",  # PidTagInReplyToId: threading
    "String 0x1039",  # PidTagInternetReferences: threading
)
"""MAPI properties (MS-OXPROPS) that change a sent message and have no Graph property."""
EXTENDED_EXPAND = (
    "singleValueExtendedProperties($filter="
    + " or ".join(f"id eq '{name}'" for name in EXTENDED_PROPERTIES)
    + ")"
)
ATTACHMENT_SELECT = "id,name,contentType,size,isInline,contentId"
FILE_ATTACHMENT = "#microsoft.graph.fileAttachment"


@dataclass(frozen=True, slots=True)
class FrozenMessage:
    """A draft as it will be sent and its digest (attachments by size and SHA-256)."""

    record: dict[str, Any]
    digest: str
    folder_id: str = ""
    """The folder the draft is in (``parentFolderId``); not part of the digest."""

    @property
    def draft_id(self) -> str:
        return str(self.record["id"])


def canonical(record: dict[str, Any]) -> bytes:
    return DIGEST_PREFIX + json.dumps(
        record, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")


def digest_of(record: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(record)).hexdigest()


def _address(entry: Any) -> dict[str, str] | None:
    email = entry.get("emailAddress") if isinstance(entry, dict) else None
    if not isinstance(email, dict) or not isinstance(email.get("address"), str):
        return None
    name = email.get("name")
    return {"name": name if isinstance(name, str) else "", "address": email["address"]}


def _addresses(value: Any) -> list[dict[str, str]]:
    entries = value if isinstance(value, list) else []
    return [a for a in (_address(e) for e in entries) if a is not None]


def recipients(people: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Graph recipients from checked (name, address) pairs; an empty name is left out."""
    return [
        {"emailAddress": {"address": address, **({"name": name} if name else {})}}
        for name, address in people
    ]


def _user(ctx: ToolContext) -> str:
    return ctx.user_path.rstrip("/")


async def mailbox_address(ctx: ToolContext) -> dict[str, str]:
    """The mailbox owner, who sends a draft whose ``from`` is still empty (cached)."""
    setup = ctx.writes
    if setup is not None and setup.mailbox_address is not None:
        return setup.mailbox_address
    graph = await ctx.graph()
    answer = await graph.get_json(
        _user(ctx), query={"$select": "displayName,mail,userPrincipalName"}
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    address = body.get("mail") or body.get("userPrincipalName") or ""
    name = body.get("displayName") or ""
    owner = {"name": str(name), "address": str(address)}
    if setup is not None:
        setup.mailbox_address = owner
    return owner


async def freeze_draft(ctx: ToolContext, draft_id: str) -> FrozenMessage:
    """Read a draft completely and freeze it; refuses what is not a draft."""
    graph = await ctx.graph()
    path = f"{_user(ctx)}/messages/{quote_segment(draft_id)}"
    answer = await graph.get_json(
        path, query={"$select": DRAFT_SELECT, "$expand": EXTENDED_EXPAND}, headers=PREFER_IDS
    )
    raw = answer.body if isinstance(answer.body, dict) else {}
    if raw.get("isDraft") is not True:
        raise WriteError(
            "invalid_arguments",
            "that message is not a draft",
            hint="pass the id of a message in Drafts (mail_create draft makes one)",
        )
    listed = await graph.get_json(
        f"{path}/attachments",
        query={"$select": ATTACHMENT_SELECT, "$top": str(ctx.limits.draft_attachments + 1)},
        headers=PREFER_IDS,
    )
    values = listed.body.get("value") if isinstance(listed.body, dict) else None
    items = values if isinstance(values, list) else []
    if len(items) > ctx.limits.draft_attachments or "@odata.nextLink" in (listed.body or {}):
        raise WriteError(
            "unsupported_operation",
            f"the draft has more than {ctx.limits.draft_attachments} attachments",
            hint="remove attachments from the draft, then try again",
        )
    attachments: list[dict[str, Any]] = []
    for item in items:
        kind = str(item.get("@odata.type", "")).lstrip("#")
        if kind and kind != FILE_ATTACHMENT.lstrip("#"):
            raise WriteError(
                "unsupported_operation",
                f"the draft carries a {kind.rsplit('.', 1)[-1]} ({item.get('name')!r}); "
                "only file attachments can be verified before sending",
                hint="remove it from the draft, or send this one from Outlook",
            )
        value_path = f"{path}/attachments/{quote_segment(str(item.get('id', '')))}/$value"
        size, sha256 = await attachment_digest(ctx, value_path, str(item.get("name")))
        attachments.append(
            {
                "name": str(item.get("name") or ""),
                "content_type": str(item.get("contentType") or ""),
                "size": size,
                "sha256": sha256,
                "inline": bool(item.get("isInline")),
                "content_id": str(item.get("contentId") or ""),
            }
        )
    stored = raw.get("body")
    body: dict[str, Any] = stored if isinstance(stored, dict) else {}
    sender = _address(raw.get("from")) or await mailbox_address(ctx)
    record: dict[str, Any] = {
        "id": str(raw.get("id") or draft_id),
        "from": sender,
        "to": _addresses(raw.get("toRecipients")),
        "cc": _addresses(raw.get("ccRecipients")),
        "bcc": _addresses(raw.get("bccRecipients")),
        "reply_to": _addresses(raw.get("replyTo")),
        "subject": str(raw.get("subject") or ""),
        "body": {
            "contentType": str(body.get("contentType") or "text").lower(),
            "content": str(body.get("content") or ""),
        },
        "attachments": attachments,
        **_delivery(raw),
    }
    folder = str(raw.get("parentFolderId") or "")
    return FrozenMessage(record, digest_of(record), folder)


def _delivery(raw: dict[str, Any]) -> dict[str, Any]:
    """What else changes the sent message or its thread, as Graph holds it."""
    categories = raw.get("categories")
    headers = raw.get("internetMessageHeaders")
    extended = raw.get("singleValueExtendedProperties")
    return {
        "sender": _address(raw.get("sender")),
        "importance": str(raw.get("importance") or "normal").lower(),
        "categories": sorted(str(c) for c in categories) if isinstance(categories, list) else [],
        "internet_message_id": str(raw.get("internetMessageId") or ""),
        "read_receipt": raw.get("isReadReceiptRequested") is True,
        "delivery_receipt": raw.get("isDeliveryReceiptRequested") is True,
        "headers": [
            [str(h.get("name", "")), str(h.get("value", ""))]
            for h in (headers if isinstance(headers, list) else [])
            if isinstance(h, dict)
        ],
        "conversation_id": str(raw.get("conversationId") or ""),
        "extended": sorted(
            [str(p.get("id", "")), str(p.get("value", ""))]
            for p in (extended if isinstance(extended, list) else [])
            if isinstance(p, dict)
        ),
    }


def check_sendable(ctx: ToolContext, frozen: FrozenMessage) -> None:
    """The limits of a message sent from here hold for every draft, however it was written."""
    record, limits = frozen.record, ctx.limits
    count = len(record["to"]) + len(record["cc"]) + len(record["bcc"])
    if count > limits.draft_recipients:
        raise WriteError(
            "unsupported_operation",
            f"the draft has {count} recipients; at most {limits.draft_recipients} in To, Cc "
            "and Bcc together are sent from here, so nothing was prepared",
            hint="send it to a distribution list, or from Outlook",
        )
    total = sum(a["size"] for a in record["attachments"])
    if total > limits.draft_attachment_total_bytes:
        raise WriteError(
            "unsupported_operation",
            f"the draft's attachments hold {total:,} bytes; at most "
            f"{limits.draft_attachment_total_bytes:,} are sent from here, so nothing was "
            "prepared",
            hint="share a link to the file instead",
        )


async def attachment_digest(ctx: ToolContext, value_path: str, name: str) -> tuple[int, str]:
    """(size, SHA-256) of an attachment's bytes, streamed through a private temporary file,
    so an attachment of up to ``draft_attachment_total_bytes`` is verified in bounded memory."""
    from mfconnector.errors import DocumentError
    from mfconnector.graph.spool import spooled_download

    limit = ctx.limits.draft_attachment_total_bytes
    try:
        async with spooled_download(await ctx.graph(), value_path, limit=limit) as spooled:
            return spooled.size, spooled.sha256
    except DocumentError as error:
        if error.code != "too_large":
            raise
        raise WriteError(
            "unsupported_operation",
            f"attachment {name!r} is larger than {limit:,} bytes and cannot be verified here",
            hint="send a link to the file instead of attaching it",
        ) from None


async def freeze_unchanged_draft(
    ctx: ToolContext, draft_id: str, source_digest: str, *, consequence: str, hint: str
) -> FrozenMessage:
    """Freeze a draft that must still be what the caller read (its ``source_digest``);
    a stale digest is a ``conflict`` that says what was not done (``consequence``)."""
    frozen = await freeze_draft(ctx, draft_id)
    if not hmac.compare_digest(frozen.digest, source_digest):
        raise WriteError(
            "conflict",
            f"the draft changed since it was read (source_digest differs); {consequence}",
            hint=hint,
            retry_safe=True,
            details={"current_digest": frozen.digest},
        )
    return frozen


async def preview(ctx: ToolContext, frozen: FrozenMessage, **extra: Any) -> dict[str, Any]:
    """The complete message as the assistant sees it; refused whole when it cannot fit."""
    import trio

    from mfconnector.textconv import html_to_text

    message = dict(frozen.record)
    body = message["body"]
    if body["contentType"] == "html":
        message["text"] = await trio.to_thread.run_sync(html_to_text, body["content"])
    else:
        message["text"] = body["content"]
    result = {**extra, "message": message}
    warnings = record_warnings(frozen.record)
    if warnings:
        result["warnings"] = warnings
    size = wire_bytes(result)
    if size > ctx.limits.preview_bytes:
        raise WriteError(
            "unsupported_operation",
            f"the message is {size:,} bytes as a complete preview, over the "
            f"{ctx.limits.preview_bytes:,}-byte limit; previews are never cut, so nothing "
            "was prepared",
            hint="shorten the body or remove attachments",
        )
    return result
