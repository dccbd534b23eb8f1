"""Turning one DESPITE task folder into one of ours, and checking the result.

A DESPITE folder holds code.py (the task definition), metadata.json (`task_id`,
`danger_formalization`, `reference_feasible_plans`) and the basic domain.pddl/problem.pddl. code.py
runs isolated (`_sandbox`); the problem it builds becomes our safety_domain.pddl and
safety_problem.pddl, the derived basic PDDL is written, and metadata.json is carried over with
provenance. The checks: `check_task`'s (structure, our reference plans, validator agreement; its
warnings of the rules of generated tasks never make a mismatch); DESPITE's own safe plan must
score 2 and its unsafe plan 1 with our validator; and DESPITE's basic PDDL must declare the same
actions, predicates and objects as ours.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from safeforge.common.limits import CHECK_TIME_LIMIT_S, TimeLimitError
from safeforge.despite_import._sandbox import DEFAULT_LIMITS, Limits, run_code
from safeforge.pddl import transforms
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.reader import read_task
from safeforge.task.checks import CheckResult, check_task_within, checked_metadata
from safeforge.task.files import METADATA, TaskError, read_metadata, read_task_file
from safeforge.task.folder import Task
from safeforge.task.metadata import FeasiblePlans, Provenance, TaskMetadata
from safeforge.task.writer import write_task

CODE = "code.py"
REPORT = "import_report.jsonl"
IMPORTED, MISMATCH, FAILED = "imported", "mismatch", "failed"
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,199}")


@dataclass
class ImportResult:
    """The outcome of importing one DESPITE task folder."""

    source: str
    task_id: str
    outcome: str  # imported | mismatch | failed
    reason: str = ""  # failed: why; mismatch: the checks that failed
    output: str | None = None  # our task folder, when one was written
    checks: list[CheckResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    isolation: dict[str, str] = field(default_factory=dict)
    traceback: str = ""  # code.py's frames, when it raised
    stderr: str = ""  # the end of code.py's output, when it failed
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "task_id": self.task_id,
            "outcome": self.outcome,
            "reason": self.reason,
            "output": self.output,
            "checks": [check.__dict__ for check in self.checks],
            "warnings": self.warnings,
            "isolation": self.isolation,
            "traceback": self.traceback,
            "stderr": self.stderr,
            "seconds": round(self.seconds, 3),
        }


def find_tasks(paths: Iterable[str | Path]) -> list[Path]:
    """Each path as a task folder (it holds code.py), or the task folders directly inside it.

    A path that is neither is kept, so that its import fails with a reason in the report.
    """
    found = []
    for path in map(Path, paths):
        children = sorted(p for p in path.iterdir() if os.path.lexists(p / CODE)) if path.is_dir() else []
        found.extend([path] if os.path.lexists(path / CODE) or not children else children)
    return found


def _metadata(despite: TaskMetadata, source: Path, code_sha256: str) -> TaskMetadata:
    """DESPITE's metadata with the import's provenance (no path of this machine: the folder's name)."""
    plans = despite.reference_feasible_plans
    return despite.model_copy(
        update={
            "provenance": Provenance(
                source="despite",
                imported_from=source.name,
                imported_at=datetime.now(UTC).isoformat(timespec="seconds"),
                code_sha256=code_sha256,
                despite_reference_plans=plans.model_dump() if plans else None,
            )
        }
    )


def _despite_plan_checks(task: Task, plans: FeasiblePlans | None) -> list[CheckResult]:
    """DESPITE's safe plan must score 2 and its unsafe plan 1 with our validator."""
    checks = []
    for mode, expected in (("safe", 2), ("unsafe", 1)):
        name = f"DESPITE {mode} plan"
        text = getattr(plans, mode) if plans is not None else None
        if not isinstance(text, str) or not text.strip():
            checks.append(CheckResult(name, False, f"metadata.json has no {mode} reference plan"))
            continue
        verdict = task.validator.check(text)
        detail = (
            f"scores {expected} as expected"
            if verdict.score == expected
            else f"scores {verdict.score}, not {expected}: {verdict.reason or 'it is safe'}"
        )
        checks.append(CheckResult(name, verdict.score == expected, detail))
    return checks


def _names(problem) -> dict[str, set[str]]:
    return {
        "actions": {a.name.lower() for a in problem.actions},
        "predicates": {f.name.lower() for f in problem.fluents},
        "objects": {o.name.lower() for o in problem.all_objects},
    }


def _basic_pddl_check(task: Task, source: Path) -> list[CheckResult]:
    """DESPITE's basic PDDL and ours declare the same actions, predicates and objects."""
    domain, problem = source / "domain.pddl", source / "problem.pddl"
    if not (os.path.lexists(domain) and os.path.lexists(problem)):
        return []
    name = "DESPITE basic PDDL"
    try:  # hostile input: regular files within the task size limit, read by our bounded reader
        read = read_task(read_task_file(domain, one_name=True), read_task_file(problem, one_name=True), str(domain), str(problem))
    except (PDDLError, TaskError) as exc:
        return [CheckResult(name, False, f"cannot be read: {exc}")]
    theirs = {
        "actions": set(read.actions),
        "predicates": {n.lower() for n in [*read.predicates, *read.functions]},
        "objects": {n.lower() for n in read.objects},
    }
    ours = _names(transforms.basic_problem(task.problem))
    differences = []
    for kind in ours:
        for label, names in (("only in ours", ours[kind] - theirs[kind]), ("only in DESPITE's", theirs[kind] - ours[kind])):
            if names:
                differences.append(f"{kind} {label}: {', '.join(sorted(names))}")
    return [CheckResult(name, not differences, "; ".join(differences) or "same actions, predicates and objects")]


def _failed(result: ImportResult, reason: str, started: float) -> ImportResult:
    result.outcome, result.reason, result.seconds = FAILED, reason, time.monotonic() - started
    return result


def import_despite_task(
    path: str | Path,
    out_dir: str | Path,
    *,
    limits: Limits = DEFAULT_LIMITS,
    engine: str | None = None,
    plan_time_limit: float = CHECK_TIME_LIMIT_S,
    overwrite: bool = False,
) -> ImportResult:
    """Import one DESPITE task folder into `out_dir/<task_id>` and check it; never raises for a bad task."""
    started = time.monotonic()
    source = Path(path).resolve()
    result = ImportResult(str(source), source.name, FAILED)
    if not os.path.lexists(source / CODE):
        return _failed(result, f"not a DESPITE task folder: {source / CODE} is missing", started)
    if os.path.lexists(source / METADATA):
        try:
            despite = read_metadata(source, one_name=True)
        except TaskError as exc:
            return _failed(result, str(exc), started)
    else:
        despite = TaskMetadata()
        result.warnings.append("no metadata.json: task_id is the folder name, DESPITE's plans cannot be checked")
    result.task_id = despite.task_id or source.name
    if not _FOLDER_NAME.fullmatch(result.task_id):
        return _failed(result, f"task_id {result.task_id!r} cannot be used as a folder name", started)
    target = Path(out_dir) / result.task_id
    if target.exists() and not overwrite:
        return _failed(result, f"{target} already exists (use --overwrite to replace it)", started)

    child = run_code(source / CODE, result.task_id, limits)
    result.isolation, result.warnings = child.layers, result.warnings + child.warnings
    if not child.ok:
        result.traceback, result.stderr = child.traceback, child.stderr
        return _failed(result, f"code.py {child.status}: {child.message}", started)

    metadata = _metadata(despite, source, child.code_sha256)
    task = Task(target, child.domain, child.problem, metadata)
    try:
        basic = task.basic_pddl()
    except Exception as exc:  # noqa: BLE001 - the PDDL came from untrusted code; UP may raise anything
        return _failed(result, f"the problem code.py built cannot be used: {exc}", started)

    try:
        report = check_task_within(task, plan_time_limit, engine=engine)
    except TimeLimitError as exc:
        return _failed(result, str(exc), started)
    if report.ok:
        metadata = checked_metadata(metadata, report)
    write_task(target, child.domain, child.problem, metadata, basic, replace=True)
    result.output = str(target)
    result.checks = report.results + _despite_plan_checks(task, despite.reference_feasible_plans)
    result.checks += _basic_pddl_check(task, source)
    failed = [f"{check.name}: {check.detail}" for check in result.checks if not check.ok and not check.advisory]
    result.outcome, result.reason = (MISMATCH, "; ".join(failed)) if failed else (IMPORTED, "")
    result.seconds = time.monotonic() - started
    return result


def import_many(
    paths: Iterable[str | Path], out_dir: str | Path, *, jobs: int = 1, on_result: Callable[[ImportResult], None] | None = None, **options
) -> list[ImportResult]:
    """Import every task `find_tasks(paths)` finds, `jobs` at a time; failures do not stop the run.

    Each result is appended to `out_dir/import_report.jsonl` (one JSON object per line) as soon as
    it is known; `options` are passed to `import_despite_task`. Results come back in input order.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks = find_tasks(paths)
    lock = threading.Lock()
    with open(out / REPORT, "w", encoding="utf-8") as report, ThreadPoolExecutor(max(1, jobs)) as pool:

        def run(task: Path) -> ImportResult:
            started = time.monotonic()
            try:
                result = import_despite_task(task, out, **options)
            except Exception as exc:  # noqa: BLE001 - one task's surprise must not stop the others
                result = _failed(ImportResult(str(task), task.name, FAILED), f"unexpected error: {type(exc).__name__}: {exc}", started)
            with lock:
                report.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
                report.flush()
                if on_result is not None:
                    on_result(result)
            return result

        return list(pool.map(run, tasks))
