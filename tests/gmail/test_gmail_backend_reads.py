"""GmailMailBackend's reads against the Gmail emulator over real HTTP on 127.0.0.1.

Expected values come from the mailbox the test itself looks at or fills (the emulator's
store, messages written here), never from the backend's own code.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime

import pytest

from mfconnector.gmail_emulator import GmailEmulator, LoopbackGmail
from mfconnector.mail.failures import NotFound, StaleReference
from mfconnector.mail.query import MessageFilter, PageRequest, ReadRequest
from mfconnector.mail.refs import Reference, account_tag
from tests.support.gmail_loopback import NOW, backend_for, demo_emulator, empty_emulator, served


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[GmailEmulator, LoopbackGmail]]:
    emulator = demo_emulator()
    with served(emulator) as server:
        yield emulator, server


def _mail(
    subject: str,
    *,
    text: str | None = "hello",
    html: str | None = None,
    attachments: tuple[tuple[str, bytes], ...] = (),
    minutes: int = 0,
) -> bytes:
    message = EmailMessage()
    message["From"] = "Ann Sender <ann@mail.example>"
    message["To"] = "me@mail.example"
    message["Subject"] = subject
    message["Date"] = format_datetime(NOW - timedelta(minutes=minutes))
    message["Message-ID"] = f"<{abs(hash(subject))}@mail.example>"
    if html is not None and text is None:
        message.set_content(html, subtype="html")
    else:
        message.set_content(text or "")
    for name, data in attachments:
        message.add_attachment(data, "application", "octet-stream", filename=name)
    return message.as_bytes()


@pytest.mark.slow
async def test_labels_are_folders_with_roles_paths_and_counts(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    page = await backend.folders(None, PageRequest(limit=50))
    by_native = {f.ref.native: f for f in page.items}
    roles = {f.role: f.ref.native for f in page.items if f.role}
    assert roles["inbox"] == "INBOX" and roles["sent"] == "SENT" and roles["drafts"] == "DRAFT"
    assert roles["trash"] == "TRASH" and roles["junk"] == "SPAM" and roles["starred"] == "STARRED"
    assert "UNREAD" not in by_native and "CHAT" not in by_native  # states, not folders
    box = emulator.mailbox
    inbox = [m for m in box.messages.values() if "INBOX" in m.label_ids]
    assert by_native["INBOX"].total == len(inbox)
    assert by_native["INBOX"].unread == sum("UNREAD" in m.label_ids for m in inbox)
    assert page.note and "several" in page.note
    # user labels nest by path: "Projects" has children, listed under it
    projects = next(f for f in page.items if f.path == "Projects")
    assert projects.children and projects.children > 0
    children = await backend.folders(projects, PageRequest(limit=50))
    nested = {lb.name for lb in box.labels.values() if lb.name.startswith("Projects/")}
    assert {f.path for f in children.items} <= nested and children.items
    assert all(f.parent == projects.ref for f in children.items)


async def test_a_folder_is_found_by_role_name_path_and_reference(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    _, server = demo
    backend = backend_for(server)
    assert (await backend.resolve_folder("junk", "folder")).ref.native == "SPAM"
    assert (await backend.resolve_folder("sent", "folder")).ref.native == "SENT"
    nested = await backend.resolve_folder("receipts/2026", "folder")
    assert nested.path == "Receipts/2026"
    again = await backend.resolve_folder(str(nested.ref), "folder")
    assert again == nested
    with pytest.raises(NotFound):
        await backend.resolve_folder("No Such Label", "folder")


async def test_a_reference_of_another_account_is_refused_before_any_request(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    foreign = Reference(account_tag("gmail", "someone-else"), "INBOX")
    before = emulator.http_requests
    with pytest.raises(StaleReference):
        await backend.resolve_folder(str(foreign), "folder")
    assert emulator.http_requests == before


@pytest.mark.slow
async def test_a_fifty_message_page_then_the_next_without_overlap(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    every = await backend.resolve_folder("all", "folder")
    before = emulator.http_requests
    first = await backend.list_messages(every, MessageFilter(), PageRequest(limit=50))
    requests = emulator.http_requests - before
    assert len(first.items) == 50
    # labels once, the list once, one metadata get per message: never more
    assert requests <= 1 + 1 + 50
    received = [m.received for m in first.items]
    assert received == sorted(received, reverse=True)  # type: ignore[type-var]
    assert all(str(m.ref).startswith(backend.tag.tag + ".") for m in first.items)
    assert first.next is not None and first.more_pages
    second = await backend.list_messages(
        every, MessageFilter(), PageRequest(limit=50, position=first.next)
    )
    shown = {m.ref for m in first.items}
    assert second.items and not shown & {m.ref for m in second.items}
    box = emulator.mailbox
    visible = [m for m in box.messages.values() if not {"SPAM", "TRASH"} & set(m.label_ids)]
    assert len(first.items) + len(second.items) == min(len(visible), 100)


async def test_skip_continues_inside_a_page(demo: tuple[GmailEmulator, LoopbackGmail]) -> None:
    _, server = demo
    backend = backend_for(server)
    inbox = await backend.resolve_folder("inbox", "folder")
    whole = await backend.list_messages(inbox, MessageFilter(), PageRequest(limit=10))
    rest = await backend.list_messages(
        inbox, MessageFilter(), PageRequest(limit=10, position=whole.here, skip=4)
    )
    assert [m.ref for m in rest.items[:6]] == [m.ref for m in whole.items[4:]]


async def test_filters_compile_to_gmail_operators(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    inbox = await backend.resolve_folder("inbox", "folder")
    unread = await backend.list_messages(
        inbox, MessageFilter(unread_only=True), PageRequest(limit=50)
    )
    box = emulator.mailbox
    expected = {m.id for m in box.messages.values() if {"INBOX", "UNREAD"} <= set(m.label_ids)}
    assert {m.ref.native for m in unread.items} == expected and all(m.unread for m in unread.items)
    since = NOW.replace(year=2026, month=11, day=28)
    recent = await backend.list_messages(inbox, MessageFilter(since=since), PageRequest(limit=50))
    assert recent.items and all(m.received and m.received >= since for m in recent.items)
    sender = recent.items[0].sender
    assert sender is not None
    mine = await backend.list_messages(
        inbox, MessageFilter(sender=sender.address), PageRequest(limit=50)
    )
    assert mine.items and all(m.sender and m.sender.address == sender.address for m in mine.items)


@pytest.mark.parametrize(("role", "label"), [("junk", "SPAM"), ("trash", "TRASH")])
async def test_spam_and_trash_list_their_own_messages(
    demo: tuple[GmailEmulator, LoopbackGmail], role: str, label: str
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    folder = await backend.resolve_folder(role, "folder")
    page = await backend.list_messages(folder, MessageFilter(), PageRequest(limit=50))
    expected = {m.id for m in emulator.mailbox.messages.values() if label in m.label_ids}
    assert expected and {m.ref.native for m in page.items} == expected


async def test_search_passes_gmail_syntax_through(
    demo: tuple[GmailEmulator, LoopbackGmail],
) -> None:
    emulator, server = demo
    backend = backend_for(server)
    found = await backend.search("has:attachment", None, PageRequest(limit=50))
    box = emulator.mailbox
    expected = {
        m.id
        for m in box.messages.values()
        if m.parsed.attachments and not {"SPAM", "TRASH"} & set(m.label_ids)
    }
    assert {m.ref.native for m in found.items} == expected
    assert found.searched and "Gmail search syntax" in found.searched


async def test_a_read_walks_the_full_payload_converts_html_and_cuts_credential_links() -> None:
    emulator = empty_emulator()
    html = (
        "<p>Dear customer,</p><p>Open <a href='https://files.example/doc?sig=SECRET123'>"
        "the file</a> today.</p><ul><li>one</li><li>two</li></ul>"
    )
    message = emulator.mailbox.add_message(
        _mail("html mail", text=None, html=html, attachments=(("a.bin", b"\x00" * 300),)),
        ["INBOX"],
    )
    with served(emulator) as server:
        backend = backend_for(server)
        tag = backend.tag
        read = await backend.read(Reference(tag, message.id), ReadRequest())
    assert read.body is not None
    assert "Dear customer," in read.body.text and "one" in read.body.text
    assert "<p>" not in read.body.text
    assert "SECRET123" not in read.body.text and read.body.redactions == 1
    assert read.subject == "html mail" and read.internet_message_id
    assert [(a.name, a.size) for a in read.attachments] == [("a.bin", 300)]
    assert read.has_attachments


async def test_too_many_parts_are_cut_at_the_mime_limit_and_said() -> None:
    from mfconnector.limits import DEFAULT_LIMITS

    emulator = empty_emulator()
    files = tuple((f"f{i}.txt", b"x") for i in range(DEFAULT_LIMITS.mime_parts + 5))
    message = emulator.mailbox.add_message(_mail("many", attachments=files), ["INBOX"])
    with served(emulator) as server:
        backend = backend_for(server)
        read = await backend.read(Reference(backend.tag, message.id), ReadRequest())
    assert read.body is not None and read.body.text.strip() == "hello"
    assert any("mime_parts" in note for note in read.body.notes)


async def test_an_attachment_by_part_whole_and_cut_to_max_bytes() -> None:
    emulator = empty_emulator()
    data = bytes(range(256)) * 40
    message = emulator.mailbox.add_message(
        _mail("attached", attachments=(("data.bin", data),)), ["INBOX"]
    )
    with served(emulator) as server:
        backend = backend_for(server)
        ref = Reference(backend.tag, message.id)
        read = await backend.read(ref, ReadRequest())
        part = read.attachments[0].ref
        whole = await backend.attachment(ref, part, len(data))
        cut = await backend.attachment(ref, part, 1000)
        with pytest.raises(NotFound):
            await backend.attachment(ref, Reference(backend.tag, "9.9"), 10)
    assert whole.complete and whole.data == data
    assert not cut.complete and cut.data == data[:1000]


async def test_a_thread_is_listed_oldest_first(demo: tuple[GmailEmulator, LoopbackGmail]) -> None:
    emulator, server = demo
    backend = backend_for(server)
    box = emulator.mailbox
    threads: dict[str, int] = {}
    for m in box.messages.values():
        threads[m.thread_id] = threads.get(m.thread_id, 0) + 1
    longest = max(threads, key=lambda t: threads[t])
    newest = max(box.thread(longest), key=lambda m: m.internal_ms)
    page = await backend.thread(Reference(backend.tag, newest.id), PageRequest(limit=50))
    assert len(page.items) == threads[longest]
    received = [m.received for m in page.items]
    assert received == sorted(received)  # type: ignore[type-var]
    assert page.items[-1].ref.native == newest.id


async def test_a_deleted_message_is_not_found() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server)
        with pytest.raises(NotFound):
            await backend.read(Reference(backend.tag, "abc123"), ReadRequest())


def _with_attached_email() -> bytes:
    inner = EmailMessage()
    inner["From"] = "Old Friend <old@mail.example>"
    inner["To"] = "ann@mail.example"
    inner["Subject"] = "the forwarded one"
    inner.set_content("inner words")
    outer = EmailMessage()
    outer["From"] = "ann@mail.example"
    outer["To"] = "me@mail.example"
    outer["Subject"] = "see attached"
    outer.set_content("look")
    outer.add_attachment(inner)
    outer.add_attachment(b"%PDF-1.4 tiny", "application", "pdf", filename="doc.pdf")
    return outer.as_bytes()


async def test_attachments_list_an_attached_email_parsed_and_spool_a_file() -> None:
    import trio

    from mfconnector.errors import DocumentError

    emulator = empty_emulator()
    message = emulator.mailbox.add_message(_with_attached_email(), ["INBOX"])
    with served(emulator) as server:
        backend = backend_for(server)
        ref = Reference(backend.tag, message.id)
        listed = await backend.attachments(ref, PageRequest(limit=10))
        kinds = {a.kind: a for a in listed.items}
        assert set(kinds) == {"message", "file"} and listed.next is None
        attached = await backend.attachment(ref, kinds["message"].ref, 0)
        assert attached.message is not None and attached.data == b""
        assert attached.message.subject == "the forwarded one"
        assert attached.message.body is not None and "inner words" in attached.message.body.text
        pdf = kinds["file"]
        size = len(b"%PDF-1.4 tiny")
        for limit in (size - 1, size, size + 1):
            if limit < size:
                with pytest.raises(DocumentError) as caught:
                    async with backend.spool_attachment(ref, pdf.ref, limit=limit):
                        pass
                assert caught.value.code == "too_large"
                continue
            async with backend.spool_attachment(ref, pdf.ref, limit=limit, suffix=".pdf") as file:
                assert file.size == size
                spooled = trio.Path(file.path)
                assert await spooled.read_bytes() == b"%PDF-1.4 tiny"
                assert (await spooled.stat()).st_mode & 0o077 == 0
            assert not await spooled.exists()
        assert (await backend.profile())["address"] == "me@mail.example"


async def test_a_picture_inline_in_the_text_is_found_by_has_attachments_but_not_flagged() -> None:
    """What docs/GMAIL.md says of ``has_attachments``: Gmail's ``has:attachment`` also finds
    a message whose only file is a picture inline in its text; the listing's row (from
    metadata, which holds no parts) flags only files attached beside the text, and the
    read lists the inline picture, ``inline`` true."""
    emulator = empty_emulator()
    photos = EmailMessage()
    photos["From"] = "Ann Sender <ann@mail.example>"
    photos["To"] = "me@mail.example"
    photos["Subject"] = "Photos from the weekend"
    photos.set_content("See the garden.")
    photos.add_alternative("<p>See the garden.</p><img src='cid:garden'>", subtype="html")
    html = photos.get_payload()[1]
    html.add_related(
        b"\x89PNG\r\n\x1a\n",
        "image",
        "png",
        cid="<garden>",
        filename="garden.png",
        disposition="inline",
    )
    inline = emulator.mailbox.add_message(photos.as_bytes(), ["INBOX"])
    attached = emulator.mailbox.add_message(
        _mail("Report", attachments=(("report.bin", b"\x00" * 10),)), ["INBOX"]
    )
    emulator.mailbox.add_message(_mail("Plain"), ["INBOX"])
    with served(emulator) as server:
        backend = backend_for(server)
        inbox = await backend.resolve_folder("inbox", "folder")
        found = await backend.list_messages(
            inbox, MessageFilter(has_attachments=True), PageRequest(limit=50)
        )
        read = await backend.read(Reference(backend.tag, inline.id), ReadRequest())
    flagged = {m.ref.native: m.has_attachments for m in found.items}
    assert flagged == {inline.id: False, attached.id: True}
    assert read.has_attachments
    assert [(a.name, a.inline) for a in read.attachments] == [("garden.png", True)]
