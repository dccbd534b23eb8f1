"""`safeforge publish RUN... --version V`: a release of the runs' accepted tasks."""

from __future__ import annotations

import sys
from pathlib import Path

from safeforge.publishing import DEFAULT_LICENSE, publish


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "publish", help="release the accepted tasks of runs (parquet, card, plots, task archive; optionally the Hub)"
    )
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folder (outputs/<run>)")
    parser.add_argument("--version", required=True, help="release version, e.g. v1.0.0 (also the Hub tag)")
    parser.add_argument("--out", type=Path, help="release folder to create (default outputs/releases/<version>)")
    parser.add_argument("--repo-id", help="also push to this Hub dataset repo, ORG/NAME (token: HF_TOKEN; server: HF_ENDPOINT)")
    parser.add_argument(
        "--license",
        help=f"licence id for the card (default: {DEFAULT_LICENSE}, or cc-by-sa-4.0 when a share-alike source is in the release)",
    )
    parser.add_argument(
        "--allow-replay",
        action="store_true",
        help="push tasks generated from the replay server's hand-written responses too (the card says so)",
    )
    parser.add_argument("--engine", help="planner for re-validation (default: as `task check`)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per planner call (default 60)")
    parser.set_defaults(func=_publish)


def _publish(args) -> int:
    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    release = publish(
        args.runs,
        args.version,
        args.out,
        repo_id=args.repo_id,
        license_id=args.license,
        allow_replay=args.allow_replay,
        engine=args.engine,
        time_limit=args.time_limit,
        progress=progress,
    )
    print(f"release {release.version}: {len(release.tasks)} task(s), {len(release.duplicates)} duplicate(s) left out, in {release.path}")
    if release.hub_url:
        print(f"pushed: {release.hub_url}")
    return 0
