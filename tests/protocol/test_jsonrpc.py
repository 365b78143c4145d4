"""Every malformed input class gets the right JSON-RPC error (or, for notifications, none)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.jsonrpc import ClientResponse, Invalid, Notification, Request, encode, parse_line
from mfconnector.limits import DEFAULT_LIMITS


def reply_of(line: bytes) -> dict[str, Any]:
    message = parse_line(line)
    assert isinstance(message, Invalid), message
    return message.reply


@pytest.mark.parametrize(
    ("line", "code", "reply_id"),
    [
        (b"{not json", -32700, None),
        (b"\xff\xfe{}", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":NaN}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":-Infinity}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":1e999}', -32602, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":' + b"9" * 5000 + b"}", -32602, 1),
        (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', -32600, None),
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"id":1,"id":2}}', -32600, 1),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}', -32600, 1),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[{"a":1,"a":1}]}}',
            -32600,
            1,
        ),
        (b"[" * 100_000, -32700, None),
        (b"[]", -32600, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),
        (b"42", -32600, None),
        (b'"ping"', -32600, None),
        (b"null", -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":7}', -32600, 7),
        (b'{"jsonrpc":"2.0","id":"a","method":5}', -32600, "a"),
        (b'{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, 3),
        (b'{"id":3,"method":"ping"}', -32600, 3),
    ],
)
def test_malformed_lines_get_the_right_error(line: bytes, code: int, reply_id: Any) -> None:
    reply = reply_of(line)
    assert reply["error"]["code"] == code
    assert reply["id"] == reply_id
    assert reply["error"]["message"]


def test_requests_notifications_and_client_responses_are_told_apart() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","id":"1","method":"ping"}') == Request("1", "ping", None)
    assert parse_line(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == Request(1, "ping", None)
    assert parse_line(b'{"jsonrpc":"2.0","method":"notifications/x"}') == Notification(
        "notifications/x", None
    )
    assert parse_line(b'{"jsonrpc":"2.0","id":1,"result":{}}') == ClientResponse(1, {})
    assert parse_line(
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}'
    ) == ClientResponse(1, None, {"code": 1, "message": "m"})
    assert parse_line(b"   ") is None
    assert parse_line(b"") is None
    assert parse_line(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r') == Request(1, "ping", None)


def test_encoding_is_one_ascii_line() -> None:
    data = encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "日本語 🎉 \u2028 line\nbreak"}})
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    data.decode("ascii")
    assert json.loads(data)["result"]["text"] == "日本語 🎉 \u2028 line\nbreak"


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_the_parser(line: bytes) -> None:
    message = parse_line(line.replace(b"\n", b""))
    assert message is None or isinstance(message, (Request, Notification, ClientResponse, Invalid))
    if isinstance(message, Invalid):
        encode(message.reply)


def test_an_overflowing_number_in_a_notification_is_dropped_silently() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":-1e999}}') is None


PYTHON_WORDING = ("int_max_str_digits", "utf-8-sig", "Exceeds the limit", "Traceback", "Expecting")


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":' + b"9" * 5000 + b"}", "5,000 digits"),
        (b'{"jsonrpc":"2.0","id":-' + b"9" * 5000 + b',"method":"ping"}', "5,000 digits"),
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', "byte order mark"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
            b'{"name":"account_status","name":"mail_create","arguments":{}}}',
            'the key "name" appears twice',
        ),
    ],
)
def test_refusals_are_in_our_words(line: bytes, words: str) -> None:
    message = reply_of(line)["error"]["message"]
    assert words in message
    assert not any(python in message for python in PYTHON_WORDING), message


@pytest.mark.parametrize(("digits", "refused"), [(99, False), (100, False), (101, True)])
def test_integer_digits_limit_at_l_minus_1_l_and_l_plus_1(digits: int, refused: bool) -> None:
    limit = DEFAULT_LIMITS.request_integer_digits
    assert limit == 100
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":-' + b"7" * digits + b"}}"
    message = parse_line(line, integer_digits=limit)
    if refused:
        assert isinstance(message, Invalid) and message.reply["error"]["code"] == -32602
        assert message.reply["id"] == 1
    else:
        assert message == Request(1, "ping", {"n": -int("7" * digits)})


def test_a_duplicate_key_in_a_notification_is_dropped_unanswered() -> None:
    assert parse_line(b'{"jsonrpc":"2.0","method":"notifications/cancelled","method":"x"}') is None
