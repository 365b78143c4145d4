"""One Graph request that may change the mailbox: sent once, its ambiguity named.

Unlike reads (``GraphClient.get_json``), a write is never repeated after a throttling or
server answer: a 429/503 is reported at once, and a lost or late answer is an
``AmbiguousWriteError`` (the write may have happened). It is repeated only where Graph
cannot have acted: once after a token-shaped 401 (with a refreshed token), and never
after the request may have left. A refused connection means nothing was sent.

It shares the client's connection pool, concurrency slots, byte cap and root check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio

from mfconnector.errors import GraphError
from mfconnector.graph.body import (
    checked_cost,
    decode_utf8_strict,
    parse_json_text,
    read_capped,
)
from mfconnector.graph.client import GraphClient, GraphResponse
from mfconnector.graph.errors import graph_error_from_response, request_id
from mfconnector.graph.urls import build_url
from mfconnector.writes.errors import AmbiguousWriteError

__all__ = ["write_json"]

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Failures before the request could leave: nothing reached Graph."""


async def write_json(
    client: GraphClient,
    method: str,
    path: str,
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> GraphResponse:
    """``method path`` with a JSON body (or an empty one), answered 2xx, or an error."""
    url = client._graph_url(build_url(client.root, path))
    content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    limits = client._limits
    log_as = f"{method} {urlsplit(url).path}"
    try:
        with trio.fail_after(limits.graph_request_seconds):
            return await _attempts(client, method, url, content, headers, log_as)
    except trio.TooSlowError:
        raise AmbiguousWriteError(
            f"Microsoft Graph did not answer {log_as} within {limits.graph_request_seconds:g} s",
            hint="the change may or may not have been made: check before repeating it",
        ) from None


async def _attempts(
    client: GraphClient,
    method: str,
    url: str,
    content: bytes,
    headers: Mapping[str, str] | None,
    log_as: str,
) -> GraphResponse:
    refreshed = False
    force_refresh, claims = False, None
    while True:
        token = await client._tokens.get_token(force_refresh=force_refresh, claims=claims)
        request = client._http.build_request(method, url, headers=headers, content=content)
        request.headers["Authorization"] = f"Bearer {token}"
        if content:
            request.headers["Content-Type"] = "application/json"
        status, answer_headers, data = await _exchange(client, request, log_as)
        if 200 <= status < 300:
            limit = client._limits.graph_body_values
            text = decode_utf8_strict(checked_cost(data, limit)) if data else ""
            parsed = parse_json_text(text) if text.strip() else None
            kept = {k: answer_headers[k] for k in ("request-id",) if k in answer_headers}
            return GraphResponse(body=parsed, status=status, headers=kept)
        if status == 401 and not refreshed:
            # Graph refused the token before acting: one refresh, one more attempt.
            refreshed, force_refresh = True, True
            continue
        raise graph_error_from_response(status, answer_headers, data)


async def _exchange(
    client: GraphClient, request: httpx.Request, log_as: str
) -> tuple[int, httpx.Headers, bytes]:
    limits = client._limits
    async with client._limiter:
        failure: GraphError | None = None
        try:
            response = await client._http.send(request, stream=True)
        except _NOT_SENT:
            failure = GraphError(
                f"could not reach Microsoft Graph for {log_as}; nothing was sent",
                retry_safe=True,
                hint="check the network, then call again",
            )
        except httpx.TransportError:
            failure = AmbiguousWriteError(
                f"the connection broke before Microsoft Graph answered {log_as}",
                hint="the change may or may not have been made: check before repeating it",
            )
        if failure is not None:
            raise failure
        try:
            data = await read_capped(response, limits.graph_body_bytes)
        except (GraphError, httpx.TransportError):
            data = b""
            if 200 <= response.status_code < 300:
                failure = AmbiguousWriteError(
                    f"Microsoft Graph accepted {log_as} but its answer could not be read "
                    f"(request-id {request_id(response.headers) or '-'})",
                    hint="the change was probably made: read the item again to see",
                )
        finally:
            with trio.move_on_after(limits.graph_close_seconds) as scope:
                scope.shield = True
                await response.aclose()
        if failure is not None:
            raise failure
        return response.status_code, response.headers, data
