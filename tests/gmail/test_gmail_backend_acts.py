"""GmailMailBackend's actions against the Gmail emulator over loopback HTTP: labels,
label changes, trash and delete, drafts, the frozen raw message and its one send."""

from __future__ import annotations

import base64
import dataclasses
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy

import pytest

from mfconnector.gmail_emulator import GmailEmulator
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.failures import InsufficientScope, Unsupported
from mfconnector.mail.model import Person
from mfconnector.mail.outgoing import DraftAttachment, DraftContent, DraftRevision, ReplyKind
from mfconnector.mail.query import FlagChange, PageRequest
from mfconnector.mail.refs import Reference
from tests.support.gmail_loopback import ME, TOKEN, backend_for, empty_emulator, served

ALL_GATES = {"writes", "send", "delete"}


def _incoming(emulator: GmailEmulator, subject: str, labels: list[str]) -> str:
    message = EmailMessage()
    message["From"] = "Bo <bo@mail.example>"
    message["To"] = ME
    message["Subject"] = subject
    message["Message-ID"] = f"<{subject.replace(' ', '.')}@mail.example>"
    message.set_content("the original text")
    return emulator.mailbox.add_message(message.as_bytes(), labels).id


async def test_labels_are_created_nested_and_renamed_with_their_children() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        top = await backend.create_folder(None, "Clients")
        child = await backend.create_folder(top, "Contoso")
        assert child.path == "Clients/Contoso" and child.parent == top.ref
        renamed = await backend.rename_folder(top, "Customers")
        assert renamed.path == "Customers"
        names = {label.name for label in emulator.mailbox.labels.values() if label.type == "user"}
        assert names == {"Customers", "Customers/Contoso"}
        inbox = await backend.resolve_folder("inbox", "folder")
        with pytest.raises(Unsupported):
            await backend.rename_folder(inbox, "Mine")
        with pytest.raises(Unsupported):
            await backend.create_folder(inbox, "Under the inbox")


async def test_copy_adds_a_label_and_move_replaces_where_the_message_is() -> None:
    emulator = empty_emulator()
    message_id = _incoming(emulator, "label me", ["INBOX", "UNREAD", "STARRED"])
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        ref = Reference(backend.tag, message_id)
        first = await backend.create_folder(None, "First")
        second = await backend.create_folder(None, "Second")
        assert await backend.copy(ref, first) == ref
        labels = set(emulator.mailbox.messages[message_id].label_ids)
        assert {"INBOX", first.ref.native} <= labels
        requests = emulator.http_requests
        await backend.move(ref, second)
        assert emulator.http_requests - requests == 2  # one read of its labels, one modify
        labels = set(emulator.mailbox.messages[message_id].label_ids)
        assert second.ref.native in labels
        assert "INBOX" not in labels and first.ref.native not in labels
        assert {"UNREAD", "STARRED"} <= labels  # states stay
        sent = await backend.resolve_folder("sent", "folder")
        with pytest.raises(Unsupported):
            await backend.copy(ref, sent)


async def test_flags_and_categories_are_labels_and_conditions_are_unsupported() -> None:
    emulator = empty_emulator()
    message_id = _incoming(emulator, "flag me", ["INBOX", "UNREAD"])
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        ref = Reference(backend.tag, message_id)
        work = await backend.create_folder(None, "Work")
        await backend.set_flags(
            ref, FlagChange(unread=False, flag="flagged", add_categories=["work"])
        )
        labels = set(emulator.mailbox.messages[message_id].label_ids)
        assert "UNREAD" not in labels and "STARRED" in labels and work.ref.native in labels
        before = emulator.http_requests
        with pytest.raises(Unsupported, match="change key"):
            await backend.set_flags(ref, FlagChange(unread=True, unchanged_since="x"))
        assert emulator.http_requests == before
    assert not backend.capabilities.conditional_flags
    assert any(name == "conditional_flags" for name, _ in backend.capabilities.missing)


async def test_trash_and_permanent_delete_only_with_the_full_mail_scope() -> None:
    emulator = empty_emulator()
    kept = _incoming(emulator, "trash me", ["INBOX"])
    gone = _incoming(emulator, "delete me", ["INBOX"])
    with served(emulator) as server:
        writes_only = backend_for(server, gates={"writes"})
        assert not writes_only.capabilities.permanent_delete
        await writes_only.trash(Reference(writes_only.tag, kept))
        assert "TRASH" in emulator.mailbox.messages[kept].label_ids
        before = emulator.http_requests
        with pytest.raises(Unsupported, match="full-mail scope"):
            await writes_only.delete_permanently(Reference(writes_only.tag, gone))
        assert emulator.http_requests == before and gone in emulator.mailbox.messages
        full = backend_for(server, gates=ALL_GATES)
        assert full.capabilities.permanent_delete
        await full.delete_permanently(Reference(full.tag, gone))
    assert gone not in emulator.mailbox.messages and kept in emulator.mailbox.messages


async def test_a_draft_is_frozen_as_its_exact_bytes_and_sent_once() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        draft = await backend.create_draft(
            DraftContent(
                to=[Person("Cy", "cy@mail.example")],
                bcc=[Person("", "hidden@mail.example")],
                subject="Quarterly figures ✓",
                text="Here they are.",
                attachments=[DraftAttachment("q3.csv", "text/csv", data=b"a,b\n1,2\n")],
            )
        )
        frozen = await backend.freeze(draft.ref)
        assert frozen.record["subject"] == "Quarterly figures ✓"
        assert [p["address"] for p in frozen.record["bcc"]] == ["hidden@mail.example"]
        assert frozen.record["attachments"][0]["name"] == "q3.csv"
        assert frozen.record["attachments"][0]["size"] == 8
        assert set(frozen.envelope_to) == {"cy@mail.example", "hidden@mail.example"}
        assert await backend.verify_sent(frozen) is False
        result = await backend.send(frozen)
        assert result.outcome == "sent" and result.sent_copy == "filed_by_provider"
        assert await backend.verify_sent(frozen) is True
    assert not backend.capabilities.append_sent
    sent = [m for m in emulator.mailbox.messages.values() if "SENT" in m.label_ids]
    assert len(sent) == 1 and sent[0].raw == frozen.mime  # exactly those bytes
    assert not emulator.mailbox.drafts  # the draft it came from is gone


async def test_the_digest_changes_when_the_draft_changes_in_gmail() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        draft = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="s", text="one")
        )
        before = await backend.freeze(draft.ref)
        stored = emulator.mailbox.drafts[draft.ref.native].message_id
        raw = emulator.mailbox.messages[stored].raw.replace(b"one", b"two")
        import httpx

        async with httpx.AsyncClient(base_url=server.url) as http:
            reply = await http.put(
                f"/gmail/v1/users/me/drafts/{draft.ref.native}",
                headers={"Authorization": "Bearer loopback-token"},
                json={"message": {"raw": base64.urlsafe_b64encode(raw).decode()}},
            )
            assert reply.status_code == 200
        after = await backend.freeze(draft.ref)
    assert before.digest != after.digest and after.record["body"]["content"].strip() == "two"


async def test_a_reply_joins_the_thread_with_its_references() -> None:
    emulator = empty_emulator()
    original = _incoming(emulator, "Lunch plans", ["INBOX"])
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        draft = await backend.create_response(
            Reference(backend.tag, original),
            "reply",
            DraftContent(to=[Person("Bo", "bo@mail.example")], text="Noon works."),
        )
        frozen = await backend.freeze(draft.ref)
        result = await backend.send(frozen)
        assert result.outcome == "sent"
        thread = await backend.thread(Reference(backend.tag, original), PageRequest(limit=10))
    assert frozen.mime is not None
    parsed = BytesParser(policy=default_policy).parsebytes(frozen.mime)
    assert parsed["In-Reply-To"] == "<Lunch.plans@mail.example>"
    assert parsed["Subject"] == "Re: Lunch plans"
    assert [m.subject for m in thread.items] == ["Lunch plans", "Re: Lunch plans"]


@pytest.mark.parametrize("extra", [-1, 0, 1])
@pytest.mark.parametrize("kind", ["reply", "forward"])
async def test_the_quoted_original_is_cut_at_reply_quote_chars_and_says_so(
    extra: int, kind: ReplyKind
) -> None:
    limit = 200
    message = EmailMessage()
    message["From"] = "Bo <bo@mail.example>"
    message["To"] = ME
    message["Subject"] = "Long one"
    message.set_content("ж" * (limit + extra - 1) + "Ω")  # the last one tells all was quoted
    emulator = empty_emulator()
    original = emulator.mailbox.add_message(message.as_bytes(), ["INBOX"]).id
    with served(emulator) as server:
        backend = backend_for(
            server,
            gates=ALL_GATES,
            limits=dataclasses.replace(DEFAULT_LIMITS, reply_quote_chars=limit),
        )
        draft = await backend.create_response(
            Reference(backend.tag, original),
            kind,
            DraftContent(to=[Person("Bo", "bo@mail.example")], text="mine"),
        )
        frozen = await backend.freeze(draft.ref)
    assert frozen.mime is not None
    parsed = BytesParser(policy=default_policy).parsebytes(frozen.mime)
    body = parsed.get_body(("plain",))
    assert body is not None
    text = body.get_content()
    assert text.startswith("mine")
    assert text.count("ж") == (limit + extra - 1 if extra <= 0 else limit)
    assert ("Ω" in text) is (extra <= 0)
    assert ("the rest of the original is not quoted" in text) is (extra > 0)


async def test_a_rate_limited_send_is_rejected_and_nothing_is_sent() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        draft = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="s", text="t")
        )
        frozen = await backend.freeze(draft.ref)
        emulator.add_fault(status=429, retry_after="0", path_contains="/messages/send")
        result = await backend.send(frozen)
    assert result.outcome == "rejected"
    assert not [m for m in emulator.mailbox.messages.values() if "SENT" in m.label_ids]


async def test_a_send_without_the_send_scope_is_refused_with_the_login_command() -> None:
    from mfconnector.gmail_emulator import COMPOSE, READONLY

    emulator = empty_emulator(scopes=[READONLY, COMPOSE])
    with served(emulator) as server:
        backend = backend_for(server, gates={"send"})
        draft = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="s", text="t")
        )
        frozen = await backend.freeze(draft.ref)
        emulator.tokens["loopback-token"] = frozenset({READONLY})
        result = await backend.send(frozen)
        with pytest.raises(InsufficientScope, match="permission"):
            await backend.discard_draft(draft.ref)
    assert result.outcome == "rejected"


class _Described:
    """A token provider that says which scopes the sign-in holds (as Google sign-in does)."""

    def __init__(self, scopes: list[str]) -> None:
        self.scopes = scopes

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        return "loopback-token"

    async def describe(self) -> dict[str, object]:
        return {"signed_in": True, "scopes": self.scopes}


async def test_missing_permissions_are_known_from_the_granted_scopes() -> None:
    from mfconnector.gmail.account import gmail_account
    from mfconnector.gmail.scopes import COMPOSE, FULL_MAIL, MODIFY, READONLY, SEND
    from mfconnector.limits import DEFAULT_LIMITS

    emulator = empty_emulator()
    with served(emulator) as server:

        def backend(scopes: list[str]) -> object:
            return gmail_account(
                "gmail",
                token_provider=_Described(scopes),
                limits=DEFAULT_LIMITS,
                root=server.url,
            ).mail

        reader = backend([READONLY])
        assert list(await reader.missing_permissions("writes")) == [MODIFY]  # type: ignore[attr-defined]
        assert list(await reader.missing_permissions("send")) == [SEND, COMPOSE]  # type: ignore[attr-defined]
        writer = backend([READONLY, MODIFY])
        assert not await writer.missing_permissions("writes")  # type: ignore[attr-defined]
        assert list(await writer.missing_permissions("delete")) == [FULL_MAIL]  # type: ignore[attr-defined]
        full = backend([FULL_MAIL])
        assert not await full.missing_permissions("delete")  # type: ignore[attr-defined]
        mailbox = backend_for(server)  # an operator-managed token: cannot tell, Gmail will
        assert not await mailbox.missing_permissions("writes")
        made = await mailbox.create_folder(None, "Kept")
        stale = dataclasses.replace(made, name="Old name", role=None)
        assert (await mailbox.classify_folder(stale)).name == "Kept"
        inbox = await mailbox.resolve_folder("inbox", "folder")
        assert (
            await mailbox.classify_folder(dataclasses.replace(inbox, role=None))
        ).role == "inbox"


async def test_a_revised_draft_is_a_new_draft_that_keeps_the_thread_and_the_rest() -> None:
    emulator = empty_emulator()
    original = _incoming(emulator, "Budget", ["INBOX"])
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        first = await backend.create_response(
            Reference(backend.tag, original),
            "reply",
            DraftContent(
                to=[Person("Bo", "bo@mail.example")],
                text="First words.",
                attachments=[DraftAttachment("plan.txt", "text/plain", data=b"the plan\n")],
            ),
        )
        revised = await backend.revise_draft(
            first.ref, DraftRevision(DraftContent(text="Better words."), frozenset({"text"}))
        )
        assert revised.ref != first.ref and len(emulator.mailbox.drafts) == 2  # source kept
        assert not revised.attached  # the attachments stayed; nothing was attached anew
        before = await backend.freeze(first.ref)
        after = await backend.freeze(revised.ref)
    assert after.record["body"]["content"].strip() == "Better words."
    assert before.record["body"]["content"].strip().startswith("First words.")
    for key in ("to", "subject", "in_reply_to", "attachments"):
        assert after.record[key] == before.record[key], key
    assert after.native["thread_id"] == before.native["thread_id"] is not None
    assert after.message_id != before.message_id


def _with_attachment(emulator: GmailEmulator, data: bytes) -> str:
    message = EmailMessage()
    message["From"] = "Bo <bo@mail.example>"
    message["To"] = ME
    message["Subject"] = "the figures"
    message["Message-ID"] = "<figures@mail.example>"
    message.set_content("attached")
    message.add_attachment(data, maintype="text", subtype="csv", filename="figures.csv")
    return emulator.mailbox.add_message(message.as_bytes(), ["INBOX"]).id


async def test_another_messages_attachment_is_attached_by_reference_byte_for_byte() -> None:
    emulator = empty_emulator()
    data = b"region,total\nnorth,12\nsouth,30\n"
    source = _with_attachment(emulator, data)
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        message = Reference(backend.tag, source)
        listed = await backend.attachments(message, PageRequest(limit=10))
        wanted = DraftAttachment(
            "", "", source=listed.items[0].ref, container=message, source_kind="attachment"
        )
        resolved = await backend.resolve_attachment(wanted)
        assert (resolved.name, resolved.content_type) == ("figures.csv", "text/csv")
        assert resolved.size == len(data) and resolved.version is not None
        assert await backend.source_version(resolved) == resolved.version
        made = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="fwd", attachments=[resolved])
        )
        frozen = await backend.freeze(made.ref)
        await backend.trash(message)
        await backend.delete_permanently(message)
        assert await backend.source_version(resolved) is None  # the source is gone now
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    assert [(a.name, a.size, a.sha256) for a in made.attached] == [
        ("figures.csv", len(data), digest)
    ]
    assert [(a["name"], a["size"], a["sha256"]) for a in frozen.record["attachments"]] == [
        ("figures.csv", len(data), digest)
    ]


async def test_a_drive_file_as_a_source_is_unsupported_before_any_request() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        drive_file = DraftAttachment(
            "report.docx", "", source=Reference(backend.tag, "01ABCDEF"), source_kind="file"
        )
        before = emulator.http_requests
        with pytest.raises(Unsupported, match="no drive"):
            await backend.resolve_attachment(drive_file)
        with pytest.raises(Unsupported, match="not a file from a drive"):
            await backend.create_draft(
                DraftContent(to=[Person("", "cy@mail.example")], attachments=[drive_file])
            )
        assert emulator.http_requests == before
        assert await backend.source_version(drive_file) is None
    assert not emulator.mailbox.drafts


async def test_revising_the_attachments_replaces_them_and_keeps_the_source_draft() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        first = await backend.create_draft(
            DraftContent(
                to=[Person("", "cy@mail.example")],
                subject="files",
                text="see attached",
                attachments=[DraftAttachment("old.txt", "text/plain", data=b"old")],
            )
        )
        new = DraftAttachment("new.txt", "text/plain", data=b"newer bytes")
        revised = await backend.revise_draft(
            first.ref, DraftRevision(DraftContent(attachments=[new]), frozenset({"attachments"}))
        )
        before = await backend.freeze(first.ref)
        after = await backend.freeze(revised.ref)
    assert [a["name"] for a in before.record["attachments"]] == ["old.txt"]
    assert [a["name"] for a in after.record["attachments"]] == ["new.txt"]
    assert [(a.name, a.size) for a in revised.attached] == [("new.txt", 11)]
    assert after.record["body"]["content"].strip() == "see attached"
    assert after.record["subject"] == "files"


async def test_a_send_that_cannot_connect_is_not_sent_and_a_5xx_is_unknown() -> None:
    emulator = empty_emulator()
    with served(emulator) as server:
        backend = backend_for(server, gates=ALL_GATES)
        made = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="s", text="t")
        )
        frozen = await backend.freeze(made.ref)
        emulator.add_fault(status=503, reason="backendError", path_contains="/messages/send")
        unknown = await backend.send(frozen)
    not_sent = await backend.send(frozen)  # the server is gone: nothing can leave
    assert unknown.outcome == "unknown" and unknown.details.get("provider_status") == 503
    assert not_sent.outcome == "not_sent" and not_sent.error_code == "provider_error"
    assert not [m for m in emulator.mailbox.messages.values() if "SENT" in m.label_ids]


class _SignInLost:
    """A token provider whose sign-in stops working when ``lost`` is set (a revoked
    refresh token): the next request never leaves this process."""

    lost = False

    async def get_token(self, *, force_refresh: bool = False, claims: str | None = None) -> str:
        from mfconnector.errors import AuthError

        if self.lost:
            raise AuthError("the Google sign-in expired", hint="run `mfconnector login`")
        return TOKEN

    async def describe(self) -> dict[str, object]:
        return {"signed_in": not self.lost}


async def test_a_send_whose_sign_in_fails_is_not_sent_and_can_be_confirmed_again() -> None:
    from mfconnector.gmail.account import gmail_account
    from mfconnector.gmail.backend import GmailMailBackend

    emulator = empty_emulator()
    tokens = _SignInLost()
    with served(emulator) as server:
        account = gmail_account(
            "gmail",
            token_provider=tokens,  # type: ignore[arg-type]
            limits=DEFAULT_LIMITS,
            gates=frozenset(ALL_GATES),
            root=server.url,
        )
        backend = account.mail
        assert isinstance(backend, GmailMailBackend)
        made = await backend.create_draft(
            DraftContent(to=[Person("", "cy@mail.example")], subject="s", text="t")
        )
        frozen = await backend.freeze(made.ref)
        tokens.lost = True
        before = emulator.http_requests
        result = await backend.send(frozen)
        assert emulator.http_requests == before  # nothing reached Gmail
        tokens.lost = False
        again = await backend.send(frozen)
    assert result.outcome == "not_sent" and result.error_code == "auth_required"
    assert again.outcome == "sent"
    assert len([m for m in emulator.mailbox.messages.values() if "SENT" in m.label_ids]) == 1
