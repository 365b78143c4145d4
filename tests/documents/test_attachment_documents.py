"""Word, Excel, PowerPoint, PDF and .eml attachments read as text through ``mail_attachment``.

The attachment's bytes come from Graph's ``/attachments/{id}/$value``, are spooled to a
private file and parsed in the same isolated worker ``files_read`` uses. Tests run the
whole server: on the loopback Graph with documents built by ``mfconnector/demo_documents.py``
(the demo's own builder), and on the demo emulator, whose mailbox carries such attachments
with known text.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest

import mfconnector.demo_documents as docbuild
from mfconnector.limits import DEFAULT_LIMITS
from tests.documents.test_documents import EML, HOSTILE, KINDS, PDF, WORD
from tests.support.harness import ref, rows
from tests.support.loopback import LoopbackServer, Reply
from tests.tools.test_reads_demo import demo
from tests.tools.test_reads_loopback import long_id, segment
from tests.tools.test_tools_loopback import FAST, tools_on

OWNER = long_id("message", 70)
ATTACHMENT = long_id("attachment", 70)
BASE = f"/v1.0/me/messages/{segment(OWNER)}/attachments/{segment(ATTACHMENT)}"
CALL = {"message_id": ref(OWNER), "attachment_id": ref(ATTACHMENT)}


def serve_attachment(
    graph: LoopbackServer, name: str, data: bytes, content_type: str | None = None
) -> None:
    """A file attachment's metadata and its ``$value`` (the raw bytes, as Graph sends them)."""
    graph.route(
        "GET",
        BASE,
        Reply.json(
            {
                "@odata.type": "#microsoft.graph.fileAttachment",
                "id": ATTACHMENT,
                "name": name,
                "contentType": content_type or "application/octet-stream",
                "size": len(data) + 312,  # Graph counts MIME overhead in an attachment's size
                "isInline": False,
            }
        ),
    )
    graph.route(
        "GET",
        f"{BASE}/$value",
        Reply(200, (("Content-Type", "application/octet-stream"),), data),
    )


def assert_no_bytes_or_urls(result: dict[str, Any], data: bytes, graph: LoopbackServer) -> None:
    wire = json.dumps(result)
    assert graph.url not in wire and "$value" not in wire and "contentBytes" not in wire
    assert base64.b64encode(data[:48]).decode() not in wire
    for recorded in graph.requests:
        assert "contentBytes" not in recorded.query


@pytest.mark.parametrize(("name", "data", "kind", "fragments", "parts"), KINDS)
async def test_each_document_kind_is_read_from_an_attachment(
    graph: LoopbackServer,
    name: str,
    data: bytes,
    kind: str,
    fragments: list[str],
    parts: list[str],
) -> None:
    serve_attachment(graph, name, data)
    async with tools_on(graph) as tools:
        result = await tools.data("mail_attachment", CALL)
    content = result["content"]
    assert content["returned"] is True and content["format"] == kind
    for fragment in fragments:
        assert fragment in content["text"]
    assert content["chars_read"] == len(content["text"])
    assert [part["name"] for part in content.get("parts", [])] == parts
    assert result["attachment"]["name"] == name
    assert graph.requests_to(f"{BASE}/$value")
    assert_no_bytes_or_urls(result, data, graph)


async def test_an_eml_is_known_by_its_media_type_alone(graph: LoopbackServer) -> None:
    serve_attachment(graph, "Forwarded message", EML, "message/rfc822")
    async with tools_on(graph) as tools:
        result = await tools.data("mail_attachment", CALL)
    assert result["content"]["format"] == "eml"
    assert "Subject: Lunch on Friday?" in result["content"]["text"]
    assert "See you at noon by the river." in result["content"]["text"]


async def test_a_long_attachment_continues_by_offset_and_jumps_by_part(
    graph: LoopbackServer,
) -> None:
    pages = [f"Page body {n}: " + "clause text " * 400 for n in range(1, 9)]
    data = docbuild.pdf_pages(pages)
    serve_attachment(graph, "contract.pdf", data, "application/pdf")
    async with tools_on(graph) as tools:
        pieces, offset, windows = [], 0, 0
        while True:
            arguments = {**CALL, "offset": offset} if offset else CALL
            result = await tools.data("mail_attachment", arguments)
            windows += 1
            pieces.append(result["content"]["text"])
            assert len(result["content"]["text"]) <= DEFAULT_LIMITS.body_chars
            record = result.get("skipped", {}).get("text", {})
            if "next_offset" not in record:
                break
            assert record["field"] == "content.text"
            offset = record["next_offset"]
        first = await tools.data("mail_attachment", CALL)
        page_five = await tools.data("mail_attachment", {**CALL, "part": 5})
        both = await tools.error("mail_attachment", {**CALL, "part": 5, "offset": 10})
        missing = await tools.error("mail_attachment", {**CALL, "part": 99})
    text = "".join(pieces)
    assert windows >= 3 and len(text) == first["content"]["chars_read"]
    for page in pages:
        assert page.strip() in text
    start = next(p["offset"] for p in first["content"]["parts"] if p["name"] == "Page 5")
    assert page_five["content"]["text"].startswith("## Page 5\nPage body 5:")
    assert text[start:].startswith(page_five["content"]["text"][:200])
    assert "not both" in both["message"]
    assert missing["message"]


@pytest.mark.parametrize(("name", "data", "code"), HOSTILE)
async def test_a_hostile_attachment_is_a_clear_error_and_the_next_call_works(
    graph: LoopbackServer, name: str, data: bytes, code: str
) -> None:
    serve_attachment(graph, name, data)
    async with tools_on(graph) as tools:
        error = await tools.error("mail_attachment", CALL)
        serve_attachment(graph, "report.docx", WORD)
        after = await tools.data("mail_attachment", CALL)
    assert (
        error["error_code"] == "document_unreadable" and error["reason"] == code and error["hint"]
    )
    assert "root:" not in json.dumps(error)
    assert graph.url not in json.dumps(error)
    assert "Quarterly report" in after["content"]["text"]


@pytest.mark.parametrize("delta", [-1, 0, 1])
async def test_document_bytes_limit_applies_to_attachments(
    graph: LoopbackServer, delta: int
) -> None:
    limits = dataclasses.replace(FAST, document_bytes=len(PDF) + delta)
    serve_attachment(graph, "invoice.pdf", PDF, "application/pdf")
    async with tools_on(graph, limits=limits) as tools:
        result = await tools.call("mail_attachment", CALL)
    if delta >= 0:
        assert "Invoice 2026-114" in result["structuredContent"]["content"]["text"]
        return
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["error_code"] == "document_unreadable" and error["reason"] == "too_large"
    assert f"up to {len(PDF) - 1:,} bytes" in error["message"]


async def test_part_is_refused_for_an_attachment_that_is_not_a_document(
    graph: LoopbackServer,
) -> None:
    serve_attachment(graph, "notes.md", b"# Notes\n\nShip it.", "text/markdown")
    async with tools_on(graph) as tools:
        refused = await tools.error("mail_attachment", {**CALL, "part": 1})
        text = await tools.data("mail_attachment", CALL)
    assert "`part` is for documents" in refused["message"]
    assert text["content"] == {"returned": True, "text": "# Notes\n\nShip it.", "chars_read": 17}


async def test_a_legacy_office_attachment_says_how_to_make_it_readable(
    graph: LoopbackServer,
) -> None:
    serve_attachment(graph, "old.doc", b"\xd0\xcf\x11\xe0" + bytes(600), "application/msword")
    async with tools_on(graph) as tools:
        result = await tools.data("mail_attachment", CALL)
    assert result["content"]["returned"] is False
    assert "current format" in result["content"]["reason"]
    assert not graph.requests_to(f"{BASE}/$value")


# --- the demo mailbox ------------------------------------------------------------------------


async def demo_attachments(client: Any) -> dict[str, dict[str, Any]]:
    """Every attachment of the demo mailbox's messages, by name, with its message id."""
    found: dict[str, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = [{}]
    folders: list[str] = []
    while pending:
        listed = await client.data("mail_folders", {**pending.pop(), "detail": "full"})
        for folder in listed["folders"]:
            folders.append(folder["id"])
            if folder.get("children"):
                pending.append({"parent": folder["id"]})
    for folder in folders:
        listing = await client.data(
            "mail_list", {"folder": folder, "has_attachments": True, "limit": 50}
        )
        for row in rows(listing):
            attachments = await client.data("mail_attachment", {"message_id": row["id"]})
            for attachment in attachments["attachments"]:
                found.setdefault(
                    attachment["name"],
                    {"message_id": row["id"], "attachment_id": attachment["id"]},
                )
    return found


DEMO_TEXT = {
    "Q1 Budget Review.docx": ("docx", "Decision needed: approve the revised headcount plan"),
    "Budget 2027 model.xlsx": ("xlsx", "Headcount growth\t4 FTE"),
    "Contoso Launch – kickoff.pptx": ("pptx", "Launch: April 14"),
    "INV-2026-0870.pdf": ("pdf", "Total due: USD 3,250.00"),
    "Hotel confirmation.eml": ("eml", "Hotel Messe München is confirmed for three"),
}


@pytest.mark.slow
async def test_the_demo_mailbox_attachments_read_as_text() -> None:
    async with demo() as client:
        found = await demo_attachments(client)
        results = {name: await client.data("mail_attachment", found[name]) for name in DEMO_TEXT}
        contract = found["Fabrikam MSA.pdf"]
        first = await client.data("mail_attachment", contract)
        offset = len(first["content"]["text"]) // 2
        second = await client.data("mail_attachment", {**contract, "offset": offset})
        page = await client.data("mail_attachment", {**contract, "part": 2})
        image = await client.data("mail_attachment", found["whiteboard.png"])
        item = await client.data("mail_attachment", found["Original quote from Fabrikam"])
        link = await client.data("mail_attachment", found["Launch plan (OneDrive link)"])
    for name, (kind, fragment) in DEMO_TEXT.items():
        content = results[name]["content"]
        assert content["returned"] is True and content["format"] == kind, name
        assert fragment in " ".join(content["text"].split("\n")) or fragment in content["text"]
    assert first["content"]["format"] == "pdf" and "Governing law" in first["content"]["text"]
    assert second["content"]["text"] == first["content"]["text"][offset:]
    start = next(p["offset"] for p in first["content"]["parts"] if p["name"] == "Page 2")
    assert page["content"]["text"].startswith("## Page 2")
    assert first["content"]["text"][start:].startswith(page["content"]["text"])
    assert image["content"]["returned"] is False
    assert "EUR 18,400" in item["message"]["body"]
    assert link["content"]["returned"] is False and "files_search" in link["content"]["reason"]
    answers = [*results.values(), first, second, page, image, item, link]
    assert all("contentBytes" not in answer["attachment"] for answer in answers)
    wire = json.dumps(answers)
    assert "$value" not in wire and "http" not in wire and "UEsDB" not in wire  # zip's base64
