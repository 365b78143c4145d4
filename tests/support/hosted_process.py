"""The real ``mfconnector serve-http --demo`` process, its tokens from ``LocalIssuer``.

The server listens on a free loopback port (``--listen 127.0.0.1:0``; the address is read
from its stderr line) and fetches the issuer's JWKS over real HTTP from a
``LoopbackServer``. Its public URL is an https name it does not listen on, as behind a
TLS reverse proxy; requests go to the loopback address with that URL's path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.oauth_issuer import SCOPE, LocalIssuer

PUBLIC_URL = "https://mail.example.test/mcp"
START_SECONDS = 30.0
SERVING = re.compile(r"serving MCP on http://[^ :]+:(\d+)/mcp")


@dataclass
class HostedServer:
    url: str
    """Where the endpoint listens (loopback)."""
    issuer: LocalIssuer
    process: subprocess.Popen[bytes]
    stderr_path: Path

    def token(self, user: str = "a1", **claims: Any) -> str:
        """A valid token for the user whose ``oid`` ends in ``user``."""
        oid = f"00000000-0000-0000-0000-{user:0>12}"
        return self.issuer.token(PUBLIC_URL, oid=oid, **claims)

    def auth(self, user: str = "a1", **claims: Any) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(user, **claims)}"}

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@contextmanager
def hosted_server(
    tmp_path: Path, *extra: str, listen: str | None = "127.0.0.1:0", env_listen: str = ""
) -> Iterator[HostedServer]:
    """``listen`` None: no ``--listen`` flag, so ``env_listen`` (``MFC_HTTP_LISTEN``) applies."""
    with LoopbackServer() as loopback:
        issuer = LocalIssuer(loopback)
        issuer.publish()
        with started(issuer, tmp_path, *extra, listen=listen, env_listen=env_listen) as server:
            yield server


@contextmanager
def hosted_replicas(tmp_path: Path, count: int, *extra: str) -> Iterator[list[HostedServer]]:
    """``count`` serve-http processes that trust one issuer (give them one --state-url)."""
    with LoopbackServer() as loopback, ExitStack() as stack:
        issuer = LocalIssuer(loopback)
        issuer.publish()
        yield [
            stack.enter_context(started(issuer, tmp_path / f"replica{n}", *extra))
            for n in range(count)
        ]


@contextmanager
def started(
    issuer: LocalIssuer,
    tmp_path: Path,
    *extra: str,
    listen: str | None = "127.0.0.1:0",
    env_listen: str = "",
    demo: bool = True,
    env_extra: dict[str, str] | None = None,
) -> Iterator[HostedServer]:
    """One serve-http process trusting ``issuer``, its stderr in ``tmp_path``; ``demo``
    False serves live Graph (give it the app registration in ``env_extra``)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    stderr_path = tmp_path / "server-stderr.txt"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "MFC_HTTP_LISTEN": env_listen}
    env.update(env_extra or {})
    command = [
        sys.executable,
        "-m",
        "mfconnector",
        "serve-http",
        *(["--demo"] if demo else []),
        *(["--listen", listen] if listen is not None else []),
        "--public-url",
        PUBLIC_URL,
        "--oauth-issuer",
        issuer.issuer,
        "--oauth-jwks-url",
        issuer.jwks_url,
        "--oauth-scope",
        SCOPE,
        "--log-level",
        "info",
        *extra,
    ]
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env
        )
    try:
        url = _wait_for_address(process, stderr_path)
        yield HostedServer(url, issuer, process, stderr_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_address(process: subprocess.Popen[bytes], stderr_path: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = SERVING.search(stderr_path.read_text(errors="replace"))
        if found:
            return f"http://127.0.0.1:{found.group(1)}/mcp"
        if process.poll() is not None:
            raise AssertionError(
                f"serve-http exited {process.returncode}: {stderr_path.read_text()}"
            )
        time.sleep(0.05)
    raise AssertionError(f"serve-http did not start: {stderr_path.read_text()}")
