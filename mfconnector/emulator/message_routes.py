"""Message lists and single messages, and the message routes below them.

Lists follow Outlook's rules: default page 10 (``$top`` 1-1000), ``$skip`` paging with an
``@odata.nextLink`` on the same address, newest first unless ``$orderby`` says otherwise,
``$count=true`` adds ``@odata.count``; ``$search`` refuses ``$orderby``
(``SearchWithOrderBy``) and ``$filter``; a ``$filter`` with ``$orderby`` must name the
``$orderby`` properties first (``InefficientFilter``).
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import Any

from mfconnector.emulator import mail_writes
from mfconnector.emulator.attachment_routes import (
    attachment_expand,
    attachment_route,
    attachment_view,
)
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.kql import compile_search
from mfconnector.emulator.mail_lookup import (
    encode_json,
    find_message,
    odata_context,
    render_message,
    render_message_text,
)
from mfconnector.emulator.mail_paging import (
    DEFAULT_TOP,
    MAX_TOP,
    check_select,
    json_answer,
    not_allowed,
    sort_key,
)
from mfconnector.emulator.message_mime import mime_answer
from mfconnector.emulator.model import Folder, Mailbox, Message
from mfconnector.emulator.odata import (
    QueryOptions,
    compile_filter,
    filter_properties,
    parse_options,
    parse_orderby,
)
from mfconnector.emulator.render import MESSAGE_PROPERTIES, message_json
from mfconnector.emulator.state import EmulatorState

__all__ = ["get_message", "list_messages", "message_route"]

_DEFAULT_ORDER = "receivedDateTime desc"
NOT_FILTERABLE = frozenset(
    {"body", "uniqueBody", "bodyPreview", "internetMessageHeaders", "attachments"}
)
"""Outlook filters on metadata, never on bodies: searching text is ``$search``'s job."""


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


def _in_scope(mailbox: Mailbox, folder: Folder | None) -> list[Message]:
    if folder is not None:
        folder_id = folder.id
        return [m for m in mailbox.messages.values() if m.folder_id == folder_id]
    hidden = {f.id for f in mailbox.folders.values() if f.is_hidden}
    return [m for m in mailbox.messages.values() if m.folder_id not in hidden]


def list_messages(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None
) -> Answer:
    options = parse_options(call.query)
    check_select(options.select, MESSAGE_PROPERTIES, "message")
    candidates = _in_scope(mailbox, folder)
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
        if not options.filter and [o.property for o in orders] == ["receivedDateTime"]:
            # Outlook's own order, asked for by nearly every list: the same order as the
            # general path below (ties by id; the time as rendered, to the second) without
            # a rendered view per message of the folder.
            matches = sorted(candidates, key=_BY_ID)
            whole_seconds = not any(map(_MICROSECOND, matches))
            by_time = _RECEIVED if whole_seconds else _received_second
            matches.sort(key=by_time, reverse=orders[0].descending)
            return _page(call, options, mailbox, folder, matches)
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
                return sort_key(_dig(views[message.immutable_id], path))

            matches.sort(key=message_key, reverse=order.descending)
    return _page(call, options, mailbox, folder, matches)


_BY_ID = attrgetter("immutable_id")
_RECEIVED = attrgetter("received")
_MICROSECOND = attrgetter("received.microsecond")
"""The time itself orders as its second does when no message has a fraction of a second
(the seeded mailbox): a key read in C, not a Python call per message of the folder."""


def _received_second(message: Message) -> int:
    return int(message.received.timestamp() // 1)


def _page(
    call: Call,
    options: QueryOptions,
    mailbox: Mailbox,
    folder: Folder | None,
    matches: list[Message],
) -> Answer:
    """The requested window of ``matches`` as Graph's page, with its next link."""
    top = min(options.top or call.prefer.max_page_size or DEFAULT_TOP, MAX_TOP)
    window = matches[options.skip : options.skip + top]
    expand = attachment_expand(options.expand)
    if expand is False:
        texts = [render_message_text(m, call, options.select) for m in window]
    else:
        rendered = [render_message(m, call, options.select) for m in window]
        for message, out in zip(window, rendered, strict=True):
            out["attachments"] = [attachment_view(a, expand) for a in message.attachments]
        texts = [encode_json(out) for out in rendered]
    scope = f"mailFolders('{folder.id}')/messages" if folder else "messages"
    body: dict[str, Any] = {"@odata.context": odata_context(mailbox, scope)}
    if options.count:
        body["@odata.count"] = len(matches)
    body["value"] = None
    if options.skip + top < len(matches):
        body["@odata.nextLink"] = call.next_link(**{"$skip": str(options.skip + top)})
    headers = {}
    if call.prefer.text_body:
        headers["Preference-Applied"] = 'outlook.body-content-type="text"'
    return Answer(200, json_text=_joined(body, "value", texts), headers=headers)


def _joined(body: dict[str, Any], key: str, texts: list[str]) -> str:
    """``body`` encoded with ``key``'s value the array of ``texts``, in the body's order."""
    pieces = ["{"]
    for name, value in body.items():
        if len(pieces) > 1:
            pieces.append(",")
        pieces += (encode_json(name), ":")
        pieces += ("[", ",".join(texts), "]") if name == key else (encode_json(value),)
    pieces.append("}")
    return "".join(pieces)


def _dig(value: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def message_route(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder | None, rest: list[str]
) -> Answer:

    if not rest:
        if call.method == "GET":
            return list_messages(emulator, call, mailbox, folder)
        if call.method == "POST":
            return mail_writes.create_message(emulator, call, mailbox, folder)
        raise not_allowed()
    message = find_message(mailbox, rest[0], folder)
    tail = rest[1:]
    if not tail:
        if call.method == "GET":
            return get_message(emulator, call, mailbox, message)
        if call.method == "PATCH":
            return mail_writes.update_message(emulator, call, mailbox, message)
        if call.method == "DELETE":
            return mail_writes.delete_message(emulator, call, mailbox, message)
        raise not_allowed()
    if tail[0] == "attachments":
        return attachment_route(emulator, call, mailbox, message, tail[1:])
    if tail == ["$value"] and call.method == "GET":
        return mime_answer(message)
    if len(tail) == 1 and call.method == "POST":
        return mail_writes.message_action(emulator, call, mailbox, message, tail[0])
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )


def get_message(emulator: EmulatorState, call: Call, mailbox: Mailbox, message: Message) -> Answer:
    options = parse_options(call.query)
    check_select(options.select, MESSAGE_PROPERTIES, "message")
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
        expand = attachment_expand(options.expand)
        if expand is not False:
            body["attachments"] = [attachment_view(a, expand) for a in message.attachments]
    headers = {}
    if call.prefer.text_body:
        headers["Preference-Applied"] = 'outlook.body-content-type="text"'
    return json_answer(200, body, **headers)


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
