"""shaping: bounded output, no secrets, and a truthful ``skipped`` record, for any Graph JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.shaping import (
    REDACTED,
    Skipped,
    clip_text,
    is_secret_key,
    pick,
    redact_text,
    shape_item,
    strip_secrets,
)

FIELD_CHARS = DEFAULT_LIMITS.field_chars
LIST_ITEMS = DEFAULT_LIMITS.list_field_items


def _plain(text: str) -> bool:
    """Text that can only carry a secret when a strategy puts one in on purpose."""
    return "tempauth" not in text.lower() and "downloadurl" not in text.lower()


SECRET_URLS = st.sampled_from(
    [
        "https://x.sharepoint.com/a?tempauth=SECRET",
        "HTTPS://X.SHAREPOINT.COM/A?TEMPAUTH=SECRET",
        "https://contoso-my.sharepoint.com/personal/u/_layouts/15/download.aspx"
        "?UniqueId=1&Translate=false&tempauth=FAKE.abc.NOT-A-TOKEN&ApiVersion=2.0",
        "https://eastus1-mediap.svc.ms/transform/thumbnail?provider=spo&docid="
        "https%3A%2F%2Fx.sharepoint.com&w=96&tempauth=FAKE.thumb",
        "http://127.0.0.1:8080/dl?tempauth=SECRET#part",
    ]
)
SECRET_KEYS = st.sampled_from(
    [
        "@microsoft.graph.downloadUrl",
        "@Microsoft.Graph.DownloadUrl",
        "@content.downloadUrl",
        "thumbnails",
        "contentBytes",
        "@odata.nextLink",
    ]
)
PLAIN_KEYS = st.sampled_from(
    ["id", "name", "subject", "size", "file", "folder", "webUrl", "body", "content", "value"]
) | st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ_@.", min_size=1, max_size=10).filter(_plain)
KEYS = SECRET_KEYS | PLAIN_KEYS


PLAIN_TEXT = st.text(max_size=30).filter(_plain)
text_with_secret = st.builds(
    lambda before, url, after: before + url + after,
    PLAIN_TEXT,
    SECRET_URLS,
    st.sampled_from(["", " ", "\n", '"', " and more", "> trailing", "abc"]),
)
long_text = st.builds(
    lambda unit, times: unit * times, st.text(min_size=1, max_size=4), st.integers(0, 300)
).filter(_plain)
STRINGS = PLAIN_TEXT | text_with_secret | long_text | SECRET_URLS
LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | STRINGS
GRAPH_JSON = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=25) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=30,
)
GRAPH_ITEMS = st.dictionaries(KEYS, GRAPH_JSON, max_size=8)
CAPS = st.sampled_from([(FIELD_CHARS, LIST_ITEMS), (10, 3), (1, 1), (40, 0)])

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def walk(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """Every (path, value) pair, dict keys included as values of their own."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}#key", key
            yield from walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, f"{path}[{index}]")


def assert_no_secrets(value: Any) -> None:
    for where, node in walk(value):
        if isinstance(node, dict):
            secret = [key for key in node if is_secret_key(str(key))]
            assert not secret, (where, secret)
        if isinstance(node, str):
            assert "tempauth" not in node.lower(), (where, node[:200])
            assert "downloadurl" not in node.lower(), (where, node[:200])


def assert_within(value: Any, max_chars: int, max_items: int) -> None:
    for where, node in walk(value):
        if isinstance(node, str) and not where.endswith("#key"):
            assert len(node) <= max_chars, (where, len(node))
        if isinstance(node, list):
            assert len(node) <= max_items, (where, len(node))


# --- strip_secrets ------------------------------------------------------------------------------


CONTAINERS = st.lists(GRAPH_JSON, max_size=6) | st.dictionaries(KEYS, GRAPH_JSON, max_size=6)


@pytest.mark.slow
@SETTINGS
@given(CONTAINERS)
def test_strip_secrets_leaves_no_secret_and_reports_every_change(value: Any) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    clean = strip_secrets(value, skipped, "item")
    assert_no_secrets(clean)
    if clean != value:
        assert skipped.removed, "something was taken out without being reported"
        assert skipped
    assert not skipped.fields and skipped.items is None and skipped.text is None
    for path in skipped.removed:
        assert path == "item" or path.startswith(("item.", "item["))
    json.dumps(clean)  # still JSON


@pytest.mark.slow
@SETTINGS
@given(GRAPH_JSON)
def test_strip_secrets_keeps_clean_data_unchanged(value: Any) -> None:
    has_secret = any(
        (isinstance(node, dict) and any(is_secret_key(str(k)) for k in node))
        or (isinstance(node, str) and "tempauth" in node.lower())
        for _, node in walk(value)
    )
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    clean = strip_secrets(value, skipped, "item")
    if not has_secret:
        assert clean == value
        assert not skipped


@pytest.mark.parametrize(
    "secret",
    [
        "https://x.sharepoint.com/a?tempauth=SECRET",
        "see https://x.sharepoint.com/a?tempauth=SECRET now",
        "https%3A%2F%2Fx.sharepoint.com%2Fa%3Ftempauth%3DSECRET",
        "HTTPS://X.SHAREPOINT.COM/A?TEMPAUTH=SECRET",
    ],
)
def test_strip_secrets_of_a_bare_secret_string_removes_the_secret(secret: str) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    clean = strip_secrets(secret, skipped, "v")
    text = json.dumps(clean)  # still JSON
    assert "SECRET" not in text and "tempauth" not in text.lower()
    assert skipped.removed == ["v"]


def test_strip_secrets_examples() -> None:
    item = {
        "id": "01A",
        "@microsoft.graph.downloadUrl": "https://x.sharepoint.com/dl?tempauth=S",
        "thumbnails": [{"small": {"url": "https://t/?tempauth=S"}}],
        "description": "get it at https://x.sharepoint.com/a?tempauth=S today",
        "links": ["https://x.sharepoint.com/a?tempauth=S", "https://example.com/"],
        "attachments": [{"name": "a.pdf", "contentBytes": "JVBERi0="}],
    }
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    clean = strip_secrets(item, skipped, "item")
    assert clean == {
        "id": "01A",
        "description": f"get it at {REDACTED} today",
        "links": ["https://example.com/"],
        "attachments": [{"name": "a.pdf"}],
    }
    assert skipped.removed == [
        "item.@microsoft.graph.downloadUrl",
        "item.thumbnails",
        "item.description",
        "item.links[0]",
        "item.attachments[0].contentBytes",
    ]


# --- shape_item -------------------------------------------------------------------------------


@pytest.mark.slow
@SETTINGS
@given(GRAPH_ITEMS, st.lists(KEYS, max_size=8), CAPS)
def test_shape_item_is_bounded_clean_and_honest(
    item: dict[str, Any], extra_fields: list[str], caps: tuple[int, int]
) -> None:
    max_chars, max_items = caps
    fields = (*item.keys(), *extra_fields)
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    shaped = shape_item(item, fields, skipped, "item", max_chars=max_chars, max_items=max_items)
    assert_within(shaped, max_chars, max_items)
    assert_no_secrets(shaped)
    assert set(shaped) <= set(fields)
    if shaped != pick(item, fields):
        assert skipped, "cut or removed without a skipped record"
        result = skipped.apply({"item": shaped})
        assert result["incomplete"] is True and result["skipped"]
    for record in skipped.fields:
        assert record["path"] == "item" or record["path"].startswith(("item.", "item["))
        if "kept_chars" in record:
            assert record["kept_chars"] == max_chars < record["original_chars"]
        if "kept_items" in record:
            assert record["kept_items"] == max_items < record["original_items"]


@pytest.mark.slow
@settings(SETTINGS, max_examples=50)
@given(GRAPH_ITEMS)
def test_shape_item_only_keeps_the_fields_asked_for(item: dict[str, Any]) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    shaped = shape_item(
        item, ("id", "name"), skipped, "x", max_chars=FIELD_CHARS, max_items=LIST_ITEMS
    )
    assert set(shaped) <= {"id", "name"}


@pytest.mark.parametrize("length", [FIELD_CHARS - 1, FIELD_CHARS, FIELD_CHARS + 1])
def test_shape_item_string_cap_at_l_minus_1_l_l_plus_1(length: int) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    shaped = shape_item(
        {"subject": "s" * length},
        ("subject",),
        skipped,
        "m",
        max_chars=FIELD_CHARS,
        max_items=LIST_ITEMS,
    )
    assert len(shaped["subject"]) == min(length, FIELD_CHARS)
    if length > FIELD_CHARS:
        assert skipped.fields == [
            {"path": "m.subject", "original_chars": length, "kept_chars": FIELD_CHARS}
        ]
    else:
        assert not skipped


@pytest.mark.parametrize("count", [LIST_ITEMS - 1, LIST_ITEMS, LIST_ITEMS + 1])
def test_shape_item_list_cap_at_l_minus_1_l_l_plus_1(count: int) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    shaped = shape_item(
        {"toRecipients": [{"n": i} for i in range(count)]},
        ("toRecipients",),
        skipped,
        "m",
        max_chars=FIELD_CHARS,
        max_items=LIST_ITEMS,
    )
    assert shaped["toRecipients"] == [{"n": i} for i in range(min(count, LIST_ITEMS))]
    if count > LIST_ITEMS:
        assert skipped.fields == [
            {"path": "m.toRecipients", "original_items": count, "kept_items": LIST_ITEMS}
        ]
    else:
        assert not skipped


@pytest.mark.parametrize("item", [None, "text", 3, ["a"]])
def test_shape_item_of_a_non_object_is_reported(item: Any) -> None:
    skipped = Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    assert shape_item(item, ("id",), skipped, "items[3]", max_chars=10, max_items=2) == {}
    assert skipped.fields == [{"path": "items[3]", "reason": "Graph returned a non-object item"}]


def test_skipped_apply_marks_only_incomplete_results() -> None:
    assert Skipped(DEFAULT_LIMITS.skipped_paths_listed).apply({"a": 1}) == {"a": 1}
    assert not Skipped(DEFAULT_LIMITS.skipped_paths_listed)
    for skipped in (
        Skipped(DEFAULT_LIMITS.skipped_paths_listed, fields=[{"path": "x"}]),
        Skipped(DEFAULT_LIMITS.skipped_paths_listed, removed=["x.contentBytes"]),
        Skipped(DEFAULT_LIMITS.skipped_paths_listed, items={"cursor": "c", "more_pages": True}),
        Skipped(DEFAULT_LIMITS.skipped_paths_listed, text={"next_offset": 10}),
    ):
        result = skipped.apply({"a": 1})
        assert result["incomplete"] is True
        assert result["skipped"] == skipped.to_json() and result["skipped"]


# --- clip_text --------------------------------------------------------------------------------

ASTRAL = st.text(
    alphabet=st.sampled_from(
        ["a", "é", "日", "\U0001f389", "\U0001f60a", "\u200d", "\U0001f469", "\u0301"]
    ),
    max_size=60,
)


@SETTINGS
@given(st.text(max_size=200) | ASTRAL, st.integers(0, 210))
@example("x" * 9_999 + "\U0001f389\U0001f60a", 10_000)
def test_clip_text_never_splits_a_code_point(text: str, limit: int) -> None:
    clipped, cut = clip_text(text, limit)
    assert clipped == text[:limit]
    assert cut == max(0, len(text) - limit)
    assert clipped + text[len(clipped) :] == text
    clipped.encode("utf-8")  # strict: a lone surrogate would raise
    wire = json.dumps(clipped, ensure_ascii=True)
    assert not re.search(r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])", wire)
    assert not re.search(r"(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}", wire)
    assert json.loads(wire) == clipped


def test_clip_text_at_the_body_cap() -> None:
    cap = DEFAULT_LIMITS.body_chars
    for length in (cap - 1, cap, cap + 1):
        clipped, cut = clip_text("y" * length, cap)
        assert len(clipped) == min(length, cap) and cut == max(0, length - cap)
    clipped, cut = clip_text("x" * (cap - 1) + "\U0001f389\U0001f60a", cap)
    assert clipped.endswith("\U0001f389") and cut == 1


# --- redact_text ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "count"),
    [
        ("no links here", "no links here", 0),
        ("see https://example.com/a?b=c", "see https://example.com/a?b=c", 0),
        (
            "get https://x.sharepoint.com/a?tempauth=SECRET now",
            f"get {REDACTED} now",
            1,
        ),
        ("HTTPS://X/?TEMPAUTH=S", REDACTED, 1),
        ("sas https://acct.blob.core.windows.net/c/f?sv=1&sig=abc", f"sas {REDACTED}", 1),
        ("https://x/?access_token=abc and https://y/?tempauth=t", f"{REDACTED} and {REDACTED}", 2),
        ('<a href="https://x/?tempauth=t">x</a>', f'<a href="{REDACTED}">x</a>', 1),
        ("tempauth= without a link", "tempauth= without a link", 0),
    ],
)
def test_redact_text(text: str, expected: str, count: int) -> None:
    assert redact_text(text) == (expected, count)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.just(False), st.text(max_size=20)) | st.tuples(st.just(True), SECRET_URLS),
        max_size=8,
    )
)
def test_redact_text_removes_every_secret_link(parts: list[tuple[bool, str]]) -> None:
    text = " ".join(part for _, part in parts)
    redacted, count = redact_text(text)
    assert "tempauth" not in redacted.lower()
    assert count == sum(1 for secret, _ in parts if secret)
    assert (count == 0) == (redacted == text)


def test_redact_text_catches_a_safe_links_wrapped_download_url() -> None:
    wrapped = (
        "https://eur01.safelinks.protection.outlook.com/?url=https%3A%2F%2Fcontoso-my.sharepoint"
        ".com%2Fpersonal%2Fu%2F_layouts%2F15%2Fdownload.aspx%3FUniqueId%3D1%26tempauth%3DSECRET"
        "&data=05%7C02&reserved=0"
    )
    redacted, count = redact_text(f"download: {wrapped}")
    assert "tempauth" not in redacted.lower() and count == 1
