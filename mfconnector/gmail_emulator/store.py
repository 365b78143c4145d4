"""One Gmail mailbox in memory: labels, messages, threads, drafts and the history log.

Every change goes through ``Mailbox`` so that it is numbered: the mailbox ``history_id``
grows by one per change, the changed message takes that id as its ``historyId``, and a
history record says what happened (``messagesAdded``, ``messagesDeleted``, ``labelsAdded``,
``labelsRemoved``), as ``users.history.list`` reports it. Gmail's ids are not contiguous;
these are, which no client may rely on either way.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mfconnector.gmail_emulator import mime

__all__ = [
    "CATEGORY_LABELS",
    "SYSTEM_LABELS",
    "Draft",
    "HistoryRecord",
    "Label",
    "Mailbox",
    "Message",
    "normalized_subject",
]

CATEGORY_LABELS = (
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
)
SYSTEM_LABELS = (
    "CHAT",
    "SENT",
    "INBOX",
    "IMPORTANT",
    "TRASH",
    "DRAFT",
    "SPAM",
    *CATEGORY_LABELS,
    "STARRED",
    "UNREAD",
)
"""The system labels ``labels.list`` shows for a consumer Gmail account, in its order."""
_HIDDEN_SYSTEM = frozenset({"CHAT", "IMPORTANT", "SPAM", *CATEGORY_LABELS, "UNREAD"})
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs)\s*(?:\[\d+\])?\s*:\s*)+", re.I)


def normalized_subject(subject: str) -> str:
    """The subject without reply and forward prefixes, for Gmail's "subjects must match"."""
    return " ".join(_REPLY_PREFIX.sub("", subject).split()).casefold()


@dataclass
class Label:
    id: str
    name: str
    type: str
    message_list_visibility: str | None = None
    label_list_visibility: str | None = None
    color: dict[str, str] | None = None

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.message_list_visibility:
            out["messageListVisibility"] = self.message_list_visibility
        if self.label_list_visibility:
            out["labelListVisibility"] = self.label_list_visibility
        out["type"] = self.type
        if self.color:
            out["color"] = dict(self.color)
        return out


@dataclass
class Message:
    id: str
    thread_id: str
    raw: bytes
    parsed: mime.Parsed
    label_ids: list[str]
    internal_ms: int
    history_id: int

    def ref(self) -> dict[str, Any]:
        return {"id": self.id, "threadId": self.thread_id}

    def ref_with_labels(self) -> dict[str, Any]:
        return {**self.ref(), "labelIds": list(self.label_ids)}

    @property
    def internal_date(self) -> datetime:
        return datetime.fromtimestamp(self.internal_ms / 1000, UTC)


@dataclass
class Draft:
    id: str
    message_id: str


@dataclass
class HistoryRecord:
    id: int
    message: dict[str, Any]
    kind: str
    """messageAdded, messageDeleted, labelAdded or labelRemoved."""
    label_ids: tuple[str, ...] = ()

    def json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"message": self.message}
        key = {
            "messageAdded": "messagesAdded",
            "messageDeleted": "messagesDeleted",
            "labelAdded": "labelsAdded",
            "labelRemoved": "labelsRemoved",
        }[self.kind]
        if self.kind.startswith("label"):
            entry["labelIds"] = list(self.label_ids)
        ref = {"id": self.message["id"], "threadId": self.message["threadId"]}
        return {"id": str(self.id), "messages": [ref], key: [entry]}


@dataclass
class Mailbox:
    address: str
    now: datetime
    """The mailbox clock: fixed, so the demo and every test see the same "today"."""
    labels: dict[str, Label] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    drafts: dict[str, Draft] = field(default_factory=dict)
    history: list[HistoryRecord] = field(default_factory=list)
    history_id: int = 100_000
    oldest_history_id: int = 100_000
    """History records older than this are gone: ``startHistoryId`` below it answers 404."""

    def __post_init__(self) -> None:
        self._sequence = itertools.count(1)
        self._ticks = itertools.count(1)
        self._user_labels = itertools.count(1)
        for name in SYSTEM_LABELS:
            hidden = name in _HIDDEN_SYSTEM
            self.labels[name] = Label(
                name,
                name,
                "system",
                None if hidden else "show",
                None if hidden else "labelShow",
            )

    # --- ids and clock ---------------------------------------------------------------

    def tick(self) -> datetime:
        """Each write happens one second after the previous one, from the fixed "now"."""
        return self.now + timedelta(seconds=next(self._ticks))

    def _new_id(self, internal_ms: int) -> str:
        return format((internal_ms << 20) | next(self._sequence), "x")

    def new_draft_id(self) -> str:
        return f"r{(int(self.now.timestamp()) << 24) | next(self._sequence)}"

    def _record(self, message: Message, kind: str, label_ids: Iterable[str] = ()) -> None:
        self.history_id += 1
        message.history_id = self.history_id
        ref = message.ref_with_labels()
        self.history.append(HistoryRecord(self.history_id, ref, kind, tuple(label_ids)))

    def forget_history(self) -> None:
        """Expires every record so far, as Gmail does after a week or so: the current
        ``historyId`` stays a valid start, any older one answers 404."""
        self.history.clear()
        self.oldest_history_id = self.history_id

    # --- labels ----------------------------------------------------------------------

    def label_by_name(self, name: str) -> Label | None:
        wanted = name.casefold()
        return next((lb for lb in self.labels.values() if lb.name.casefold() == wanted), None)

    def add_user_label(self, name: str, **options: Any) -> Label:
        label = Label(f"Label_{next(self._user_labels)}", name, "user", **options)
        self.labels[label.id] = label
        return label

    def counts(self, label_id: str) -> dict[str, int]:
        """messagesTotal/Unread and threadsTotal/Unread of one label."""
        tagged = [m for m in self.messages.values() if label_id in m.label_ids]
        unread = [m for m in tagged if "UNREAD" in m.label_ids]
        return {
            "messagesTotal": len(tagged),
            "messagesUnread": len(unread),
            "threadsTotal": len({m.thread_id for m in tagged}),
            "threadsUnread": len({m.thread_id for m in unread}),
        }

    # --- messages --------------------------------------------------------------------

    def thread(self, thread_id: str) -> list[Message]:
        found = [m for m in self.messages.values() if m.thread_id == thread_id]
        return sorted(found, key=lambda m: (m.internal_ms, m.id))

    def thread_for(self, parsed: mime.Parsed, requested: str | None) -> str | None:
        """The thread a new message joins, by Gmail's rules ("Managing threads" guide).

        It joins when it refers (In-Reply-To/References) to a message of the thread and
        its subject matches; with ``requested`` (a threadId sent along), only that thread.
        """
        referenced = set(parsed.referenced_ids)
        if not referenced:
            return None
        subject = normalized_subject(parsed.header("Subject"))
        for candidate in sorted(self.messages.values(), key=lambda m: m.internal_ms):
            if requested is not None and candidate.thread_id != requested:
                continue
            if candidate.parsed.message_id not in referenced:
                continue
            if normalized_subject(candidate.parsed.header("Subject")) == subject:
                return candidate.thread_id
        return None

    def add_message(
        self,
        raw: bytes,
        label_ids: Iterable[str],
        *,
        internal: datetime | None = None,
        thread_id: str | None = None,
        auto_thread: bool = True,
        known: tuple[str, mime.Parsed] | None = None,
    ) -> Message:
        """Files a message. Without ``thread_id`` it joins a thread by its headers
        (``auto_thread``, as incoming mail does) or starts its own. ``known`` is an
        earlier parse of the same bytes under the id they get now (the demo's replay)."""
        moment = internal or self.tick()
        internal_ms = int(moment.timestamp() * 1000)
        message_id = self._new_id(internal_ms)
        if known is not None and known[0] == message_id:
            parsed = known[1]
        else:
            parsed = mime.parse(raw, message_id)
        if thread_id is None:
            joined = self.thread_for(parsed, None) if auto_thread else None
            thread_id = joined or message_id
        labels = list(dict.fromkeys(label_ids))
        message = Message(message_id, thread_id, raw, parsed, labels, internal_ms, 0)
        self.messages[message_id] = message
        self._record(message, "messageAdded")
        return message

    def change_labels(self, message: Message, add: Iterable[str], remove: Iterable[str]) -> None:
        removing = [lb for lb in dict.fromkeys(remove) if lb in message.label_ids]
        adding = [lb for lb in dict.fromkeys(add) if lb not in message.label_ids]
        adding = [lb for lb in adding if lb not in removing]
        if removing:
            message.label_ids = [lb for lb in message.label_ids if lb not in removing]
            self._record(message, "labelRemoved", removing)
        if adding:
            message.label_ids.extend(adding)
            self._record(message, "labelAdded", adding)

    def delete_message(self, message: Message) -> None:
        del self.messages[message.id]
        self._record(message, "messageDeleted")
        for draft_id, draft in list(self.drafts.items()):
            if draft.message_id == message.id:
                del self.drafts[draft_id]

    def remove_label_everywhere(self, label_id: str) -> None:
        for message in list(self.messages.values()):
            if label_id in message.label_ids:
                self.change_labels(message, (), (label_id,))

    def draft_of(self, message_id: str) -> Draft | None:
        return next((d for d in self.drafts.values() if d.message_id == message_id), None)
