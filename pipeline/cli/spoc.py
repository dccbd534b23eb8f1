"""`safeforge spoc export|check`: SPOC goal-condition files."""

from __future__ import annotations

import sys
from pathlib import Path

from safeforge.spoc import check_folder, export, report_path


def register(subparsers) -> None:
    spoc = subparsers.add_parser("spoc", help="export or check SPOC goal-condition files")
    sub = spoc.add_subparsers(dest="spoc_command", metavar="ACTION", required=True)

    export_parser = sub.add_parser("export", help="a goal-condition file per task that maps to AI2-THOR")
    export_parser.add_argument(
        "source", type=Path, metavar="RELEASE_OR_RUN", help="release folder (tasks.tar.gz), run folder (outputs/<run>) or folder of tasks"
    )
    export_parser.add_argument(
        "--out", type=Path, required=True, help="folder for the goal-condition files only (the report goes beside it)"
    )
    export_parser.set_defaults(func=_export)

    check = sub.add_parser(
        "check", help="every goal-condition file of a folder under SPOC's loader and the format's rules (exit 1 on any error)"
    )
    check.add_argument("folder", type=Path)
    check.set_defaults(func=_check)


def _export(args) -> int:
    report = export(args.source, args.out, progress=lambda m: print(m, file=sys.stderr))
    print(f"exported {len(report.exported)} file(s) to {args.out}; skipped {len(report.skipped)} task(s):")
    for skipped in report.skipped:
        print(f"  {skipped['task_id']}: {skipped['reason']}")
    for exported in report.exported:
        for warning in exported["warnings"]:
            print(f"warning: {exported['file']}: {warning}", file=sys.stderr)
    print(f"report: {report_path(args.out)}")
    return 0


def _check(args) -> int:
    problems = check_folder(args.folder)
    for problem in problems:
        print(problem)
    files = len(list(args.folder.glob("*.json"))) if args.folder.is_dir() else 0
    errors = sum(p.is_error for p in problems)
    print(f"{files} file(s) checked, {errors} error(s), {len(problems) - errors} warning(s)", file=sys.stderr)
    return 1 if errors else 0
