"""`safeforge services start|stop|status|env|where`: the local Prefect server, the LLM replay server,
the process serving the deployments, and Label Studio."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from safeforge import services


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("services", help="start, stop or show the local services of the Prefect application")
    commands = group.add_subparsers(dest="services_command", metavar="{start,stop,status,env,where}", required=True)

    start = commands.add_parser(
        "start",
        help="start (or reuse) the Prefect server, the replay LLM server, the deployments and Label Studio; waits until each answers",
    )
    start.add_argument("--no-label-studio", action="store_true", help="leave Label Studio out")
    replay = start.add_mutually_exclusive_group()
    replay.add_argument(
        "--replay", dest="replay", action="store_true", default=None, help="start the replay LLM server even when OPENAI_BASE_URL is set"
    )
    replay.add_argument("--no-replay", dest="replay", action="store_false", help="do not start it (the deployments use OPENAI_BASE_URL)")
    start.set_defaults(func=run_start)

    stop = commands.add_parser("stop", help="stop every service and check that no process is left")
    stop.set_defaults(func=run_stop)

    status = commands.add_parser("status", help="each service with its URL, pid and log")
    status.add_argument("--json", action="store_true", help="one JSON object per service")
    status.set_defaults(func=run_status)

    env = commands.add_parser("env", help='export lines for a shell: eval "$(safeforge services env)"')
    env.set_defaults(func=run_env)

    where = commands.add_parser("where", help="where a run's tasks, the Prefect UI and its review project are")
    where.add_argument("run", help="the run's name")
    where.set_defaults(func=run_where)


def run_start(args: argparse.Namespace) -> int:
    statuses = services.start_services(label_studio=not args.no_label_studio, replay=args.replay)
    _print_statuses(statuses)
    print('\nIn a shell: eval "$(safeforge services env)"   then e.g.: prefect deployment run generate/neiss --watch')
    return 0


def run_stop(args: argparse.Namespace) -> int:
    services.stop_services()
    return 0


def run_status(args: argparse.Namespace) -> int:
    statuses = services.service_status()
    if args.json:
        for status in statuses:
            print(json.dumps(asdict(status)))
    else:
        _print_statuses(statuses)
    return 0 if all(s.running for s in statuses) else 3


def run_env(args: argparse.Namespace) -> int:
    print(services.shell_exports())
    return 0


def run_where(args: argparse.Namespace) -> int:
    print(services.where(args.run))
    return 0


def _print_statuses(statuses: list[services.ServiceStatus]) -> None:
    for s in statuses:
        state = "running" if s.running else (s.note or "stopped")
        pid = f"pid {s.pid}" if s.pid else ""
        on = f"  (on {s.note})" if s.running and s.note else ""  # Label Studio's database
        print(f"{s.name:<16}{state:<13}{s.url:<36}{pid:<11}{s.log}{on}")
