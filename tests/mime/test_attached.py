"""An attached email as the mail model's Message, as the IMAP and Gmail backends both
show it: its headers decoded and bounded, its own body, whether it has attachments."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from email.message import EmailMessage

import pytest

from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mail.model import Body
from mfconnector.mail.refs import Reference, account_tag
from mfconnector.mime import read_message
from mfconnector.mime.attached import attached_message, header_date

REF = Reference(account_tag("imap", "home"), "attached")
BODY = Body("the text the backend made")


def limits(**changes: int) -> Limits:
    return dataclasses.replace(DEFAULT_LIMITS, **changes)


def forwarded(recipients: int = 2, subject: str = "Grüße from the trip") -> bytes:
    mail = EmailMessage()
    mail["From"] = "=?utf-8?q?J=C3=BCrgen?= <j@example.org>"
    mail["To"] = ", ".join(f"person{i}@example.org" for i in range(recipients))
    mail["Cc"] = "carol@example.org"
    mail["Reply-To"] = "list@example.org"
    mail["Subject"] = subject
    mail["Date"] = "Tue, 01 Dec 2026 10:00:00 +0100"
    mail["Message-ID"] = "<m1@example.org>"
    mail.set_content("hello\n")
    mail.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="a.pdf")
    return mail.as_bytes()


def test_the_headers_are_decoded_and_the_body_is_the_backends() -> None:
    message = attached_message(read_message(forwarded(), DEFAULT_LIMITS), REF, BODY, DEFAULT_LIMITS)
    assert message.ref == REF and message.body == BODY
    assert message.subject == "Grüße from the trip"
    assert message.sender is not None and (message.sender.name, message.sender.address) == (
        "Jürgen",
        "j@example.org",
    )
    assert [p.address for p in message.to] == ["person0@example.org", "person1@example.org"]
    assert [p.address for p in message.cc] == ["carol@example.org"]
    assert [p.address for p in message.reply_to] == ["list@example.org"]
    assert message.sent == datetime(2026, 12, 1, 9, 0, tzinfo=UTC) == message.received
    assert message.internet_message_id == "<m1@example.org>"
    assert message.has_attachments and not message.unread


@pytest.mark.parametrize("count", [19, 20, 21])
def test_an_address_list_is_cut_at_list_field_items(count: int) -> None:
    bounded = limits(list_field_items=20)
    message = attached_message(read_message(forwarded(count), bounded), REF, BODY, bounded)
    assert len(message.to) == min(count, 20)
    assert message.to[-1].address == f"person{min(count, 20) - 1}@example.org"


@pytest.mark.parametrize("length", [99, 100, 101])
def test_the_subject_is_cut_at_field_chars(length: int) -> None:
    bounded = limits(field_chars=100)
    raw = forwarded(subject="s" * length)
    message = attached_message(read_message(raw, bounded), REF, BODY, bounded)
    assert message.subject == "s" * min(length, 100)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Tue, 01 Dec 2026 10:00:00 -0500", datetime(2026, 12, 1, 15, 0, tzinfo=UTC)),
        ("Tue, 01 Dec 2026 10:00:00", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        ("not a date at all", None),
        ("", None),
        (None, None),
    ],
)
def test_a_date_header_is_read_in_utc_or_not_at_all(
    value: str | None, expected: datetime | None
) -> None:
    assert header_date(value) == expected


def test_a_message_without_headers_is_still_a_message() -> None:
    message = attached_message(
        read_message(b"\r\njust a body\r\n", DEFAULT_LIMITS), REF, BODY, DEFAULT_LIMITS
    )
    assert message.subject is None and message.sender is None and message.to == ()
    assert message.sent is None and not message.has_attachments
