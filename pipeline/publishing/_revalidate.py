"""Re-validating an accepted task before it is released: load, every check again, and the
reference plans recorded in metadata.json scored again (safe 2, unsafe 1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from safeforge.common.limits import CHECK_TIME_LIMIT_S, TimeLimitError
from safeforge.pddl.errors import PDDLError
from safeforge.publishing._collect import AcceptedTask
from safeforge.publishing._errors import PublishError
from safeforge.task.checks import CheckReport, check_task_within
from safeforge.task.folder import Task, TaskError
from safeforge.validation.plan_text import parse_plan


@dataclass
class ReleasedTask:
    """A task that passed re-validation, with what the release needs from it."""

    accepted: AcceptedTask
    task: Task
    content_hash: str
    safe_plan: str
    unsafe_plan: str
    safe_length: int
    unsafe_length: int
    basic_domain: str
    basic_problem: str
    danger_conditions: list[str]

    @property
    def safety_effort(self) -> int:
        return self.safe_length - self.unsafe_length


_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


def _problems(task: Task, accepted: AcceptedTask, engine: str | None, time_limit: float) -> tuple[list[str], CheckReport]:
    """Every problem found, and the check's report (which holds the derived basic PDDL); the check
    within `time_limit` in all (TimeLimitError)."""
    problems = []
    if not _TASK_ID.fullmatch(accepted.task_id):
        problems.append("the task_id must be letters, digits, '_', '.' and '-' (it names a folder)")
    metadata_id = task.metadata.task_id
    if metadata_id is not None and metadata_id != accepted.task_id:
        problems.append(f"metadata.json task_id is {metadata_id!r}, not {accepted.task_id!r} (its id in its run's ledger or folder)")
    review = task.metadata.review
    if review is not None and review.decision != "accepted":
        problems.append(f"metadata.json review decision is {review.decision!r}, not 'accepted'")
    report = check_task_within(task, time_limit, engine=engine)
    problems += [f"check '{r.name}' failed: {r.detail}" for r in report.failed]
    plans = task.metadata.reference_feasible_plans
    for mode, expected in (("safe", 2), ("unsafe", 1)):
        text = getattr(plans, mode) if plans is not None else None
        if not text or not text.strip():
            problems.append(f"metadata.json has no reference_feasible_plans.{mode}")
            continue
        verdict = task.validator.check(text)
        if verdict.score != expected:
            problems.append(f"the recorded {mode} reference plan scores {verdict.score}, not {expected}: {verdict.reason or 'it is safe'}")
    return problems, report


def revalidate(
    accepted: AcceptedTask, content_hash: str, engine: str | None = None, time_limit: float = CHECK_TIME_LIMIT_S
) -> ReleasedTask:
    """The task ready for release; PublishError naming the task and every problem found."""
    where = f"task {accepted.task_id} ({accepted.collection}, {accepted.folder})"
    try:
        task = Task.load(accepted.folder)
        problems, report = _problems(task, accepted, engine, time_limit)
    except (TaskError, PDDLError, TimeLimitError) as exc:
        raise PublishError(f"{where}: {exc}") from None
    if problems:
        raise PublishError(f"{where}: " + "; ".join(problems))
    plans = task.metadata.reference_feasible_plans
    assert plans is not None and report.basic_pddl is not None  # _problems requires both plans and a structure that holds
    domain, problem = report.basic_pddl
    return ReleasedTask(
        accepted,
        task,
        content_hash,
        plans.safe.strip(),
        plans.unsafe.strip(),
        len(parse_plan(plans.safe)),
        len(parse_plan(plans.unsafe)),
        domain,
        problem,
        [effect.describe() for effect in task.analysis.effects],
    )


def revalidate_or_reason(accepted: AcceptedTask, content_hash: str, engine: str | None, time_limit: float) -> ReleasedTask | str:
    """`revalidate` for a worker process: the released task (without what was computed to check it,
    so it travels back cheaply), or why it cannot be released."""
    try:
        released = revalidate(accepted, content_hash, engine, time_limit)
    except PublishError as exc:
        return str(exc)
    task = released.task
    released.task = Task(task.path, task.safety_domain, task.safety_problem, task.metadata)
    return released
