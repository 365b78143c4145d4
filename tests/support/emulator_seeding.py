"""Mail filed straight into the Graph emulator's model, for tests of the Graph backend.

``conformance_tenant`` is a tenant of two empty mailboxes (the signed-in user and a
colleague) with Exchange's well-known folders; ``EmulatorSeeder`` is the conformance
suite's ``Seeder`` over it. Seeding writes ``emulator.model`` objects as Exchange would
have stored a delivered message (a conversation id shared with the message it answers,
its internet headers), never through the backend under test. Sending is the emulator's
own: mail to a mailbox of the tenant lands in that mailbox's Inbox, so the colleague's
Inbox is where ``deliveries`` counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from mfconnector.emulator import Emulator, ids
from mfconnector.emulator.model import Attachment, Mailbox, Message, Recipient, Tenant
from mfconnector.emulator.model import Folder as EmulatorFolder
from mfconnector.mail.backend import MailBackend
from mfconnector.mail.model import Folder, Person
from tests.support.mail_conformance import SeedMessage

__all__ = [
    "COLLEAGUE",
    "ROLE_FOLDERS",
    "USER",
    "EmulatorSeeder",
    "conformance_tenant",
    "empty_mailbox",
    "seed_message",
]

USER: Recipient = ("Alice", "alice@example.org")
"""The signed-in user: the suite's ``ALICE``, to whom seeded mail is addressed."""
COLLEAGUE: Recipient = ("Grady Archie", "grady@example.org")

ROLE_FOLDERS = {
    "inbox": "inbox",
    "sent": "sentitems",
    "drafts": "drafts",
    "trash": "deleteditems",
    "junk": "junkemail",
    "archive": "archive",
    "outbox": "outbox",
}
"""The suite's roles -> the emulator's well-known folder names."""

_TOP_FOLDERS = (
    ("inbox", "Inbox"),
    ("archive", "Archive"),
    ("sentitems", "Sent Items"),
    ("drafts", "Drafts"),
    ("deleteditems", "Deleted Items"),
    ("junkemail", "Junk Email"),
    ("outbox", "Outbox"),
    ("conversationhistory", "Conversation History"),
)
_HIDDEN_FOLDERS = (
    ("recoverableitemsdeletions", "Recoverable Items Deletions"),
    ("searchfolders", "Finder"),
)


def empty_mailbox(person: Recipient) -> Mailbox:
    """A mailbox with the folders every Exchange mailbox has, and no mail."""
    name, address = person
    mailbox = Mailbox(
        user_id=ids.guid("user:" + address),
        display_name=name,
        mail=address,
        upn=address,
        time_zone="UTC",
    )
    root = ids.folder_id(f"{address}:root")
    above = ids.folder_id(f"{address}:ipm-subtree-parent")
    mailbox.add_folder(EmulatorFolder(root, "Top of Information Store", above, "msgfolderroot"))
    for key, shown in _TOP_FOLDERS:
        mailbox.add_folder(EmulatorFolder(ids.folder_id(f"{address}:{key}"), shown, root, key))
    for key, shown in _HIDDEN_FOLDERS:
        folder = EmulatorFolder(ids.folder_id(f"{address}:{key}"), shown, root, key, is_hidden=True)
        mailbox.add_folder(folder)
    return mailbox


def conformance_tenant() -> Tenant:
    """Two empty mailboxes: ``me`` (USER) and a colleague mail can be delivered to."""
    mailboxes: dict[str, Mailbox] = {}
    user, colleague = empty_mailbox(USER), empty_mailbox(COLLEAGUE)
    for mailbox in (user, colleague):
        for key in (mailbox.user_id, mailbox.mail.lower(), mailbox.upn.lower()):
            mailboxes[key] = mailbox
    mailboxes["me"] = user
    return Tenant(mailboxes=mailboxes, drives={}, personal_drive={}, me=user.user_id)


def _recipient(person: Person) -> Recipient:
    return (person.name or person.address, person.address)


def seed_message(mailbox: Mailbox, folder_id: str, seed: SeedMessage) -> Message:
    """``seed`` as Exchange stores a message delivered into ``folder_id``."""
    label = mailbox.next_label("seed")
    domain = seed.sender.address.rsplit("@", 1)[-1]
    message_id = seed.message_id or f"<{ids.guid(label).replace('-', '')[:24]}@{domain}>"
    conversation = ids.conversation_id(label)
    if seed.in_reply_to is not None:
        answered = [
            m for m in mailbox.messages.values() if m.internet_message_id == seed.in_reply_to
        ]
        if answered:  # Exchange threads a reply into the conversation of what it answers
            conversation = answered[0].conversation_id
    if seed.html is not None:  # of text and HTML alternatives Exchange keeps the HTML
        body, body_type = seed.html, "html"
    else:
        body, body_type = seed.text, "text"
    sender = _recipient(seed.sender)
    to = [_recipient(p) for p in seed.to]
    message = Message(
        label=label,
        immutable_id=ids.immutable_message_id(label),
        folder_id=folder_id,
        subject=seed.subject,
        body=body,
        body_type=body_type,
        sender=sender,
        to=to,
        received=seed.received,
        sent=seed.received - timedelta(seconds=30),
        conversation_id=conversation,
        internet_message_id=message_id,
        reply_to=[_recipient(p) for p in seed.reply_to],
        is_read=not seed.unread,
        flag={"flagStatus": "flagged" if seed.flagged else "notFlagged"},
        created=seed.received,
        modified=seed.received,
    )
    message.headers = [
        ("From", f"{sender[0]} <{sender[1]}>"),
        ("To", ", ".join(f"{n} <{a}>" for n, a in to)),
        ("Subject", seed.subject),
        ("Message-ID", message_id),
        *(
            [("In-Reply-To", seed.in_reply_to), ("References", seed.in_reply_to)]
            if seed.in_reply_to
            else []
        ),
        ("MIME-Version", "1.0"),
    ]
    for index, (name, content_type, data) in enumerate(seed.attachments):
        message.attachments.append(
            Attachment(
                id=ids.attachment_id(label, index),
                name=name,
                content_type=content_type,
                kind="file",
                declared_size=None,
                modified=seed.received,
                data=lambda data=data: data,
            )
        )
    return mailbox.add_message(message)


class EmulatorSeeder:
    """The conformance ``Seeder`` over one emulator: files into the signed-in user's
    mailbox; ``recipient`` is the colleague, whose Inbox receives what is sent."""

    def __init__(self, emulator: Emulator, backend: MailBackend) -> None:
        self.emulator = emulator
        self.backend = backend
        self.recipient = COLLEAGUE[1]

    @property
    def mailbox(self) -> Mailbox:
        return self.emulator.me()

    async def put(self, role: str, messages: Sequence[SeedMessage]) -> None:
        folder_id = self.mailbox.well_known[ROLE_FOLDERS[role]]
        for message in messages:
            seed_message(self.mailbox, folder_id, message)

    async def fresh_folder(self, name: str, messages: Sequence[SeedMessage]) -> Folder:
        mailbox = self.mailbox
        made = mailbox.add_folder(
            EmulatorFolder(ids.folder_id(mailbox.next_label("folder")), name, mailbox.root_id)
        )
        for message in messages:
            seed_message(mailbox, made.id, message)
        return await self.backend.resolve_folder(name, "folder")

    async def deliveries(self, message_id: str) -> int | None:
        colleague = self.emulator.tenant.mailbox(COLLEAGUE[1])
        assert colleague is not None
        inbox = colleague.well_known["inbox"]
        return sum(
            1
            for m in colleague.messages.values()
            if m.folder_id == inbox and m.internet_message_id == message_id
        )
