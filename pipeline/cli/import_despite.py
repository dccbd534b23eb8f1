"""`safeforge import-despite DIR... --out DIR`: import DESPITE's published tasks.

Exit codes: 0 every task imported and all checks passed; 1 some task is a mismatch (imported, but
a check failed) or failed (not imported); 2 usage error (from argparse).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.common.printable import printable
from safeforge.common.ranges import MEMORY_MB, SECONDS, Range
from safeforge.despite_import import FAILED, IMPORTED, MISMATCH, REPORT, ImportResult, Limits, import_many


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "import-despite",
        help="import DESPITE task folders (code.py) into our task format",
        description="Run each DESPITE code.py in an isolated child process, write our task folder "
        "(safety PDDL, derived basic PDDL, metadata.json with provenance) and check it: "
        "our reference plans are found, DESPITE's safe plan scores 2 and its unsafe plan 1.",
        epilog="Exit code 0: all imported; 1: some mismatch or failure (see the report); 2: usage error.",
    )
    parser.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="a DESPITE task folder (with code.py), or a folder of such folders"
    )
    parser.add_argument("--out", type=Path, required=True, help=f"where to write task folders and {REPORT}")
    parser.add_argument(
        "--time-limit", default=60.0, **SECONDS.argument("seconds one code.py may run, Python start-up included (default 60)")
    )
    parser.add_argument("--memory-mb", default=2048, **MEMORY_MB.argument("address-space limit of one code.py (default 2048)"))
    parser.add_argument(
        "--plan-time-limit",
        default=CHECK_TIME_LIMIT_S,
        **SECONDS.argument(f"seconds for the whole check of an imported task (default {CHECK_TIME_LIMIT_S:g})"),
    )
    parser.add_argument("--engine", help="planner for the reference plans (default: as `task check`)")
    parser.add_argument("--jobs", default=1, **Range(1, 256).argument("tasks imported at once (default 1)"))
    parser.add_argument("--overwrite", action="store_true", help="replace task folders that already exist")
    parser.set_defaults(func=_run)


def _print(result: ImportResult) -> None:
    """One line per task, and one per warning; the reason and warnings may quote hostile code, so
    their control characters are printed escaped."""
    where = f" -> {result.output}" if result.output else ""
    detail = f": {result.reason}" if result.reason else ""
    print(printable(f"{result.outcome:<8} {result.task_id}{where}{detail}"), flush=True)
    for warning in result.warnings:
        print(f"         warning: {printable(warning)}", flush=True)


def _isolation_summary(results: list[ImportResult]) -> str:
    layers = next((r.isolation for r in results if r.isolation), {})
    active = [name for name, state in layers.items() if state.startswith("active")]
    other = [f"{name} ({state})" for name, state in layers.items() if not state.startswith("active")]
    return f"isolation: active: {', '.join(active) or 'none'}" + (f"; not active: {'; '.join(other)}" if other else "")


def _run(args: argparse.Namespace) -> int:
    limits = Limits(seconds=args.time_limit, memory_mb=args.memory_mb)
    results = import_many(
        args.dirs,
        args.out,
        jobs=args.jobs,
        on_result=_print,
        limits=limits,
        engine=args.engine,
        plan_time_limit=args.plan_time_limit,
        overwrite=args.overwrite,
    )
    counts = Counter(r.outcome for r in results)
    print(f"{counts[IMPORTED]} imported, {counts[MISMATCH]} mismatch, {counts[FAILED]} failed (report: {args.out / REPORT})")
    print(_isolation_summary(results))
    return 0 if counts[IMPORTED] == len(results) else 1
