"""`safeforge publish RUN_OR_FOLDER... --version V`: a release of the tasks of runs (by name, as
`review push` takes them, or by path), import-despite outputs or folders of task folders."""

from __future__ import annotations

import sys
from pathlib import Path

from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.common.ranges import SECONDS
from safeforge.publishing import DEFAULT_LICENSE, SHARE_ALIKE_LICENSE, hub_license_list, publish
from safeforge.runs import named_run
from safeforge.settings import Settings


def register(subparsers) -> None:
    parser = subparsers.add_parser("publish", help="release tasks (parquet, card, plots, task archive, SPOC files; optionally the Hub)")
    parser.add_argument(
        "folders",
        nargs="+",
        metavar="RUN_OR_FOLDER",
        help="a run by name, as `review push RUN` takes it (outputs/<run>: its accepted tasks) or by path, an import-despite "
        "output (the tasks imported cleanly) or a folder of task folders (every task)",
    )
    parser.add_argument("--version", required=True, help="release version, e.g. v1.0.0 (also the Hub tag)")
    parser.add_argument("--out", type=Path, help="release folder to create (default outputs/releases/<version>)")
    parser.add_argument("--repo-id", help="also push to this Hub dataset repo, ORG/NAME (token: HF_TOKEN; server: HF_ENDPOINT)")
    parser.add_argument(
        "--license",
        help=f"a licence identifier from the Hub's list (as of {hub_license_list()['as_of']}) that the licence of every "
        f"dataset the tasks are derived from allows (default: {DEFAULT_LICENSE}, or {SHARE_ALIKE_LICENSE} when a task is "
        "derived from a share-alike dataset)",
    )
    parser.add_argument(
        "--licence-acknowledged",
        action="append",
        default=[],
        metavar="SOURCE",
        help="release tasks derived from SOURCE although its licence is uncertain (e.g. virtualhome; the card says so); repeatable",
    )
    parser.add_argument(
        "--allow-replay",
        action="store_true",
        help="push tasks not known to be a model's work too: generated from the replay server's hand-written responses, "
        "or by an LLM endpoint that was not recorded (the card says so)",
    )
    parser.add_argument("--engine", help="planner for re-validation (default: as `task check`)")
    parser.add_argument(
        "--time-limit",
        default=CHECK_TIME_LIMIT_S,
        **SECONDS.argument(f"seconds for the whole check of a task (default {CHECK_TIME_LIMIT_S:g})"),
    )
    parser.set_defaults(func=_publish)


def _publish(args) -> int:
    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    outputs = Settings.load().outputs
    release = publish(
        [named_run(name, outputs) or Path(name) for name in args.folders],
        args.version,
        args.out,
        repo_id=args.repo_id,
        license_id=args.license,
        licence_acknowledged=args.licence_acknowledged,
        allow_replay=args.allow_replay,
        engine=args.engine,
        time_limit=args.time_limit,
        progress=progress,
    )
    print(
        f"release {release.version} ({release.license}): {len(release.tasks)} task(s), {len(release.duplicates)} duplicate(s) left out, "
        f"{len(release.spoc_files)} SPOC file(s), in {release.path}"
    )
    if release.hub_url:
        print(f"pushed: {release.hub_url}")
    for warning in release.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
