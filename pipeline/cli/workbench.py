"""`safeforge workbench [FOLDER]`: the authoring workbench, a local page over a folder of tasks."""

from __future__ import annotations

import argparse

from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.common.ranges import ANY_PORT, SECONDS
from safeforge.settings import Settings


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "workbench",
        help="a local page over a folder of task folders, a run or a release: see, edit and re-check tasks",
        description=(
            "Serve the workbench on 127.0.0.1 over FOLDER (default: here): a folder of task folders, one task "
            "folder, a run (outputs/<run>) or a release (read-only). Review tasks in Label Studio link to it."
        ),
    )
    parser.add_argument("folder", nargs="?", default=".", help="the folder to serve (default: the current folder)")
    parser.add_argument("--port", **ANY_PORT.argument("port on 127.0.0.1 (default: SAFEFORGE_WORKBENCH_PORT, 4300; 0: any free port)"))
    parser.add_argument(
        "--time-limit",
        default=CHECK_TIME_LIMIT_S,
        **SECONDS.argument(f"seconds for each whole check (default {CHECK_TIME_LIMIT_S:g}, as task check)"),
    )
    parser.add_argument(
        "--cross-check",
        action="store_true",
        help="also have Unified Planning read each checked text as ours does (as task check --cross-check: slower as you type)",
    )
    parser.add_argument("--open", action="store_true", help="open the page in the browser")
    parser.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    from safeforge.workbench import serve

    port = Settings.load().workbench_port if args.port is None else args.port
    serve(args.folder, port=port, time_limit=args.time_limit, cross_check=args.cross_check, open_browser=args.open)
    return 0
