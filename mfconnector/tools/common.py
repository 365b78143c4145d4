"""Schema pieces and argument rules shared by the mail and files tools."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mfconnector.errors import ToolInputError
from mfconnector.shaping import Skipped, shape_item
from mfconnector.tools.base import ActiveLimit, ToolContext
from mfconnector.tools.listing import ItemShaper

__all__ = [
    "CURSOR",
    "FOLDER",
    "LIMIT",
    "OUTLOOK_ID",
    "QUERY",
    "WELL_KNOWN_FOLDERS",
    "folder_segment",
    "input_schema",
    "item_shaper",
    "list_output_schema",
    "object_output_schema",
    "shape_items",
]

WELL_KNOWN_FOLDERS = ("inbox", "sentitems", "drafts", "archive", "deleteditems", "junkemail")
"""The names tools suggest; Graph accepts the longer list below wherever a folder id goes."""
GRAPH_WELL_KNOWN_FOLDERS = frozenset(
    {
        *WELL_KNOWN_FOLDERS,
        "clutter",
        "conflicts",
        "conversationhistory",
        "localfailures",
        "msgfolderroot",
        "outbox",
        "recoverableitemsdeletions",
        "scheduled",
        "searchfolders",
        "serverfailures",
        "syncissues",
    }
)
MIN_ID_CHARS = 16
"""Outlook and OneDrive ids are long; a short word that is not a well-known name is a typo."""

LIMIT: dict[str, Any] = {
    "type": "integer",
    "minimum": 1,
    "maximum": ActiveLimit("list_items"),
    "default": ActiveLimit("list_items"),
}
CURSOR: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": ActiveLimit("cursor_chars"),
    "description": "skipped.items.cursor of the previous result",
}
OUTLOOK_ID_PATTERN = "^[A-Za-z0-9_=+/-]+$"
OUTLOOK_ID: dict[str, Any] = {
    "type": "string",
    "maxLength": ActiveLimit("outlook_id_chars"),
    "pattern": OUTLOOK_ID_PATTERN,
}

_OUTLOOK_ID = re.compile(OUTLOOK_ID_PATTERN)


def folder_segment(value: str, argument: str) -> str:
    """A well-known folder name (any case) or an Outlook folder id, as a path segment."""
    lowered = value.lower()
    if lowered in GRAPH_WELL_KNOWN_FOLDERS:
        return lowered
    if len(value) < MIN_ID_CHARS or not _OUTLOOK_ID.match(value):
        raise ToolInputError(
            f"unknown folder {value[:60]!r} in `{argument}`",
            hint=f"use a well-known name ({', '.join(WELL_KNOWN_FOLDERS)}) "
            "or a folder id from mail_folders",
        )
    return value


QUERY: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": ActiveLimit("query_chars")}
FOLDER: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": ActiveLimit("path_chars")}


def input_schema(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    """An object schema that refuses unknown arguments (a typo is an error, not ignored)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def list_output_schema(key: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {"type": "array", "items": {"type": "object"}},
            "incomplete": {"type": "boolean"},
            "skipped": {"type": "object"},
        },
        "required": [key],
    }


def object_output_schema(key: str, *extra: str) -> dict[str, Any]:
    properties: dict[str, Any] = {key: {"type": "object"}}
    for name in extra:
        properties[name] = {"type": ["object", "array"]}
    properties["incomplete"] = {"type": "boolean"}
    properties["skipped"] = {"type": "object"}
    return {"type": "object", "properties": properties, "required": [key]}


def item_shaper(
    ctx: ToolContext,
    fields: tuple[str, ...],
    compact: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> ItemShaper:
    """Shape one Graph item to ``fields`` under the context's limits (then ``compact`` it)."""

    def shape(item: Any, skipped: Skipped, path: str) -> dict[str, Any]:
        shaped = shape_item(
            item,
            fields,
            skipped,
            path,
            max_chars=ctx.limits.field_chars,
            max_items=ctx.limits.list_field_items,
        )
        return compact(shaped) if compact else shaped

    return shape


def shape_items(
    ctx: ToolContext, items: list[Any], fields: tuple[str, ...], skipped: Skipped, key: str
) -> list[dict[str, Any]]:
    shape = item_shaper(ctx, fields)
    return [shape(item, skipped, f"{key}[{index}]") for index, item in enumerate(items)]
