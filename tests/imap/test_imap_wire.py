"""The sans-I/O response reader: framing, literals and every limit at L-1, L and L+1."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.imap.encode import Literal, astring, decode_mailbox, encode_mailbox, uid_set
from mfconnector.imap.errors import ImapLimitError, ImapProtocolError
from mfconnector.imap.results import fetched_messages, threads
from mfconnector.imap.wire import Continuation, ResponseReader, Tagged, Untagged
from mfconnector.limits import DEFAULT_LIMITS, Limits

STREAM = (
    b"* 12 FETCH (UID 7 FLAGS (\\Seen $Label) MODSEQ (9) RFC822.SIZE 44 "
    b"BODY[HEADER.FIELDS (SUBJECT)] {19}\r\nSubject: caf\xc3\xa9!\r\n\r\n "
    b'BODY[]<0> "x\\"y")\r\n'
    b"* OK [HIGHESTMODSEQ 99] Highest\r\n"
    b"+ go ahead\r\n"
    b"* THREAD (2)(3 6 (4 23)(44 7 96))\r\n"
    b"M1 OK [COPYUID 5 1:3 10:12] Done\r\n"
)


def read_all(reader: ResponseReader, data: bytes, chunk: int) -> list[object]:
    out: list[object] = []
    for start in range(0, len(data), chunk):
        reader.feed(data[start : start + chunk])
        while (response := reader.next_response()) is not None:
            out.append(response)
    return out


def test_a_stream_parses_into_typed_responses() -> None:
    responses = read_all(ResponseReader(DEFAULT_LIMITS), STREAM, len(STREAM))
    fetch, ok, plus, thread, done = responses
    assert isinstance(fetch, Untagged) and fetch.keyword == "FETCH" and fetch.number == 12
    [message] = fetched_messages([fetch])
    assert message.uid == 7 and message.modseq == 9 and message.size == 44
    assert message.flags == {"\\Seen", "$Label"}
    assert message.sections == {
        "BODY[HEADER.FIELDS (SUBJECT)]": "Subject: café!\r\n\r\n".encode(),
        "BODY[]<0>": b'x"y',
    }
    assert isinstance(ok, Untagged) and ok.code is not None
    assert (ok.code.name, ok.code.args) == ("HIGHESTMODSEQ", (99,))
    assert plus == Continuation("go ahead")
    assert isinstance(thread, Untagged)
    [first, second] = threads([thread])
    assert (first.uid, first.children) == (2, ())
    assert second.uid == 3 and [c.uid for c in second.children] == [6]
    assert [c.uid for c in second.children[0].children] == [4, 44]
    assert isinstance(done, Tagged) and done.status == "OK" and done.code is not None
    assert done.code.args == (5, "1:3", "10:12")


@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60))
def test_any_chunking_gives_the_same_responses(cuts: list[int]) -> None:
    whole = read_all(ResponseReader(DEFAULT_LIMITS), STREAM, len(STREAM))
    reader = ResponseReader(DEFAULT_LIMITS)
    out: list[object] = []
    pos = 0
    for cut in cuts * 10:
        if pos >= len(STREAM):
            break
        reader.feed(STREAM[pos : pos + cut])
        pos += cut
        while (response := reader.next_response()) is not None:
            out.append(response)
    reader.feed(STREAM[pos:])
    while (response := reader.next_response()) is not None:
        out.append(response)
    assert out == whole


def small(**changes: int) -> Limits:
    return dataclasses.replace(DEFAULT_LIMITS, **changes)


@pytest.mark.parametrize(("size", "ok"), [(99, True), (100, True), (101, False)])
def test_an_announced_literal_is_checked_before_a_byte_of_it_is_held(size: int, ok: bool) -> None:
    reader = ResponseReader(small(imap_literal_bytes=100))
    reader.feed(b"* 1 FETCH (UID 1 BODY[] {%d}\r\n" % size)
    if not ok:
        with pytest.raises(ImapLimitError) as caught:
            reader.next_response()
        assert caught.value.limit == "imap_literal_bytes"
        assert "101-byte literal" in str(caught.value)
        with pytest.raises(ImapLimitError):  # broken for good: the framing is lost
            reader.feed(b"x")
        return
    assert reader.next_response() is None
    reader.feed(b"a" * size + b")\r\n")
    [message] = fetched_messages([reader.next_response()])  # type: ignore[list-item]
    assert message.sections["BODY[]"] == b"a" * size


def test_a_huge_announced_literal_is_refused_with_nothing_buffered() -> None:
    reader = ResponseReader(DEFAULT_LIMITS)
    reader.feed(b"* 1 FETCH (BODY[] {999999999}\r\n")
    with pytest.raises(ImapLimitError, match="999,999,999-byte literal"):
        reader.next_response()
    assert reader.buffered_bytes == 0


@pytest.mark.parametrize(("length", "ok"), [(63, True), (64, True), (65, False)])
def test_a_line_is_capped_crlf_included(length: int, ok: bool) -> None:
    reader = ResponseReader(small(imap_line_bytes=64))
    line = b"* OK " + b"x" * (length - 7) + b"\r\n"
    assert len(line) == length
    if ok:
        reader.feed(line)
        assert isinstance(reader.next_response(), Untagged)
    else:
        reader.feed(line)
        with pytest.raises(ImapLimitError, match="imap_line_bytes"):
            reader.next_response()


def test_a_line_without_end_is_refused_once_past_the_cap_and_scanned_once() -> None:
    reader = ResponseReader(small(imap_line_bytes=1_000))
    for _ in range(100):
        reader.feed(b"x" * 10)
        assert reader.next_response() is None
        assert reader.buffered_bytes <= 1_000
    reader.feed(b"x")
    with pytest.raises(ImapLimitError):
        reader.next_response()


@pytest.mark.parametrize(("total", "ok"), [(199, True), (200, True), (201, False)])
def test_a_whole_response_is_capped(total: int, ok: bool) -> None:
    head = b"* 1 FETCH (BODY[] {%d}\r\n"
    tail = b")\r\n"
    literal = total - len(head % 0) - len(tail)
    data = head % literal + b"y" * literal + tail
    # The announced number's width differs from "0": adjust the literal to hit the total.
    literal -= len(data) - total
    data = head % literal + b"y" * literal + tail
    assert len(data) == total
    reader = ResponseReader(small(imap_response_bytes=200))
    reader.feed(data)
    if ok:
        assert isinstance(reader.next_response(), Untagged)
    else:
        with pytest.raises(ImapLimitError, match="imap_response_bytes"):
            reader.next_response()


@pytest.mark.parametrize(("depth", "ok"), [(3, True), (4, True), (5, False)])
def test_nesting_is_capped(depth: int, ok: bool) -> None:
    reader = ResponseReader(small(imap_nesting_depth=4))
    reader.feed(b"* LIST " + b"(" * depth + b")" * depth + b' "/" INBOX\r\n')
    if ok:
        assert isinstance(reader.next_response(), Untagged)
    else:
        with pytest.raises(ImapLimitError, match="imap_nesting_depth"):
            reader.next_response()


@pytest.mark.parametrize(
    "line",
    [
        b"* 1 FETCH (UID 1\r\n",
        b"* 1 FETCH UID 1)\r\n",
        b'* 1 FETCH ("open\r\n',
        b"M1 MAYBE done\r\n",
        b"* OK [CODE never closed\r\n",
        b"* OK \0\r\n",
        b" \r\n",
    ],
)
def test_malformed_responses_are_protocol_errors(line: bytes) -> None:
    reader = ResponseReader(DEFAULT_LIMITS)
    reader.feed(line)
    with pytest.raises(ImapProtocolError):
        reader.next_response()


@given(st.binary(max_size=300))
def test_any_bytes_give_responses_or_a_protocol_error(data: bytes) -> None:
    reader = ResponseReader(small(imap_line_bytes=128, imap_literal_bytes=64))
    with contextlib.suppress(ImapProtocolError):
        read_all(reader, data, 7)
    assert reader.buffered_bytes <= 128 + 64 + 7


def test_arguments_that_could_break_the_line_become_literals() -> None:
    assert astring("INBOX") == b"INBOX"
    assert astring('a b"c') == b'"a b\\"c"'
    assert astring("x\r\nM2 DELETE INBOX") == Literal(b"x\r\nM2 DELETE INBOX")
    assert astring("") == b'""'


@pytest.mark.parametrize("name", ["INBOX", "Entwürfe", "A&B", "日本語/下書き", "&-"])
def test_mailbox_names_round_trip_through_modified_utf7(name: str) -> None:
    encoded = encode_mailbox(name)
    raw = encoded.data if isinstance(encoded, Literal) else encoded.strip(b'"')
    assert raw.isascii()
    assert decode_mailbox(raw) == name
    assert encode_mailbox("Entwürfe") == b"Entw&APw-rfe"


def test_uid_sets_join_ranges() -> None:
    assert uid_set([7, 1, 2, 3, 9, 10]) == b"1:3,7,9:10"
    with pytest.raises(ValueError):
        uid_set([])


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40))
def test_any_mailbox_name_round_trips_and_stays_ascii(name: str) -> None:
    encoded = encode_mailbox(name)
    assert isinstance(encoded, bytes) and encoded.isascii()  # never a literal, never 8-bit
    raw = encoded
    if raw.startswith(b'"'):
        raw = raw[1:-1].replace(b'\\"', b'"').replace(b"\\\\", b"\\")
    assert decode_mailbox(raw) == name
