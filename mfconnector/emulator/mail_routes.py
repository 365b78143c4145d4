"""Outlook reads: the profile, mailbox settings, folders, message lists, one message,
attachments, raw MIME. Writes are routed on to ``mail_writes``.

Lists follow Outlook's rules: default page 10 (``$top`` 1-1000), ``$skip`` paging with an
``@odata.nextLink`` on the same address, newest first unless ``$orderby`` says otherwise,
``$count=true`` adds ``@odata.count``; ``$search`` refuses ``$orderby``
(``SearchWithOrderBy``) and ``$filter``; a ``$filter`` with ``$orderby`` must name the
``$orderby`` properties first (``InefficientFilter``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any, Literal

from mfconnector.emulator import folder_writes, mail_writes
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError, item_not_found
from mfconnector.emulator.kql import compile_search
from mfconnector.emulator.mail_lookup import (
    check_id,
    find_folder,
    find_message,
    odata_context,
    render_message,
)
from mfconnector.emulator.model import Attachment, Folder, Mailbox, Message
from mfconnector.emulator.odata import (
    QueryOptions,
    compile_filter,
    filter_properties,
    parse_options,
    parse_orderby,
)
from mfconnector.emulator.render import (
    MESSAGE_PROPERTIES,
    attachment_json,
    folder_json,
    message_json,
    profile_json,
)
from mfconnector.emulator.state import EmulatorState
from mfconnector.emulator.uploads import create_upload_session

__all__ = ["get_message", "list_messages", "route"]

MAX_TOP = 1000
DEFAULT_TOP = 10
FOLDER_PROPERTIES = frozenset(
    {
        "id",
        "displayName",
        "parentFolderId",
        "childFolderCount",
        "unreadItemCount",
        "totalItemCount",
        "isHidden",
        "childFolders",
        "messages",
    }
)
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
_DEFAULT_ORDER = "receivedDateTime desc"
NOT_FILTERABLE = frozenset(
    {"body", "uniqueBody", "bodyPreview", "internetMessageHeaders", "attachments"}
)
"""Outlook filters on metadata, never on bodies: searching text is ``$search``'s job."""


def _answer(status: int, body: Any = None, **headers: str) -> Answer:
    return Answer(status, json=body, headers=dict(headers))


def _check_select(select: list[str] | None, properties: frozenset[str], entity: str) -> None:
    for name in select or ():
        if name not in properties:
            raise GraphHttpError(
                400,
                "RequestBroker--ParseUri",
                f"Could not find a property named '{name}' on type 'microsoft.graph.{entity}'.",
            )


def route(emulator: EmulatorState, call: Call, mailbox: Mailbox, rest: list[str]) -> Answer:

    method = call.method
    if not rest:
        if method != "GET":
            raise _not_allowed()
        return _answer(200, _select_plain(profile_json(mailbox), call))
    head = rest[0]
    if head == "mailboxSettings":
        return _mailbox_settings(call, mailbox, rest[1:])
    if head == "sendMail" and len(rest) == 1:
        if method != "POST":
            raise _not_allowed()
        return mail_writes.send_mail(emulator, call, mailbox)
    if head == "mailFolders":
        return _folders(emulator, call, mailbox, rest[1:])
    if head == "messages":
        return _messages(emulator, call, mailbox, None, rest[1:])
    raise GraphHttpError(400, "BadRequest", f"Resource not found for the segment '{head[:100]}'.")


def _not_allowed() -> GraphHttpError:
    return GraphHttpError(405, "ErrorInvalidRequest", "The OData request is not supported.")


def _select_plain(value: dict[str, Any], call: Call) -> dict[str, Any]:
    select = call.query.get("$select")
    if not select:
        return value
    wanted = {part.strip() for part in select.split(",")}
    return {k: v for k, v in value.items() if k in wanted or k.startswith("@odata") or k == "id"}


def _mailbox_settings(call: Call, mailbox: Mailbox, rest: list[str]) -> Answer:
    settings = {
        "@odata.context": odata_context(mailbox, "mailboxSettings"),
        "archiveFolder": mailbox.well_known["archive"],
        "timeZone": mailbox.time_zone,
        "delegateMeetingMessageDeliveryOptions": "sendToDelegateOnly",
        "dateFormat": "M/d/yyyy",
        "timeFormat": "h:mm tt",
        "userPurpose": "user" if mailbox.mail.startswith("adelev") else "shared",
        "automaticRepliesSetting": {
            "status": "disabled",
            "externalAudience": "all",
            "internalReplyMessage": "",
            "externalReplyMessage": "",
        },
        "language": {"locale": "en-US", "displayName": "English (United States)"},
        "workingHours": {
            "daysOfWeek": ["monday", "tuesday", "wednesday", "thursday", "friday"],
            "startTime": "08:00:00.0000000",
            "endTime": "17:00:00.0000000",
            "timeZone": {"name": mailbox.time_zone},
        },
    }
    if call.method == "PATCH" and not rest:
        body = call.json_body()
        zone = body.get("timeZone")
        if zone is not None:
            if not isinstance(zone, str) or not zone.strip():
                raise GraphHttpError(400, "ErrorInvalidArgument", "The time zone is not valid.")
            mailbox.time_zone = zone
        settings["timeZone"] = mailbox.time_zone
        return _answer(200, settings)
    if call.method != "GET":
        raise _not_allowed()
    if not rest:
        return _answer(200, _select_plain(settings, call))
    if len(rest) == 1 and rest[0] in settings and not rest[0].startswith("@"):
        return _answer(
            200,
            {
                "@odata.context": odata_context(mailbox, f"mailboxSettings/{rest[0]}"),
                "value": settings[rest[0]],
            },
        )
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{rest[0][:100]}'."
    )


# --- folders -----------------------------------------------------------------------------


def _folders(emulator: EmulatorState, call: Call, mailbox: Mailbox, rest: list[str]) -> Answer:

    if not rest:
        if call.method == "POST":
            return folder_writes.create_folder(
                emulator, call, mailbox, mailbox.folders[mailbox.root_id]
            )
        if call.method != "GET":
            raise _not_allowed()
        return _folder_list(call, mailbox, mailbox.root_id, "mailFolders")
    folder = find_folder(mailbox, rest[0])
    tail = rest[1:]
    if not tail:
        if call.method == "GET":
            options = parse_options(call.query)
            _check_select(options.select, FOLDER_PROPERTIES, "mailFolder")
            body = _select_plain(folder_json(folder, mailbox), call)
            return _answer(
                200, {"@odata.context": odata_context(mailbox, "mailFolders/$entity"), **body}
            )
        if call.method == "PATCH":
            return folder_writes.update_folder(emulator, call, mailbox, folder)
        if call.method == "DELETE":
            return folder_writes.delete_folder(emulator, call, mailbox, folder)
        raise _not_allowed()
    if tail[0] == "childFolders":
        if len(tail) == 1:
            if call.method == "POST":
                return folder_writes.create_folder(emulator, call, mailbox, folder)
            if call.method != "GET":
                raise _not_allowed()
            return _folder_list(
                call, mailbox, folder.id, f"mailFolders('{folder.id}')/childFolders"
            )
        return _folders(emulator, call, mailbox, tail[1:])
    if tail[0] == "messages":
        return _messages(emulator, call, mailbox, folder, tail[1:])
    if tail == ["permanentDelete"] and call.method == "POST":
        return folder_writes.permanently_delete_folder(emulator, call, mailbox, folder)
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )


def _folder_list(call: Call, mailbox: Mailbox, parent_id: str, context: str) -> Answer:
    options = parse_options(call.query)
    _check_select(options.select, FOLDER_PROPERTIES, "mailFolder")
    if options.search:
        raise GraphHttpError(
            400, "ErrorInvalidUrlQuery", "$search is not supported on mail folders."
        )
    hidden = call.query.get("includeHiddenFolders", "").lower() == "true"
    folders = [
        folder_json(f, mailbox)
        for f in mailbox.folders.values()
        if f.parent_id == parent_id and (hidden or not f.is_hidden)
    ]
    folders.sort(key=lambda f: (f["displayName"].casefold(), f["id"]))
    if options.filter:
        predicate = compile_filter(options.filter, FOLDER_PROPERTIES, "mailFolder")
        folders = [f for f in folders if predicate(f)]
    if options.orderby:
        for order in reversed(parse_orderby(options.orderby, FOLDER_PROPERTIES, "mailFolder")):
            name = order.property

            def folder_key(folder: dict[str, Any], name: str = name) -> tuple[int, Any]:
                return _sort_key(folder.get(name))

            folders.sort(key=folder_key, reverse=order.descending)
    return _page(call, options, folders, odata_context(mailbox, context), select=options.select)


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, "")
    if isinstance(value, str):
        return (1, value.casefold())
    if isinstance(value, dict):
        return (1, str(value))
    return (1, value)


def _page(
    call: Call,
    options: QueryOptions,
    items: list[dict[str, Any]],
    context: str,
    *,
    select: list[str] | None,
    total: int | None = None,
) -> Answer:
    top = min(options.top or call.prefer.max_page_size or DEFAULT_TOP, MAX_TOP)
    window = items[options.skip : options.skip + top]
    if select is not None:
        wanted = set(select)
        window = [
            {
                k: v
                for k, v in item.items()
                if k in wanted or k in ("id", "@odata.etag", "@odata.type")
            }
            for item in window
        ]
    body: dict[str, Any] = {"@odata.context": context}
    if options.count:
        body["@odata.count"] = len(items) if total is None else total
    body["value"] = window
    if options.skip + top < len(items):
        body["@odata.nextLink"] = call.next_link(**{"$skip": str(options.skip + top)})
    return _answer(200, body)


# --- messages ----------------------------------------------------------------------------


def _filter_view(emulator: EmulatorState, mailbox: Mailbox, message: Message) -> dict[str, Any]:
    """The message's Graph JSON (no bodies) for ``$filter`` and ``$orderby``, cached."""
    cached = emulator.filter_views.get(message.immutable_id)
    if cached is not None and cached[0] == message.version:
        return cached[1]
    view = message_json(message, immutable=True, text_body=False, select=_FILTERABLE)
    emulator.filter_views[message.immutable_id] = (message.version, view)
    return view


_FILTERABLE = [
    p
    for p in sorted(MESSAGE_PROPERTIES)
    if p not in ("body", "uniqueBody", "attachments", "internetMessageHeaders")
]


def _in_scope(mailbox: Mailbox, folder: Folder | None) -> Iterable[Message]:
    if folder is not None:
        return (m for m in mailbox.messages.values() if m.folder_id == folder.id)
    hidden = {f.id for f in mailbox.folders.values() if f.is_hidden}
    return (m for m in mailbox.messages.values() if m.folder_id not in hidden)


def list_messages(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None
) -> Answer:
    options = parse_options(call.query)
    _check_select(options.select, MESSAGE_PROPERTIES, "message")
    candidates = list(_in_scope(mailbox, folder))
    if options.search is not None:
        if options.orderby:
            raise GraphHttpError(
                400,
                "SearchWithOrderBy",
                "The query parameter '$orderBy' is not supported with '$search'.",
            )
        if options.filter:
            raise GraphHttpError(
                400,
                "ErrorInvalidUrlQuery",
                "The query parameter '$filter' is not supported with '$search'.",
            )
        test = compile_search(options.search)
        index = emulator.index(mailbox)
        matches = [m for m in candidates if test(m, index.fields(m))]
        matches.sort(key=lambda m: (m.received, m.immutable_id), reverse=True)
    else:
        orders = parse_orderby(options.orderby or _DEFAULT_ORDER, MESSAGE_PROPERTIES, "message")
        views = {m.immutable_id: _filter_view(emulator, mailbox, m) for m in candidates}
        if options.filter:
            named = filter_properties(options.filter, MESSAGE_PROPERTIES, "message")
            for name in named:
                if name in NOT_FILTERABLE:
                    raise GraphHttpError(
                        400,
                        "ErrorInvalidProperty",
                        f"The property '{name}' does not support filtering.",
                    )
            if options.orderby:
                wanted = [o.property.split("/")[0] for o in orders]
                if [n for n in dict.fromkeys(named)][: len(wanted)] != wanted:
                    raise GraphHttpError(
                        400,
                        "InefficientFilter",
                        "The restriction or sort order is too complex for this operation.",
                    )
            predicate = compile_filter(options.filter, MESSAGE_PROPERTIES, "message")
            candidates = [m for m in candidates if predicate(views[m.immutable_id])]
        matches = sorted(candidates, key=lambda m: m.immutable_id)
        for order in reversed(orders):
            path = order.property.split("/")

            def message_key(message: Message, path: list[str] = path) -> tuple[int, Any]:
                return _sort_key(_dig(views[message.immutable_id], path))

            matches.sort(key=message_key, reverse=order.descending)
    top = min(options.top or call.prefer.max_page_size or DEFAULT_TOP, MAX_TOP)
    window = matches[options.skip : options.skip + top]
    rendered = [render_message(m, call, options.select) for m in window]
    expand = _attachment_expand(options.expand)
    if expand is not False:
        for message, out in zip(window, rendered, strict=True):
            out["attachments"] = [_attachment_json(a, expand) for a in message.attachments]
    scope = f"mailFolders('{folder.id}')/messages" if folder else "messages"
    body: dict[str, Any] = {"@odata.context": odata_context(mailbox, scope)}
    if options.count:
        body["@odata.count"] = len(matches)
    body["value"] = rendered
    if options.skip + top < len(matches):
        body["@odata.nextLink"] = call.next_link(**{"$skip": str(options.skip + top)})
    headers = {}
    if call.prefer.text_body:
        headers["Preference-Applied"] = 'outlook.body-content-type="text"'
    return _answer(200, body, **headers)


def _dig(value: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _messages(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None, rest: list[str]
) -> Answer:

    if not rest:
        if call.method == "GET":
            return list_messages(emulator, call, mailbox, folder)
        if call.method == "POST":
            return mail_writes.create_message(emulator, call, mailbox, folder)
        raise _not_allowed()
    message = find_message(mailbox, rest[0], folder)
    tail = rest[1:]
    if not tail:
        if call.method == "GET":
            return get_message(emulator, call, mailbox, message)
        if call.method == "PATCH":
            return mail_writes.update_message(emulator, call, mailbox, message)
        if call.method == "DELETE":
            return mail_writes.delete_message(emulator, call, mailbox, message)
        raise _not_allowed()
    if tail[0] == "attachments":
        return _attachments(emulator, call, mailbox, message, tail[1:])
    if tail == ["$value"] and call.method == "GET":
        return _mime(message)
    if len(tail) == 1 and call.method == "POST":
        return mail_writes.message_action(emulator, call, mailbox, message, tail[0])
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )


def get_message(emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message) -> Answer:
    options = parse_options(call.query)
    _check_select(options.select, MESSAGE_PROPERTIES, "message")
    body = {
        "@odata.context": odata_context(mailbox, "messages/$entity"),
        **render_message(message, call, options.select),
    }
    wanted = _extended_expand(options.expand)
    if wanted is not None:
        body["singleValueExtendedProperties"] = [
            {"id": key, "value": value} for key, value in message.extended.items() if key in wanted
        ]
    else:
        expand = _attachment_expand(options.expand)
        if expand is not False:
            body["attachments"] = [_attachment_json(a, expand) for a in message.attachments]
    headers = {}
    if call.prefer.text_body:
        headers["Preference-Applied"] = 'outlook.body-content-type="text"'
    return _answer(200, body, **headers)


def _extended_expand(value: str | None) -> set[str] | None:
    """The ids named by ``singleValueExtendedProperties($filter=id eq 'a' or id eq 'b')``:
    Graph returns extended properties only when each is named this way."""
    match = re.fullmatch(r"singleValueExtendedProperties\(\$filter=(.*)\)", (value or "").strip())
    if match is None:
        return None
    terms = [term.strip() for term in re.split(r"\s+or\s+", match.group(1))]
    named = [re.fullmatch(r"id eq '([^']{1,200})'", term) for term in terms]
    if not all(named):
        raise GraphHttpError(
            400, "BadRequest", "Only 'id eq' filters are supported on extended properties."
        )
    return {m.group(1) for m in named if m is not None}


def _attachment_expand(value: str | None) -> list[str] | Literal[False] | None:
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
    _check_select(select, ATTACHMENT_PROPERTIES, "attachment")
    return select


def _attachment_json(attachment: Attachment, select: list[str] | None) -> dict[str, Any]:
    full = attachment_json(attachment, with_bytes=select is None or "contentBytes" in select)
    if select is None:
        return full
    wanted = set(select)
    return {k: v for k, v in full.items() if k in wanted or k in ("id", "@odata.type")}


def _attachments(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message, rest: list[str]
) -> Answer:

    if not rest:
        if call.method == "POST":
            return mail_writes.add_attachment(emulator, call, mailbox, message)
        if call.method != "GET":
            raise _not_allowed()
        options = parse_options(call.query)
        _check_select(options.select, ATTACHMENT_PROPERTIES, "attachment")
        items = [_attachment_json(a, options.select) for a in message.attachments]
        return _page(
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
            raise _not_allowed()
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
            raise _not_allowed()
        options = parse_options(call.query)
        _check_select(options.select, ATTACHMENT_PROPERTIES, "attachment")
        body = _attachment_json(attachment, options.select)  # Graph honours $select here too
        expand = (options.expand or "").lower()
        if attachment.item is not None and "item" in expand:
            body["item"] = message_json(
                attachment.item, immutable=False, text_body=call.prefer.text_body, select=None
            )
        body = {"@odata.context": odata_context(mailbox, "messages/attachments/$entity"), **body}
        return _answer(200, body)
    if tail == ["$value"] and call.method == "GET":
        if attachment.item is not None:
            return _mime(attachment.item)
        return Answer(
            200,
            content=attachment.content(),
            headers={"Content-Type": attachment.content_type or "application/octet-stream"},
        )
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )


def _mime(message: Message) -> Answer:
    mime = EmailMessage()
    sender = message.from_ or message.sender
    mime["From"] = f"{sender[0]} <{sender[1]}>"
    if message.to:
        mime["To"] = ", ".join(f"{n} <{a}>" for n, a in message.to)
    if message.cc:
        mime["Cc"] = ", ".join(f"{n} <{a}>" for n, a in message.cc)
    mime["Subject"] = message.subject
    mime["Date"] = format_datetime(message.sent or message.received)
    mime["Message-ID"] = message.internet_message_id
    if message.body_type == "html":
        mime.set_content(message.texts()[0])
        mime.add_alternative(message.body, subtype="html")
    else:
        mime.set_content(message.body)
    for attachment in message.attachments:
        if attachment.kind != "file":
            continue
        maintype, _, subtype = (attachment.content_type or "application/octet-stream").partition(
            "/"
        )
        mime.add_attachment(
            attachment.content(),
            maintype=maintype,
            subtype=subtype or "octet-stream",
            filename=attachment.name,
        )
    return Answer(200, content=mime.as_bytes(), headers={"Content-Type": "text/plain"})
