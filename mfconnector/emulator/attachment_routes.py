"""A message's attachments: ``$expand=attachments`` (all properties or a ``$select``),
the list, one attachment (an item attachment with ``$expand=item``), its ``$value``, adding
and deleting one, and the upload session for a large one."""

from __future__ import annotations

import re
from typing import Any, Literal

from mfconnector.emulator import mail_writes
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError, item_not_found
from mfconnector.emulator.mail_lookup import check_id, odata_context
from mfconnector.emulator.mail_paging import check_select, json_answer, not_allowed, page
from mfconnector.emulator.message_mime import mime_answer
from mfconnector.emulator.model import Attachment, Mailbox, Message
from mfconnector.emulator.odata import parse_options
from mfconnector.emulator.render import attachment_json, message_json
from mfconnector.emulator.state import EmulatorState
from mfconnector.emulator.uploads import create_upload_session

__all__ = ["ATTACHMENT_PROPERTIES", "attachment_expand", "attachment_route", "attachment_view"]

ATTACHMENT_PROPERTIES = frozenset(
    {
        "id",
        "name",
        "contentType",
        "size",
        "isInline",
        "lastModifiedDateTime",
        "contentBytes",
        "contentId",
        "contentLocation",
        "@odata.type",
        "item",
        "sourceUrl",
    }
)


def attachment_expand(value: str | None) -> list[str] | Literal[False] | None:
    """``$expand=attachments`` (all properties: None) or ``attachments($select=a,b)``
    (those); False when nothing is expanded. Anything else is refused, as Graph does."""
    expand = (value or "").strip()
    if not expand:
        return False
    match = re.fullmatch(r"attachments(?:\(\$select=([^)]*)\))?", expand)
    if match is None:
        raise GraphHttpError(
            400, "BadRequest", f"Parsing OData Select and Expand failed: '{expand[:80]}'."
        )
    if match.group(1) is None:
        return None
    select = [part.strip() for part in match.group(1).split(",") if part.strip()]
    check_select(select, ATTACHMENT_PROPERTIES, "attachment")
    return select


def attachment_view(attachment: Attachment, select: list[str] | None) -> dict[str, Any]:
    full = attachment_json(attachment, with_bytes=select is None or "contentBytes" in select)
    if select is None:
        return full
    wanted = set(select)
    return {k: v for k, v in full.items() if k in wanted or k in ("id", "@odata.type")}


def attachment_route(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message, rest: list[str]
) -> Answer:

    if not rest:
        if call.method == "POST":
            return mail_writes.add_attachment(emulator, call, mailbox, message)
        if call.method != "GET":
            raise not_allowed()
        options = parse_options(call.query)
        check_select(options.select, ATTACHMENT_PROPERTIES, "attachment")
        items = [attachment_view(a, options.select) for a in message.attachments]
        return page(
            call,
            options,
            items,
            odata_context(
                mailbox, f"messages('{message.id_for(call.prefer.immutable_ids)}')/attachments"
            ),
            select=None,
        )
    if rest == ["createUploadSession"]:
        if call.method != "POST":
            raise not_allowed()
        return create_upload_session(emulator, call, mailbox, message)
    check_id(rest[0])
    found = [a for a in message.attachments if a.id == rest[0]]
    if not found:
        raise item_not_found()
    attachment = found[0]
    tail = rest[1:]
    if not tail:
        if call.method == "DELETE":
            return mail_writes.delete_attachment(emulator, call, mailbox, message, attachment)
        if call.method != "GET":
            raise not_allowed()
        options = parse_options(call.query)
        check_select(options.select, ATTACHMENT_PROPERTIES, "attachment")
        body = attachment_view(attachment, options.select)  # Graph honours $select here too
        expand = (options.expand or "").lower()
        if attachment.item is not None and "item" in expand:
            body["item"] = message_json(
                attachment.item, immutable=False, text_body=call.prefer.text_body, select=None
            )
        body = {"@odata.context": odata_context(mailbox, "messages/attachments/$entity"), **body}
        return json_answer(200, body)
    if tail == ["$value"] and call.method == "GET":
        if attachment.item is not None:
            return mime_answer(attachment.item)
        return Answer(
            200,
            content=attachment.content(),
            headers={"Content-Type": attachment.content_type or "application/octet-stream"},
        )
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )
