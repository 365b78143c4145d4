"""Outlook reads: the profile, mailbox settings and folders; messages are routed on to
``message_routes`` (attachments below them to ``attachment_routes``), writes to
``mail_writes`` and ``folder_writes``.
"""

from __future__ import annotations

from typing import Any

from mfconnector.emulator import folder_writes, mail_writes
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.mail_lookup import find_folder, odata_context
from mfconnector.emulator.mail_paging import (
    check_select,
    json_answer,
    not_allowed,
    page,
    select_plain,
    sort_key,
)
from mfconnector.emulator.message_routes import message_route
from mfconnector.emulator.model import Mailbox
from mfconnector.emulator.odata import compile_filter, parse_options, parse_orderby
from mfconnector.emulator.render import folder_json, profile_json
from mfconnector.emulator.state import EmulatorState

__all__ = ["route"]

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


def route(emulator: EmulatorState, call: Call, mailbox: Mailbox, rest: list[str]) -> Answer:
    method = call.method
    if not rest:
        if method != "GET":
            raise not_allowed()
        return json_answer(200, select_plain(profile_json(mailbox), call))
    head = rest[0]
    if head == "mailboxSettings":
        return _mailbox_settings(call, mailbox, rest[1:])
    if head == "sendMail" and len(rest) == 1:
        if method != "POST":
            raise not_allowed()
        return mail_writes.send_mail(emulator, call, mailbox)
    if head == "mailFolders":
        return _folders(emulator, call, mailbox, rest[1:])
    if head == "messages":
        return message_route(emulator, call, mailbox, None, rest[1:])
    raise GraphHttpError(400, "BadRequest", f"Resource not found for the segment '{head[:100]}'.")


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
        return json_answer(200, settings)
    if call.method != "GET":
        raise not_allowed()
    if not rest:
        return json_answer(200, select_plain(settings, call))
    if len(rest) == 1 and rest[0] in settings and not rest[0].startswith("@"):
        return json_answer(
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
            raise not_allowed()
        return _folder_list(call, mailbox, mailbox.root_id, "mailFolders")
    folder = find_folder(mailbox, rest[0])
    tail = rest[1:]
    if not tail:
        if call.method == "GET":
            options = parse_options(call.query)
            check_select(options.select, FOLDER_PROPERTIES, "mailFolder")
            body = select_plain(folder_json(folder, mailbox), call)
            return json_answer(
                200, {"@odata.context": odata_context(mailbox, "mailFolders/$entity"), **body}
            )
        if call.method == "PATCH":
            return folder_writes.update_folder(emulator, call, mailbox, folder)
        if call.method == "DELETE":
            return folder_writes.delete_folder(emulator, call, mailbox, folder)
        raise not_allowed()
    if tail[0] == "childFolders":
        if len(tail) == 1:
            if call.method == "POST":
                return folder_writes.create_folder(emulator, call, mailbox, folder)
            if call.method != "GET":
                raise not_allowed()
            return _folder_list(
                call, mailbox, folder.id, f"mailFolders('{folder.id}')/childFolders"
            )
        return _folders(emulator, call, mailbox, tail[1:])
    if tail[0] == "messages":
        return message_route(emulator, call, mailbox, folder, tail[1:])
    if tail == ["permanentDelete"] and call.method == "POST":
        return folder_writes.permanently_delete_folder(emulator, call, mailbox, folder)
    raise GraphHttpError(
        400, "BadRequest", f"Resource not found for the segment '{tail[0][:100]}'."
    )


def _folder_list(call: Call, mailbox: Mailbox, parent_id: str, context: str) -> Answer:
    options = parse_options(call.query)
    check_select(options.select, FOLDER_PROPERTIES, "mailFolder")
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
                return sort_key(folder.get(name))

            folders.sort(key=folder_key, reverse=order.descending)
    return page(call, options, folders, odata_context(mailbox, context), select=options.select)
