"""The Graph emulator over HTTP, checked against Graph's documented behaviour and the
response shapes in ``shared/graph-samples`` (copied here as the expectations), not against
its own code.

Every test talks to the emulator the way a Graph client does: an ``httpx.AsyncClient``
with the emulator at the transport seam, a bearer token, encoded URLs. Expected answers are
computed independently, from the demo tenant's model objects with plain Python.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mfconnector.emulator import Emulator
from mfconnector.emulator.htmltext import html_to_text
from mfconnector.emulator.model import Mailbox, Message
from mfconnector.emulator.transport import EmulatorTransport

ROOT = "https://graph.microsoft.com/v1.0"
IMMUTABLE = {"Prefer": 'IdType="ImmutableId"'}
ME = "adelev@contoso.onmicrosoft.com"

# Key sets of the samples in shared/graph-samples (Graph's own examples).
SAMPLE_MESSAGE_KEYS = {
    "@odata.context", "@odata.etag", "id", "createdDateTime", "lastModifiedDateTime",
    "changeKey", "categories", "receivedDateTime", "sentDateTime", "hasAttachments",
    "internetMessageId", "subject", "bodyPreview", "importance", "parentFolderId",
    "conversationId", "isDeliveryReceiptRequested", "isReadReceiptRequested", "isRead",
    "isDraft", "webLink", "inferenceClassification", "body", "sender", "from",
    "toRecipients", "ccRecipients", "bccRecipients", "replyTo", "flag",
}  # fmt: skip
"""message-get-html.json (Graph's "Get message" example 1)."""
SAMPLE_FOLDER_KEYS = {
    "id", "displayName", "parentFolderId", "childFolderCount", "unreadItemCount",
    "totalItemCount", "isHidden",
}  # fmt: skip
"""mailfolders-list.json."""
SAMPLE_FILE_ATTACHMENT_KEYS = {
    "@odata.type", "id", "lastModifiedDateTime", "name", "contentType", "size", "isInline",
    "contentId", "contentLocation", "contentBytes",
}  # fmt: skip
"""attachment-file.json (plus @odata.context on a single GET)."""
SAMPLE_ITEM_ATTACHMENT_KEYS = {
    "@odata.type", "id", "lastModifiedDateTime", "name", "contentType", "size", "isInline",
}  # fmt: skip
SAMPLE_DRIVE_ITEM_KEYS = {
    "@odata.etag", "@microsoft.graph.downloadUrl", "createdDateTime", "eTag", "id",
    "lastModifiedDateTime", "name", "webUrl", "cTag", "size", "createdBy", "lastModifiedBy",
    "parentReference", "file", "fileSystemInfo",
}  # fmt: skip
"""driveitem-children-page1.json, a file (minus its ``shared`` facet)."""
SAMPLE_DRIVE_KEYS = {"id", "driveType", "owner", "quota"}
"""drive-get.json."""


@pytest.fixture
def emulator() -> Emulator:
    return Emulator()


@pytest.fixture
async def graph(emulator: Emulator) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=EmulatorTransport(emulator),
        base_url=ROOT,
        headers={"Authorization": "Bearer demo-token"},
    ) as client:
        yield client


def q(text: str) -> str:
    """Percent-encode a query value as Graph clients do (spaces as %20)."""
    return quote(text, safe="$,'()/:")


async def get(graph: httpx.AsyncClient, path: str, **headers: str) -> Any:
    response = await graph.get(path, headers=headers)
    assert response.status_code == 200, response.text[:400]
    return response.json()


async def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text[:400]
    body: dict[str, Any] = response.json()["error"]
    assert body["code"] == code, body
    assert set(body) == {"code", "message", "innerError"} and body["message"]
    assert body["innerError"]["request-id"] == response.headers["request-id"]
    assert {"date", "request-id", "client-request-id"} <= set(body["innerError"])
    return body


def me(emulator: Emulator) -> Mailbox:
    return emulator.me()


def in_folder(emulator: Emulator, name: str) -> list[Message]:
    mailbox = me(emulator)
    folder = mailbox.folder(name)
    assert folder is not None
    return [m for m in mailbox.messages.values() if m.folder_id == folder.id]


def in_folder_id(emulator: Emulator, display_name: str) -> str:
    return next(f.id for f in me(emulator).folders.values() if f.display_name == display_name)


def newest_first(messages: list[Message]) -> list[Message]:
    """Graph's default order, with the id as a stable tie-break."""
    return sorted(
        sorted(messages, key=lambda m: m.immutable_id), key=lambda m: m.received, reverse=True
    )


async def all_pages(
    graph: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    url: str | None = path
    while url is not None:
        body = await get(graph, url, **(headers or {}))
        items.extend(body["value"])
        url = body.get("@odata.nextLink")
        if url is not None:
            assert url.startswith(ROOT + path.split("?")[0]), url
    return items


# --- shapes against graph-samples ------------------------------------------------------------


async def test_message_get_has_the_sample_shape(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    message = newest_first(in_folder(emulator, "inbox"))[0]
    body = await get(graph, f"/me/messages/{message.rest_id}")
    assert set(body) == SAMPLE_MESSAGE_KEYS
    assert body["id"] == message.rest_id and body["body"]["contentType"] == "html"
    assert body["@odata.etag"] == f'W/"{body["changeKey"]}"'
    assert body["receivedDateTime"].endswith("Z") and len(body["receivedDateTime"]) == 20
    assert len(body["bodyPreview"]) <= 255
    assert body["webLink"].startswith("https://outlook.office365.com/owa/?ItemID=")
    assert set(body["from"]["emailAddress"]) == {"name", "address"}


async def test_ids_have_real_length_and_alphabet(emulator: Emulator) -> None:
    mailbox = me(emulator)
    for message in mailbox.messages.values():
        for value, prefix in ((message.immutable_id, "AAkALg"), (message.rest_id, "AAMkAG")):
            assert 140 <= len(value) <= 200 and value.startswith(prefix)
            assert base64.urlsafe_b64decode(value)  # URL-safe base64 with padding
    for folder in mailbox.folders.values():
        assert len(folder.id) >= 100
    drive = emulator.tenant.drives[emulator.tenant.personal_drive[mailbox.user_id]]
    for item in drive.items.values():
        assert len(item.id) == 34 and item.id.startswith("01") and item.id.isalnum()


async def test_text_body_preference_is_applied_with_unique_body(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    reply = next(m for m in in_folder(emulator, "inbox") if m.subject == "Re: Q1 budget review")
    response = await graph.get(
        f"/me/messages/{reply.rest_id}?$select=subject,body,bodyPreview,uniqueBody",
        headers={"Prefer": 'outlook.body-content-type="text"'},
    )
    assert response.headers["Preference-Applied"] == 'outlook.body-content-type="text"'
    body = response.json()
    assert set(body) == {
        "@odata.context",
        "@odata.etag",
        "id",
        "subject",
        "body",
        "bodyPreview",
        "uniqueBody",
    }
    assert body["body"]["contentType"] == body["uniqueBody"]["contentType"] == "text"
    text, unique = body["body"]["content"], body["uniqueBody"]["content"]
    assert "<p>" not in text and "<div" not in text and "&lt;" not in text
    assert "From:" in text and "Subject: Q1 budget review" in text
    assert "From:" not in unique and unique.strip() and unique.strip()[:40] in text
    # Without $select uniqueBody is not returned, as Graph documents.
    assert "uniqueBody" not in await get(graph, f"/me/messages/{reply.rest_id}")


async def test_text_bodies_keep_each_link_target_in_angle_brackets(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    """Outlook's text conversion writes ``text<target>``: a token in a link reaches a text
    body, where the connector must find it."""
    letter = next(m for m in emulator.me().messages.values() if "/unsubscribe'" in m.body)
    body = await get(
        graph,
        f"/me/messages/{letter.rest_id}?$select=body,bodyPreview",
        Prefer='outlook.body-content-type="text"',
    )
    assert "Unsubscribe<https://contoso.com/unsubscribe>" in body["body"]["content"]
    assert "open.gif" not in body["body"]["content"], "an image is not a link"
    assert html_to_text("<p><a href='#top'>Top</a> <a>bare</a> <a href=''>x</a></p>") == (
        "Top bare x\r\n"
    )


async def test_mail_folders_have_the_sample_shape_and_default_page_of_ten(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    body = await get(graph, "/me/mailFolders")
    assert len(body["value"]) <= 10
    for folder in body["value"]:
        assert set(folder) == SAMPLE_FOLDER_KEYS
    names = {f["displayName"] for f in body["value"]}
    assert {"Inbox", "Drafts", "Sent Items", "Deleted Items", "Junk Email", "Archive"} <= names
    inbox = next(f for f in body["value"] if f["displayName"] == "Inbox")
    messages = in_folder(emulator, "inbox")
    assert inbox["totalItemCount"] == len(messages) > 50
    assert inbox["unreadItemCount"] == sum(not m.is_read for m in messages)
    children = await get(graph, "/me/mailFolders/inbox/childFolders")
    assert {f["displayName"] for f in children["value"]} == {"Receipts", "Newsletters"}
    assert inbox["childFolderCount"] == 2
    hidden = await get(graph, "/me/mailFolders?includeHiddenFolders=true&$top=50")
    assert any(f["isHidden"] for f in hidden["value"])
    by_name = await get(graph, "/me/mailFolders/SentItems")  # well-known names ignore case
    assert by_name["displayName"] == "Sent Items"


async def test_attachments_have_the_sample_shapes(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    kinds: dict[str, Any] = {}
    for message in me(emulator).messages.values():
        if not message.attachments:
            continue
        listed = await get(graph, f"/me/messages/{message.rest_id}/attachments")
        for attachment in listed["value"]:
            kind = attachment["@odata.type"]
            expected = SAMPLE_FILE_ATTACHMENT_KEYS if kind.endswith("fileAttachment") else None
            if kind.endswith("itemAttachment"):
                expected = SAMPLE_ITEM_ATTACHMENT_KEYS
            if expected is not None:
                assert set(attachment) == expected, kind
            kinds.setdefault(attachment["name"].rsplit(".", 1)[-1].lower(), attachment)
            kinds.setdefault(kind, attachment)
    for extension in ("txt", "docx", "xlsx", "pptx", "pdf", "png", "eml"):
        assert extension in kinds, extension
    assert "#microsoft.graph.itemAttachment" in kinds
    assert "#microsoft.graph.referenceAttachment" in kinds
    assert any(a["size"] > 3 * 1024 * 1024 for a in kinds.values() if isinstance(a, dict))


async def test_attachment_bytes_are_the_real_file(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    import io
    import zipfile

    message = next(
        m for m in me(emulator).messages.values()
        if any(a.name == "Q1 Budget Review.docx" for a in m.attachments)
    )  # fmt: skip
    attachment = next(a for a in message.attachments if a.name.endswith(".docx"))
    one = await get(graph, f"/me/messages/{message.rest_id}/attachments/{attachment.id}")
    data = base64.b64decode(one["contentBytes"])
    raw = await graph.get(f"/me/messages/{message.rest_id}/attachments/{attachment.id}/$value")
    assert raw.status_code == 200 and raw.content == data
    document = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    assert "Q1 Budget Review" in document and "headcount plan" in document
    assert one["size"] >= len(data)


async def test_item_attachment_expands_to_the_attached_message(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    message = next(
        m for m in me(emulator).messages.values() if any(a.kind == "item" for a in m.attachments)
    )
    attachment = next(a for a in message.attachments if a.kind == "item")
    path = f"/me/messages/{message.rest_id}/attachments/{attachment.id}"
    plain = await get(graph, path)
    assert "item" not in plain and plain["contentType"] is None
    expanded = await get(graph, path + "?$expand=microsoft.graph.itemattachment/item")
    assert expanded["item"]["subject"] == "Original quote from Fabrikam"
    mime = await graph.get(path + "/$value")
    assert b"Subject: Original quote from Fabrikam" in mime.content


async def test_drive_shapes(graph: httpx.AsyncClient) -> None:
    drive = await get(graph, "/me/drive")
    assert set(drive) >= SAMPLE_DRIVE_KEYS and drive["driveType"] == "business"
    root = await get(graph, "/me/drive/root")
    assert "root" in root and root["folder"]["childCount"] >= 60
    children = await get(graph, "/me/drive/root/children")
    files = [item for item in children["value"] if "file" in item]
    assert files and set(files[0]) == SAMPLE_DRIVE_ITEM_KEYS
    assert "tempauth=" in files[0]["@microsoft.graph.downloadUrl"]
    folder = next(item for item in children["value"] if "folder" in item)
    assert "@microsoft.graph.downloadUrl" not in folder
    selected = await get(graph, "/me/drive/root/children?$select=id,name,size")
    assert all(set(item) <= {"@odata.etag", "id", "name", "size"} for item in selected["value"])


# --- errors as Graph sends them ----------------------------------------------------------------


async def test_missing_token_is_401_invalid_authentication_token(emulator: Emulator) -> None:
    async with httpx.AsyncClient(transport=EmulatorTransport(emulator), base_url=ROOT) as bare:
        response = await bare.get("/me/messages")
    body = await error_of(response, 401, "InvalidAuthenticationToken")
    assert body["message"] == "Access token is empty."
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")


async def test_unknown_and_malformed_ids(graph: httpx.AsyncClient, emulator: Emulator) -> None:
    message = newest_first(in_folder(emulator, "inbox"))[0]
    unknown = "AAMkAG" + message.rest_id[6:-8] + "AAAAAAA="
    await error_of(await graph.get(f"/me/messages/{unknown}"), 404, "ErrorItemNotFound")
    await error_of(await graph.get("/me/messages/not-an-id"), 400, "ErrorInvalidIdMalformed")
    await error_of(await graph.get("/me/mailFolders/nosuchfolder"), 400, "ErrorInvalidIdMalformed")
    await error_of(
        await graph.get("/me/drive/items/01NOPE0000000000000000000000000000"), 404, "itemNotFound"
    )
    await error_of(await graph.get("/users/nobody@contoso.com/messages"), 404, "ErrorInvalidUser")
    response = await graph.get("/me/messages", headers={"client-request-id": "abc-123"})
    assert response.headers["client-request-id"] == "abc-123"


async def test_fault_knob_throttles_with_retry_after_then_recovers(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    emulator.add_fault(429, retry_after="2.128", times=2, path_contains="/messages")
    for _ in range(2):
        response = await graph.get("/me/messages")
        body = await error_of(response, 429, "TooManyRequests")
        assert response.headers["Retry-After"] == "2.128" and body["message"]
    assert (await graph.get("/me/mailFolders")).status_code == 200
    assert (await graph.get("/me/messages")).status_code == 200
    emulator.add_fault(503, retry_after="1")
    await error_of(await graph.get("/me/drive"), 503, "ServiceUnavailable")


# --- query operators ------------------------------------------------------------------------------


FILTERS: dict[str, tuple[str, Callable[[Message], bool]]] = {
    "isRead": ("isRead eq false", lambda m: not m.is_read),
    "hasAttachments": ("hasAttachments eq true", lambda m: m.has_attachments),
    "from": (
        "from/emailAddress/address eq 'BILLING@fabrikam.com'",
        lambda m: m.sender[1] == "billing@fabrikam.com",
    ),
    "ne": ("importance ne 'normal'", lambda m: m.importance != "normal"),
    "flag": ("flag/flagStatus eq 'flagged'", lambda m: m.flag["flagStatus"] == "flagged"),
    "category": ("categories/any(c:c eq 'finance')", lambda m: "Finance" in m.categories),
    "recipient": (
        f"toRecipients/any(r:r/emailAddress/address eq '{ME}')",
        lambda m: any(a.lower() == ME for _, a in m.to),
    ),
    "contains": ("contains(subject,'invoice')", lambda m: "invoice" in m.subject.lower()),
    "startswith": ("startswith(subject,'Re:')", lambda m: m.subject.lower().startswith("re:")),
    "not": ("not(isRead eq true)", lambda m: not m.is_read),
    "or": (
        "importance eq 'high' or isRead eq false",
        lambda m: m.importance == "high" or not m.is_read,
    ),
    "and-paren": (
        "(hasAttachments eq true) and (isRead eq true)",
        lambda m: m.has_attachments and m.is_read,
    ),
}


@pytest.mark.parametrize("name", sorted(FILTERS))
async def test_each_filter_operator(
    graph: httpx.AsyncClient, emulator: Emulator, name: str
) -> None:
    clause, predicate = FILTERS[name]
    got = await all_pages(
        graph, f"/me/mailFolders/inbox/messages?$top=100&$filter={q(clause)}", IMMUTABLE
    )
    expected = {m.immutable_id for m in in_folder(emulator, "inbox") if predicate(m)}
    assert expected, f"the demo should have inbox messages matching {clause}"
    assert {m["id"] for m in got} == expected


@pytest.mark.parametrize("op", ["ge", "gt", "le", "lt", "eq"])
async def test_received_date_comparisons(
    graph: httpx.AsyncClient, emulator: Emulator, op: str
) -> None:
    messages = newest_first(in_folder(emulator, "inbox"))
    pivot = messages[10].received
    stamp = pivot.strftime("%Y-%m-%dT%H:%M:%SZ")
    test = {
        "ge": lambda m: m.received >= pivot,
        "gt": lambda m: m.received > pivot,
        "le": lambda m: m.received <= pivot,
        "lt": lambda m: m.received < pivot,
        "eq": lambda m: m.received == pivot,
    }[op]
    clause = f"receivedDateTime {op} {stamp}"
    got = await all_pages(
        graph,
        f"/me/mailFolders/inbox/messages?$filter={q(clause)}&$orderby={q('receivedDateTime desc')}",
        IMMUTABLE,
    )
    assert [m["id"] for m in got] == [m.immutable_id for m in messages if test(m)]


async def test_conversation_and_internet_message_id_filters(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    thread = [m for m in me(emulator).messages.values() if "Q1 budget review" in m.subject]
    assert len(thread) >= 4 and len({m.conversation_id for m in thread}) == 1
    clause = f"conversationId eq '{thread[0].conversation_id}'"
    got = await all_pages(graph, f"/me/messages?$filter={q(clause)}", IMMUTABLE)
    assert {m["id"] for m in got} == {m.immutable_id for m in thread}
    clause = f"internetMessageId eq '{thread[1].internet_message_id}'"
    got = await all_pages(graph, f"/me/messages?$filter={q(clause)}", IMMUTABLE)
    assert [m["id"] for m in got] == [thread[1].immutable_id]


async def test_orderby_ascending_and_by_subject(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    got = await all_pages(
        graph, f"/me/mailFolders/inbox/messages?$top=1000&$orderby={q('receivedDateTime asc')}"
    )
    stamps = [m["receivedDateTime"] for m in got]
    assert stamps == sorted(stamps) and len(got) == len(in_folder(emulator, "inbox"))
    receipts = me(emulator).folders[in_folder_id(emulator, "Receipts")]
    got = await all_pages(
        graph, f"/me/mailFolders/{receipts.id}/messages?$orderby=subject&$select=subject"
    )
    subjects = [m["subject"].casefold() for m in got]
    assert subjects == sorted(subjects)


async def test_inefficient_filter_when_orderby_property_is_not_first(
    graph: httpx.AsyncClient,
) -> None:
    order = q("receivedDateTime desc")
    bad = q("isRead eq false and receivedDateTime ge 2026-01-01T00:00:00Z")
    body = await error_of(
        await graph.get(f"/me/messages?$filter={bad}&$orderby={order}"), 400, "InefficientFilter"
    )
    assert "too complex" in body["message"]
    good = q("receivedDateTime ge 2026-01-01T00:00:00Z and isRead eq false")
    assert (await graph.get(f"/me/messages?$filter={good}&$orderby={order}")).status_code == 200
    # Without $orderby any order of clauses is fine.
    assert (await graph.get(f"/me/messages?$filter={bad}")).status_code == 200


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("$filter=" + q("nosuch eq 1"), "RequestBroker--ParseUri"),
        ("$filter=" + q("isRead eq"), "BadRequest"),
        ("$filter=" + q("isRead eq false and"), "BadRequest"),
        ("$filter=" + q("isRead is false"), "BadRequest"),
        ("$filter=" + q("contains(body/content,'budget')"), "ErrorInvalidProperty"),
        ("$select=subject,nosuch", "RequestBroker--ParseUri"),
        ("$orderby=" + q("nosuch desc"), "RequestBroker--ParseUri"),
        ("$orderby=" + q("subject sideways"), "BadRequest"),
        ("$top=0", "BadRequest"),
        ("$top=-3", "BadRequest"),
        ("$skip=x", "BadRequest"),
        ("$count=maybe", "BadRequest"),
        ("$frobnicate=1", "BadRequest"),
        (
            "$search=" + q('"budget"') + "&$orderby=" + q("receivedDateTime desc"),
            "SearchWithOrderBy",
        ),
        ("$search=" + q('"budget"') + "&$filter=" + q("isRead eq false"), "ErrorInvalidUrlQuery"),
        ("$search=" + q('"(budget"'), "BadRequest"),
    ],
)
async def test_unsupported_queries_are_400(graph: httpx.AsyncClient, query: str, code: str) -> None:
    await error_of(await graph.get(f"/me/messages?{query}"), 400, code)


async def test_select_top_skip_count(graph: httpx.AsyncClient, emulator: Emulator) -> None:
    expected = [m.immutable_id for m in newest_first(in_folder(emulator, "inbox"))]
    body = await get(
        graph,
        "/me/mailFolders/inbox/messages?$select=subject&$top=7&$skip=3&$count=true",
        **IMMUTABLE,
    )
    assert body["@odata.count"] == len(expected)
    assert [m["id"] for m in body["value"]] == expected[3:10]
    assert all(set(m) == {"@odata.etag", "id", "subject"} for m in body["value"])
    assert "%24skip=10" in body["@odata.nextLink"] and "%24top=7" in body["@odata.nextLink"]
    default = await get(graph, "/me/mailFolders/inbox/messages")
    assert len(default["value"]) == 10  # Outlook's default page
    capped = await get(graph, "/me/messages?$top=5000&$select=id")
    assert len(capped["value"]) == len(me(emulator).messages) - sum(
        1 for m in me(emulator).messages.values() if me(emulator).folders[m.folder_id].is_hidden
    )


# --- paging: every matching message exactly once, in order ------------------------------------

SENDERS = ["billing@fabrikam.com", "lynner@contoso.onmicrosoft.com", "o365mc@microsoft.com"]
PAGE_FILTERS: list[tuple[str | None, Callable[[Message], bool]]] = [
    (None, lambda m: True),
    ("receivedDateTime ge 1900-01-01T00:00:00Z and isRead eq false", lambda m: not m.is_read),
    (
        "receivedDateTime ge 1900-01-01T00:00:00Z and hasAttachments eq true",
        lambda m: m.has_attachments,
    ),
    *(
        (
            f"receivedDateTime ge 1900-01-01T00:00:00Z and from/emailAddress/address eq '{s}'",
            (lambda m, s=s: m.sender[1] == s),
        )
        for s in SENDERS
    ),
    (
        "receivedDateTime ge 2026-02-01T00:00:00Z and receivedDateTime lt 2026-03-01T00:00:00Z",
        lambda m: datetime(2026, 2, 1, tzinfo=UTC) <= m.received < datetime(2026, 3, 1, tzinfo=UTC),
    ),
]
FOLDERS = ["inbox", "archive", "sentitems", None]


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    page=st.integers(min_value=1, max_value=60),
    which=st.integers(min_value=0, max_value=len(PAGE_FILTERS) - 1),
    folder=st.sampled_from(FOLDERS),
)
async def test_paging_returns_every_match_exactly_once_in_order(
    graph: httpx.AsyncClient, emulator: Emulator, page: int, which: int, folder: str | None
) -> None:
    clause, predicate = PAGE_FILTERS[which]
    path = f"/me/mailFolders/{folder}/messages" if folder else "/me/messages"
    query = f"?$top={page}&$orderby={q('receivedDateTime desc')}&$select=id,receivedDateTime"
    if clause:
        query += f"&$filter={q(clause)}"
    pages = 0
    got: list[str] = []
    url: str | None = path + query
    while url is not None:
        body = await get(graph, url, **IMMUTABLE)
        assert len(body["value"]) <= page
        assert body["value"] or not got
        got.extend(m["id"] for m in body["value"])
        url = body.get("@odata.nextLink")
        pages += 1
    mailbox = me(emulator)
    scope = mailbox.folder(folder) if folder else None
    hidden = {f.id for f in mailbox.folders.values() if f.is_hidden}
    pool = [
        m for m in mailbox.messages.values()
        if (m.folder_id == scope.id if scope else m.folder_id not in hidden) and predicate(m)
    ]  # fmt: skip
    assert got == [m.immutable_id for m in newest_first(pool)]
    assert pages == max(1, -(-len(pool) // page))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(page=st.integers(min_value=1, max_value=70))
async def test_drive_children_paging_returns_each_item_once(
    graph: httpx.AsyncClient, emulator: Emulator, page: int
) -> None:
    items = await all_pages(graph, f"/me/drive/root/children?$top={page}&$select=id,name")
    drive = emulator.drive_of(me(emulator))
    expected = [i.id for i in drive.children(drive.root_id)]
    assert [i["id"] for i in items] == expected and len(expected) >= 60


# --- $search (KQL) ----------------------------------------------------------------------------


def searchable(message: Message) -> str:
    people = [message.sender, *message.to, *message.cc]
    return " ".join(
        [message.subject, message.texts()[0], *(f"{n} {a}" for n, a in people)]
        + [a.name for a in message.attachments]
    ).casefold()


def has_word(text: str, word: str) -> bool:
    import re

    return any(token.startswith(word.casefold()) for token in re.findall(r"\w+", text.casefold()))


async def search_ids(graph: httpx.AsyncClient, kql: str, path: str = "/me/messages") -> set[str]:
    escaped = kql.replace("\\", "\\\\").replace('"', '\\"')
    items = await all_pages(
        graph, f"{path}?$search={q(chr(34) + escaped + chr(34))}&$top=250", IMMUTABLE
    )
    ids = [m["id"] for m in items]
    assert len(ids) == len(set(ids))
    return set(ids)


def visible(emulator: Emulator) -> list[Message]:
    mailbox = me(emulator)
    hidden = {f.id for f in mailbox.folders.values() if f.is_hidden}
    return [m for m in mailbox.messages.values() if m.folder_id not in hidden]


@pytest.mark.slow
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
async def test_any_word_in_the_data_finds_exactly_the_messages_that_contain_it(
    graph: httpx.AsyncClient, emulator: Emulator, data: st.DataObject
) -> None:
    import re

    messages = visible(emulator)
    message = data.draw(st.sampled_from(sorted(messages, key=lambda m: m.immutable_id)))
    words = sorted(set(re.findall(r"[^\W\d_]{3,}", searchable(message))))
    word = data.draw(st.sampled_from(words))
    expected = {m.immutable_id for m in messages if has_word(searchable(m), word)}
    assert message.immutable_id in expected
    assert await search_ids(graph, word) == expected


async def test_kql_properties_phrases_and_boolean_operators(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    messages = visible(emulator)
    ids = lambda test: {m.immutable_id for m in messages if test(m)}  # noqa: E731
    assert await search_ids(graph, "from:billing@fabrikam.com") == ids(
        lambda m: m.sender[1] == "billing@fabrikam.com"
    )
    assert await search_ids(graph, "subject:invoice") == ids(
        lambda m: has_word(m.subject, "invoice")
    )
    assert await search_ids(graph, "hasattachments:true") == ids(lambda m: m.has_attachments)
    assert await search_ids(graph, "received>=2026-03-01") == ids(
        lambda m: m.received >= datetime(2026, 3, 1, tzinfo=UTC)
    )
    assert await search_ids(graph, "budget OR invoice") == ids(
        lambda m: has_word(searchable(m), "budget") or has_word(searchable(m), "invoice")
    )
    assert await search_ids(graph, "budget AND launch") == await search_ids(graph, "budget launch")
    assert await search_ids(graph, "budget NOT launch") == ids(
        lambda m: has_word(searchable(m), "budget") and not has_word(searchable(m), "launch")
    )
    phrase = await search_ids(graph, '"launch budget"')
    assert phrase == ids(lambda m: "launch budget" in " ".join(searchable(m).split()))
    both_words = await search_ids(graph, "launch budget")
    assert phrase and phrase < both_words
    assert await search_ids(graph, "to:support@contoso.onmicrosoft.com") == set()
    cjk = await search_ids(graph, "会議")
    assert cjk == ids(lambda m: "会議" in searchable(m)) and cjk
    in_inbox = await search_ids(graph, "invoice", "/me/mailFolders/inbox/messages")
    assert in_inbox == {
        m.immutable_id for m in in_folder(emulator, "inbox") if has_word(searchable(m), "invoice")
    }


# --- writes and their effect on later reads -----------------------------------------------------


async def test_patch_flags_and_read_state_show_in_later_lists(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    unread = [m for m in in_folder(emulator, "inbox") if not m.is_read]
    target = unread[0]
    before = (await get(graph, "/me/mailFolders/inbox"))["unreadItemCount"]
    response = await graph.patch(
        f"/me/messages/{target.immutable_id}",
        json={"isRead": True, "flag": {"flagStatus": "flagged"}, "categories": ["Blue category"]},
        headers=IMMUTABLE,
    )
    assert response.status_code == 200
    assert response.json()["isRead"] is True and response.json()["id"] == target.immutable_id
    assert (await get(graph, "/me/mailFolders/inbox"))["unreadItemCount"] == before - 1
    flagged_clause = q("flag/flagStatus eq 'flagged'")
    flagged = await all_pages(graph, f"/me/messages?$filter={flagged_clause}", IMMUTABLE)
    assert target.immutable_id in {m["id"] for m in flagged}
    blue_clause = q("categories/any(c:c eq 'Blue category')")
    blue = await all_pages(graph, f"/me/messages?$filter={blue_clause}", IMMUTABLE)
    assert [m["id"] for m in blue] == [target.immutable_id]


async def test_if_match_with_a_stale_change_key_is_412(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    target = newest_first(in_folder(emulator, "inbox"))[3]
    first = await get(graph, f"/me/messages/{target.rest_id}?$select=changeKey")
    stale = first["@odata.etag"]
    ok = await graph.patch(
        f"/me/messages/{target.rest_id}", json={"importance": "low"}, headers={"If-Match": stale}
    )
    assert ok.status_code == 200 and ok.json()["changeKey"] != first["changeKey"]
    again = await graph.patch(
        f"/me/messages/{target.rest_id}", json={"importance": "high"}, headers={"If-Match": stale}
    )
    await error_of(again, 412, "ErrorIrresolvableConflict")
    assert (await get(graph, f"/me/messages/{target.rest_id}"))["importance"] == "low"


async def test_subject_and_body_change_only_while_a_draft(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    received = newest_first(in_folder(emulator, "inbox"))[0]
    refused = await graph.patch(f"/me/messages/{received.rest_id}", json={"subject": "edited"})
    await error_of(refused, 400, "ErrorInvalidPropertyUpdateSentMessage")
    created = await graph.post(
        "/me/messages", json={"subject": "Plan", "body": {"contentType": "text", "content": "v1"}}
    )
    assert created.status_code == 201 and created.json()["isDraft"] is True
    draft_id = created.json()["id"]
    edited = await graph.patch(
        f"/me/messages/{draft_id}",
        json={
            "subject": "Plan v2",
            "toRecipients": [{"emailAddress": {"address": "alexw@contoso.onmicrosoft.com"}}],
        },
    )
    assert edited.status_code == 200 and edited.json()["subject"] == "Plan v2"
    drafts = await all_pages(graph, "/me/mailFolders/drafts/messages?$select=subject")
    assert "Plan v2" in {m["subject"] for m in drafts}


async def test_move_changes_the_rest_id_but_not_the_immutable_id(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    one, two = newest_first(in_folder(emulator, "inbox"))[5:7]
    old_rest = one.rest_id
    moved = await graph.post(f"/me/messages/{old_rest}/move", json={"destinationId": "archive"})
    assert moved.status_code == 201
    new_rest = moved.json()["id"]
    assert (
        new_rest != old_rest
        and moved.json()["parentFolderId"] == me(emulator).well_known["archive"]
    )
    await error_of(await graph.get(f"/me/messages/{old_rest}"), 404, "ErrorItemNotFound")
    assert (await get(graph, f"/me/messages/{new_rest}"))["subject"] == one.subject
    immutable = two.immutable_id
    moved = await graph.post(
        f"/me/messages/{immutable}/move", json={"destinationId": "archive"}, headers=IMMUTABLE
    )
    assert moved.status_code == 201 and moved.json()["id"] == immutable
    archive = await all_pages(
        graph, "/me/mailFolders/archive/messages?$top=200&$select=id", IMMUTABLE
    )
    assert {one.immutable_id, immutable} <= {m["id"] for m in archive}
    inbox = await all_pages(graph, "/me/mailFolders/inbox/messages?$top=200&$select=id", IMMUTABLE)
    assert not {one.immutable_id, immutable} & {m["id"] for m in inbox}


async def test_copy_delete_and_permanent_delete(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    source = newest_first(in_folder(emulator, "inbox"))[8]
    copied = await graph.post(
        f"/me/messages/{source.immutable_id}/copy",
        json={"destinationId": "drafts"},
        headers=IMMUTABLE,
    )
    assert copied.status_code == 201 and copied.json()["id"] != source.immutable_id
    assert copied.json()["subject"] == source.subject
    assert (await get(graph, f"/me/messages/{source.immutable_id}", **IMMUTABLE))[
        "parentFolderId"
    ] == source.folder_id
    deleted = await graph.delete(f"/me/messages/{source.immutable_id}", headers=IMMUTABLE)
    assert deleted.status_code == 204
    in_trash = await get(graph, f"/me/messages/{source.immutable_id}", **IMMUTABLE)
    assert in_trash["parentFolderId"] == me(emulator).well_known["deleteditems"]
    purged = await graph.post(f"/me/messages/{source.immutable_id}/permanentDelete")
    assert purged.status_code == 204
    await error_of(await graph.get(f"/me/messages/{source.immutable_id}"), 404, "ErrorItemNotFound")


async def test_create_reply_reply_all_and_forward(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    original = next(m for m in in_folder(emulator, "inbox") if len(m.to) >= 2 and m.sender[1] != ME)
    reply = await graph.post(
        f"/me/messages/{original.immutable_id}/createReply", json={"comment": "Thanks!"}
    )
    assert reply.status_code == 201
    draft = reply.json()
    assert draft["isDraft"] is True and draft["subject"].startswith("RE: ")
    assert [r["emailAddress"]["address"] for r in draft["toRecipients"]] == [original.sender[1]]
    assert draft["conversationId"] == original.conversation_id
    assert draft["parentFolderId"] == me(emulator).well_known["drafts"]
    assert "Thanks!" in draft["body"]["content"] and "divRplyFwdMsg" in draft["body"]["content"]
    everyone = await graph.post(f"/me/messages/{original.immutable_id}/createReplyAll")
    to = {r["emailAddress"]["address"].lower() for r in everyone.json()["toRecipients"]}
    assert to == {original.sender[1].lower()} | {
        a.lower() for _, a in original.to if a.lower() != ME
    }
    forward = await graph.post(
        f"/me/messages/{original.immutable_id}/createForward",
        json={"toRecipients": [{"emailAddress": {"address": "camille.durand@tailspintoys.fr"}}]},
    )
    assert forward.json()["subject"].startswith("FW: ")
    both = await graph.post(
        f"/me/messages/{original.immutable_id}/createReply",
        json={"comment": "a", "message": {"body": {"contentType": "text", "content": "b"}}},
    )
    await error_of(both, 400, "ErrorInvalidRequest")
    for endpoint in ("createReply", "createForward"):  # Graph refuses only comment + body
        with_recipients = await graph.post(
            f"/me/messages/{original.immutable_id}/{endpoint}",
            json={
                "comment": "See below.",
                "message": {"toRecipients": [{"emailAddress": {"address": "lee@contoso.com"}}]},
            },
        )
        assert with_recipients.status_code == 201, with_recipients.text
        made = with_recipients.json()
        assert [r["emailAddress"]["address"] for r in made["toRecipients"]] == ["lee@contoso.com"]
        assert "See below." in made["body"]["content"]


async def test_reply_quotes_the_sent_time_in_the_preferred_time_zone(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    original = newest_first(in_folder(emulator, "inbox"))[0]
    assert original.sent is not None
    tokyo = await graph.post(
        f"/me/messages/{original.immutable_id}/createReply",
        headers={"Prefer": 'outlook.timezone="Tokyo Standard Time"'},
    )
    local = original.sent.astimezone(ZoneInfo("Asia/Tokyo"))
    half = "AM" if local.hour < 12 else "PM"
    stamp = f"{local:%B} {local.day}, {local.year} {local.hour % 12 or 12}:{local:%M} {half}"
    assert stamp in tokyo.json()["body"]["content"]
    # Message date-times stay UTC whatever the preference, as Graph's do.
    assert tokyo.json()["createdDateTime"].endswith("Z")
    settings_ = await get(graph, "/me/mailboxSettings")
    assert settings_["timeZone"] == "Pacific Standard Time"
    zone = await get(graph, "/me/mailboxSettings/timeZone")
    assert zone["value"] == "Pacific Standard Time"


async def test_send_draft_lands_in_sent_items_keeping_its_immutable_id(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    created = await graph.post(
        "/me/messages",
        json={
            "subject": "Launch dinner",
            "body": {"contentType": "html", "content": "<p>Friday?</p>"},
            "toRecipients": [{"emailAddress": {"address": "support@contoso.onmicrosoft.com"}}],
        },
        headers=IMMUTABLE,
    )
    draft_id = created.json()["id"]
    assert created.json()["sentDateTime"] is None
    sent = await graph.post(f"/me/messages/{draft_id}/send")
    assert sent.status_code == 202 and sent.content == b""
    after = await get(graph, f"/me/messages/{draft_id}", **IMMUTABLE)
    assert after["parentFolderId"] == me(emulator).well_known["sentitems"]
    assert after["isDraft"] is False and after["sentDateTime"]
    assert after["from"]["emailAddress"]["address"] == ME
    # Delivered to the shared mailbox of the same tenant.
    phrase = q('"Launch dinner"')
    support = await all_pages(
        graph, f"/users/support@contoso.onmicrosoft.com/mailFolders/inbox/messages?$search={phrase}"
    )
    assert [m["subject"] for m in support] == ["Launch dinner"]
    again = await graph.post(f"/me/messages/{draft_id}/send")
    await error_of(again, 400, "ErrorInvalidOperation")


async def test_send_mail_saves_to_sent_items_unless_asked_not_to(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    sent_before = len(in_folder(emulator, "sentitems"))
    message = {
        "subject": "Numbers",
        "body": {"contentType": "text", "content": "Attached."},
        "toRecipients": [{"emailAddress": {"address": "lynner@contoso.onmicrosoft.com"}}],
    }
    response = await graph.post("/me/sendMail", json={"message": message})
    assert response.status_code == 202 and response.content == b""
    assert len(in_folder(emulator, "sentitems")) == sent_before + 1
    response = await graph.post("/me/sendMail", json={"message": message, "saveToSentItems": False})
    assert response.status_code == 202 and len(in_folder(emulator, "sentitems")) == sent_before + 1
    nobody = await graph.post("/me/sendMail", json={"message": {"subject": "x"}})
    await error_of(nobody, 400, "ErrorInvalidRecipients")
    bad = await graph.post(
        "/me/sendMail",
        json={"message": {"toRecipients": [{"emailAddress": {"address": "no-at-sign"}}]}},
    )
    await error_of(bad, 400, "ErrorInvalidRecipients")


async def test_folders_create_rename_delete(graph: httpx.AsyncClient, emulator: Emulator) -> None:
    created = await graph.post("/me/mailFolders", json={"displayName": "Vendors"})
    assert (
        created.status_code == 201
        and set(created.json()) - {"@odata.context"} == SAMPLE_FOLDER_KEYS
    )
    folder_id = created.json()["id"]
    await error_of(
        await graph.post("/me/mailFolders", json={"displayName": "vendors"}),
        409,
        "ErrorFolderExists",
    )
    child = await graph.post(
        f"/me/mailFolders/{folder_id}/childFolders", json={"displayName": "Fabrikam"}
    )
    assert child.status_code == 201 and child.json()["parentFolderId"] == folder_id
    renamed = await graph.patch(f"/me/mailFolders/{folder_id}", json={"displayName": "Suppliers"})
    assert renamed.json()["displayName"] == "Suppliers" and renamed.json()["childFolderCount"] == 1
    top = await all_pages(graph, "/me/mailFolders?$top=50")
    assert "Suppliers" in {f["displayName"] for f in top}
    await error_of(
        await graph.delete("/me/mailFolders/inbox"), 400, "ErrorDeleteDistinguishedFolder"
    )
    assert (await graph.delete(f"/me/mailFolders/{folder_id}")).status_code == 204
    trash = await all_pages(graph, "/me/mailFolders/deleteditems/childFolders")
    assert [f["displayName"] for f in trash] == ["Suppliers"]
    assert (await graph.post(f"/me/mailFolders/{folder_id}/permanentDelete")).status_code == 204
    await error_of(await graph.get(f"/me/mailFolders/{folder_id}"), 404, "ErrorItemNotFound")
    await error_of(
        await graph.get(f"/me/mailFolders/{child.json()['id']}"), 404, "ErrorItemNotFound"
    )


@pytest.mark.parametrize(
    ("size", "status"),
    [(3 * 1024 * 1024 - 1, 201), (3 * 1024 * 1024, 201), (3 * 1024 * 1024 + 1, 413)],
)
async def test_add_attachment_up_to_3_mb(graph: httpx.AsyncClient, size: int, status: int) -> None:
    draft = (await graph.post("/me/messages", json={"subject": "with file"})).json()["id"]
    payload = {
        "@odata.type": "#microsoft.graph.fileAttachment",
        "name": "a.bin",
        "contentBytes": base64.b64encode(b"x" * size).decode(),
    }
    response = await graph.post(f"/me/messages/{draft}/attachments", json=payload)
    assert response.status_code == status, response.text[:200]
    listed = await get(graph, f"/me/messages/{draft}/attachments?$select=name,size")
    assert [a["name"] for a in listed["value"]] == (["a.bin"] if status == 201 else [])
    assert (await get(graph, f"/me/messages/{draft}"))["hasAttachments"] is (status == 201)


# --- drive ----------------------------------------------------------------------------------------


async def test_drive_addressing_by_path_and_id_agree(graph: httpx.AsyncClient) -> None:
    by_path = await get(graph, "/me/drive/root:/Documents/Reports")
    closed = await get(graph, "/me/drive/root:/documents/reports:")
    assert by_path["id"] == closed["id"]
    by_id = await get(graph, f"/me/drive/items/{by_path['id']}")
    assert (
        by_id["name"] == "Reports" and by_id["parentReference"]["path"] == "/drive/root:/Documents"
    )
    kids_path = await get(graph, "/me/drive/root:/Documents/Reports:/children")
    kids_id = await get(graph, f"/me/drive/items/{by_path['id']}/children")
    assert [i["id"] for i in kids_path["value"]] == [i["id"] for i in kids_id["value"]]
    relative = await get(graph, f"/me/drive/items/{by_path['id']}:/2026/Q1 report draft.md:")
    assert relative["name"] == "Q1 report draft.md"
    await error_of(await graph.get("/me/drive/root:/Documents/nope.txt"), 404, "itemNotFound")


async def test_content_redirects_to_a_preauthenticated_host_that_refuses_the_token(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    item = await get(graph, "/me/drive/root:/Documents/Reports/2026/Q1 report draft.md")
    redirect = await graph.get(f"/me/drive/items/{item['id']}/content")
    assert redirect.status_code == 302 and redirect.content == b""
    location = redirect.headers["Location"]
    assert location.startswith("https://contoso-my.sharepoint.com/") and "tempauth=" in location
    async with httpx.AsyncClient(transport=EmulatorTransport(emulator)) as anonymous:
        download = await anonymous.get(location)
        assert download.status_code == 200 and download.content.startswith(b"# Q1 report draft")
        assert len(download.content) == item["size"]
        part = await anonymous.get(location, headers={"Range": "bytes=0-9"})
        assert part.status_code == 206 and part.content == download.content[:10]
        assert part.headers["Content-Range"] == f"bytes 0-9/{item['size']}"
        tampered = await anonymous.get(location.replace("tempauth=FAKE", "tempauth=EVIL"))
        assert tampered.status_code == 401
    leaked = await graph.get(location)  # carries the bearer token
    assert leaked.status_code == 401


async def test_drive_search_finds_names_and_text(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    drive = emulator.drive_of(me(emulator))
    by_text = await all_pages(graph, "/me/drive/root/search(q='discretionary')")
    names = {i["name"] for i in by_text}
    assert names == {i.name for i in drive.items.values() if has_word(i.text, "discretionary")}
    assert "Budget notes.txt" in names and all("searchResult" in i for i in by_text)
    by_name = await all_pages(graph, "/me/drive/root/search(q='standup')")
    assert len(by_name) == 40
    quoted = await all_pages(graph, "/me/drive/root/search(q='Project%20%2342')")
    assert [i["name"] for i in quoted] == ["Project #42 notes.md"]


async def test_thumbnails_second_drive_shared_mailbox(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    item = await get(graph, "/me/drive/root:/Org chart.png")
    thumbs = await get(graph, f"/me/drive/items/{item['id']}/thumbnails")
    assert {"small", "medium", "large"} <= set(thumbs["value"][0])
    async with httpx.AsyncClient(transport=EmulatorTransport(emulator)) as anonymous:
        image = await anonymous.get(thumbs["value"][0]["small"]["url"])
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    library = next(d for d in emulator.tenant.drives.values() if d.drive_type == "documentLibrary")
    drive = await get(graph, f"/drives/{library.id}")
    assert drive["driveType"] == "documentLibrary"
    kids = await get(graph, f"/drives/{library.id}/root/children")
    assert "Brand guidelines.pdf" in {i["name"] for i in kids["value"]}
    shared = await get(graph, "/me/drive/sharedWithMe")
    assert shared["value"] and all("remoteItem" in i for i in shared["value"])
    support = await get(
        graph, "/users/support@contoso.onmicrosoft.com/mailFolders/inbox/messages?$top=50"
    )
    assert len(support["value"]) == 21 and all(
        "[Ticket #" in m["subject"] for m in support["value"]
    )
    profile = await get(graph, "/users/support@contoso.onmicrosoft.com")
    assert profile["mail"] == "support@contoso.onmicrosoft.com"


# --- the demo tenant ----------------------------------------------------------------------------


async def test_every_start_is_the_same_mailbox() -> None:
    async def snapshot() -> str:
        async with httpx.AsyncClient(
            transport=EmulatorTransport(Emulator()),
            base_url=ROOT,
            headers={"Authorization": "Bearer x"},
        ) as client:
            mail = await all_pages(client, "/me/messages?$top=1000", IMMUTABLE)
            files = await all_pages(client, "/me/drive/root/children")
        return json.dumps([mail, files], sort_keys=True)

    assert await snapshot() == await snapshot()


def test_the_demo_data_has_what_the_issue_asks_for(emulator: Emulator) -> None:
    mailbox = me(emulator)
    messages = list(mailbox.messages.values())
    used = {m.folder_id for m in messages}
    assert len(messages) >= 200 and len(used) >= 10
    conversations: dict[str, list[Message]] = {}
    for message in messages:
        conversations.setdefault(message.conversation_id, []).append(message)
    assert sum(1 for c in conversations.values() if len(c) >= 4) >= 5
    assert any(m.subject.startswith("Fw: ") for m in messages)
    assert any(m.flag["flagStatus"] == "flagged" for m in messages)
    assert any(m.categories for m in messages) and any(m.importance == "high" for m in messages)
    texts = " ".join(m.subject + m.texts()[0] for m in messages)
    for sample in ("日本語", "الميزانية", "שלום", "🎉", "Müller", "您好"):
        assert sample in texts, sample
    assert max(len(m.body) for m in messages if m.body_type == "html") > 15_000
    drive = emulator.drive_of(mailbox)
    assert len(drive.children(drive.root_id)) >= 60
    assert max(i.size for i in drive.items.values()) > 2_000_000
    kinds = {i.name.rsplit(".", 1)[-1] for i in drive.items.values() if "." in i.name}
    assert {"docx", "xlsx", "pptx", "pdf", "txt", "md", "csv", "png", "eml"} <= kinds


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/me/messages", b"{not json"),
        ("POST", "/me/messages", b"[1, 2]"),
        ("POST", "/me/messages", b'{"subject": 42}'),
        ("POST", "/me/messages", b'{"nosuch": 1}'),
        ("POST", "/me/messages", b'{"toRecipients": [{"emailAddress": {}}]}'),
        ("POST", "/me/messages", b'{"body": {"contentType": "rtf", "content": "x"}}'),
        ("POST", "/me/mailFolders", b'{"displayName": ""}'),
        ("POST", "/me/sendMail", b'{"message": "text"}'),
        ("POST", "/me/sendMail", b'{"message": {}, "saveToSentItems": "yes"}'),
    ],
)
async def test_malformed_bodies_are_400_and_serving_continues(
    graph: httpx.AsyncClient, emulator: Emulator, method: str, path: str, body: bytes
) -> None:
    before = len(me(emulator).messages), len(me(emulator).folders)
    response = await graph.request(method, path, content=body)
    assert response.status_code == 400, response.text[:300]
    error = response.json()["error"]
    assert error["code"] and error["message"] and error["innerError"]["request-id"]
    assert (len(me(emulator).messages), len(me(emulator).folders)) == before
    assert (await graph.get("/me/mailFolders/inbox")).status_code == 200


async def test_patch_refusals_leave_the_message_unchanged(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    target = newest_first(in_folder(emulator, "inbox"))[2]
    before = await get(graph, f"/me/messages/{target.rest_id}")
    for change in (
        {"flag": {"flagStatus": "maybe"}},
        {"flag": {"flagStatus": "flagged", "dueDateTime": {"dateTime": "2026-04-01T00:00:00"}}},
        {"importance": "urgent"},
        {"isRead": "yes"},
        {"receivedDateTime": "2020-01-01T00:00:00Z"},
    ):
        response = await graph.patch(f"/me/messages/{target.rest_id}", json=change)
        assert response.status_code == 400, change
    assert await get(graph, f"/me/messages/{target.rest_id}") == before


async def test_folder_filter_and_select(graph: httpx.AsyncClient) -> None:
    clause = q("displayName eq 'projects'")
    body = await get(graph, f"/me/mailFolders?$filter={clause}&$select=displayName")
    assert [f["displayName"] for f in body["value"]] == ["Projects"]
    assert set(body["value"][0]) == {"id", "displayName"}
    projects = body["value"][0]["id"]
    children = await get(graph, f"/me/mailFolders/{projects}/childFolders?$orderby=displayName")
    assert [f["displayName"] for f in children["value"]] == ["Budget 2027", "Contoso Launch"]


async def test_eml_attachment_is_a_parsable_message(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    from email import message_from_bytes

    message = next(
        m
        for m in me(emulator).messages.values()
        if any(a.name.endswith(".eml") for a in m.attachments)
    )
    attachment = next(a for a in message.attachments if a.name.endswith(".eml"))
    raw = await graph.get(f"/me/messages/{message.rest_id}/attachments/{attachment.id}/$value")
    parsed = message_from_bytes(raw.content)
    assert parsed["Subject"] == "Reservation confirmed: 14-17 April 2026"
    assert "Breakfast is included" in parsed.get_payload(decode=True).decode()


# --- JSON batching and upload sessions --------------------------------------------------------


async def test_batch_answers_each_request_as_if_sent_alone(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    message = newest_first(in_folder(emulator, "inbox"))[0]
    requests = [
        {"id": "1", "method": "GET", "url": f"/me/messages/{message.immutable_id}?$select=subject"},
        {"id": "2", "method": "GET", "url": "/me/mailFolders/inbox"},
        {"id": "3", "method": "GET", "url": "/me/messages/not-an-id"},
        {
            "id": "4",
            "method": "PATCH",
            "url": f"/me/messages/{message.immutable_id}",
            "headers": {"Content-Type": "application/json"},
            "body": {"isRead": True},
            "dependsOn": ["1"],
        },
    ]
    response = await graph.post("/$batch", json={"requests": requests})
    assert response.status_code == 200
    answers = {r["id"]: r for r in response.json()["responses"]}
    assert answers["1"]["status"] == 200 and answers["1"]["body"]["subject"] == message.subject
    assert answers["2"]["body"]["displayName"] == "Inbox"
    assert answers["3"]["status"] == 400
    assert answers["3"]["body"]["error"]["code"] == "ErrorInvalidIdMalformed"
    assert answers["4"]["status"] == 200 and message.is_read is True
    emulator.add_fault(429, retry_after="3", path_contains="/mailFolders")
    throttled = await graph.post("/$batch", json={"requests": requests[:2]})
    statuses = {
        r["id"]: (r["status"], r["headers"].get("Retry-After"))
        for r in throttled.json()["responses"]
    }
    assert statuses == {"1": (200, None), "2": (429, "3")}


@pytest.mark.parametrize(("count", "status"), [(19, 200), (20, 200), (21, 400)])
async def test_batch_holds_at_most_20_requests(
    graph: httpx.AsyncClient, count: int, status: int
) -> None:
    requests = [{"id": str(n), "method": "GET", "url": "/me"} for n in range(count)]
    response = await graph.post("/$batch", json={"requests": requests})
    assert response.status_code == status
    if status == 200:
        assert len(response.json()["responses"]) == count
    duplicate = await graph.post("/$batch", json={"requests": [requests[0], requests[0]]})
    await error_of(duplicate, 400, "BadRequest")


async def test_upload_session_builds_a_large_attachment(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    draft = (await graph.post("/me/messages", json={"subject": "big"}, headers=IMMUTABLE)).json()
    data = bytes(range(256)) * 20_000  # 5,120,000 bytes: over the 3 MB of a plain POST
    item = {"AttachmentItem": {"attachmentType": "file", "name": "scan.bin", "size": len(data)}}
    session = await graph.post(
        f"/me/messages/{draft['id']}/attachments/createUploadSession", json=item
    )
    assert session.status_code == 201 and session.json()["nextExpectedRanges"] == ["0-"]
    url = session.json()["uploadUrl"]
    assert url.startswith("https://outlook.office.com/") and "authtoken=" in url
    async with httpx.AsyncClient(transport=EmulatorTransport(emulator)) as anonymous:
        half = 4 * 1024 * 1024
        with_token = await graph.put(
            url, content=data[:half], headers={"Content-Range": f"bytes 0-{half - 1}/{len(data)}"}
        )
        assert with_token.status_code == 401
        skipped = await anonymous.put(
            url,
            content=data[half:],
            headers={"Content-Range": f"bytes {half}-{len(data) - 1}/{len(data)}"},
        )
        assert skipped.status_code == 416
        too_big = await anonymous.put(
            url, content=data[: half + 1], headers={"Content-Range": f"bytes 0-{half}/{len(data)}"}
        )
        assert too_big.status_code == 416
        first = await anonymous.put(
            url, content=data[:half], headers={"Content-Range": f"bytes 0-{half - 1}/{len(data)}"}
        )
        assert first.status_code == 200 and first.json()["nextExpectedRanges"] == [f"{half}-"]
        last = await anonymous.put(
            url,
            content=data[half:],
            headers={"Content-Range": f"bytes {half}-{len(data) - 1}/{len(data)}"},
        )
        assert last.status_code == 201 and "/attachments('" in last.headers["Location"]
    listed = await get(graph, f"/me/messages/{draft['id']}/attachments?$select=name,size")
    assert [a["name"] for a in listed["value"]] == ["scan.bin"]
    attachment_id = listed["value"][0]["id"]
    raw = await graph.get(f"/me/messages/{draft['id']}/attachments/{attachment_id}/$value")
    assert raw.content == data
    limit = 150 * 1024 * 1024
    for size, status in ((limit, 201), (limit + 1, 400)):
        item["AttachmentItem"]["size"] = size
        response = await graph.post(
            f"/me/messages/{draft['id']}/attachments/createUploadSession", json=item
        )
        assert response.status_code == status


@pytest.mark.slow
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    page=st.integers(min_value=1, max_value=60),
    query=st.sampled_from(["budget", "launch OR invoice", "from:contoso", "hasattachments:true"]),
)
async def test_search_pages_return_every_hit_once_newest_first(
    graph: httpx.AsyncClient, emulator: Emulator, page: int, query: str
) -> None:
    value = q(f'"{query}"')
    items = await all_pages(
        graph, f"/me/messages?$search={value}&$top={page}&$select=id", IMMUTABLE
    )
    ids = [m["id"] for m in items]
    whole = await get(
        graph, f"/me/messages?$search={value}&$top=1000&$select=id&$count=true", **IMMUTABLE
    )
    assert ids == [m["id"] for m in whole["value"]] and len(ids) == whole["@odata.count"] > 0
    by_id = {m.immutable_id: m for m in visible(emulator)}
    stamps = [by_id[i].received for i in ids]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize(("depth", "status"), [(31, 200), (32, 200), (33, 400)])
async def test_nesting_is_bounded_in_filter_and_search(
    graph: httpx.AsyncClient, depth: int, status: int
) -> None:
    clause = q("(" * depth + "isRead eq false" + ")" * depth)
    response = await graph.get(f"/me/messages?$filter={clause}")
    assert response.status_code == status
    search = q('"' + "(" * depth + "budget" + ")" * depth + '"')
    response = await graph.get(f"/me/messages?$search={search}")
    assert response.status_code == status
    deep = q('"' + "(" * 5000 + "budget" + '"')
    await error_of(await graph.get(f"/me/messages?$search={deep}"), 400, "BadRequest")
    assert (await graph.get("/me/messages")).status_code == 200


async def test_outlook_timezone_changes_flag_dates_not_date_time_offsets(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    flagged = next(m for m in in_folder(emulator, "inbox") if "dueDateTime" in m.flag)
    plain = await get(graph, f"/me/messages/{flagged.rest_id}?$select=flag,receivedDateTime")
    assert plain["flag"]["dueDateTime"] == {
        "dateTime": "2026-03-13T00:00:00.0000000",
        "timeZone": "UTC",
    }
    pacific = await get(
        graph,
        f"/me/messages/{flagged.rest_id}?$select=flag,receivedDateTime",
        Prefer='outlook.timezone="Pacific Standard Time"',
    )
    assert pacific["flag"]["dueDateTime"] == {
        "dateTime": "2026-03-12T17:00:00.0000000",  # PDT: daylight time from March 8
        "timeZone": "Pacific Standard Time",
    }
    assert pacific["receivedDateTime"] == plain["receivedDateTime"]
    assert pacific["receivedDateTime"].endswith("Z")
    bad = await graph.get(
        f"/me/messages/{flagged.rest_id}", headers={"Prefer": 'outlook.timezone="Mars/Olympus"'}
    )
    await error_of(bad, 400, "ErrorTimeZoneNotSupported")
    start = {"dateTime": "2026-04-01T09:00:00", "timeZone": "Tokyo Standard Time"}
    due = {"dateTime": "2026-04-02T09:00:00", "timeZone": "Tokyo Standard Time"}
    patched = await graph.patch(
        f"/me/messages/{flagged.rest_id}",
        json={"flag": {"flagStatus": "flagged", "startDateTime": start, "dueDateTime": due}},
        headers={"Prefer": 'outlook.timezone="UTC"'},
    )
    assert patched.json()["flag"]["dueDateTime"]["dateTime"] == "2026-04-02T00:00:00.0000000"
    wrong = {"dateTime": "soon", "timeZone": "UTC"}
    refused = await graph.patch(
        f"/me/messages/{flagged.rest_id}",
        json={"flag": {"flagStatus": "flagged", "startDateTime": wrong}},
    )
    await error_of(refused, 400, "ErrorInvalidArgument")


async def test_expand_attachments_on_lists_and_single_messages(
    graph: httpx.AsyncClient, emulator: Emulator
) -> None:
    expand = q("attachments($select=id,name,size)")
    body = await get(
        graph,
        f"/me/mailFolders/inbox/messages?$filter=hasAttachments%20eq%20true&$select=id&$expand={expand}",
        **IMMUTABLE,
    )
    by_id = {m.immutable_id: m for m in in_folder(emulator, "inbox")}
    assert body["value"]
    for item in body["value"]:
        names = [a["name"] for a in item["attachments"]]
        assert names == [a.name for a in by_id[item["id"]].attachments]
        assert all(set(a) <= {"@odata.type", "id", "name", "size"} for a in item["attachments"])
    first = body["value"][0]["id"]
    whole = await get(graph, f"/me/messages/{first}?$expand=attachments", **IMMUTABLE)
    assert any("contentBytes" in a for a in whole["attachments"])
    await error_of(await graph.get("/me/messages?$expand=sender"), 400, "BadRequest")
    bad = q("attachments($select=nosuch)")
    await error_of(await graph.get(f"/me/messages?$expand={bad}"), 400, "RequestBroker--ParseUri")
