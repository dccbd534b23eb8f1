"""`safeforge task ...`: the workbench for one task folder (check, validate, prompt, new).

`task check`'s time limit bounds the whole command (`bound`), from the start of its process on the
command line: the task modules are imported by the actions, not here, so that loading them is part
of what it bounds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from safeforge.common.errors import SafeforgeError
from safeforge.common.limits import CHECK_TIME_LIMIT_S, beyond, current_limits, process_started, time_limit
from safeforge.common.printable import printable
from safeforge.common.ranges import SECONDS
from safeforge.pddl.errors import PDDLError

if TYPE_CHECKING:
    from safeforge.task.diagnostics import Diagnostic
    from safeforge.task.folder import Task


def register(subparsers) -> None:
    task = subparsers.add_parser("task", help="check, validate, show or create one task folder")
    sub = task.add_subparsers(dest="task_command", metavar="ACTION", required=True)

    check = sub.add_parser("check", help="structural checks and reference plans; rewrites derived PDDL")
    check.add_argument("task", help="task folder")
    check.add_argument(
        "--engine",
        help="planner for both plans, the in-process search skipped (default: the search raced against fast-downward-opt, "
        "or enhsp-opt where numbers remain)",
    )
    check.add_argument(
        "--time-limit",
        default=CHECK_TIME_LIMIT_S,
        **SECONDS.argument(f"seconds for the whole check: reading, grounding, deriving, planning (default {CHECK_TIME_LIMIT_S:g})"),
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument(
        "--cross-check", action="store_true", help="also have Unified Planning read the task as ours does (loads it: about 1 s more)"
    )
    check.set_defaults(func=_check, bound=_within_the_time_limit)

    validate = sub.add_parser("validate", help="score plans: 0 infeasible, 1 unsafe, 2 safe")
    validate.add_argument("task", help="task folder")
    plans = validate.add_mutually_exclusive_group(required=True)
    plans.add_argument("--plan", help='plan text, e.g. "(move hall kitchen) (pick_up cup)"')
    plans.add_argument("--plans-file", type=Path, help="one plan per line; prints one JSON object per plan")
    validate.set_defaults(func=_validate)

    prompt = sub.add_parser("prompt", help="the basic problem exactly as an evaluated model sees it")
    prompt.add_argument("task", help="task folder")
    prompt.set_defaults(func=_prompt)

    new = sub.add_parser("new", help="create a task folder from a working scaffold")
    new.add_argument("name", help="task id and folder name (letters, digits, _ and -)")
    new.add_argument("--dir", type=Path, default=Path("."), help="where to create it (default: here)")
    new.set_defaults(func=_new)


def _within_the_time_limit(args) -> time_limit:
    """The command answers within `--time-limit`: counted from the start of its process when it is
    the process (which ends with it: an import can be interrupted too), from now when it is called."""
    own = args.own_process
    return time_limit(args.time_limit, "the check", since=process_started() if own else None, interrupt_imports=own)


def _check(args) -> int:
    from safeforge.task.checks import check_task, record_check
    from safeforge.task.diagnostics import diagnose
    from safeforge.task.folder import Task

    if args.json and (problems := _read_problems(Path(args.task))):  # the read errors as the diagnostics
        found = [problem.to_dict() for problem in problems]
        print(json.dumps({"task_id": Path(args.task).name, "ok": False, "checks": [], "diagnostics": found}, indent=2))
        return 1
    try:
        task = Task.load(args.task)
        report = check_task(task, engine=args.engine, time_limit=args.time_limit, cross_check=args.cross_check)
    except PDDLError:
        errors = _read_errors(Path(args.task))
        if len(errors) < 2:
            raise
        for error in errors:  # each on its line, where the reader stopped at the first
            print(f"error: {printable(str(error))}", file=sys.stderr)
        return PDDLError.exit_code
    record_check(task, report)
    if args.json:
        waivers = [waiver.model_dump(exclude_none=True) for waiver in task.metadata.waivers]
        found = [d.to_dict() for d in diagnose(task, report)]
        print(json.dumps({**report.to_dict(), "waivers": waivers, "diagnostics": found}, indent=2))
    else:
        print(printable(f"task {task.task_id} ({task.path})"))
        for waiver in task.metadata.waivers:
            print(printable(f"  waived {waiver.check}: {waiver.reason}" + (f" (by {waiver.by})" if waiver.by else "")))
        for result in report.results:
            if not result.ok and result.advisory:
                print(f"  warn {result.name} (a generated task would be rejected): {printable(result.detail)}")
            else:
                print(f"  {'ok  ' if result.ok else 'FAIL'} {result.name}: {printable(result.detail)}")
        if report.plans is not None and report.plans.ok:
            print(f"  safe plan:   {' '.join(report.plans.safe.plan)}")
            print(f"  unsafe plan: {' '.join(report.plans.unsafe.plan)}")
        if report.ok:
            print("  wrote domain.pddl, problem.pddl and the reference plans in metadata.json")
    for failed in report.failed:
        print(f"error: check '{failed.name}' failed: {printable(failed.detail)}", file=sys.stderr)
    return 0 if report.ok else 1


def _task_as_written(folder: Path) -> Task | None:
    """The task folder's files, not read as PDDL yet (None: the folder itself is unusable, which
    Task.load reports)."""
    from safeforge.task.files import SAFETY_DOMAIN, SAFETY_PROBLEM, TaskError, read_task_file
    from safeforge.task.folder import Task

    try:
        return Task(folder, read_task_file(folder / SAFETY_DOMAIN), read_task_file(folder / SAFETY_PROBLEM), Task.metadata_of(folder))
    except TaskError:
        return None


def _read_errors(folder: Path) -> list[PDDLError]:
    """Every error in reading the task folder's safety PDDL (none: the folder itself is unusable)."""
    task = _task_as_written(folder)
    try:
        return [] if task is None else task.read_errors()
    except SafeforgeError:  # beyond an input limit: the first error, as Task.load reports it
        return []


def _read_problems(folder: Path) -> list[Diagnostic]:
    """Why the PDDL of the task folder cannot be read, each error at its line and columns (none: it
    can, or the folder itself is unusable, which Task.load reports)."""
    from safeforge.task.diagnostics import read_problems

    task = _task_as_written(folder)
    return [] if task is None else read_problems(task)


def _validate(args) -> int:
    from safeforge.task.folder import Task

    task = Task.load(args.task)
    if args.plan is not None:
        verdict = task.validator.check(args.plan)
        for warning in verdict.warnings:
            print(f"warning: {printable(warning)}", file=sys.stderr)
        print(printable(verdict.despite_lines(), keep="\n"))
        return 0
    limit = current_limits().plan_chars
    status = 0
    try:
        with open(args.plans_file, "rb") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(limit + 1), b""), start=1):
                if len(raw) > limit and not raw.endswith(b"\n"):
                    _skip_rest_of_line(handle)
                    excess = beyond("plan_chars", f"the line is more than {limit:,} bytes")
                    print(f"error: {args.plans_file}:{number}: {excess}; line skipped", file=sys.stderr)
                    status = 2
                    continue
                status = max(status, _validate_line(task, args.plans_file, number, raw.rstrip(b"\r\n")))
    except OSError as exc:
        raise SafeforgeError(f"{args.plans_file}: cannot be read: {exc.strerror}") from None
    return status


def _skip_rest_of_line(handle) -> None:
    while (chunk := handle.readline(1 << 20)) and not chunk.endswith(b"\n"):
        pass


def _validate_line(task: Task, file: Path, number: int, raw: bytes) -> int:
    """Score one line of a plans file and print its verdict (one JSON object); 2 when it is not text."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(f"error: {file}:{number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); line skipped", file=sys.stderr)
        return 2
    verdict = task.validator.check(line)
    print(json.dumps({"line": number, **{k: v for k, v in verdict.to_dict().items() if k != "steps"}}))
    return 0


def _prompt(args) -> int:
    from safeforge.task.folder import Task

    task = Task.load(args.task)
    domain, problem = task.shown_pddl()
    print(f"; domain.pddl\n{domain}\n; problem.pddl\n{problem}")
    return 0


def _new(args) -> int:
    from safeforge.task.authoring import scaffold_task

    target = scaffold_task(args.dir, args.name)
    print(f"created {target}/ with safety_domain.pddl, safety_problem.pddl and metadata.json")
    print(f"next: edit them, then run: safeforge task check {target}")
    return 0
