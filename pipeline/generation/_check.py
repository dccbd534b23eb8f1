"""The execution check of one candidate task folder, and how a (possibly remote) checker is called.

`check_candidate` parses the folder (a parse failure is a failed "parse" check whose detail names
the file and line) and runs the foundation's `check_task`: structure, reference plans, validator
agreement, the rules of generated tasks, all within the check's time limit (reading included;
running out of it is a failed "time limit" check); then, for a task generated for a SPOC scene (its
`metadata.spoc` says `targeted`), whether it exports to SPOC (`safeforge.spoc.export_problems`).
It never raises for a bad task: whatever the task makes go wrong is a failed check, fed back to the
generator. It writes nothing: what the checks derived goes into the folder when the record ends.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from safeforge.common import limits
from safeforge.generation._feedback import PARSE_CHECK, SPOC_CHECK, TIME_LIMIT_CHECK
from safeforge.generation._settings import GenerationSettings
from safeforge.pddl.errors import PDDLError
from safeforge.spoc import export_problems
from safeforge.task.checks import CheckReport, CheckResult, check_task, checked_metadata
from safeforge.task.folder import Task, TaskError

Checker = Callable[[Path], CheckReport | Awaitable[CheckReport]]
"""checker(task_dir) -> CheckReport, sync (run in a worker thread) or async (awaited)."""

# At most one check per CPU at a time in this process (each starts two planner processes), so
# a planner's time limit measures the planner, not the competition for the CPUs.
_CHECK_SLOTS = threading.BoundedSemaphore(os.cpu_count() or 1)


def check_candidate(task_dir: Path, engine: str | None = None, time_limit: float = limits.CHECK_TIME_LIMIT_S) -> CheckReport:
    """Every execution check of the task folder `task_dir`, within `time_limit` seconds in all
    (counted once this check has its CPU slot); never raises for a bad task."""
    task_dir = Path(task_dir)
    with _CHECK_SLOTS:
        try:
            with limits.time_limit(time_limit, "the check"):
                return _check(task_dir, engine, time_limit)
        except limits.TimeLimitError:  # the detail names no step: feedback must not depend on timings
            return _failed(
                task_dir, TIME_LIMIT_CHECK, f"reading, grounding and planning the task took more than the check's {time_limit:g}s"
            )


def settings_check(settings: GenerationSettings) -> Callable[[Path], CheckReport]:
    """`check_candidate` with the settings' planner and time limit: a run's check unless it is given another."""
    return partial(check_candidate, engine=settings.engine, time_limit=settings.planner_time_limit)


def _check(task_dir: Path, engine: str | None, time_limit: float) -> CheckReport:
    try:
        task = Task.load(task_dir)
    except PDDLError as exc:
        where = Path(exc.file).name + (f":{exc.line}" if exc.line else "")
        return _failed(task_dir, PARSE_CHECK, f"{where}: {exc.message}")
    except TaskError as exc:
        return _failed(task_dir, PARSE_CHECK, str(exc).replace(f"{task_dir}/", ""))
    except limits.TimeLimitError:
        raise
    except Exception as exc:  # defensive: the readers bound what they read, but the task is never trusted
        return _failed(task_dir, PARSE_CHECK, f"the task cannot be read: {type(exc).__name__}: {exc}")
    try:
        report = check_task(task, engine=engine, time_limit=time_limit, generated=True)
    except limits.TimeLimitError:
        raise
    except Exception as exc:  # a construct the checks cannot handle is the task's problem, reported as such
        return _failed(task_dir, "structure", f"the task cannot be analysed: {type(exc).__name__}: {exc}")
    report.results.insert(0, CheckResult(PARSE_CHECK, True, "safety_domain.pddl and safety_problem.pddl parse"))
    if report.ok and (task.metadata.spoc or {}).get("targeted"):
        report.results.append(spoc_export_check(task, report))
    return report


def spoc_export_check(task: Task, report: CheckReport) -> CheckResult:
    """Whether a task that passed the other checks exports to SPOC in its scene, with its reference plans."""
    task.metadata = checked_metadata(task.metadata, report)
    problems = export_problems(task)
    scene = (task.metadata.spoc or {}).get("scene_name")
    return CheckResult(SPOC_CHECK, not problems, "; ".join(problems) or f"it exports to SPOC in {scene}")


def _failed(task_dir: Path, name: str, detail: str) -> CheckReport:
    return CheckReport(task_dir.name, [CheckResult(name, False, detail)])


async def write_and_check(checker: Checker, task_dir: Path, write: Callable[[], None]) -> CheckReport:
    """Write the candidate folder (`write`), then check it: a sync checker in the same worker
    thread as the write (every thread hand-off costs the event loop CPU), an async one awaited."""
    if inspect.iscoroutinefunction(checker) or inspect.iscoroutinefunction(type(checker).__call__):
        await asyncio.to_thread(write)
        return await checker(task_dir)  # type: ignore[misc]

    def write_then_check() -> CheckReport | Awaitable[CheckReport]:
        write()
        return checker(task_dir)

    outcome = await asyncio.to_thread(write_then_check)
    return await outcome if inspect.isawaitable(outcome) else outcome
