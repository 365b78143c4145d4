"""The acting half of the Graph backend: folders, moves, flags, drafts, freezing, sending.

Every request body is built here from the tools' neutral, checked values; ids go into
paths percent-encoded, and are immutable (``Prefer: IdType="ImmutableId"``), so a moved
message keeps its id and a sent draft's copy in Sent Items has the draft's id. Every write
goes through ``GraphClient.write_json`` (sent once, its ambiguity named); every failure
leaves here classified into ``mail.failures`` (``graph.failures``), and one that took
several requests says what was done and what was not (``outcome``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mfconnector.errors import AuthError, GraphError, GraphThrottledError, ToolError
from mfconnector.graph import draft_attachments
from mfconnector.graph.drafts import (
    PREFER_IDS,
    draft_record,
    message_fields,
    message_path,
)
from mfconnector.graph.folder_roles import ROLE_NAMES, drafts_id, folder_role
from mfconnector.graph.mailbox import graph_capabilities
from mfconnector.graph.scopes import missing_scopes
from mfconnector.graph.urls import quote_segment
from mfconnector.mail.digest import digest_of
from mfconnector.mail.failures import ActionFailure, Ambiguous, Conflict, Unsupported
from mfconnector.mail.model import Folder, MessageSummary
from mfconnector.mail.outgoing import (
    DraftAttachment,
    DraftContent,
    DraftMade,
    DraftRevision,
    FrozenOutgoing,
    ReplyKind,
    SendResult,
)
from mfconnector.mail.query import FlagChange
from mfconnector.mail.refs import Reference
from mfconnector.reporting import report_progress

if TYPE_CHECKING:
    from mfconnector.graph.mailbox import ClientFactory, GraphMailbox, GraphMailCaches
    from mfconnector.limits import Limits
    from mfconnector.mail.refs import AccountTag

__all__ = ["GraphMailActs", "Steps"]

_RESPONSES = {"reply": "createReply", "reply_all": "createReplyAll", "forward": "createForward"}
_FLAGS = {"flagged": "flagged", "none": "notFlagged", "done": "complete"}
_FLAG_STATES = {graph: neutral for neutral, graph in _FLAGS.items()}


@dataclass
class Steps:
    """What a multi-request operation has done so far, for a partial outcome; and whether
    a request that may change the mailbox is in flight (its failure is then ambiguous)."""

    done: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    writing: bool = False

    def plan(self, *steps: str) -> None:
        self.pending = list(steps)

    def did(self, step: str, **facts: Any) -> None:
        self.done.append(step)
        if step in self.pending:
            self.pending.remove(step)
        self.facts.update(facts)

    def outcome(self) -> dict[str, Any] | None:
        if not self.done:
            return None
        return {"done": list(self.done), "not_done": list(self.pending), **self.facts}

    def set_writing(self, value: bool) -> None:
        self.writing = value


@contextlib.asynccontextmanager
async def _classified(steps: Steps) -> AsyncIterator[None]:
    """Failures inside leave as ``mail.failures`` with the partial outcome attached."""
    from mfconnector.graph.failures import as_failure  # httpx stays off the start-up path

    try:
        yield
    except ToolError as error:
        failure = as_failure(error, writing=steps.writing)
        outcome = steps.outcome()
        if outcome is not None and getattr(failure, "outcome", None) is None:
            failure.outcome = outcome  # type: ignore[attr-defined]
        if failure is error:
            raise
        raise failure from None


class GraphMailActs:
    """``MailBackend``'s acting methods, mixed into ``GraphMailBackend`` (which adds the
    reads): ``self`` is the ``GraphMailbox`` of the call's mailbox."""

    if TYPE_CHECKING:
        tag: AccountTag
        client: ClientFactory
        limits: Limits
        path: str
        caches: GraphMailCaches

    @property
    def _box(self) -> GraphMailbox:
        return cast("GraphMailbox", self)

    def _ref(self, native: str) -> Reference:
        return Reference(self.tag, native)

    async def _write(
        self,
        steps: Steps,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        graph = await self.client()
        steps.writing = True
        answer = await graph.write_json(method, path, body=body, headers=headers or PREFER_IDS)
        steps.writing = False
        return answer.body if isinstance(answer.body, dict) else {}

    def _folders(self) -> str:
        return f"{self.path.rstrip('/')}/mailFolders"

    def _folder(self, item: dict[str, Any], fallback_name: str, parent: Folder | None) -> Folder:
        name = str(item.get("displayName") or fallback_name)
        parent_id = item.get("parentFolderId")
        return Folder(
            ref=self._ref(str(item.get("id") or "")),
            name=name,
            path=f"{parent.path}/{name}" if parent is not None else name,
            parent=self._ref(parent_id) if isinstance(parent_id, str) and parent_id else None,
        )

    def _forget_folder_paths(self) -> None:
        """Drop this mailbox's remembered folder names and paths after a folder write."""
        path = self.path
        self.caches.folder_ids.drop(lambda key: key[0] == path)
        self.caches.folder_names.drop(lambda key: key[0] == path)

    def _target(self, folder: Folder) -> str:
        """What Graph takes as ``destinationId``: the folder's id (or its well-known name)."""
        return folder.ref.native or ROLE_NAMES.get(folder.role or "", "")

    # --- permissions ---------------------------------------------------------------------

    async def missing_permissions(self, gate: str) -> Sequence[str]:
        graph = await self.client()
        return missing_scopes(await graph.describe_token(), gate)

    # --- folders -------------------------------------------------------------------------

    async def create_folder(self, parent: Folder | None, name: str) -> Folder:
        steps = Steps()
        path = self._folders()
        if parent is not None:
            path += f"/{quote_segment(self._target(parent))}/childFolders"
        async with _classified(steps):
            created = await self._write(steps, "POST", path, {"displayName": name})
        self._forget_folder_paths()  # a new folder can make a remembered name ambiguous
        return self._folder(created, name, parent)

    async def rename_folder(self, folder: Folder, name: str) -> Folder:
        """A folder of the person's own; a folder with a role (``classify_folder``) is
        ``Unsupported`` before any request, as every backend keeps its special folders."""
        if folder.role is not None:
            raise Unsupported(
                f"{folder.path!r} is this mailbox's {folder.role} folder; renaming it is not "
                "offered, so nothing was changed"
            )
        steps = Steps()
        path = f"{self._folders()}/{quote_segment(self._target(folder))}"
        async with _classified(steps):
            renamed = await self._write(steps, "PATCH", path, {"displayName": name})
        self._forget_folder_paths()  # the old name and every path under it are gone
        parent_path = folder.path.rpartition("/")[0]
        item = self._folder(renamed, name, None)
        return Folder(
            ref=item.ref,
            name=item.name,
            path=f"{parent_path}/{item.name}" if parent_path else item.name,
            parent=item.parent,
        )

    async def classify_folder(self, folder: Folder) -> Folder:
        """The folder with the role Graph gives its id now (an id may be Sent Items')."""
        steps = Steps()
        async with _classified(steps):
            resolved, role = await folder_role(self._box, self._target(folder))
        return dataclasses.replace(folder, ref=self._ref(resolved), role=role)  # type: ignore[arg-type]

    # --- messages ------------------------------------------------------------------------

    async def _relocate(self, message: Reference, target: str, verb: str) -> Reference | None:
        steps = Steps()
        path = f"{message_path(self._box, message.native)}/{verb}"
        async with _classified(steps):
            moved = await self._write(steps, "POST", path, {"destinationId": target})
        new = moved.get("id")
        return self._ref(new) if isinstance(new, str) and new else None

    async def copy(self, message: Reference, target: Folder) -> Reference | None:
        return await self._relocate(message, self._target(target), "copy")

    async def move(self, message: Reference, target: Folder) -> Reference | None:
        return await self._relocate(message, self._target(target), "move")

    async def trash(self, message: Reference) -> Reference | None:
        return await self._relocate(message, "deleteditems", "move")

    async def set_flags(self, message: Reference, change: FlagChange) -> MessageSummary | None:
        """isRead, follow-up flag and categories; ``unchanged_since`` is Graph's changeKey,
        compared first and sent as ``If-Match`` (Graph answers 412 when it moved on)."""
        steps = Steps()
        path = message_path(self._box, message.native)
        patch: dict[str, Any] = {}
        if change.unread is not None:
            patch["isRead"] = not change.unread
        if change.flag is not None:
            patch["flag"] = {"flagStatus": _FLAGS[change.flag]}
        expected = change.unchanged_since
        categories = bool(change.add_categories or change.remove_categories)
        async with _classified(steps):
            if expected is not None or categories:
                graph = await self.client()
                current = await graph.get_json(
                    path, query={"$select": "categories,changeKey"}, headers=PREFER_IDS
                )
                body = current.body if isinstance(current.body, dict) else {}
                if expected is not None and body.get("changeKey") != expected:
                    raise Conflict(
                        "the message changed since `unchanged_since` was read; nothing was changed",
                        hint="read the message again and decide again",
                        details={"current_change_token": body.get("changeKey")},
                    )
                if categories:
                    kept = [c for c in body.get("categories") or [] if isinstance(c, str)]
                    remove = set(change.remove_categories)
                    kept = [c for c in kept if c not in remove]
                    kept += [c for c in change.add_categories if c not in kept]
                    patch["categories"] = kept
            headers = dict(PREFER_IDS)
            if expected is not None:
                headers["If-Match"] = f'W/"{expected}"'
            updated = await self._write(steps, "PATCH", path, patch, headers)
        return self._summary(updated, message)

    def _summary(self, item: dict[str, Any], message: Reference) -> MessageSummary:
        flag = item.get("flag")
        status = flag.get("flagStatus") if isinstance(flag, dict) else None
        categories = item.get("categories")
        change_key = item.get("changeKey")
        return MessageSummary(
            ref=self._ref(str(item.get("id") or message.native)),
            subject=item.get("subject") if isinstance(item.get("subject"), str) else None,
            sender=None,
            received=None,
            unread=item.get("isRead") is False,
            flag=_FLAG_STATES.get(str(status), "none"),  # type: ignore[arg-type]
            categories=tuple(c for c in categories if isinstance(c, str))
            if isinstance(categories, list)
            else (),
            change_token=change_key if isinstance(change_key, str) else None,
        )

    async def delete_permanently(self, message: Reference) -> None:
        """Graph's ``permanentDelete`` (global cloud only: ``capabilities.permanent_delete``);
        in a national cloud ``Unsupported`` before any request."""
        gaps = dict(graph_capabilities(self._box.cloud).missing)
        if "permanent_delete" in gaps:
            raise Unsupported(
                gaps["permanent_delete"], hint="move it to Deleted Items (trash) instead"
            )
        steps = Steps()
        async with _classified(steps):
            await self._write(
                steps, "POST", f"{message_path(self._box, message.native)}/permanentDelete"
            )

    # --- drafts --------------------------------------------------------------------------

    async def resolve_attachment(self, attachment: DraftAttachment) -> DraftAttachment:
        steps = Steps()
        async with _classified(steps):
            return await draft_attachments.resolve(self._box, attachment)

    async def source_version(self, attachment: DraftAttachment) -> str | None:
        steps = Steps()
        async with _classified(steps):
            return await draft_attachments.source_version(self._box, attachment)

    async def _attach(
        self, steps: Steps, draft: str, attachments: Sequence[DraftAttachment]
    ) -> list[DraftAttachment]:
        attached: list[DraftAttachment] = []

        def one(attachment: DraftAttachment, size: int, sha256: str) -> None:
            steps.did(f"attach {attachment.name}")
            attached.append(dataclasses.replace(attachment, data=None, size=size, sha256=sha256))

        def meter(done: int, total: int, name: str) -> None:
            report_progress(done, total, f"attached {done:,} of {total:,} bytes ({name[:80]})")

        await draft_attachments.attach_all(
            self._box,
            draft,
            attachments,
            writing=steps.set_writing,
            attached_one=one,
            meter=meter,
        )
        return attached

    async def create_draft(self, content: DraftContent) -> DraftMade:
        steps = Steps()
        steps.plan("create the draft", *(f"attach {a.name}" for a in content.attachments))
        async with _classified(steps):
            created = await self._write(
                steps, "POST", f"{self.path.rstrip('/')}/messages", message_fields(content)
            )
            draft = self._created_id(
                created, "the draft", "look in Drafts before creating it again"
            )
            steps.did("create the draft", draft_id=str(draft))
            attached = await self._attach(steps, draft.native, content.attachments)
        return DraftMade(draft, attached)

    def _created_id(self, created: dict[str, Any], what: str, hint: str) -> Reference:
        native = created.get("id")
        if not isinstance(native, str) or not native:
            raise Ambiguous(f"Graph created {what} but returned no id", hint=hint)
        return self._ref(native)

    async def create_response(
        self, message: Reference, kind: ReplyKind, content: DraftContent
    ) -> DraftMade:
        """createReply / createReplyAll / createForward: Graph threads it and quotes the
        original; ``content.text`` is the comment above the quote, recipients override."""
        steps = Steps()
        body: dict[str, Any] = {}
        if content.text is not None:
            body["comment"] = content.text
        overrides = message_fields(DraftContent(to=content.to, cc=content.cc, bcc=content.bcc))
        if overrides:
            body["message"] = overrides
        steps.plan(f"create the {kind} draft", *(f"attach {a.name}" for a in content.attachments))
        path = f"{message_path(self._box, message.native)}/{_RESPONSES[kind]}"
        async with _classified(steps):
            created = await self._write(steps, "POST", path, body)
            draft = self._created_id(created, f"the {kind} draft", "look in Drafts")
            steps.did(f"create the {kind} draft", draft_id=str(draft))
            attached = await self._attach(steps, draft.native, content.attachments)
        return DraftMade(draft, attached)

    async def revise_draft(self, draft: Reference, revision: DraftRevision) -> DraftMade:
        """A copy of the draft (Outlook keeps reply threading and inline images with it),
        then only the changed properties written to the copy."""
        steps = Steps()
        changes = message_fields(revision.content, revision.changed - {"attachments"})
        replace = "attachments" in revision.changed
        steps.plan(
            "copy the draft",
            *(["apply the changes"] if changes else []),
            *(["remove the old attachments"] if replace else []),
            *(f"attach {a.name}" for a in (revision.content.attachments if replace else ())),
        )
        source = message_path(self._box, draft.native)
        async with _classified(steps):
            copied = await self._write(steps, "POST", f"{source}/copy", {"destinationId": "drafts"})
            new = self._created_id(
                copied, "a copy of the draft", "look in Drafts before revising again"
            )
            steps.did("copy the draft", draft_id=str(new))
            if copied.get("isDraft") is False:
                raise Unsupported(
                    "Graph's copy of the draft is not a draft, so it cannot be revised; it was "
                    "left in Drafts",
                    hint="create a new draft with mail_create draft instead",
                )
            path = message_path(self._box, new.native)
            if changes:
                await self._write(steps, "PATCH", path, changes)
                steps.did("apply the changes")
            attached: list[DraftAttachment] = []
            if replace:
                graph = await self.client()
                listed = await graph.get_json(
                    f"{path}/attachments", query={"$select": "id,name"}, headers=PREFER_IDS
                )
                values = listed.body.get("value") if isinstance(listed.body, dict) else None
                for item in values if isinstance(values, list) else []:
                    attachment = quote_segment(str(item.get("id", "")))
                    await self._write(steps, "DELETE", f"{path}/attachments/{attachment}")
                steps.did("remove the old attachments")
                attached = await self._attach(steps, new.native, revision.content.attachments)
        return DraftMade(new, attached if replace else ())

    async def freeze(self, draft: Reference) -> FrozenOutgoing:
        """The draft read completely, as the neutral record its digest covers."""
        steps = Steps()
        async with _classified(steps):
            record, folder = await draft_record(self._box, draft.native, str(draft))
            drafts = await drafts_id(self._box)
        return FrozenOutgoing(
            record=record,
            digest=digest_of(record),
            draft=draft,
            message_id=record.get("internet_message_id") or None,
            folder_role="drafts" if folder and folder == drafts else None,
        )

    async def discard_draft(self, draft: Reference) -> None:
        """Outlook's Discard: the draft goes to Deleted Items."""
        await self.trash(draft)

    # --- sending -------------------------------------------------------------------------

    async def send(self, frozen: FrozenOutgoing) -> SendResult:
        """``POST /messages/{id}/send``, once: 202 is ``sent``; an answer that may hide a
        send is ``unknown``; nothing left this process is ``not_sent``."""
        assert frozen.draft is not None
        graph = await self.client()
        path = f"{message_path(self._box, frozen.draft.native)}/send"
        try:
            answer = await graph.write_json("POST", path, headers=PREFER_IDS)
        except ToolError as error:
            return _send_failure(error)
        return SendResult("sent", details={"provider_status": answer.status})

    async def verify_sent(self, frozen: FrozenOutgoing) -> bool | None:
        """With immutable ids the sent copy keeps the draft's id; None when unknowable now."""
        if frozen.draft is None:
            return None
        graph = await self.client()
        try:
            await graph.get_json(
                f"{self._folders()}/sentitems/messages/{quote_segment(frozen.draft.native)}",
                query={"$select": "id"},
                headers=PREFER_IDS,
            )
        except GraphError as error:
            return False if error.status == 404 else None
        except ToolError:
            return None
        return True


def _send_failure(error: ToolError) -> SendResult:
    """What a send request that did not answer 2xx did."""
    from mfconnector.graph.errors import AmbiguousWriteError
    from mfconnector.graph.failures import as_failure, graph_details

    if isinstance(error, AuthError):
        # The token never came (or was refused before any request): nothing left.
        return SendResult("not_sent", detail=error.message, error_code="auth_required")
    if isinstance(error, AmbiguousWriteError):
        return SendResult("unknown", detail=error.message)
    if isinstance(error, GraphThrottledError) and error.status == 429:
        return SendResult("rejected", detail=error.message, error_code="throttled")
    if isinstance(error, GraphError):
        if error.status is None and error.retry_safe:
            # A refused connection: the request never left.
            return SendResult("not_sent", detail=error.message, error_code="provider_error")
        if error.status is None or error.status >= 500:
            return SendResult(
                "unknown", detail=error.message, details={"provider_status": error.status}
            )
        failure = as_failure(error, writing=False)
        code = failure.error_code if isinstance(failure, ActionFailure) else "provider_error"
        details = graph_details(error)
        details["provider_status"] = details.pop("status", None)
        return SendResult("rejected", detail=error.message, error_code=code, details=details)
    return SendResult("rejected", detail=error.message, error_code="provider_error")
