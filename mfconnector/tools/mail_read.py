"""``mail_read``: one message, or 1-10 of them under a response byte budget.

One message comes back with its body as text in a 10,000-character window (``body_offset``
reads on) and its attachments as metadata; ``unique_body`` returns only the part of a reply
that is new (Graph's ``uniqueBody``). Compact (the default) drops the rarely needed headers
and names them once; ``detail: "full"`` keeps every field. Batches are in ``batch_read.py``.
"""

from __future__ import annotations

from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.mail.failures import Unsupported
from mfconnector.tools.base import ActiveLimit, Tool, ToolContext
from mfconnector.tools.batch_read import BatchRead
from mfconnector.tools.common import (
    DETAIL,
    MAILBOX,
    MESSAGE_REF,
    OUTPUT_SCHEMA,
    UNTRUSTED,
    input_schema,
)
from mfconnector.tools.mail_call import mail_call
from mfconnector.tools.reading import read_request, shape_message

__all__ = ["MAIL_READ"]


async def mail_read(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    single: str | None = arguments.get("message_id")
    many: list[str] | None = arguments.get("message_ids")
    if (single is None) == (many is None):
        raise ToolInputError(
            "give `message_id` (one message) or `message_ids` (1-10), not both or neither",
            hint="take ids from mail_list or mail_search",
        )
    call = await mail_call(ctx, arguments)
    full = arguments.get("detail") == "full"
    unique = bool(arguments.get("unique_body"))
    if unique and not call.backend.capabilities.unique_body:
        raise Unsupported(
            f"account {call.account!r} cannot tell a reply's new part from the quoted rest",
            hint="leave out unique_body to read the whole body",
        )
    if many is not None:
        if "body_offset" in arguments:
            raise ToolInputError(
                "`body_offset` reads on in one message; it does not apply to `message_ids`",
                hint="continue a clipped body with mail_read message_id and body_offset",
            )
        refs = [call.reference(value, f"message_ids[{i}]") for i, value in enumerate(many)]
        budget = arguments.get("max_response_bytes", ctx.limits.batch_response_bytes_default)
        batch = BatchRead(ctx, call, full=full, unique=unique, budget=budget)
        return await batch.read(refs)
    assert single is not None
    message = await call.backend.read(
        call.reference(single, "message_id"), read_request(full=full, unique=unique)
    )
    result, skipped = shape_message(
        ctx.limits,
        message,
        call.zone,
        full=full,
        offset=arguments.get("body_offset", 0),
        window_chars=ctx.limits.body_chars,
    )
    result["time_zone"] = call.zone.name
    call.labelled(result)
    return skipped.apply(result)


MAIL_READ = Tool(
    name="mail_read",
    title="Read messages",
    description=lambda limits: (
        f"One message (message_id) or 1-{limits.batch_read_ids} (message_ids; each item has "
        "a status): headers, flags, attachments and body as text, "
        f"{limits.body_chars:,} characters from body_offset; unique_body: a reply's new "
        f"part. {UNTRUSTED}"
    ),
    input_schema=input_schema(
        {
            "message_id": MESSAGE_REF,
            "message_ids": {
                "type": "array",
                "items": MESSAGE_REF,
                "minItems": 1,
                "maxItems": ActiveLimit("batch_read_ids"),
                "uniqueItems": True,
            },
            "body_offset": {"type": "integer", "minimum": 0},
            "unique_body": {"type": "boolean"},
            "detail": DETAIL,
            "max_response_bytes": {
                "type": "integer",
                "minimum": ActiveLimit("batch_response_bytes_min"),
                "maximum": ActiveLimit("batch_response_bytes_max"),
                "default": ActiveLimit("batch_response_bytes_default"),
            },
            "mailbox": MAILBOX,
        }
    ),
    output_schema=OUTPUT_SCHEMA,
    handler=mail_read,
)
