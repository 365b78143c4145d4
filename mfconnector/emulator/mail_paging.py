"""What every Outlook list and entity answer shares: ``$top`` bounds, ``$select``
checks, paging with an ``@odata.nextLink`` on the same address, and the sort key."""

from __future__ import annotations

from typing import Any

from mfconnector.emulator.call import Answer, Call
from mfconnector.emulator.errors import GraphHttpError
from mfconnector.emulator.odata import QueryOptions

__all__ = [
    "DEFAULT_TOP",
    "MAX_TOP",
    "check_select",
    "json_answer",
    "not_allowed",
    "page",
    "select_plain",
    "sort_key",
]

MAX_TOP = 1000
DEFAULT_TOP = 10


def json_answer(status: int, body: Any = None, **headers: str) -> Answer:
    return Answer(status, json=body, headers=dict(headers))


def check_select(select: list[str] | None, properties: frozenset[str], entity: str) -> None:
    for name in select or ():
        if name not in properties:
            raise GraphHttpError(
                400,
                "RequestBroker--ParseUri",
                f"Could not find a property named '{name}' on type 'microsoft.graph.{entity}'.",
            )


def not_allowed() -> GraphHttpError:
    return GraphHttpError(405, "ErrorInvalidRequest", "The OData request is not supported.")


def select_plain(value: dict[str, Any], call: Call) -> dict[str, Any]:
    select = call.query.get("$select")
    if not select:
        return value
    wanted = {part.strip() for part in select.split(",")}
    return {k: v for k, v in value.items() if k in wanted or k.startswith("@odata") or k == "id"}


def sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, "")
    if isinstance(value, str):
        return (1, value.casefold())
    if isinstance(value, dict):
        return (1, str(value))
    return (1, value)


def page(
    call: Call,
    options: QueryOptions,
    items: list[dict[str, Any]],
    context: str,
    *,
    select: list[str] | None,
    total: int | None = None,
) -> Answer:
    top = min(options.top or call.prefer.max_page_size or DEFAULT_TOP, MAX_TOP)
    window = items[options.skip : options.skip + top]
    if select is not None:
        wanted = set(select)
        window = [
            {
                k: v
                for k, v in item.items()
                if k in wanted or k in ("id", "@odata.etag", "@odata.type")
            }
            for item in window
        ]
    body: dict[str, Any] = {"@odata.context": context}
    if options.count:
        body["@odata.count"] = len(items) if total is None else total
    body["value"] = window
    if options.skip + top < len(items):
        body["@odata.nextLink"] = call.next_link(**{"$skip": str(options.skip + top)})
    return json_answer(200, body)
