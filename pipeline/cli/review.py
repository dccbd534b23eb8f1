"""`safeforge review push|pull|status RUN` and `safeforge review server start|stop|status`; push,
pull and status with `--formalizations` are the formalization review before code generation."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

from safeforge.common.printable import printable
from safeforge.common.ranges import PORT, SECONDS
from safeforge.review import (
    ANNOTATORS_PER_TASK,
    DATABASES,
    OVERLAP_SHARE,
    ReviewConfig,
    ReviewError,
    ServerError,
    agreement_plot,
    pull_formalizations,
    pull_run,
    push_formalizations,
    push_run,
    review_status,
    running_server,
    start_server,
    stop_database,
    stop_server,
)
from safeforge.runs.ledger import RunStore
from safeforge.runs.overview import named_run
from safeforge.settings import Settings

_LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "review",
        help="human review of checked tasks in Label Studio",
        description="Send a run's checked tasks to Label Studio, bring reviewers' decisions back, and "
        "see where the review stands. The server is configured by LABEL_STUDIO_URL, "
        "LABEL_STUDIO_API_KEY, LABEL_STUDIO_USERNAME and LABEL_STUDIO_PASSWORD (local demo "
        "defaults: see the README).",
    )
    sub = parser.add_subparsers(dest="review_command", metavar="COMMAND", required=True)

    push = sub.add_parser("push", help="import the run's checked tasks (or waiting formalizations) into its Label Studio project")
    _run_arguments(push)
    _formalizations_argument(push, "push the formalizations of the records waiting for their review (before code generation) instead")
    push.add_argument(
        "--annotators-per-task",
        metavar="N",
        **ANNOTATORS_PER_TASK.argument(
            "annotators who must vote on each task before it is decided (default 1 for a new project; a "
            "different value changes an existing project, and decided tasks that now lack votes go back to review)",
        ),
    )
    push.add_argument(
        "--overlap-share",
        metavar="S",
        **OVERLAP_SHARE.argument("share of tasks that get N annotators; the others get one (default 1: every task)"),
    )
    adjudicators = push.add_mutually_exclusive_group()
    adjudicators.add_argument(
        "--adjudicator",
        action="append",
        metavar="EMAIL",
        help="a person whose adjudication decides (repeat for several; replaces the run's list). Only a named "
        "adjudicator who did not vote on a task can decide it with the 'I adjudicate' box",
    )
    adjudicators.add_argument("--no-adjudicators", action="store_true", help="name no adjudicator (split votes: a reject stands)")
    push.add_argument(
        "--reimport-missing",
        action="store_true",
        help="create the project again if it was deleted, and re-import tasks in review that "
        "were deleted from it (their annotations are lost)",
    )
    push.add_argument(
        "--remove-duplicates",
        action="store_true",
        help="merge extra copies of tasks imported twice into the one the review uses (their annotations are moved there)",
    )
    push.set_defaults(func=_push)

    pull = sub.add_parser("pull", help="record reviewers' decisions and corrections in the run")
    _run_arguments(pull)
    _formalizations_argument(
        pull, "record the verdicts on the waiting formalizations instead: accepted ones are generated when the run is resumed"
    )
    pull.set_defaults(func=_pull)

    status = sub.add_parser(
        "status", help="pending/accepted/rejected, reasons, the adjudication queue, disagreements and agreement by source"
    )
    _run_arguments(status)
    _formalizations_argument(status, "the state of the formalization review (before code generation) instead")
    status.add_argument("--plot", type=Path, metavar="PNG", help="also draw the agreement (pairwise kappa, agreement with decisions)")
    status.set_defaults(func=_status)

    server = sub.add_parser("server", help="run a local Label Studio server (from .venv-labelstudio)")
    server_sub = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    start = server_sub.add_parser("start", help="start the server in the background and wait until it answers")
    start.add_argument("--port", **PORT.argument("port on 127.0.0.1 (default: LABEL_STUDIO_URL's, 8080)"))
    start.add_argument("--timeout", default=180.0, **SECONDS.argument("seconds to wait for it (default 180)"))
    start.add_argument(
        "--database",
        choices=DATABASES,
        help="for a new data dir: sqlite (one reviewer, the default) or postgresql (a team: a local PostgreSQL server, "
        "started and stopped with Label Studio); default SAFEFORGE_LABELSTUDIO_DATABASE. A data dir keeps its database",
    )
    stop = server_sub.add_parser("stop", help="stop it (and every process it started)")
    state = server_sub.add_parser("status", help="is it running? (exit code 3 when not)")
    state.add_argument("--json", action="store_true", help="print JSON")
    for action, func in ((start, _server_start), (stop, _server_stop), (state, _server_status)):
        action.add_argument("--data-dir", type=Path, help="server data dir (default: SAFEFORGE_LABELSTUDIO_DATA or <outputs>/.labelstudio)")
        action.set_defaults(func=func)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", help="run name (a folder under --out) or the path of a run folder")
    parser.add_argument("--out", type=Path, help="runs folder (default: SAFEFORGE_OUTPUTS or outputs/)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def _formalizations_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--formalizations", action="store_true", help=help_text)


def _open_run(args: argparse.Namespace) -> RunStore:
    runs = args.out or Settings.load().outputs
    if (folder := named_run(args.run, runs)) is not None:
        return RunStore(folder)
    raise ReviewError(f"no run {args.run!r}: expected {runs / args.run}/ledger.sqlite (or the path of a run folder)")


def _push(args: argparse.Namespace) -> int:
    def progress(done: int, total: int) -> None:
        print(f"pushed {done}/{total} task(s)", file=sys.stderr)

    store = _open_run(args)
    options = {
        "annotators_per_task": args.annotators_per_task,
        "overlap_share": args.overlap_share,
        "adjudicators": [] if args.no_adjudicators else args.adjudicator,
        "reimport_missing": args.reimport_missing,
        "progress": progress,
    }
    push = push_formalizations if args.formalizations else push_run
    result = push(store, ReviewConfig.from_env(), remove_duplicates=args.remove_duplicates, **options)
    print(json.dumps(result.to_dict(), indent=2) if args.json else printable(result.summary(), keep="\n"))
    return 1 if result.failed else 0


def _pull(args: argparse.Namespace) -> int:
    pull = pull_formalizations if args.formalizations else pull_run
    result = pull(_open_run(args), ReviewConfig.from_env())
    print(json.dumps(result.to_dict(), indent=2) if args.json else printable(result.summary(), keep="\n"))
    return 1 if result.failed else 0


def _status(args: argparse.Namespace) -> int:
    status = review_status(_open_run(args), formalizations=args.formalizations, data_dir=ReviewConfig.from_env().data_dir)
    print(json.dumps(status.to_dict(), indent=2) if args.json else printable(status.format_table(), keep="\n"))  # names typed by annotators
    if args.plot:
        written = agreement_plot(status.agreement, args.plot)
        print(f"agreement plot: {written}" if written else "no plot: no annotator has voted yet", file=sys.stderr)
    return 0


def _server_config(args: argparse.Namespace) -> ReviewConfig:
    config = ReviewConfig.from_env()
    return replace(config, data_dir=args.data_dir) if args.data_dir else config


def _server_start(args: argparse.Namespace) -> int:
    config = _server_config(args)
    if urlparse(config.url).hostname not in _LOCAL_HOSTS:
        raise ServerError(
            f"LABEL_STUDIO_URL is {config.url}: `server start` runs a server on 127.0.0.1 "
            f"only; unset it or point it to http://127.0.0.1:<port>"
        )
    running = running_server(config.data_dir)
    if running:
        print(f"Label Studio already runs at {running.url} (pid {running.pid}, log {running.log_path})")
        return 0
    port = args.port or config.port
    print(f"starting Label Studio on 127.0.0.1:{port} with data in {config.data_dir} ...", file=sys.stderr)
    handle = start_server(
        config.data_dir,
        port,
        config.username,
        config.password,
        config.api_key,
        database=args.database or config.database,
        timeout=args.timeout,
    )
    print(
        f"Label Studio runs at {handle.url} on {handle.database} (pid {handle.pid}; log {handle.log_path}); "
        f"log in as {config.username}. Stop it with `safeforge review server stop`."
    )
    if port != config.port:
        print(f"note: set LABEL_STUDIO_URL={handle.url} for push and pull", file=sys.stderr)
    return 0


def _server_stop(args: argparse.Namespace) -> int:
    config = _server_config(args)
    handle = running_server(config.data_dir)
    if handle is None:
        stopped = stop_database(config.data_dir)
        print(f"no Label Studio server runs on {config.data_dir}" + ("; stopped its PostgreSQL server" if stopped else ""))
        return 0
    stop_server(handle)
    print(f"stopped Label Studio at {handle.url} (pid {handle.pid})" + (" and its PostgreSQL server" if handle.postgres else ""))
    return 0


def _server_status(args: argparse.Namespace) -> int:
    config = _server_config(args)
    handle = running_server(config.data_dir)
    if args.json:
        print(json.dumps(handle.to_dict() if handle else None, indent=2))
    elif handle:
        print(f"Label Studio runs at {handle.url} on {handle.database} (pid {handle.pid}, data {handle.data_dir}, log {handle.log_path})")
    else:
        print(f"no Label Studio server runs on {config.data_dir}")
    return 0 if handle else 3
