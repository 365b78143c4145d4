"""Outgoing input is checked like incoming (issue 17 section 3), on the real server stack
with a loopback Graph: each input no mail client would send is refused with our own
message before any Graph request, and the server keeps serving; look-alikes and hidden
characters in a draft are flagged in the preview, made visible."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from acting import FAST, Draft, ScriptedMailbox, acting_session, native, outlook_id, ref
from loopback import LoopbackServer

from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.writes.outgoing import mixed_script_labels, parse_recipient, record_warnings

B64 = base64.b64encode(b"hello").decode()


def draft_with(**fields: Any) -> dict[str, Any]:
    return {"action": "draft", **fields}


def attachment(name: str, content_type: str | None = None) -> dict[str, Any]:
    item = {"name": name, "content_base64": B64}
    if content_type is not None:
        item["content_type"] = content_type
    return item


REFUSED = [
    ("NUL in an address", {"to": ["megan\x00@contoso.com"]}, "U+0000"),
    ("RLO in an address", {"to": ["megan@contoso\u202e.com"]}, "U+202E"),
    ("zero-width space in an address", {"cc": ["megan@con\u200btoso.com"]}, "U+200B"),
    ("RFC 5322 comment", {"to": ["a@b.example(CEO)"]}, "comment"),
    ("CRLF in an address", {"bcc": ["a@b.example\r\nBcc: x@evil.example"]}, "U+000D"),
    ("two at signs", {"to": ["a@b@c.example"]}, "not an email address"),
    ("bidi control in a name", {"to": ["Megan \u202eBowen <megan@contoso.com>"]}, "U+202E"),
    ("object without an address", {"to": [{"name": "Megan"}]}, '{"name": ...'),
    (
        "an address in angle brackets inside a name",
        {"to": [{"name": "Boss <boss@contoso.com>", "address": "x@evil.example"}]},
        "angle brackets",
    ),
    ("CRLF in the subject", {"subject": "Hi\r\nBcc: x@evil.example"}, "U+000D"),
    ("NUL in the subject", {"subject": "Hi\x00"}, "U+0000"),
    ("a path up", {"attachments": [attachment("../../etc/passwd")]}, "not a plain file name"),
    ("a drive path", {"attachments": [attachment("C:\\Windows\\evil.dll")]}, "not a plain"),
    ("an absolute path", {"attachments": [attachment("/etc/passwd")]}, "not a plain file name"),
    ("NUL in a file name", {"attachments": [attachment("a\x00.pdf")]}, "U+0000"),
    ("CRLF in a file name", {"attachments": [attachment("a\r\n.pdf")]}, "U+000D"),
    ("RLO in a file name", {"attachments": [attachment("INV_\u202efdp.scr")]}, "U+202E"),
    ("a file name past the limit", {"attachments": [attachment("a" * 5000)]}, "at most 255"),
    (
        "CRLF in a content type",
        {"attachments": [attachment("a.txt", "text/plain\r\nX: y")]},
        "media",
    ),
    ("a content type without subtype", {"attachments": [attachment("a.txt", "text")]}, "media"),
]


@pytest.mark.parametrize(("case", "fields", "says"), REFUSED, ids=[r[0] for r in REFUSED])
async def test_outgoing_input_no_mail_client_would_send_is_refused_before_any_request(
    graph: LoopbackServer, case: str, fields: dict[str, Any], says: str
) -> None:
    mailbox = ScriptedMailbox(graph)
    async with acting_session(graph) as tools:
        for tool in ("mail_create", "mail_prepare"):
            arguments = draft_with(**fields) if tool == "mail_create" else {"action": "new"}
            if tool == "mail_prepare":
                if "attachments" in fields:
                    continue  # mail_prepare new takes no attachments
                arguments.update({"to": ["megan@contoso.com"], **fields})
            error = await tools.fail(tool, arguments)
            assert error["error_code"] == "invalid_arguments", error
            assert says in error["message"], error
            assert "Traceback" not in json.dumps(error)
        assert graph.requests == [], "refused before any Graph request"
        created = await tools.ok("mail_create", draft_with(to=["megan@contoso.com"]))
    assert native(created["draft"]["id"]) in mailbox.drafts, "the server kept serving"


@pytest.mark.parametrize(
    ("length", "accepted"),
    [
        (DEFAULT_LIMITS.attachment_name_chars - 1, True),
        (DEFAULT_LIMITS.attachment_name_chars, True),
        (DEFAULT_LIMITS.attachment_name_chars + 1, False),
    ],
)
async def test_attachment_names_up_to_the_limit_are_attached(
    graph: LoopbackServer, length: int, accepted: bool
) -> None:
    mailbox = ScriptedMailbox(graph)
    name = "n" * (length - 4) + ".txt"
    async with acting_session(graph) as tools:
        arguments = draft_with(to=["megan@contoso.com"], attachments=[attachment(name)])
        if accepted:
            created = await tools.ok("mail_create", arguments)
            assert mailbox.drafts[native(created["draft"]["id"])].attachments[0][0] == name
        else:
            error = await tools.fail("mail_create", arguments)
            assert f"{length:,} characters" in error["message"]
            assert graph.requests == []


async def test_recipients_in_the_forms_the_read_tools_hand_out_reach_graph_with_names(
    graph: LoopbackServer,
) -> None:
    ScriptedMailbox(graph)
    async with acting_session(graph) as tools:
        await tools.ok(
            "mail_create",
            draft_with(
                to=["Megan Bowen <megan@contoso.com>", '"Lee, Gu" <lee@contoso.com>'],
                cc=[{"name": "Alex Wilber", "address": "alex@contoso.com"}],
                bcc=["audit@contoso.com"],
            ),
        )
    body = json.loads(graph.requests[-1].body)
    assert body["toRecipients"] == [
        {"emailAddress": {"address": "megan@contoso.com", "name": "Megan Bowen"}},
        {"emailAddress": {"address": "lee@contoso.com", "name": "Lee, Gu"}},
    ]
    assert body["ccRecipients"] == [
        {"emailAddress": {"address": "alex@contoso.com", "name": "Alex Wilber"}}
    ]
    assert body["bccRecipients"] == [{"emailAddress": {"address": "audit@contoso.com"}}]


def test_a_cyrillic_letter_in_a_latin_label_is_a_mixed_script_look_alike() -> None:
    assert mixed_script_labels("megan@cont\u043eso.com") == [
        {"label": "cont\u043eso", "scripts": ["CYRILLIC", "LATIN"], "shown_as": "cont<U+043E>so"}
    ]
    assert mixed_script_labels("p\u0430ypal@example.com")[0]["shown_as"] == "p<U+0430>ypal"
    assert mixed_script_labels("megan@contoso.com") == []
    assert mixed_script_labels("\u043f\u0440\u0438\u043c\u0435\u0440@xn--e1afmkfd.xn--p1ai") == []
    assert mixed_script_labels("\u5c71\u7530taro@example.jp") == [], "Han + Latin is ordinary"
    assert parse_recipient("M <a@b.example>", "to[0]", FAST) == ("M", "a@b.example")


async def test_a_draft_with_look_alikes_and_hidden_characters_is_flagged_in_the_preview(
    graph: LoopbackServer,
) -> None:
    """An Outlook draft (not written by us) is shown as it is, with warnings made visible."""
    mailbox = ScriptedMailbox(graph)
    draft = mailbox.add(
        Draft(
            outlook_id("lookalike"),
            subject="Invoice \u202eFDP.exe",
            to=["ceo@cont\u043eso.com"],
            attachments=[("INV_\u202efdp.scr", "application/octet-stream", b"MZ")],
        )
    )
    async with acting_session(graph) as tools:
        read = await tools.ok("mail_review", {"action": "draft", "message_id": ref(draft.id)})
    kinds = {(w["kind"], w["field"]): w for w in read["warnings"]}
    assert kinds[("mixed_script", "to[0].address")]["shown_as"] == "cont<U+043E>so"
    assert kinds[("invisible", "subject")]["shown_as"] == "Invoice <U+202E>FDP.exe"
    assert kinds[("invisible", "attachments[0].name")]["code_points"] == ["U+202E"]
    assert read["message"]["to"][0]["address"] == "ceo@cont\u043eso.com", "the record is exact"


def test_a_name_that_is_another_address_is_flagged() -> None:
    record = {
        "from": {"name": "Adele", "address": "adele@contoso.com"},
        "to": [
            {"name": "boss@contoso.com", "address": "x@evil.example"},
            {"name": "megan@contoso.com", "address": "Megan@Contoso.com"},
        ],
        "subject": "s",
        "attachments": [],
    }
    assert record_warnings(record) == [
        {
            "kind": "name_is_another_address",
            "field": "to[0].name",
            "name": "boss@contoso.com",
            "address": "x@evil.example",
        }
    ], "a name that is the address itself is ordinary"
