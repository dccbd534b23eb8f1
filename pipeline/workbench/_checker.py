"""Checks off the page's thread: the workbench's checks run in a small pool of worker threads, the
planners they start under the check's time limit (each planner call is a process killed at the
limit), so the page keeps answering while a check runs.

While an author types, only the newest text of a task is worth checking: a request that waited
for a worker while a newer one for the same task arrived is dropped (`Superseded`). Reports are
kept by text (the last few dozen), so saving what was just checked does not check it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from safeforge.pddl.errors import PDDLError
from safeforge.task import CheckReport, Task, TaskError
from safeforge.workbench._analysis import run_check

KEPT_REPORTS = 64
Result = TypeVar("Result")


class Superseded(Exception):
    """A newer check of the same task was asked for while this one waited."""


class Checker:
    """Runs checks (and anything else slow) on worker threads."""

    def __init__(self, time_limit: float, workers: int = 2, *, cross_check: bool = False):
        self.time_limit = time_limit
        self.cross_check = cross_check
        if cross_check:  # loaded now: a check's time limit lets an import finish, and this one takes seconds
            import safeforge.pddl.up_io  # noqa: F401
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="workbench-check")
        self._lock = threading.Lock()
        self._latest: dict[Path, int] = {}
        self._asked = 0
        self._reports: OrderedDict[tuple, CheckReport | None] = OrderedDict()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def off_thread(self, work: Callable[[], Result]) -> Result:
        """`work()` on a worker thread."""
        return await asyncio.wrap_future(self._pool.submit(work))

    async def check(self, task: Task, then: Callable[[CheckReport | None], Result]) -> Result:
        """`then(report)` with the check of `task` (None when its text cannot be read at all), both
        on a worker thread; Superseded when a newer check of the same folder was asked for first."""
        with self._lock:
            self._asked += 1
            ticket = self._latest[task.path] = self._asked

        def work() -> Result:
            with self._lock:
                if self._latest.get(task.path) != ticket:
                    raise Superseded(str(task.path))
            return then(self.report(task))

        return await self.off_thread(work)

    def report(self, task: Task) -> CheckReport | None:
        """The check of `task`'s text, from the kept reports when it was checked before."""
        key = (task.path, text_sha256(task.safety_domain), text_sha256(task.safety_problem), task.task_id)
        with self._lock:
            if key in self._reports:
                self._reports.move_to_end(key)
                return self._reports[key]
        try:
            report: CheckReport | None = run_check(task, self.time_limit, self.cross_check)
        except (PDDLError, TaskError):
            report = None
        with self._lock:
            self._reports[key] = report
            while len(self._reports) > KEPT_REPORTS:
                self._reports.popitem(last=False)
        return report


def text_sha256(text: str) -> str:
    """The sha256 of `text` (UTF-8), in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
