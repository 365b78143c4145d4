"""The real server process for the multi-process tests: ``python tests/support/write_server.py
GRAPH_ROOT STATE_DIR`` (or ``GRAPH_ROOT redis://HOST:PORT/DB`` for the Redis store).

It is ``mfconnector``'s own serving path (runtime, stdio, tools, gates, the SQLite state
file) with every gate on; only two seams differ from a live server: Graph is at
GRAPH_ROOT (a loopback server) and the token provider is a fixed one that names its
scopes (``tests/support/acting_harness.py``), because a test cannot sign in to Microsoft.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mfconnector.entry.serving import serve_stdio
from mfconnector.limits import DEFAULT_LIMITS
from mfconnector.server import McpServer
from mfconnector.tools.base import ToolContext
from mfconnector.tools.gated import hidden_tools, listed_tools
from mfconnector.writes.setup import WriteSetup
from mfconnector.writes.store import STATE_FILE_NAME, AsyncSendStore, SendStore
from tests.support.acting_harness import ALL_GATES, ScopedTokens, accounts_for


def main(root: str, state_dir: str) -> None:
    tokens = ScopedTokens()
    clients: list[Any] = []

    async def graph() -> Any:
        if not clients:
            from mfconnector.graph.client import GraphClient

            clients.append(GraphClient(token_provider=tokens, root=root))
        return clients[0]

    async def close() -> None:
        for client in clients:
            await client.aclose()

    store: Any
    if state_dir.startswith("redis://"):
        from mfconnector.writes.redis_store import RedisState

        store = RedisState(state_dir, limits=DEFAULT_LIMITS).store()
    else:
        store = SendStore(Path(state_dir) / STATE_FILE_NAME, limits=DEFAULT_LIMITS)
    context = ToolContext(
        limits=DEFAULT_LIMITS,
        mode="live",
        allow_partial=False,
        sign_in=tokens,
        writes=WriteSetup(ALL_GATES, AsyncSendStore(store)),
        accounts=accounts_for(graph, DEFAULT_LIMITS),
    )
    server = McpServer(listed_tools(ALL_GATES), context, hidden_tools(ALL_GATES))
    sys.exit(serve_stdio(server, DEFAULT_LIMITS, close))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
