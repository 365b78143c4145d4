"""The server's side of document parsing: worker processes, deadlines, kills, reuse.

A job goes to an idle worker if there is one (it has already paid Python's start-up and
the parsers' imports: 60 to 90 ms a document, bench/README.md), otherwise to a new one.
A worker goes back to the idle list only after a job that ended in text (or in an offset
past the end); after a document error, a timeout, a cancellation, a crash or an oversized
answer it is killed, so no job ever runs in a process a bad document has touched. The
pool is made with the first caller's limits (memory, worker count); time and CPU limits
come with each job. One deadline (``document_seconds``) covers the whole call, the wait for
a free worker included: while eight costly documents hold both workers, a ninth call is
told the readers are busy when its own deadline passes, never kept waiting behind them.
Idle workers stop after ``document_idle_seconds``, and all of them when the trio run ends
(a system task owns them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from mfconnector.errors import BusyError, DocumentError, ToolInputError
from mfconnector.limits import Limits

__all__ = ["DocumentWorkers", "workers_for"]

_log = logging.getLogger("mfconnector.documents")
_LIMIT_PREFIXES = ("document_", "archive_", "html_")
OnParts = Callable[[int, "int | None"], None]
"""Told ``(parts read so far, parts in the document or None)`` while a worker parses."""
_POOL: trio.lowlevel.RunVar[DocumentWorkers] = trio.lowlevel.RunVar("mfc_document_workers")


@dataclass(eq=False)
class _Worker:
    process: trio.Process
    answer_bytes: int
    """``document_answer_bytes``: past it the worker is treated as broken."""
    jobs: int = 0
    idle_since: float = 0.0
    buffer: bytearray = field(default_factory=bytearray)

    async def ask(
        self, job: dict[str, Any], on_parts: OnParts | None = None
    ) -> dict[str, Any] | None:
        """Send one job and read its answer line; None when the process ended first.

        Lines of ``{"parsed": n, "of": total}`` before the answer say how many pages,
        slides or sheets the worker has read so far: they go to ``on_parts``.
        """
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            await self.process.stdin.send_all(json.dumps(job).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return None
        while True:
            line = await self._line()
            if line is None:
                return None
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            if not isinstance(answer, dict):
                raise DocumentError("the document worker answered nonsense", code="crashed")
            if "ok" in answer:
                return answer
            parsed, total = answer.get("parsed"), answer.get("of")
            if on_parts is not None and isinstance(parsed, int):
                on_parts(parsed, total if isinstance(total, int) else None)

    async def _line(self) -> bytes | None:
        """The worker's next line, within ``answer_bytes``; None when the process ended."""
        assert self.process.stdout is not None
        while b"\n" not in self.buffer:
            if len(self.buffer) > self.answer_bytes:
                raise DocumentError("the document worker answered too much", code="crashed")
            chunk = await self.process.stdout.receive_some(65_536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line

    async def kill(self) -> None:
        with trio.CancelScope(shield=True):
            if self.process.returncode is None:
                with contextlib.suppress(OSError):  # it ended between the check and the kill
                    self.process.kill()
            await self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    await stream.aclose()


_EXIT_SECONDS = 2.0
"""How long a worker whose answer stream ended is given to exit, so its status is known."""


def _died(returncode: int | None, limits: Limits, what: str) -> DocumentError:
    if returncode == -getattr(signal, "SIGXCPU", -1000):
        return DocumentError(
            f"reading the {what} took more than {limits.document_cpu_seconds} s of CPU time",
            code="cpu",
            hint="it is too large or too complex to read here",
        )
    if returncode is not None and returncode > 0:  # an error the worker could not answer
        return DocumentError(
            f"the parser failed while reading the {what}",
            code="crashed",
            hint="the file is probably damaged; the server carries on",
        )
    return DocumentError(
        f"the document reader was stopped while reading the {what} (exit status {returncode}: "
        "killed from outside, or out of memory)",
        code="crashed",
        hint="the server carries on; try again, and if it happens again the file is too "
        "costly to read here",
        retry_safe=True,
    )


@dataclass(eq=False)
class DocumentWorkers:
    """At most ``document_workers`` parsing at once; idle ones kept for the next job."""

    limits: Limits
    idle: list[_Worker] = field(default_factory=list)
    _slots: trio.CapacityLimiter = field(init=False)

    def __post_init__(self) -> None:
        self._slots = trio.CapacityLimiter(self.limits.document_workers)

    async def _spawn(self) -> _Worker:
        process = await trio.lowlevel.open_process(
            [
                sys.executable,
                "-m",
                "mfconnector.documents.worker",
                str(self.limits.document_memory_bytes),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        return _Worker(process, self.limits.document_answer_bytes)

    async def run(
        self, job: dict[str, Any], limits: Limits, what: str, on_parts: OnParts | None = None
    ) -> dict[str, Any]:
        """One extraction under ``limits``; its answer, or a ``DocumentError``."""
        job = {
            **job,
            "limits": {
                item.name: getattr(limits, item.name)
                for item in dataclasses.fields(limits)
                if item.name.startswith(_LIMIT_PREFIXES)
            },
        }
        started = trio.current_time()
        deadline = started + limits.document_seconds
        with trio.move_on_at(deadline) as waiting:
            await self._slots.acquire()
        if waiting.cancelled_caught:  # trio: a cancelled acquire acquired nothing
            raise BusyError(
                f"every document reader ({limits.document_workers}) stayed busy for "
                f"{limits.document_seconds:g} s; "
                f"the {what} was not read",
                hint="try again in a moment",
            )
        try:
            return await self._run_in_slot(
                job, limits, what, deadline, waited=trio.current_time() - started, on_parts=on_parts
            )
        finally:
            self._slots.release()

    async def _run_in_slot(
        self,
        job: dict[str, Any],
        limits: Limits,
        what: str,
        deadline: float,
        *,
        waited: float,
        on_parts: OnParts | None,
    ) -> dict[str, Any]:
        worker = self.idle.pop() if self.idle else await self._spawn()
        reusable = False
        try:
            with trio.move_on_at(deadline) as timer:
                answer = await worker.ask(job, on_parts)
            if timer.cancelled_caught:
                queued = (
                    f", {waited:.1f} s of it waiting for a free reader" if waited >= 0.1 else ""
                )
                raise DocumentError(
                    f"reading the {what} took longer than {limits.document_seconds:g} s{queued}",
                    code="timeout",
                    hint="it is too large or too complex to read here",
                )
            if answer is None:
                with trio.move_on_after(_EXIT_SECONDS):
                    await worker.process.wait()
                await worker.kill()
                raise _died(worker.process.returncode, limits, what)
            worker.jobs += 1
            if answer.get("ok") is True:
                reusable = worker.jobs < limits.document_worker_jobs
                return answer
            error = answer.get("error") or {}
            if answer.get("input"):  # the document was read; the offset or part was not in it
                reusable = worker.jobs < limits.document_worker_jobs
                raise ToolInputError(str(error.get("message")), hint=error.get("hint"))
            raise DocumentError(
                str(error.get("message")),
                code=str(error.get("reason") or "corrupt"),
                hint=error.get("hint"),
                retry_safe=bool(error.get("retry_safe")),
            )
        finally:
            if reusable:
                worker.idle_since = trio.current_time()
                self.idle.append(worker)
            else:
                await worker.kill()

    async def keep(self) -> None:
        """A system task: stop workers idle too long, and all of them when the run ends."""
        try:
            while True:
                await trio.sleep(max(self.limits.document_idle_seconds / 4, 0.05))
                now = trio.current_time()
                for worker in [
                    w for w in self.idle if now - w.idle_since > self.limits.document_idle_seconds
                ]:
                    self.idle.remove(worker)
                    await worker.kill()
        finally:
            while self.idle:
                await self.idle.pop().kill()


def workers_for(limits: Limits) -> DocumentWorkers:
    """This trio run's worker pool (made on first use)."""
    try:
        return _POOL.get()
    except LookupError:
        pool = DocumentWorkers(limits)
        _POOL.set(pool)
        trio.lowlevel.spawn_system_task(pool.keep, name="mfconnector document workers")
        return pool
