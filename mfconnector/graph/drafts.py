"""A Graph draft frozen as the neutral record a confirmation sends, and drafts written.

Freezing reads the draft as Graph holds it: everything that changes what recipients get
or how it threads (from, sender, To, Cc, Bcc, Reply-To, subject, the body exactly as
stored, importance, categories, internetMessageId, the read and delivery receipt
requests, the internet headers, the conversation, the extended properties named in
``EXTENDED_PROPERTIES``, and every attachment's name, type, content id, size and SHA-256
of its bytes). Graph returns extended properties only when each is named, so those that
change delivery, sensitivity or threading are named here. The record and its digest are
``writes.digest``'s: one digest names one message everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mfconnector.errors import DocumentError, ToolInputError
from mfconnector.graph.mailbox import OUTLOOK_ID
from mfconnector.graph.urls import quote_segment
from mfconnector.mail.failures import StaleReference, Unsupported
from mfconnector.mail.model import Person
from mfconnector.mail.outgoing import DraftContent

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import GraphMailbox

__all__ = [
    "DRAFT_SELECT",
    "EXTENDED_PROPERTIES",
    "PREFER_IDS",
    "draft_record",
    "graph_recipients",
    "message_fields",
]

PREFER_IDS = {"Prefer": 'IdType="ImmutableId"'}
"""Immutable ids: a moved message keeps its id, and a sent draft's copy in Sent Items too."""
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


def message_path(box: GraphMailbox, native: str) -> str:
    """A message's Graph path; an id that is not Outlook's is refused before any request."""
    if not OUTLOOK_ID.match(native):
        raise StaleReference(
            "that reference does not hold a Microsoft 365 id",
            hint="take ids from mail_list, mail_search, mail_read or mail_folders",
        )
    return f"{box.path.rstrip('/')}/messages/{quote_segment(native)}"


def graph_recipients(people: Any) -> list[dict[str, Any]]:
    """Graph recipients from checked people; an empty name is left out."""
    return [
        {"emailAddress": {"address": p.address, **({"name": p.name} if p.name else {})}}
        for p in people
    ]


def message_fields(content: DraftContent, changed: frozenset[str] | None = None) -> dict[str, Any]:
    """The Graph message properties of ``content`` (all, or only those ``changed``)."""
    wanted = changed if changed is not None else frozenset({"to", "cc", "bcc", "subject", "text"})
    fields: dict[str, Any] = {}
    for name, graph_name in (
        ("to", "toRecipients"),
        ("cc", "ccRecipients"),
        ("bcc", "bccRecipients"),
    ):
        people = getattr(content, name)
        if name in wanted and (changed is not None or people):
            fields[graph_name] = graph_recipients(people)
    if "subject" in wanted and content.subject is not None:
        fields["subject"] = content.subject
    if "text" in wanted and content.text is not None:
        fields["body"] = {"contentType": content.content_type, "content": content.text}
    return fields


def _address(entry: Any) -> dict[str, str] | None:
    email = entry.get("emailAddress") if isinstance(entry, dict) else None
    if not isinstance(email, dict) or not isinstance(email.get("address"), str):
        return None
    name = email.get("name")
    return {"name": name if isinstance(name, str) else "", "address": email["address"]}


def _addresses(value: Any) -> list[dict[str, str]]:
    entries = value if isinstance(value, list) else []
    return [a for a in (_address(e) for e in entries) if a is not None]


async def mailbox_owner(box: GraphMailbox) -> dict[str, str]:
    """The mailbox owner, who sends a draft whose ``from`` is still empty (cached)."""
    cached = box.caches.owners.get(box.path)
    if cached is not None:
        return cached
    graph = await box.client()
    answer = await graph.get_json(
        box.path.rstrip("/"), query={"$select": "displayName,mail,userPrincipalName"}
    )
    body = answer.body if isinstance(answer.body, dict) else {}
    owner = {
        "name": str(body.get("displayName") or ""),
        "address": str(body.get("mail") or body.get("userPrincipalName") or ""),
    }
    box.caches.owners.put(box.path, owner)
    return owner


async def read_draft(box: GraphMailbox, native: str) -> dict[str, Any]:
    """The draft as Graph holds it; ``ToolInputError`` when the message is not a draft."""
    graph = await box.client()
    answer = await graph.get_json(
        message_path(box, native),
        query={"$select": DRAFT_SELECT, "$expand": EXTENDED_EXPAND},
        headers=PREFER_IDS,
    )
    raw = answer.body if isinstance(answer.body, dict) else {}
    if raw.get("isDraft") is not True:
        raise ToolInputError(
            "that message is not a draft",
            hint="pass the id of a message in Drafts (mail_create draft makes one)",
        )
    return raw


async def _attachment_records(box: GraphMailbox, native: str) -> list[dict[str, Any]]:
    graph, limits, path = await box.client(), box.limits, message_path(box, native)
    listed = await graph.get_json(
        f"{path}/attachments",
        query={"$select": ATTACHMENT_SELECT, "$top": str(limits.draft_attachments + 1)},
        headers=PREFER_IDS,
    )
    values = listed.body.get("value") if isinstance(listed.body, dict) else None
    items = values if isinstance(values, list) else []
    if len(items) > limits.draft_attachments or "@odata.nextLink" in (listed.body or {}):
        raise Unsupported(
            f"the draft has more than {limits.draft_attachments} attachments",
            hint="remove attachments from the draft, then try again",
        )
    records: list[dict[str, Any]] = []
    for item in items:
        kind = str(item.get("@odata.type", "")).lstrip("#")
        if kind and kind != FILE_ATTACHMENT.lstrip("#"):
            raise Unsupported(
                f"the draft carries a {kind.rsplit('.', 1)[-1]} ({item.get('name')!r}); "
                "only file attachments can be verified before sending",
                hint="remove it from the draft, or send this one from Outlook",
            )
        value_path = f"{path}/attachments/{quote_segment(str(item.get('id', '')))}/$value"
        size, sha256 = await _attachment_digest(box, value_path, str(item.get("name")))
        records.append(
            {
                "name": str(item.get("name") or ""),
                "content_type": str(item.get("contentType") or ""),
                "size": size,
                "sha256": sha256,
                "inline": bool(item.get("isInline")),
                "content_id": str(item.get("contentId") or ""),
            }
        )
    return records


async def _attachment_digest(box: GraphMailbox, value_path: str, name: str) -> tuple[int, str]:
    """(size, SHA-256) of an attachment's bytes, streamed through a private temporary file,
    so an attachment of up to ``draft_attachment_total_bytes`` is verified in bounded memory."""
    from mfconnector.graph.spool import spooled_download

    limit = box.limits.draft_attachment_total_bytes
    try:
        async with spooled_download(await box.client(), value_path, limit=limit) as spooled:
            return spooled.size, spooled.sha256
    except DocumentError as error:
        if error.code != "too_large":
            raise
        raise Unsupported(
            f"attachment {name!r} is larger than {limit:,} bytes and cannot be verified here",
            hint="send a link to the file instead of attaching it",
        ) from None


async def draft_record(box: GraphMailbox, native: str, shown_id: str) -> tuple[dict[str, Any], str]:
    """(the neutral record of a draft, the id of the folder it is in). ``shown_id`` is the
    draft's reference, as the record names it."""
    raw = await read_draft(box, native)
    attachments = await _attachment_records(box, native)
    stored = raw.get("body")
    body: dict[str, Any] = stored if isinstance(stored, dict) else {}
    sender = _address(raw.get("from")) or await mailbox_owner(box)
    record: dict[str, Any] = {
        "id": shown_id,
        "from": sender,
        "to": _addresses(raw.get("toRecipients")),
        "cc": _addresses(raw.get("ccRecipients")),
        "bcc": _addresses(raw.get("bccRecipients")),
        "reply_to": _addresses(raw.get("replyTo")),
        "subject": str(raw.get("subject") or ""),
        "body": {
            "content_type": str(body.get("contentType") or "text").lower(),
            "content": str(body.get("content") or ""),
        },
        "attachments": attachments,
        **_delivery(raw),
    }
    return record, str(raw.get("parentFolderId") or "")


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


def person_of(entry: dict[str, str]) -> Person:
    return Person(entry.get("name", ""), entry["address"])
