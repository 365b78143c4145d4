"""The pure parts of the IMAP backend: references, failure classification, SEARCH
criteria, drafts and the frozen message (no server needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mfconnector.imap.classify import as_failure
from mfconnector.imap.compose import Original, build_draft, freeze_bytes, reply_content
from mfconnector.imap.errors import (
    ImapCommandError,
    ImapConnectionError,
    ImapLimitError,
    ImapStaleReferenceError,
    ImapTimeoutError,
)
from mfconnector.imap.refs import (
    MessageAddress,
    attachment_reference,
    folder_name_of,
    folder_reference,
    message_reference,
    parse_attachment,
    parse_message,
)
from mfconnector.imap.search import exact, filter_criteria
from mfconnector.imap.summaries import internal_date
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.mail.failures import (
    ActionFailure,
    Ambiguous,
    NotFound,
    StaleReference,
    Throttled,
)
from mfconnector.mail.model import MessageSummary, Person
from mfconnector.mail.outgoing import DraftContent, ReplyKind
from mfconnector.mail.query import MessageFilter
from mfconnector.mail.refs import Reference, account_tag, parse_reference

TAG = account_tag("imap", "work")
ALICE = Person("Alice", "alice@example.org")
QUOTE = DEFAULT_LIMITS.reply_quote_chars


@pytest.mark.parametrize("folder", ["INBOX", "Projects/2026.Q1", "Läst & klar", "a.b.c"])
def test_references_round_trip_folder_uidvalidity_and_uid_in_ascii(folder: str) -> None:
    ref = message_reference(TAG, folder, 1764633600, 42)
    assert str(ref).isascii()
    parsed = parse_message(parse_reference(str(ref), TAG, "message_id"))
    assert parsed == MessageAddress(folder, 1764633600, 42)
    part = attachment_reference(TAG, parsed, "2.1")
    assert parse_attachment(parse_reference(str(part), TAG, "attachment_id")).part == "2.1"
    assert folder_name_of(folder_reference(TAG, folder)) == folder


@pytest.mark.parametrize(
    "native",
    ["", "x.1.INBOX", "1.INBOX", "0.5.INBOX", "1.0.INBOX", "12345678901.1.INBOX", "1.1.\n"],
)
def test_a_reference_the_backend_cannot_read_is_stale(native: str) -> None:
    with pytest.raises(StaleReference):
        parse_message(Reference(TAG, native))


def test_failures_are_classified_by_what_happened_and_whether_it_changed_anything() -> None:
    def refused(code: str | None) -> ActionFailure:
        return as_failure(ImapCommandError("UID COPY", "NO", code, "no"), "copying", changes=True)

    assert isinstance(refused("NONEXISTENT"), NotFound)
    assert isinstance(refused("TRYCREATE"), NotFound)
    assert isinstance(refused("LIMIT"), Throttled) and refused("LIMIT").retry_safe
    assert refused("OVERQUOTA").error_code == "provider_error"
    assert refused("OVERQUOTA").details["provider_code"] == "OVERQUOTA"
    lost = ImapConnectionError("the IMAP server closed the connection")
    read = as_failure(lost, "reading", changes=False)
    assert read.error_code == "provider_error" and read.retry_safe
    changed = as_failure(ImapTimeoutError("late"), "moving", changes=True)
    assert isinstance(changed, Ambiguous) and not changed.retry_safe
    limit = as_failure(
        ImapLimitError("deep", limit="imap_nesting_depth", value=33), "x", changes=False
    )
    assert limit.details["limit"] == "imap_nesting_depth"
    stale = as_failure(ImapStaleReferenceError("INBOX", 1, 2), "reading", changes=False)
    assert isinstance(stale, StaleReference) and "UIDVALIDITY" in stale.message


def test_instants_are_widened_for_search_and_held_exactly_after() -> None:
    since = datetime(2026, 11, 2, 23, 30, tzinfo=UTC)
    criteria = filter_criteria(MessageFilter(unread_only=True, since=since))
    assert criteria == [b"UNSEEN", b"SINCE", b"1-Nov-2026"]
    keep = exact(MessageFilter(since=since))
    assert keep is not None

    def at(moment: datetime) -> MessageSummary:
        return MessageSummary(Reference(TAG, "1.1.INBOX"), "s", None, moment, True)

    assert keep(at(since)) and not keep(at(datetime(2026, 11, 2, 23, 29, tzinfo=UTC)))
    assert exact(MessageFilter(unread_only=True)) is None
    assert filter_criteria(MessageFilter()) == [b"ALL"]
    assert internal_date("17-Jul-1996 02:44:25 -0700") == datetime(
        1996, 7, 17, 9, 44, 25, tzinfo=UTC
    )
    assert internal_date(" 7-Jul-1996 02:44:25 +0000") == datetime(
        1996, 7, 7, 2, 44, 25, tzinfo=UTC
    )
    assert internal_date("garbage") is None


def test_the_frozen_message_keeps_bcc_out_of_the_bytes_and_its_digest_covers_every_byte() -> None:
    content = DraftContent(
        to=(Person("Bob", "bob@example.org"),),
        bcc=(Person("", "carol@example.org"),),
        subject="Plan ✓",
        text="The plan.\n.dot line\n",
    )
    raw = build_draft(
        content, ALICE, attachments=[("a.pdf", "application/pdf", b"%PDF")]
    ).as_bytes()
    draft = Reference(TAG, "1.1.Drafts")
    frozen = freeze_bytes(raw, "alice@example.org", draft)
    assert frozen.mime is not None and b"carol@example.org" not in frozen.mime
    assert frozen.envelope_to == ("bob@example.org", "carol@example.org")
    assert frozen.record["bcc"] == [{"name": "", "address": "carol@example.org"}]
    assert frozen.record["attachments"][0]["size"] == 4
    assert frozen == freeze_bytes(raw, "alice@example.org", draft)  # deterministic
    edited = raw.replace(b"The plan.", b"The plon.")
    assert freeze_bytes(edited, "alice@example.org", draft).digest != frozen.digest
    assert freeze_bytes(raw, "mallory@example.org", draft).digest != frozen.digest


def test_a_reply_all_answers_reply_to_copies_the_others_and_threads() -> None:
    original = Original(
        message_id="<m1@example.org>",
        references="<m0@example.org>",
        subject="Re: Plan",
        sender=Person("Bob", "bob@example.org"),
        reply_to=(Person("", "list@example.org"),),
        to=(ALICE, Person("Dan", "dan@example.org")),
        cc=(Person("Bob", "bob@example.org"),),
        text="Line one\nLine two",
    )
    made, in_reply_to, references = reply_content(
        original, "reply_all", DraftContent(text="Yes."), "alice@example.org", quote_chars=QUOTE
    )
    assert made.subject == "Re: Plan" and in_reply_to == "<m1@example.org>"
    assert references == "<m0@example.org> <m1@example.org>"
    assert [p.address for p in made.to] == ["list@example.org"]
    assert [p.address for p in made.cc] == ["dan@example.org", "bob@example.org"]
    assert made.text is not None and "> Line two" in made.text
    forward, _, _ = reply_content(
        original, "forward", DraftContent(text="FYI"), "alice@example.org", quote_chars=QUOTE
    )
    assert forward.subject == "Fwd: Plan" and not forward.to


@pytest.mark.parametrize("length", [QUOTE - 1, QUOTE, QUOTE + 1])
@pytest.mark.parametrize("kind", ["reply", "forward"])
def test_the_quoted_original_is_cut_at_reply_quote_chars_and_says_so(
    length: int, kind: ReplyKind
) -> None:
    text = "ж" * (length - 1) + "Ω"  # the last character tells whether all was quoted
    original = Original(
        message_id="<m1@example.org>",
        references=None,
        subject="Plan",
        sender=Person("Bob", "bob@example.org"),
        reply_to=(),
        to=(ALICE,),
        cc=(),
        text=text,
    )
    made, _, _ = reply_content(
        original, kind, DraftContent(text="mine"), "alice@example.org", quote_chars=QUOTE
    )
    assert made.text is not None
    assert made.text.count("ж") == (length - 1 if length <= QUOTE else QUOTE)
    assert ("Ω" in made.text) is (length <= QUOTE)
    assert ("the rest of the original is not quoted" in made.text) is (length > QUOTE)
