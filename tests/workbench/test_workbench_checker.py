"""Checks off the page's thread: while a worker is busy the event loop goes on answering, a check
that waited behind a newer one of the same task is dropped, and a text checked once is not checked
again."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from tests_paths import EXAMPLES

from safeforge.task import Task
from safeforge.workbench._checker import Checker, Superseded

KITCHEN = EXAMPLES / "kitchen_mopped_floor_hot_soup"


def test_the_newest_check_of_a_task_wins_and_the_loop_keeps_answering():
    task = Task.load(KITCHEN)
    edited = Task(
        task.path, task.safety_domain.replace("(increase (danger) 1)", "(assign (danger) 1)", 1), task.safety_problem, task.metadata
    )
    checker = Checker(time_limit=10, workers=1)
    gate = threading.Event()

    async def scenario():
        busy = asyncio.ensure_future(checker.off_thread(lambda: gate.wait(30)))
        older = asyncio.ensure_future(checker.check(edited, lambda report: report))
        newer = asyncio.ensure_future(checker.check(task, lambda report: report))
        started = time.monotonic()
        await asyncio.sleep(0.2)  # the loop runs while the only worker is taken
        assert time.monotonic() - started < 5 and not older.done()
        gate.set()
        assert await busy
        with pytest.raises(Superseded):
            await older
        return await newer

    try:
        report = asyncio.run(scenario())
        assert report is not None and report.ok
        assert checker.report(task) is report  # kept: the same text is not checked again
    finally:
        checker.close()
