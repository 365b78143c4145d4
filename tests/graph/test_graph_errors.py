"""Graph error answers mapped to GraphError: samples, odd bodies, Retry-After, hygiene."""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mfconnector.errors import GraphError, GraphThrottledError, GraphTimeoutError
from mfconnector.graph.errors import (
    LOGIN_HINT,
    bearer_challenge,
    clean_text,
    connection_error,
    decode_claims,
    graph_error_from_response,
    parse_retry_after,
)
from mfconnector.limits import DEFAULT_LIMITS
from tests.support.shared_paths import GRAPH_SAMPLES

SAMPLES = GRAPH_SAMPLES
MESSAGE_CHARS = DEFAULT_LIMITS.graph_error_message_chars
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SAMPLES / name).read_text())
    return doc


def error_for(status: int, body: Any, headers: dict[str, str] | None = None) -> GraphError:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return graph_error_from_response(status, headers or {}, raw, limits=DEFAULT_LIMITS, now=NOW)


# --- the samples -----------------------------------------------------------------------


def test_expired_token_sample() -> None:
    doc = load("http-401-expired-token.json")
    error = error_for(401, doc["body"], doc["headers"])
    assert type(error) is GraphError
    assert error.code == "InvalidAuthenticationToken"
    assert error.request_id == "1740feb8-b33a-4c08-a6ee-ab5cfc5a18c4"  # header wins
    assert error.hint == LOGIN_HINT
    assert not error.retry_safe
    assert str(error) == (
        "Microsoft Graph answered 401 InvalidAuthenticationToken: Access token has expired "
        "or is not yet valid. (request-id 1740feb8-b33a-4c08-a6ee-ab5cfc5a18c4)"
    )


def test_throttled_sample() -> None:
    doc = load("http-429-throttled.json")
    error = error_for(429, doc["body"], doc["headers"])
    assert isinstance(error, GraphThrottledError)
    assert error.retry_after_seconds == 2.128
    assert error.retry_safe
    assert error.code == "TooManyRequests"
    assert error.extra == {}  # the inner "429" is a status echo, not a specific code
    assert error.request_id == "94fb3b52-452a-4535-a601-69e0a90e3aa2"
    assert error.hint == "throttled: retry in 3 s"
    assert str(error).startswith("throttled by Microsoft Graph: retry in 3 s (429 TooManyRequests")


def test_invalid_filter_sample() -> None:
    doc = load("http-400-invalid-filter.json")
    error = error_for(doc["status"], doc["body"])
    assert (error.code, error.request_id) == ("BadRequest", "6a1bd9e8-07a5-4439-b171-c8295ee79e41")
    assert "Invalid filter clause" in str(error)


def test_outlook_invalid_id_sample() -> None:
    error = error_for(400, load("error-outlook-invalid-id.json"))
    assert error.code == "ErrorInvalidIdMalformed"
    assert error.request_id == "5a07348e-1150-42cc-a2a4-5a30064ccb65"
    assert error.hint == "the id is malformed: pass an id exactly as a previous result gave it"


def test_onedrive_nested_innererror_keeps_both_codes() -> None:
    error = error_for(416, load("error-onedrive-nested-innererror.json"))
    assert error.code == "invalidRange"
    assert error.extra == {"inner_code": "fragmentOverlap"}
    assert error.to_payload()["inner_code"] == "fragmentOverlap"


def test_deepest_specific_inner_code_wins() -> None:
    body = {
        "error": {
            "code": "accessDenied",
            "innerError": {"code": "lvl1", "InnerError": {"code": "lvl2", "innererror": {}}},
        }
    }
    assert error_for(403, body).extra == {"inner_code": "lvl2"}


def test_claims_challenge_sample_header() -> None:
    doc = load("http-401-claims-challenge.json")
    challenge = bearer_challenge(doc["headers"], limits=DEFAULT_LIMITS)
    assert challenge["error"] == "insufficient_claims"
    assert decode_claims(challenge["claims"], limits=DEFAULT_LIMITS) == (
        '{"access_token":{"acrs":{"essential":true,"value":"cp1"}}}'
    )


# --- hints by case ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "hint_part"),
    [
        (404, "ErrorItemNotFound", "ids change when a message is moved"),
        (404, "itemNotFound", "ids change when a message is moved"),
        (404, None, "nothing exists at that id or path"),
        (403, "ErrorAccessDenied", "permission denied"),
        (403, "accessDenied", "consent"),
        (400, "MailboxNotEnabledForRESTAPI", "on-premises"),
        (401, "MailboxNotEnabledForRESTAPI", "unlicensed"),
        (404, "MailboxNotEnabledForRESTAPI", "cannot be reached"),
        (400, "SearchWithFilter", "cannot be combined"),
        (400, "InefficientFilter", "simplify the filter"),
        (500, "generalException", "transient"),
        (504, None, "transient"),
        (503, None, "throttled: retry later"),
    ],
)
def test_hints(status: int, code: str | None, hint_part: str) -> None:
    body = {"error": {"code": code, "message": "m"}} if code else b""
    assert hint_part in (error_for(status, body).hint or "")


def test_mailbox_not_enabled_is_never_a_throttle() -> None:
    body = {"error": {"code": "MailboxNotEnabledForRESTAPI", "message": "nope"}}
    assert type(error_for(503, body)) is GraphError


def test_conditional_access_403() -> None:
    headers = {"WWW-Authenticate": 'Bearer error="insufficient_claims", claims="e30="'}
    assert "Conditional Access" in (error_for(403, b"", headers).hint or "")


@pytest.mark.parametrize(
    ("status", "safe"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (429, True),
        (500, False),
        (502, True),
        (503, True),
        (504, True),
    ],
)
def test_retry_safe_only_where_a_later_retry_can_help(status: int, safe: bool) -> None:
    assert error_for(status, b"").retry_safe is safe


@pytest.mark.parametrize("status", [429, 503])
def test_throttle_without_retry_after(status: int) -> None:
    error = error_for(status, b"")
    assert isinstance(error, GraphThrottledError)
    assert error.retry_after_seconds is None
    assert str(error) == (
        f"throttled by Microsoft Graph: retry later ({status} "
        f"{'Too Many Requests' if status == 429 else 'Service Unavailable'})"
    )


def test_retry_after_override() -> None:
    error = graph_error_from_response(
        429, {"Retry-After": "9"}, b"", limits=DEFAULT_LIMITS, retry_after_seconds=4.0
    )
    assert error.retry_after_seconds == 4.0 and "retry in 4 s" in str(error)


# --- bodies that are not Graph errors --------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<html><body>502 Bad Gateway</body></html>",
        b"\xff\xfe\x00",
        b"[1, 2]",
        b'{"error": "just a string"}',
        b'{"error": {"code": 12, "message": ["x"]}}',
        b'{"error": {"code": "x y z (free text)"}}',
        b"NaN",
        b"[" * 50_000,
    ],
)
def test_odd_bodies_give_a_status_only_error(body: bytes) -> None:
    error = graph_error_from_response(502, {}, body, limits=DEFAULT_LIMITS)
    assert error.code is None
    assert str(error) == "Microsoft Graph answered 502 Bad Gateway"


def test_unknown_status_phrase() -> None:
    assert str(graph_error_from_response(599, {}, b"", limits=DEFAULT_LIMITS)) == (
        "Microsoft Graph answered 599 unexpected status"
    )


def test_odata_message_object() -> None:
    body = {"error": {"code": "x", "message": {"lang": "en-US", "value": "Old shape."}}}
    assert str(error_for(400, body)) == "Microsoft Graph answered 400 x: Old shape."


def test_request_id_from_inner_error_when_no_header() -> None:
    body = {"error": {"code": "x", "innererror": {"request-id": "abc-123"}}}
    assert error_for(400, body).request_id == "abc-123"


def test_httpx_headers_are_read_case_insensitively() -> None:
    headers = httpx.Headers({"Request-Id": "rid-7", "retry-after": "1.5"})
    error = graph_error_from_response(429, headers, b"", limits=DEFAULT_LIMITS)
    assert (error.request_id, error.retry_after_seconds) == ("rid-7", 1.5)


def test_plain_dict_headers_are_read_case_insensitively() -> None:
    error = graph_error_from_response(
        429, {"REQUEST-ID": "rid-8", "Retry-After": "2"}, b"", limits=DEFAULT_LIMITS
    )
    assert (error.request_id, error.retry_after_seconds) == ("rid-8", 2.0)


# --- message hygiene -------------------------------------------------------------------


@pytest.mark.parametrize("length", [MESSAGE_CHARS - 1, MESSAGE_CHARS])
def test_graph_message_up_to_the_cap_is_kept(length: int) -> None:
    assert clean_text("a" * length, MESSAGE_CHARS) == "a" * length


def test_graph_message_past_the_cap_is_cut() -> None:
    cut = clean_text("a" * (MESSAGE_CHARS + 1), MESSAGE_CHARS)
    assert len(cut) == MESSAGE_CHARS and cut.endswith("…")


def test_urls_lose_their_query_and_tokens_are_redacted() -> None:
    message = (
        "Could not fetch https://contoso-my.sharepoint.com/personal/x/download.aspx?"
        "UniqueId=1&tempauth=eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.sig#frag "
        "with Bearer abcdefghijklmnop and tempauth=zzz and eyJhbGciOiJIUzI1NiJ9.eyJ4IjoxfQ.c2ln"
        "\x00\x1b[31m\u2028 end"
    )
    error = error_for(400, {"error": {"code": "x", "message": message}})
    text = str(error)
    assert "https://contoso-my.sharepoint.com/personal/x/download.aspx" in text
    for leak in ("?", "tempauth=", "UniqueId", "eyJ", "abcdefghijklmnop", "#frag", "\x1b", "\x00"):
        assert leak not in text, leak
    assert text.endswith("end")


def test_request_id_and_code_must_look_like_ids() -> None:
    body = {"error": {"code": "<script>", "innerError": {"request-id": "a b c"}}}
    error = error_for(400, body, {"request-id": "x" * 200})
    assert (error.code, error.request_id) == (None, None)


@given(st.binary(max_size=2_000), st.text(max_size=200), st.integers(100, 599))
def test_any_answer_maps_without_crashing(body: bytes, header_value: str, status: int) -> None:
    headers = {
        "Retry-After": header_value,
        "request-id": header_value,
        "WWW-Authenticate": header_value,
    }
    error = graph_error_from_response(status, headers, body, limits=DEFAULT_LIMITS)
    assert isinstance(error, GraphError)
    assert len(str(error)) < MESSAGE_CHARS + 300
    assert error.retry_after_seconds is None or error.retry_after_seconds >= 0


@given(st.text(max_size=3_000))
def test_clean_text_is_bounded_and_single_line(text: str) -> None:
    cleaned = clean_text(text, MESSAGE_CHARS)
    assert len(cleaned) <= MESSAGE_CHARS
    assert not re.search(r"[\x00-\x1f\x7f\u2028\u2029]", cleaned)
    for url in re.findall(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]*", cleaned):
        assert "?" not in url and "#" not in url


@pytest.mark.slow
@given(
    st.dictionaries(
        st.text(max_size=10),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=30),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=10), inner, max_size=3)
            ),
            max_leaves=20,
        ),
    )
)
def test_any_json_error_object_maps(error_object: dict[str, Any]) -> None:
    body = json.dumps({"error": error_object}).encode()
    assert isinstance(graph_error_from_response(400, {}, body, limits=DEFAULT_LIMITS), GraphError)


# --- Retry-After -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2.128", 2.128),
        ("120", 120.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        ("-5", 0.0),
        ("1e3", 1000.0),
        ("86399", 86_399.0),  # retry_after_reported_max_seconds at L-1, L, L+1
        ("86400", 86_400.0),
        ("86401", 86_400.0),
        ("1e300", 86_400.0),
        (format_datetime(NOW + timedelta(seconds=30), usegmt=True), 30.0),
        (format_datetime(NOW - timedelta(seconds=30), usegmt=True), 0.0),
        ("Mon, 30 Nov 2026 12:01:00", 60.0),  # no zone: read as UTC
        ("inf", None),
        ("nan", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, limits=DEFAULT_LIMITS, now=NOW) == seconds


# --- challenges and claims -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("eyJhIjoxfQ", '{"a":1}'),  # unpadded
        ("eyJhIjoxfQ==", '{"a":1}'),
        ("eyJhIjpbXX0_", None),  # url-safe alphabet decodes, but to something that is not JSON
        ("WzFd", None),  # a JSON array, not an object
        ("!!!", None),
        ("", None),
        (None, None),
        ("e" * 9000, None),
    ],
)
def test_decode_claims(value: str | None, expected: str | None) -> None:
    assert decode_claims(value, limits=DEFAULT_LIMITS) == expected


def test_bearer_challenge_handles_escapes_and_no_header() -> None:
    assert bearer_challenge({}, limits=DEFAULT_LIMITS) == {}
    parsed = bearer_challenge(
        {"www-authenticate": r'Bearer realm="a \"b\"", error=invalid_token'}, limits=DEFAULT_LIMITS
    )
    assert parsed == {"realm": 'a "b"', "error": "invalid_token"}


# --- connection failures ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "kind", "text"),
    [
        (
            httpx.ConnectError("[Errno 111] to https://x/?tempauth=1"),
            GraphError,
            "could not connect",
        ),
        (httpx.ReadError("reset by peer"), GraphError, "dropped while reading"),
        (httpx.RemoteProtocolError("peer closed"), GraphError, "broke or the answer was malformed"),
        (httpx.ReadTimeout("timed out"), GraphTimeoutError, "stopped sending data"),
        (httpx.ConnectTimeout("timed out"), GraphTimeoutError, "connecting took too long"),
        (httpx.PoolTimeout("timed out"), GraphTimeoutError, "no connection became free"),
    ],
)
def test_connection_errors_never_carry_library_text(
    exc: Exception, kind: type[GraphError], text: str
) -> None:
    error = connection_error(exc, limits=DEFAULT_LIMITS)
    assert type(error) is kind
    assert text in str(error)
    assert error.retry_safe
    assert str(exc) not in str(error)


# --- limits at L-1, L, L+1 --------------------------------------------------------------


def claims_of_length(length: int) -> str:
    """Base64 of a JSON object, exactly ``length`` characters (a multiple of 4)."""
    filler = "a" * (length * 3 // 4 - len('{"x":""}'))
    value = base64.b64encode(('{"x":"' + filler + '"}').encode()).decode()
    assert len(value) == length
    return value


def test_claims_challenge_chars() -> None:
    limit = DEFAULT_LIMITS.claims_challenge_chars
    assert (
        decode_claims(claims_of_length(limit - 4), limits=DEFAULT_LIMITS) is not None
    )  # base64 comes in fours
    assert decode_claims(claims_of_length(limit), limits=DEFAULT_LIMITS) is not None
    assert decode_claims(claims_of_length(limit) + "=", limits=DEFAULT_LIMITS) is None


def test_challenge_header_chars() -> None:
    limit = DEFAULT_LIMITS.challenge_header_chars
    prefix = 'Bearer error="'
    for length, whole in ((limit - 1, True), (limit, True), (limit + 1, False)):
        value = "e" * (length - len(prefix) - 1)
        header = prefix + value + '"'
        assert len(header) == length
        parsed = bearer_challenge({"www-authenticate": header}, limits=DEFAULT_LIMITS).get("error")
        assert (parsed == value) is whole, length  # past the limit, only a prefix is read


def nested_error(depth: int) -> dict[str, Any]:
    """An error whose specific code sits ``depth`` innerError levels down."""
    inner: dict[str, Any] = {"code": "deepestCode"}
    for _ in range(depth - 1):
        inner = {"code": "1", "innerError": inner}
    return {"error": {"code": "outer", "message": "m", "innerError": inner}}


def test_graph_error_nesting_depth() -> None:
    depth = DEFAULT_LIMITS.graph_error_nesting_depth
    for levels, found in ((depth - 1, True), (depth, True), (depth + 1, False)):
        error = error_for(400, nested_error(levels))
        assert (error.extra.get("inner_code") == "deepestCode") is found, levels
