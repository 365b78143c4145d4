"""Mail folder writes: create (409 if the name is taken), rename, delete (into Deleted
Items; a well-known folder cannot be deleted) and ``permanentDelete``."""

from __future__ import annotations

from mfconnector.emulator import ids
from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.model import Folder, Mailbox
from mfconnector.emulator.render import GRAPH, folder_json
from mfconnector.emulator.state import EmulatorState

__all__ = ["create_folder", "delete_folder", "permanently_delete_folder", "update_folder"]


def _answer(status: int, body: dict[str, object] | None = None) -> Answer:
    return Answer(status, json=body)


def create_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, parent: Folder) -> Answer:
    body = call.json_body()
    name = body.get("displayName")
    if not isinstance(name, str) or not name.strip() or len(name) > 255:
        raise GraphHttpError(400, "ErrorInvalidRequest", "The folder needs a displayName.")
    if any(
        f.parent_id == parent.id and f.display_name.casefold() == name.casefold()
        for f in mailbox.folders.values()
    ):
        raise GraphHttpError(
            409, "ErrorFolderExists", "A folder with the specified name already exists."
        )
    label = mailbox.next_label("folder")
    folder = mailbox.add_folder(
        Folder(ids.folder_id(label), name, parent.id, None, bool(body.get("isHidden", False)))
    )
    context = f"{GRAPH}/$metadata#users('{mailbox.user_id}')/mailFolders/$entity"
    return _answer(201, {"@odata.context": context, **folder_json(folder, mailbox)})


def update_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder) -> Answer:
    body = call.json_body()
    name = body.get("displayName")
    if set(body) - {"displayName"} or not isinstance(name, str) or not name.strip():
        raise GraphHttpError(400, "ErrorInvalidRequest", "Only displayName can be changed.")
    if any(
        f.parent_id == folder.parent_id
        and f.id != folder.id
        and f.display_name.casefold() == name.casefold()
        for f in mailbox.folders.values()
    ):
        raise GraphHttpError(
            409, "ErrorFolderExists", "A folder with the specified name already exists."
        )
    folder.display_name = name
    context = f"{GRAPH}/$metadata#users('{mailbox.user_id}')/mailFolders/$entity"
    return _answer(200, {"@odata.context": context, **folder_json(folder, mailbox)})


def delete_folder(emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder) -> Answer:
    if folder.well_known:
        raise GraphHttpError(
            400, "ErrorDeleteDistinguishedFolder", "Distinguished folders cannot be deleted."
        )
    deleted = mailbox.well_known["deleteditems"]
    if folder.id in mailbox.descendants(deleted):
        return permanently_delete_folder(emulator, call, mailbox, folder)
    folder.parent_id = deleted
    return _answer(204)


def permanently_delete_folder(
    emulator: EmulatorState, call: Call, mailbox: Mailbox, folder: Folder
) -> Answer:
    if folder.well_known:
        raise GraphHttpError(
            400, "ErrorDeleteDistinguishedFolder", "Distinguished folders cannot be deleted."
        )
    gone = set(mailbox.descendants(folder.id))
    for message in [m for m in mailbox.messages.values() if m.folder_id in gone]:
        mailbox.remove_message(message)
    for folder_id in gone:
        mailbox.folders.pop(folder_id, None)
    return _answer(204)
