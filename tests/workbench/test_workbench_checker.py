"""Checks apart from the pages: each check runs in a check process, so the page's threads keep
answering; a newer check of the same task cancels the older one, whose process and planners end;
Stop cancels a check; a text checked once is not checked again."""

from __future__ import annotations

import asyncio
import contextlib
import os

import psutil
import pytest
from busy_machine import eventually, eventually_async, is_running
from slow_tasks import write_hard_task
from tests_paths import EXAMPLES

from safeforge.task import Task
from safeforge.workbench._checker import Cancelled, Checker

KITCHEN = EXAMPLES / "kitchen_mopped_floor_hot_soup"


def _slow(tmp_path) -> Task:
    """A task of 2**20 states whose goal cannot be reached: its search and planners run until the
    check's time limit (minutes here), so a check of it is cancelled while its planners run."""
    return Task.load(write_hard_task(tmp_path / "slow"))


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def _show(pids: set[int]) -> list[str]:
    found = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            found.append(f"{pid} {process.status()} parent {process.ppid()}: {' '.join(process.cmdline())[:200]}")
        except psutil.Error:
            pass
    return found


def _planners(pids: set[int]) -> bool:
    """Whether a planner worker of the check is among `pids`."""
    for pid in pids:
        try:
            if "safeforge.planning.worker" in " ".join(psutil.Process(pid).cmdline()):
                return True
        except psutil.Error:
            pass
    return False


def _the_checks_processes(pids: set[int]) -> set[int]:
    """The planner workers among `pids` and the check processes that started them (not an idle
    check process the checker started meanwhile, nor this process, where an earlier test's planning
    may have left workers)."""
    workers = set()
    for pid in pids:
        try:
            if "safeforge.planning.worker" in " ".join(psutil.Process(pid).cmdline()):
                workers.add(pid)
        except psutil.Error:
            pass
    parents = set()
    for pid in workers:
        try:
            parents.add(psutil.Process(pid).ppid())
        except psutil.Error:
            pass
    return workers | (parents - {os.getpid()})


def test_a_newer_check_cancels_the_older_and_its_processes_end(tmp_path):
    slow, kitchen = _slow(tmp_path), Task.load(KITCHEN)
    newer = Task(slow.path, kitchen.safety_domain, kitchen.safety_problem, kitchen.metadata)  # the same task, edited
    checker = Checker(time_limit=600, slots=1)

    async def scenario():
        before = _descendants()
        older = asyncio.ensure_future(checker.check(slow, saved=False))
        await eventually_async(lambda: (checker.progress(slow.path) or {"waiting": True})["waiting"] is False, "the check started")
        await eventually_async(lambda: _planners(_descendants() - before), "the check reaching its planners", every=0.2)
        running = _the_checks_processes(_descendants() - before)  # the check process reads, then plans
        report, answer = await checker.check(newer, saved=False)
        with pytest.raises(Cancelled) as cancelled:
            await older
        return running, cancelled.value.why, report, answer

    try:
        running, why, report, answer = asyncio.run(scenario())
        assert why == "superseded" and report is not None and report.ok and answer["ok"] is True
        # its planner workers end, even one still loading its planners (not only once its limit passes)
        eventually(lambda: not {pid for pid in running if is_running(pid)}, f"the cancelled check's processes ending ({_show(running)})")
        cached = asyncio.run(checker.check(newer, saved=False))
        assert cached[0] is report  # kept: the same text is not checked again
    finally:
        checker.close()


def test_stop_cancels_a_running_check_and_progress_says_what_it_does(tmp_path):
    slow = _slow(tmp_path)
    checker = Checker(time_limit=600, slots=1)

    async def scenario():
        running = asyncio.ensure_future(checker.check(slow, saved=False))
        await eventually_async(lambda: (checker.progress(slow.path) or {"stage": ""})["stage"].startswith("checking: "), "the check")
        progress = checker.progress(slow.path)
        assert checker.stop(slow.path)
        with pytest.raises(Cancelled) as cancelled:
            await running
        return progress, cancelled.value.why

    try:
        progress, why = asyncio.run(scenario())
        assert why == "stopped" and progress["seconds"] > 0 and progress["time_limit"] == 600
        assert checker.progress(slow.path) is None and checker.stop(slow.path) is False
    finally:
        checker.close()


def test_a_check_process_killed_while_its_planners_load_leaves_no_worker(tmp_path):
    """A check process that does not exit in its grace is killed: its planner workers, still
    loading their planners (seconds), end at once rather than once loaded."""
    slow = _slow(tmp_path)
    checker = Checker(time_limit=600, slots=1)

    async def scenario():
        before = _descendants()  # planner workers an earlier test left in this process are not the check's
        running = asyncio.ensure_future(checker.check(slow, saved=False))
        await eventually_async(lambda: _planners(_descendants() - before), "the check reaching its planners")
        started = _the_checks_processes(_descendants() - before)
        for pid in started:
            with contextlib.suppress(psutil.Error):  # a process gone already, or a zombie not reaped yet
                if "_check_process" in " ".join(psutil.Process(pid).cmdline()):  # the one that started the workers
                    psutil.Process(pid).kill()
        with pytest.raises(Exception):  # noqa: B017 - the check ends without an answer
            await running
        return started

    try:
        started = asyncio.run(scenario())
        eventually(lambda: not {pid for pid in started if is_running(pid)}, f"the killed check's workers ending ({_show(started)})")
    finally:
        checker.close()
