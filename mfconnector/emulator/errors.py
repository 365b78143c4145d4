"""Graph's error answers: ``{"error": {"code", "message", "innerError": {...}}}``.

Codes and messages are the ones Graph sends (see ``graph-samples/`` and
``reference/graph-facts.md``): Outlook's ``ErrorItemNotFound`` and
``ErrorInvalidIdMalformed``, OneDrive's camelCase ``itemNotFound``, the gateway's
``InvalidAuthenticationToken`` and ``TooManyRequests``.
"""

from __future__ import annotations

__all__ = [
    "GraphHttpError",
    "drive_item_not_found",
    "item_not_found",
    "malformed_id",
]


class GraphHttpError(Exception):
    """An error answer: status, Graph's code and message, and extra headers."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        inner_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.inner_code = inner_code


def item_not_found() -> GraphHttpError:
    return GraphHttpError(
        404, "ErrorItemNotFound", "The specified object was not found in the store."
    )


def malformed_id() -> GraphHttpError:
    return GraphHttpError(400, "ErrorInvalidIdMalformed", "Id is malformed.")


def drive_item_not_found() -> GraphHttpError:
    return GraphHttpError(404, "itemNotFound", "The resource could not be found.")
