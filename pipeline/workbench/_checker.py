"""Checks apart from the pages: each check runs in a check process of its own
(`safeforge.workbench._check_process`, at most `slots` at a time), so page loads and static files
never wait behind one; the page's other work runs on a pool of threads of its own (`off_thread`).

While an author types only the newest text of a task is worth checking: a newer check of the same
task, or the Stop button, cancels the older one. A cancelled check still waiting for a process is
dropped; a running one ends with its process (SIGTERM, then SIGKILL after `KILL_GRACE_S`), whose
planner workers see their input close and kill their solves, so no planner is left running.
`progress` tells what a running check is doing and for how long. Reports are kept by text (the last
few dozen), so saving what was just checked does not check it again.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

from safeforge.task import CheckReport, Task
from safeforge.workbench._workspace import text_sha256

KEPT_REPORTS = 64
KILL_GRACE_S = 3.0
POLL_S = 0.05
Result = TypeVar("Result")


class Cancelled(Exception):
    """The check was cancelled: by a newer check of the same task ("superseded") or by Stop ("stopped")."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class CheckFailed(Exception):
    """The check process ended without an answer (the message says how)."""


@dataclass
class _Job:
    path: Path
    cancelled: threading.Event = field(default_factory=threading.Event)
    why: str = ""
    stage: str = "waiting for a check process"
    started: float = field(default_factory=time.monotonic)
    running_since: float | None = None

    def cancel(self, why: str) -> None:
        self.why = self.why or why
        self.cancelled.set()


class _CheckProcess:
    """One check process and the pipes to it."""

    def __init__(self, cross_check: bool) -> None:
        to_child, self._requests = os.pipe()
        self._answers, from_child = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "safeforge.workbench._check_process", str(to_child), str(from_child)]
            + (["--cross-check"] if cross_check else []),
            pass_fds=(to_child, from_child),
            stdin=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self.send = Connection(self._requests, readable=False)
        self.receive = Connection(self._answers, writable=False)

    def run(self, request: dict, job: _Job) -> tuple[CheckReport | None, dict]:
        """The answer to `request`; Cancelled (the process ended) once `job` is cancelled."""
        self.send.send(request)
        while True:
            if job.cancelled.is_set():
                self.end()
                raise Cancelled(job.why)
            try:
                if not self.receive.poll(POLL_S):
                    continue
                message = self.receive.recv()
            except (EOFError, OSError):
                code = self.end()
                raise CheckFailed(f"the check process ended without an answer (exit code {code})") from None
            if message[0] == "stage":
                job.stage = message[1]
            else:
                return message[1], message[2]

    def end(self) -> int | None:
        """End the process: SIGTERM (its planner pool closes), SIGKILL if it lingers."""
        self.process.terminate()
        try:
            self.process.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.send.close()
        self.receive.close()
        return self.process.returncode


class Checker:
    """Runs checks in check processes, and the page's other slow work on threads."""

    def __init__(self, time_limit: float, slots: int = 2, *, cross_check: bool = False, page_threads: int = 4):
        self.time_limit = time_limit
        self.cross_check = cross_check
        self._pages = ThreadPoolExecutor(max_workers=page_threads, thread_name_prefix="workbench-page")
        self._waiters = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="workbench-check")
        self._slots = threading.Semaphore(slots)
        self._idle: list[_CheckProcess] = []
        self._lock = threading.Lock()
        self._jobs: dict[Path, _Job] = {}
        self._reports: OrderedDict[tuple, tuple[CheckReport | None, dict]] = OrderedDict()
        self._closed = False
        threading.Thread(target=self._warm, args=(slots,), daemon=True, name="workbench-warm").start()

    def _warm(self, count: int) -> None:
        """Start the check processes before the first check needs them."""
        for _ in range(count):
            process = _CheckProcess(self.cross_check)
            with self._lock:
                if self._closed:
                    process.end()
                    return
                self._idle.append(process)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for job in self._jobs.values():
                job.cancel("stopped")
            idle, self._idle = self._idle, []
        for process in idle:
            process.end()
        self._pages.shutdown(wait=False, cancel_futures=True)
        self._waiters.shutdown(wait=False, cancel_futures=True)

    async def off_thread(self, work: Callable[[], Result]) -> Result:
        """`work()` on one of the page's threads (never behind a check)."""
        return await asyncio.wrap_future(self._pages.submit(work))

    async def check(self, task: Task, saved: bool) -> tuple[CheckReport | None, dict]:
        """The report of `task`'s check (None when its text cannot be read at all) and the page's
        answer; Cancelled when a newer check of the same task or Stop came first."""
        key = (*_text_key(task), saved)
        with self._lock:
            if key in self._reports:
                self._reports.move_to_end(key)
                return self._reports[key]
            job = _Job(task.path)
            if (older := self._jobs.get(task.path)) is not None:
                older.cancel("superseded")
            self._jobs[task.path] = job
        request = {
            "path": str(task.path),
            "safety_domain": task.safety_domain,
            "safety_problem": task.safety_problem,
            "metadata": task.metadata,
            "saved": saved,
            "time_limit": self.time_limit,
            "cross_check": self.cross_check,
        }
        try:
            result = await asyncio.wrap_future(self._waiters.submit(self._run, request, job))
        finally:
            with self._lock:
                if self._jobs.get(task.path) is job:
                    del self._jobs[task.path]
        with self._lock:
            self._reports[key] = result
            while len(self._reports) > KEPT_REPORTS:
                self._reports.popitem(last=False)
        return result

    def _run(self, request: dict, job: _Job) -> tuple[CheckReport | None, dict]:
        while not self._slots.acquire(timeout=POLL_S):
            if job.cancelled.is_set():
                raise Cancelled(job.why)
        try:
            if job.cancelled.is_set():
                raise Cancelled(job.why)
            with self._lock:
                process = self._idle.pop() if self._idle else None
            if process is None:
                job.stage = "starting a check process"
                process = _CheckProcess(self.cross_check)
            job.running_since = time.monotonic()
            result = process.run(request, job)  # a process that raised has ended
            with self._lock:
                if self._closed:
                    process.end()
                else:
                    self._idle.append(process)
            return result
        finally:
            self._slots.release()

    def stop(self, path: Path) -> bool:
        """Cancel the check of the task at `path`; False when none runs."""
        with self._lock:
            job = self._jobs.get(path)
        if job is None:
            return False
        job.cancel("stopped")
        return True

    def progress(self, path: Path) -> dict | None:
        """What the check of the task at `path` is doing and for how long (None: none runs)."""
        with self._lock:
            job = self._jobs.get(path)
        if job is None:
            return None
        now = time.monotonic()
        return {
            "stage": job.stage,
            "seconds": round(now - (job.running_since or job.started), 1),
            "waiting": job.running_since is None,
            "time_limit": self.time_limit,
        }


def _text_key(task: Task) -> tuple:
    return (task.path, text_sha256(task.safety_domain), text_sha256(task.safety_problem), task.task_id, task.metadata.to_json())
