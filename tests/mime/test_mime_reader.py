"""The bounded MIME reader: real messages, hostile structure, every limit at L-1, L, L+1."""

from __future__ import annotations

import base64
import dataclasses
from email.message import EmailMessage

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.limits import DEFAULT_LIMITS, Limits
from mfconnector.mime import read_message


def limits(**changes: int) -> Limits:
    return dataclasses.replace(DEFAULT_LIMITS, **changes)


def rich_message() -> bytes:
    mail = EmailMessage()
    mail["From"] = "=?utf-8?q?J=C3=BCrgen?= <j@example.org>"
    mail["To"] = "alice@example.org, bob@example.org"
    mail["Cc"] = "carol@example.org"
    mail["Reply-To"] = "list@example.org"
    mail["Subject"] = "Grüße, and a report"
    mail["Date"] = "Tue, 01 Dec 2026 10:00:00 +0000"
    mail["Message-ID"] = "<m1@example.org>"
    mail["In-Reply-To"] = "<m0@example.org>"
    mail["References"] = "<a@example.org> <m0@example.org>"
    mail.set_content("Plain text: ü\n")
    mail.add_alternative("<p>HTML: ü</p>\n", subtype="html")
    mail.add_attachment(
        b"%PDF" + b"\0" * 2_000, maintype="application", subtype="pdf", filename="Bericht März.pdf"
    )
    return mail.as_bytes()


def test_a_real_message_gives_headers_bodies_and_attachments() -> None:
    result = read_message(rich_message(), DEFAULT_LIMITS)
    assert result.headers == {
        "from": "Jürgen <j@example.org>",
        "to": "alice@example.org, bob@example.org",
        "cc": "carol@example.org",
        "reply-to": "list@example.org",
        "subject": "Grüße, and a report",
        "date": "Tue, 01 Dec 2026 10:00:00 +0000",
        "message-id": "<m1@example.org>",
        "in-reply-to": "<m0@example.org>",
        "references": "<a@example.org> <m0@example.org>",
    }
    assert result.text == "Plain text: ü\n" and result.html == "<p>HTML: ü</p>\n"
    [attachment] = result.attachments
    assert (attachment.name, attachment.mime_type, attachment.size, attachment.path) == (
        "Bericht März.pdf",
        "application/pdf",
        2_004,
        "2",
    )
    assert result.notes == () and not result.truncated


def test_quoted_printable_latin1_and_an_unknown_charset() -> None:
    raw = (
        b"Content-Type: text/plain; charset=iso-8859-1\r\n"
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\nK=F6ln =\r\nsoft\r\n"
    )
    result = read_message(raw, DEFAULT_LIMITS)
    assert result.text == "Köln soft\n" and result.notes == ()
    odd = read_message(b"Content-Type: text/plain; charset=x-klingon\r\n\r\nq\xffa", DEFAULT_LIMITS)
    assert odd.text == "q\ufffda"
    assert "unknown charset 'x-klingon': read as UTF-8" in odd.notes


def test_bad_base64_and_bad_utf8_are_replaced_with_a_note() -> None:
    raw = (
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + base64.b64encode(b"ok \xff\xfe end")
        + b"!!*\r\n"
    )
    result = read_message(raw, DEFAULT_LIMITS)
    assert result.text is not None and result.text.startswith("ok \ufffd\ufffd end")
    assert any("replaced" in note for note in result.notes)


def test_a_missing_boundary_and_a_missing_close_are_read_with_notes() -> None:
    never = read_message(
        b"Content-Type: multipart/mixed; boundary=zz\r\n\r\njust text\r\n", DEFAULT_LIMITS
    )
    assert never.text == "just text\n"
    assert "a multipart whose boundary never appears: read as text" in never.notes
    unclosed = read_message(
        b"Content-Type: multipart/mixed; boundary=zz\r\n\r\npreamble\r\n--zz\r\n"
        b"Content-Type: text/plain\r\n\r\nfirst\r\n--zz\r\n\r\nsecond",
        DEFAULT_LIMITS,
    )
    assert unclosed.text == "first"
    assert "a multipart without its closing boundary: read to the end" in unclosed.notes
    no_param = read_message(b"Content-Type: multipart/mixed\r\n\r\nbody", DEFAULT_LIMITS)
    assert no_param.text == "body"


def nested(levels: int, same_boundary: bool = False) -> bytes:
    out = bytearray()
    for level in range(levels):
        boundary = b"b" if same_boundary else b"b%d" % level
        out += b"Content-Type: multipart/mixed; boundary=" + boundary + b"\r\n\r\n--"
        out += boundary + b"\r\n"
    out += b"Content-Type: text/plain\r\n\r\ndeepest\r\n"
    for level in reversed(range(levels)):
        out += b"\r\n--" + (b"b" if same_boundary else b"b%d" % level) + b"--\r\n"
    return bytes(out)


@pytest.mark.parametrize(("levels", "read"), [(11, True), (12, True), (13, False)])
def test_nesting_is_read_to_mime_depth(levels: int, read: bool) -> None:
    result = read_message(nested(levels), limits(mime_depth=12))
    assert (result.text == "deepest\n") is read
    assert any("(mime_depth)" in note for note in result.notes) is not read


@pytest.mark.parametrize("same", [False, True])
def test_a_thousand_nested_multiparts_are_no_recursion_error(same: bool) -> None:
    result = read_message(nested(1_000, same), DEFAULT_LIMITS)
    assert result.parts_read <= DEFAULT_LIMITS.mime_parts
    assert result.notes  # said what it did not read


def flat(parts: int) -> bytes:
    body = b"".join(
        b"--p\r\nContent-Type: application/octet-stream\r\n\r\nx%d\r\n" % i for i in range(parts)
    )
    return b"Content-Type: multipart/mixed; boundary=p\r\n\r\n" + body + b"--p--\r\n"


@pytest.mark.parametrize(("parts", "all_read"), [(9, True), (10, True), (11, False)])
def test_parts_are_read_to_mime_parts(parts: int, all_read: bool) -> None:
    # The multipart container is a part too: n leaves are n + 1 parts.
    result = read_message(flat(parts - 1), limits(mime_parts=10))
    assert len(result.attachments) == min(parts - 1, 9)
    assert any("(mime_parts)" in note for note in result.notes) is not all_read


def headers(count: int) -> bytes:
    return b"".join(b"X-Filler-%d: v\r\n" % i for i in range(count - 1)) + b"Subject: s\r\n"


@pytest.mark.parametrize(("count", "all_read"), [(9, True), (10, True), (11, False)])
def test_header_fields_are_read_to_mime_header_lines(count: int, all_read: bool) -> None:
    result = read_message(headers(count) + b"\r\nbody", limits(mime_header_lines=10))
    assert ("subject" in result.headers) is all_read
    assert any("(mime_header_lines)" in note for note in result.notes) is not all_read
    assert result.text == "body"  # the body is found even past the cap


@pytest.mark.parametrize(("size", "all_read"), [(99, True), (100, True), (101, False)])
def test_a_header_block_is_read_to_mime_header_bytes(size: int, all_read: bool) -> None:
    block = b"Subject: " + b"s" * (size - 11) + b"\r\n"
    assert len(block) == size
    result = read_message(block + b"\r\nbody", limits(mime_header_bytes=100))
    assert any("(mime_header_bytes)" in note for note in result.notes) is not all_read
    assert result.text == "body"


def test_two_hundred_thousand_headers_are_cut_not_parsed() -> None:
    result = read_message(headers(200_000) + b"\r\nthe body", DEFAULT_LIMITS)
    assert result.text == "the body" and "subject" not in result.headers
    assert any("(mime_header_lines)" in note for note in result.notes)


@pytest.mark.parametrize(("size", "whole"), [(99, True), (100, True), (101, False)])
def test_a_text_body_is_cut_at_mime_text_bytes(size: int, whole: bool) -> None:
    for encoding, body in (("7bit", b"t" * size), ("base64", base64.encodebytes(b"t" * size))):
        raw = (
            b"Content-Type: text/plain\r\nContent-Transfer-Encoding: "
            + encoding.encode()
            + b"\r\n\r\n"
            + body
        )
        result = read_message(raw, limits(mime_text_bytes=100))
        assert result.text == "t" * min(size, 100), encoding
        assert any("(mime_text_bytes)" in note for note in result.notes) is not whole


@pytest.mark.parametrize(("size", "whole"), [(999, True), (1_000, True), (1_001, False)])
def test_only_a_prefix_of_mime_message_bytes_is_read(size: int, whole: bool) -> None:
    raw = b"Subject: s\r\n\r\n" + b"x" * (size - 14)
    result = read_message(raw, limits(mime_message_bytes=1_000))
    assert result.truncated is not whole
    assert result.text is not None and len(result.text) == min(size, 1_000) - 14


_pieces = st.sampled_from(
    [
        b"--b\r\n",
        b"--b--\r\n",
        b"--c\r\n",
        b"\r\n",
        b"\r\n\r\n",
        b"Content-Type: multipart/mixed; boundary=b\r\n",
        b"Content-Type: multipart/alternative; boundary=c\r\n",
        b"Content-Type: text/plain; charset=bogus\r\n",
        b"Content-Transfer-Encoding: base64\r\n",
        b"Content-Transfer-Encoding: quoted-printable\r\n",
        b"Content-Disposition: attachment; filename*=utf-8''%E2%82%AC.txt\r\n",
        b"=?utf-8?b?////?=",
        b"\xff\xfe",
        b"=\r\n",
        b"AAA=",
        b"Subject: =?bogus?q?x?=\r\n",
        b" folded\r\n",
        b"text ",
    ]
)


@given(st.lists(_pieces, max_size=80))
def test_hostile_structure_always_gives_a_bounded_result(pieces: list[bytes]) -> None:
    small = limits(mime_depth=3, mime_parts=8, mime_text_bytes=200, mime_header_lines=20)
    result = read_message(b"".join(pieces), small)
    assert result.parts_read <= 8 and len(result.attachments) <= 8
    for text in (result.text, result.html):
        assert text is None or len(text) <= 200
