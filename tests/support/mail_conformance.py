"""The shared conformance suite every ``MailBackend`` passes (after trio's
``check_two_way_stream``): backend-agnostic checks over a backend and a small seeding
interface, which each backend's test module parametrizes.

Plugging a backend in (Graph on the emulator, Gmail, IMAP on Dovecot) takes three things:

1. A ``Seeder`` for it: ``put(role, messages)`` puts ``SeedMessage`` values into the folder
   with that role (``"inbox"``, ``"sent"``...), ``fresh_folder(name, messages)`` makes a new
   folder holding them (oldest first, as given) and returns it; ``recipient`` is an address
   whose mail the backend's server really delivers, and ``deliveries(message_id)`` counts
   the copies that arrived there (``None`` if the test setup cannot tell).
2. A ``Conformance`` value: the backend, its seeder, and ``foreign``: a backend of
   *another* account (same provider or not) whose references this one must refuse.
3. A test module that parametrizes ``CHECKS``::

       @pytest.mark.parametrize("check", CHECKS, ids=check_id)
       async def test_conformance(check: Check, env: Conformance) -> None:
           await check(env)

Each check reads the backend's ``capabilities`` and checks what they promise: where a
capability is off (conditional flags, permanent delete, move) it checks that the call is
``Unsupported`` before anything changed instead. Checks use unique subjects and their own
folders, so they run in any order against one shared account.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

import pytest

from mfconnector.mail.backend import MailBackend
from mfconnector.mail.failures import Conflict, NotFound, StaleReference, Unsupported
from mfconnector.mail.model import Folder, MessageSummary, Page, Person
from mfconnector.mail.outgoing import DraftContent
from mfconnector.mail.query import FlagChange, MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import Reference, parse_reference

__all__ = [
    "CHECKS",
    "Check",
    "Conformance",
    "SeedMessage",
    "Seeder",
    "check_id",
]

_serial = itertools.count(1)
BASE_TIME = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
BOB = Person("Bob Sender", "bob@example.org")
ALICE = Person("Alice", "alice@example.org")


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_serial)}-{datetime.now(UTC).strftime('%H%M%S%f')}"


@dataclass(frozen=True)
class SeedMessage:
    subject: str
    sender: Person = BOB
    to: Sequence[Person] = (ALICE,)
    text: str = "Hello.\n"
    html: str | None = None
    attachments: Sequence[tuple[str, str, bytes]] = ()
    unread: bool = True
    flagged: bool = False
    received: datetime = BASE_TIME
    reply_to: Sequence[Person] = ()
    message_id: str | None = None
    """``<id@host>``; the seeder makes one up when None."""
    in_reply_to: str | None = None
    """Also written as References: the message this one answers."""


class Seeder(Protocol):
    recipient: str

    async def put(self, role: str, messages: Sequence[SeedMessage]) -> None: ...

    async def fresh_folder(self, name: str, messages: Sequence[SeedMessage]) -> Folder: ...

    async def deliveries(self, message_id: str) -> int | None: ...


@dataclass
class Conformance:
    backend: MailBackend
    seed: Seeder
    foreign: MailBackend
    notes: list[str] = field(default_factory=list)


Check = Callable[[Conformance], Awaitable[None]]


def check_id(check: Check) -> str:
    return check.__name__.removeprefix("check_")


def ref_text(backend: MailBackend, value: Reference) -> Reference:
    """A reference as a tool would take it back: printed, then parsed against the account."""
    return parse_reference(str(value), backend.tag, "id")


async def all_pages(
    backend: MailBackend, folder: Folder, where: MessageFilter, limit: int
) -> list[list[MessageSummary]]:
    pages: list[list[MessageSummary]] = []
    page = await backend.list_messages(folder, where, PageRequest(limit=limit))
    while True:
        pages.append(list(page.items))
        if page.next is None:
            assert not page.more_pages or page.note, "more pages promised without a way there"
            return pages
        page = await backend.list_messages(
            folder, where, PageRequest(limit=limit, position=page.next)
        )
        assert len(pages) < 100


def subjects(items: Sequence[MessageSummary]) -> list[str]:
    return [item.subject or "" for item in items]


def series(prefix: str, count: int, **kw: object) -> list[SeedMessage]:
    return [
        SeedMessage(f"{prefix} {i:02d}", received=BASE_TIME + timedelta(hours=i), **kw)  # type: ignore[arg-type]
        for i in range(count)
    ]


# --- checks -----------------------------------------------------------------------------


async def check_folders_have_roles_counts_and_resolve(env: Conformance) -> None:
    backend = env.backend
    top = await backend.folders(None, PageRequest(limit=50))
    roles = {f.role for f in top.items}
    assert {"inbox", "sent", "drafts", "trash"} <= roles, roles
    inbox = next(f for f in top.items if f.role == "inbox")
    assert inbox.total is not None and inbox.unread is not None
    for folder in top.items:
        assert str(folder.ref).startswith(backend.tag.tag + ".")
    for role in ("inbox", "sent", "drafts", "trash"):
        by_role = await backend.resolve_folder(role, "folder")
        assert by_role.role == role
        assert (await backend.resolve_folder(str(by_role.ref), "folder")).ref == by_role.ref
    name = unique("Resolve")
    made = await env.seed.fresh_folder(name, series(name, 1))
    assert (await backend.resolve_folder(name, "folder")).ref == made.ref
    assert (await backend.resolve_folder(made.path, "folder")).ref == made.ref
    with pytest.raises(NotFound):
        await backend.resolve_folder(unique("NoSuchFolder"), "folder")


async def check_list_is_newest_first_and_pages_continue(env: Conformance) -> None:
    backend = env.backend
    name = unique("Order")
    seeded = series(name, 7)
    folder = await env.seed.fresh_folder(name, seeded)
    pages = await all_pages(backend, folder, MessageFilter(), limit=3)
    assert [len(p) for p in pages] == [3, 3, 1]
    flat = [s for p in pages for s in p]
    assert subjects(flat) == [m.subject for m in reversed(seeded)]
    assert len({str(s.ref) for s in flat}) == 7
    received = [s.received for s in flat]
    assert all(r is not None for r in received)
    assert received == sorted(received, reverse=True)  # type: ignore[type-var]
    # "The rest of this page": the same position with a skip continues inside it.
    first = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=3))
    rest = await backend.list_messages(
        folder, MessageFilter(), PageRequest(limit=3, position=first.here, skip=2)
    )
    assert subjects(rest.items)[0] == subjects(first.items)[2]


async def check_filters_hold_exactly(env: Conformance) -> None:
    backend = env.backend
    name = unique("Filter")
    messages = [
        SeedMessage(f"{name} read", unread=False, received=BASE_TIME),
        SeedMessage(f"{name} unread", unread=True, received=BASE_TIME + timedelta(hours=1)),
        SeedMessage(
            f"{name} flagged",
            unread=False,
            flagged=True,
            received=BASE_TIME + timedelta(hours=2),
            sender=Person("Carol", "carol@example.net"),
        ),
        SeedMessage(
            f"{name} attached",
            unread=False,
            received=BASE_TIME + timedelta(hours=3),
            attachments=[("report.pdf", "application/pdf", b"%PDF-1.4 tiny\n")],
        ),
    ]
    folder = await env.seed.fresh_folder(name, messages)

    async def shown(where: MessageFilter) -> list[str]:
        page = await backend.list_messages(folder, where, PageRequest(limit=10))
        return [s.removeprefix(name + " ") for s in subjects(page.items)]

    assert await shown(MessageFilter(unread_only=True)) == ["unread"]
    assert await shown(MessageFilter(flagged=True)) == ["flagged"]
    assert await shown(MessageFilter(triage=True)) == ["flagged", "unread"]
    assert await shown(MessageFilter(sender="carol@example.net")) == ["flagged"]
    assert await shown(MessageFilter(has_attachments=True)) == ["attached"]
    since = BASE_TIME + timedelta(hours=1, minutes=30)
    assert await shown(MessageFilter(since=since)) == ["attached", "flagged"]
    assert await shown(MessageFilter(before=since)) == ["unread", "read"]
    assert await shown(MessageFilter(since=BASE_TIME + timedelta(minutes=30), before=since)) == [
        "unread"
    ]


async def check_read_gives_headers_body_and_attachments(env: Conformance) -> None:
    backend = env.backend
    name = unique("Read")
    long_text = "".join(f"Line {i} of a long body.\n" for i in range(3000))
    folder = await env.seed.fresh_folder(
        name,
        [
            SeedMessage(
                f"{name} html",
                text="",
                html="<p>Hello <b>there</b></p><p>Reset: "
                "<a href='https://example.org/x?access_token=SECRET123'>link</a></p>",
                reply_to=(Person("Replies", "replies@example.org"),),
                attachments=[
                    ("notes.bin", "application/octet-stream", b"attached words\n\x00\xff")
                ],
            ),
            SeedMessage(f"{name} long", text=long_text, received=BASE_TIME + timedelta(hours=1)),
        ],
    )
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=10))
    by_subject = {s.subject: s for s in page.items}
    html = await backend.read(by_subject[f"{name} html"].ref, ReadRequest(view="full"))
    assert html.body is not None
    assert "Hello there" in html.body.text and "<b>" not in html.body.text
    assert "SECRET123" not in html.body.text and html.body.redactions >= 1
    assert [p.address for p in html.reply_to] == ["replies@example.org"]
    assert html.sender is not None and html.sender.address == "bob@example.org"
    assert [a.name for a in html.attachments] == ["notes.bin"]
    content = await backend.attachment(html.ref, html.attachments[0].ref, 1_000)
    assert content.data == b"attached words\n\x00\xff" and content.complete
    cut = await backend.attachment(html.ref, html.attachments[0].ref, 5)
    assert cut.data == b"attac" and not cut.complete
    long = await backend.read(by_subject[f"{name} long"].ref, ReadRequest())
    assert long.body is not None and long.body.text.startswith("Line 0 of a long body.")
    assert "Line 2999 of a long body." in long.body.text
    assert not long.unread or long.unread  # reading never has to change the flag
    again = await backend.list_messages(
        folder, MessageFilter(unread_only=True), PageRequest(limit=10)
    )
    assert len(again.items) == 2, "a read must not mark the message read"


async def check_foreign_and_stale_references_are_refused(env: Conformance) -> None:
    backend, foreign = env.backend, env.foreign
    assert foreign.tag.tag != backend.tag.tag
    name = unique("Foreign")
    folder = await env.seed.fresh_folder(name, series(name, 1))
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))
    mine = str(page.items[0].ref)
    with pytest.raises(StaleReference):
        parse_reference(mine, foreign.tag, "message_id")
    with pytest.raises(StaleReference):
        parse_reference("not-a-reference", backend.tag, "message_id")
    foreign_folder = str(Reference(foreign.tag, folder.ref.native))
    with pytest.raises(StaleReference):
        await backend.resolve_folder(foreign_folder, "folder")
    # A reference of this account's tag that the backend cannot read is stale, not a crash.
    garbled = Reference(backend.tag, "zz" + page.items[0].ref.native[2:] + "\u202e")
    with pytest.raises((StaleReference, NotFound)):
        await backend.read(garbled, ReadRequest())


async def check_flags_and_conditional_changes(env: Conformance) -> None:
    backend = env.backend
    name = unique("Flags")
    folder = await env.seed.fresh_folder(name, series(name, 1))
    item = (await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))).items[0]
    assert item.unread
    changed = await backend.set_flags(item.ref, FlagChange(unread=False, flag="flagged"))
    read = await backend.read(item.ref, ReadRequest(with_body=False))
    assert not read.unread and read.flag == "flagged"
    if changed is not None:
        assert not changed.unread and changed.flag == "flagged"
    if not backend.capabilities.conditional_flags:
        with pytest.raises(Unsupported):
            await backend.set_flags(item.ref, FlagChange(unread=True, unchanged_since="1"))
        assert not (await backend.read(item.ref, ReadRequest(with_body=False))).unread
        return
    # The token the tools hand out is a full read's (``change_token`` of mail_read full).
    token = (await backend.read(item.ref, ReadRequest(view="full", with_body=False))).change_token
    assert token is not None
    await backend.set_flags(item.ref, FlagChange(unread=True, unchanged_since=token))
    now = await backend.read(item.ref, ReadRequest(view="full", with_body=False))
    assert now.unread and now.change_token is not None and now.change_token != token
    with pytest.raises(Conflict):
        await backend.set_flags(item.ref, FlagChange(flag="none", unchanged_since=token))
    after = await backend.read(item.ref, ReadRequest(with_body=False))
    assert after.flag == "flagged", "a conflict must change nothing"


async def check_copy_move_trash_and_delete(env: Conformance) -> None:
    backend = env.backend
    caps = backend.capabilities
    name = unique("Moves")
    source = await env.seed.fresh_folder(name, series(name, 3))
    target = await env.seed.fresh_folder(name + "-target", [])
    items = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
    copied = await backend.copy(items[0].ref, target)
    in_target = (await backend.list_messages(target, MessageFilter(), PageRequest(limit=5))).items
    assert subjects(in_target) == [items[0].subject]
    if copied is not None:
        assert (await backend.read(copied, ReadRequest(with_body=False))).subject == items[
            0
        ].subject
    if caps.move:
        moved = await backend.move(items[1].ref, target)
        left = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
        assert items[1].subject not in subjects(left)
        if moved is not None:
            assert (await backend.read(moved, ReadRequest(with_body=False))).subject == items[
                1
            ].subject
        if caps.labels or caps.stable_ids:  # a move keeps the message's reference
            moved_read = await backend.read(items[1].ref, ReadRequest(with_body=False))
            assert moved_read.subject == items[1].subject
            in_target = (
                await backend.list_messages(target, MessageFilter(), PageRequest(limit=5))
            ).items
            assert items[1].ref in [s.ref for s in in_target], "the kept reference moved along"
        else:
            with pytest.raises((NotFound, StaleReference)):
                await backend.read(items[1].ref, ReadRequest(with_body=False))
        await backend.trash(items[2].ref)
        left = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
        assert subjects(left) == [items[0].subject]
    else:
        with pytest.raises(Unsupported):
            await backend.move(items[1].ref, target)
        with pytest.raises(Unsupported):
            await backend.trash(items[2].ref)
        left = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
        assert len(left) == 3, "an unsupported move or trash must change nothing"
    if caps.permanent_delete:
        await backend.delete_permanently(items[0].ref)
        left = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
        assert items[0].subject not in subjects(left)
        kept = (await backend.list_messages(target, MessageFilter(), PageRequest(limit=5))).items
        if caps.labels:  # the "copy" was the same message under a second label: gone too
            assert items[0].subject not in subjects(kept)
            assert items[1].subject in subjects(kept), "delete must take exactly that message"
        else:
            assert items[0].subject in subjects(kept), "delete must take exactly that message"
    else:
        with pytest.raises(Unsupported):
            await backend.delete_permanently(items[0].ref)
        left = (await backend.list_messages(source, MessageFilter(), PageRequest(limit=5))).items
        assert items[0].subject in subjects(left)


async def check_draft_freeze_send_verify(env: Conformance) -> None:
    backend = env.backend
    name = unique("Send")
    made = await backend.create_draft(
        DraftContent(
            to=(Person("Recipient", env.seed.recipient),),
            subject=name,
            text="Exactly these words.\n.A line that starts with a dot.\n",
        )
    )
    draft = made.ref
    assert (await backend.read(draft, ReadRequest(with_body=False))).is_draft
    frozen = await backend.freeze(draft)
    again = await backend.freeze(draft)
    assert frozen.digest == again.digest, "freezing twice must name the same message"
    assert frozen.record["subject"] == name
    if not backend.capabilities.sending:
        with pytest.raises(Unsupported):
            await backend.send(frozen)
        return
    result = await backend.send(frozen)
    assert result.outcome == "sent", result
    assert result.sent_copy in ("filed_by_provider", "appended")
    assert await backend.verify_sent(frozen) is True
    if frozen.message_id is not None:
        assert await env.seed.deliveries(frozen.message_id) in (1, None)


async def check_unsupported_is_refused_before_any_change(env: Conformance) -> None:
    backend = env.backend
    caps = backend.capabilities
    assert caps.provider
    assert all(isinstance(what, str) and isinstance(why, str) for what, why in caps.missing)
    name = unique("Refusals")
    folder = await env.seed.fresh_folder(name, series(name, 1))
    item = (await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))).items[0]
    if not caps.shared_mailboxes:
        with pytest.raises(Unsupported):
            backend.for_mailbox("someone-else@example.org")
    if not caps.conditional_flags:
        with pytest.raises(Unsupported):
            await backend.set_flags(item.ref, FlagChange(flag="flagged", unchanged_since="5"))
        assert (await backend.read(item.ref, ReadRequest(with_body=False))).flag == "none"
    if not caps.permanent_delete:
        with pytest.raises(Unsupported):
            await backend.delete_permanently(item.ref)
    page: Page[MessageSummary] = await backend.list_messages(
        folder, MessageFilter(), PageRequest(limit=5)
    )
    assert len(page.items) == 1


async def check_threads_gather_a_conversation_oldest_first(env: Conformance) -> None:
    backend = env.backend
    if not backend.capabilities.threads:
        return
    name = unique("Thread")
    first, second = f"<{name}-1@example.org>", f"<{name}-2@example.org>"
    folder = await env.seed.fresh_folder(
        name,
        [
            SeedMessage(f"{name} question", message_id=first, received=BASE_TIME),
            SeedMessage(f"{name} unrelated", received=BASE_TIME + timedelta(hours=1)),
            SeedMessage(
                f"Re: {name} question",
                message_id=second,
                in_reply_to=first,
                received=BASE_TIME + timedelta(hours=2),
            ),
        ],
    )
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=10))
    reply = next(s for s in page.items if s.subject == f"Re: {name} question")
    thread = await backend.thread(reply.ref, PageRequest(limit=10))
    assert subjects(thread.items) == [f"{name} question", f"Re: {name} question"]
    assert thread.note is None or "at most" in thread.note or thread.note


async def check_folders_are_created_renamed_and_special_ones_kept(env: Conformance) -> None:
    backend = env.backend
    name = unique("Made")
    made = await backend.create_folder(None, name)
    assert made.name == name and made.role is None
    child = await backend.create_folder(made, "Child")
    assert child.parent == made.ref and child.path == f"{name}/Child"
    assert (await backend.resolve_folder(f"{name}/Child", "folder")).ref == child.ref
    renamed = await backend.rename_folder(child, "Renamed")
    assert renamed.path == f"{name}/Renamed"
    with pytest.raises(NotFound):  # even though that path was resolved before the rename
        await backend.resolve_folder(f"{name}/Child", "folder")
    assert (await backend.resolve_folder(f"{name}/Renamed", "folder")).ref == renamed.ref
    sent = await backend.resolve_folder("sent", "folder")
    with pytest.raises(Unsupported):
        await backend.rename_folder(sent, "Elsewhere")
    assert (await backend.resolve_folder("sent", "folder")).ref == sent.ref


async def check_replies_and_forwards_are_drafted_and_threaded(env: Conformance) -> None:
    backend = env.backend
    name = unique("Respond")
    original_id = f"<{name}@example.org>"
    folder = await env.seed.fresh_folder(
        name,
        [
            SeedMessage(
                f"{name} plan",
                message_id=original_id,
                text="The plan is ready.\n",
                to=(ALICE, Person("Dan", "dan@example.org")),
                reply_to=(Person("Plans", "plans@example.org"),),
            )
        ],
    )
    item = (await backend.list_messages(folder, MessageFilter(), PageRequest(limit=5))).items[0]
    reply = (await backend.create_response(item.ref, "reply_all", DraftContent(text="Thanks!"))).ref
    read = await backend.read(reply, ReadRequest(view="full"))
    assert read.is_draft and (read.subject or "").lower().startswith("re:")
    to, cc = [p.address for p in read.to], [p.address for p in read.cc]
    # Reply-To replaces the sender; the original's other recipients stay on the reply:
    # in Cc (RFC 5322 section 3.6.3's way, which IMAP and Gmail take) or still in To
    # (Outlook's way), but To holds nobody who was not on the original's To.
    assert to[:1] == ["plans@example.org"], to
    assert set(to[1:]) <= {ALICE.address, "dan@example.org"}, to
    assert "dan@example.org" in to[1:] + cc
    assert BOB.address not in to + cc, "Reply-To replaces the sender"
    assert read.body is not None and "Thanks!" in read.body.text
    assert "The plan is ready." in read.body.text
    frozen = await backend.freeze(reply)
    assert original_id in frozen.record.get("in_reply_to", original_id)
    forward = (
        await backend.create_response(
            item.ref, "forward", DraftContent(to=(Person("Eve", "eve@example.org"),), text="FYI")
        )
    ).ref
    forwarded = await backend.read(forward, ReadRequest(view="full"))
    assert [p.address for p in forwarded.to] == ["eve@example.org"]
    assert forwarded.attachments or (forwarded.body and "The plan is ready." in forwarded.body.text)
    try:
        await backend.discard_draft(forward)
    except Unsupported:
        assert not backend.capabilities.permanent_delete  # IMAP without UIDPLUS keeps it
        return
    try:
        await backend.read(forward, ReadRequest(with_body=False))
    except NotFound:
        return
    # Still readable: only where references outlive moves, and then it went to the trash
    # (Outlook's Discard), out of Drafts.
    assert backend.capabilities.stable_ids, "a discarded draft must be gone"
    for role, holds in (("drafts", False), ("trash", True)):
        folder = await backend.resolve_folder(role, "folder")
        listed = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=50))
        assert (forward in [s.ref for s in listed.items]) is holds, role


CHECKS: tuple[Check, ...] = (
    check_folders_have_roles_counts_and_resolve,
    check_list_is_newest_first_and_pages_continue,
    check_filters_hold_exactly,
    check_read_gives_headers_body_and_attachments,
    check_foreign_and_stale_references_are_refused,
    check_flags_and_conditional_changes,
    check_copy_move_trash_and_delete,
    check_draft_freeze_send_verify,
    check_unsupported_is_refused_before_any_change,
    check_threads_gather_a_conversation_oldest_first,
    check_folders_are_created_renamed_and_special_ones_kept,
    check_replies_and_forwards_are_drafted_and_threaded,
)
