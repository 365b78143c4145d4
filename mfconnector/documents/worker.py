"""The document worker process: ``python -m mfconnector.documents.worker``.

Reads one JSON job per line on stdin, answers one JSON line on its own copy of stdout
(after a ``{"parsed": n, "of": total}`` line at each page, slide or sheet it starts), and
parses under limits it sets on itself before touching a document: address space
(RLIMIT_AS), CPU seconds per job (RLIMIT_CPU, raised job by job from what it has used), no
file writes (RLIMIT_FSIZE 0) and no core dumps. File descriptor 1 is pointed at stderr, so
anything a parser prints can never be mistaken for an answer. The server kills the process
on its wall-clock deadline, on cancellation, or after any failed job.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import sys
from collections.abc import Callable
from typing import IO, Any

from mfconnector.errors import DocumentError, ToolInputError
from mfconnector.limits import DEFAULT_LIMITS, Limits

try:
    import resource
except ImportError:  # Windows: the server's wall-clock deadline is the only limit
    resource = None  # type: ignore[assignment]

__all__ = ["main"]


def _limit_self(memory_bytes: int) -> None:
    if resource is None:
        return
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write then fails, nothing is killed
    for name, value in (
        ("RLIMIT_AS", memory_bytes),
        ("RLIMIT_FSIZE", 0),
        ("RLIMIT_CORE", 0),
    ):
        kind = getattr(resource, name, None)
        if kind is None:
            continue
        _, hard = resource.getrlimit(kind)
        soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(kind, (soft, hard))
        except (ValueError, OSError):  # a platform that refuses one limit keeps the others
            continue


def _cpu_budget(seconds: int) -> None:
    """Allow ``seconds`` more CPU from now: SIGXCPU ends the process past it."""
    if resource is None:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def run_job(
    job: dict[str, Any],
    limits: Limits,
    on_part: Callable[[int, int | None], None] | None = None,
) -> dict[str, Any]:
    """Extract and window one document; every failure is an answer, never an exception."""
    from mfconnector.documents.extract import extract, window

    try:
        extraction = extract(job["path"], job["kind"], limits, on_part)
        answer = window(
            extraction,
            job["kind"],
            offset=job.get("offset", 0),
            part=job.get("part"),
            chars=job["chars"],
            listed=limits.document_parts_listed,
        )
    except DocumentError as error:
        return {"ok": False, "error": error.to_payload()}
    except ToolInputError as error:
        return {"ok": False, "input": True, "error": error.to_payload()}
    return {"ok": True, **answer}


def serve(jobs: IO[bytes], answers: IO[bytes]) -> None:
    for line in jobs:
        job = json.loads(line)
        limits = dataclasses.replace(DEFAULT_LIMITS, **job.get("limits", {}))
        _cpu_budget(limits.document_cpu_seconds)

        def parsed(count: int, total: int | None) -> None:
            """A progress line before the answer (the server turns it into a notification)."""
            answers.write(json.dumps({"parsed": count, "of": total}).encode("ascii") + b"\n")
            answers.flush()

        answer = run_job(job, limits, parsed)
        answers.write(json.dumps(answer, ensure_ascii=True).encode("ascii") + b"\n")
        answers.flush()


def main() -> None:
    memory = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_LIMITS.document_memory_bytes
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from a parser land on stderr, never in an answer
    _limit_self(memory)
    with contextlib.suppress(KeyboardInterrupt):
        serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
