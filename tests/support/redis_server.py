"""A throwaway ``redis-server`` (Debian's package) for the tests: a free loopback port, a
temp dir, no persistence. Without the binary the tests skip saying so, except under CI
(``CI`` set), where they fail: CI must run them (``.ci/run`` installs redis-server)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

START_SECONDS = 10.0


@dataclass
class RedisServer:
    port: int
    process: subprocess.Popen[bytes]
    directory: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self, *words: str) -> str:
        """One command through ``redis-cli`` (the tests' own look at the server)."""
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), *words],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout.strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def require_redis() -> str:
    found = shutil.which("redis-server")
    if found is None:
        reason = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI must run the Redis tests")
        pytest.skip(reason)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(directory: Path, port: int | None = None) -> Iterator[RedisServer]:
    binary = require_redis()
    directory.mkdir(parents=True, exist_ok=True)
    for _ in range(3):  # a free port can be taken between the probe and the bind
        chosen = port or free_port()
        process = subprocess.Popen(
            [
                binary,
                "--port", str(chosen),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(directory),
                "--logfile", str(directory / "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        server = RedisServer(chosen, process, directory)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            if _answers(chosen):
                try:
                    yield server
                finally:
                    server.stop()
                return
            time.sleep(0.02)
        server.stop()
    log = directory / "redis.log"
    raise AssertionError(f"redis-server did not start: {log.read_text() if log.exists() else ''}")
