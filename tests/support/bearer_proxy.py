"""A loopback reverse proxy that adds one bearer token to every request it forwards.

For clients that cannot send a token themselves (the MCP conformance suite): it stands
where an OAuth-capable client would, at the seam, and forwards everything else unchanged
to the real server (``Origin`` included, so its checks still run).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import httpx

HOP_BY_HOP = {"host", "content-length", "connection", "authorization", "transfer-encoding"}


class BearerProxy:
    def __init__(self, target: str, token: str) -> None:
        self._client = httpx.Client(timeout=60, trust_env=False)
        client = self._client

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                headers["Authorization"] = f"Bearer {token}"
                answer = client.request(self.command, target, content=body, headers=headers)
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in HOP_BY_HOP | {"date", "server"}:
                        self.send_header(name, value)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_DELETE = forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/mcp"

    def __enter__(self) -> BearerProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()
