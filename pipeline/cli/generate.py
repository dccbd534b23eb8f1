"""`safeforge generate SOURCE ...`: records -> danger extraction -> checked tasks, with progress."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from safeforge.cli.sources import add_selection_arguments, filters
from safeforge.common.errors import SafeforgeError
from safeforge.common.printable import printable
from safeforge.common.ranges import SECONDS
from safeforge.flows.executors import ExecutorError, executor_for, uses_prefect
from safeforge.generation import CONCURRENCY, MAX_ROUNDS, WORKERS, GenerateOptions, ProgressBar, run_generation
from safeforge.services import prefect_healthy
from safeforge.settings import Settings
from safeforge.sources import SOURCES, ReadReport

MISSING_ENDPOINT = "no LLM endpoint configured: set OPENAI_BASE_URL (and OPENAI_API_KEY if it needs one)"
ENDPOINT_HINT = """  DeepSeek:  export OPENAI_BASE_URL=https://api.deepseek.com/v1 OPENAI_API_KEY=sk-... SAFEFORGE_MODEL=deepseek-chat
  offline:   safeforge llm replay-server --port 8765 &
             export OPENAI_BASE_URL=http://127.0.0.1:8765/v1   (hand-written responses, not a model's)"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="extract dangers from a source's records and generate checked tasks (LLM)",
        description="Each record goes through the danger extractor, then up to --max-rounds rounds of "
        "PDDL generation, execution checks and quality review; every record ends in one "
        "state in the run's ledger. Needs OPENAI_BASE_URL (and OPENAI_API_KEY). The options "
        "are those of the Prefect flow `generate` (safeforge.generation.GenerateOptions); how the records "
        "run is SAFEFORGE_EXECUTOR (local, prefect, dask) with --workers, as in the flow. A resumed run must "
        "have the settings, models and prompts of its run.json (see --accept-changes).",
    )
    defaults = GenerateOptions()
    parser.add_argument("source", choices=sorted(SOURCES))
    parser.add_argument("--path", help="file or folder to read (default: the source's full data, else its sample)")
    parser.add_argument("--out", type=Path, help="runs folder (default: SAFEFORGE_OUTPUTS or ./outputs)")
    parser.add_argument("--run", dest="run_name", help="run name (default: <source>-<YYYY-MM-DD>); an existing run is resumed")
    add_selection_arguments(parser)
    run = parser.add_argument_group("generation")
    run.add_argument(
        "--concurrency",
        default=defaults.concurrency,
        **CONCURRENCY.argument(f"records in progress at once (default {defaults.concurrency})"),
    )
    run.add_argument(
        "--workers",
        default=defaults.workers,
        **WORKERS.argument(
            f"processes sharing the records and the concurrency, this one included (default {defaults.workers}; "
            "up to the number of CPUs for concurrency above ~32)",
        ),
    )
    run.add_argument("--model", help="model of every stage (default: SAFEFORGE_MODEL, or gpt-4o-mini)")
    run.add_argument(
        "--max-rounds", default=defaults.max_rounds, **MAX_ROUNDS.argument(f"generation rounds per record (default {defaults.max_rounds})")
    )
    run.add_argument("--no-judge", dest="judge", action="store_false", help="skip the quality judge")
    run.add_argument(
        "--no-spoc",
        dest="spoc",
        action="store_false",
        help="generate every task as DESPITE's, none for an AI2-THOR scene checked to export to SPOC",
    )
    run.add_argument(
        "--review-formalizations",
        action=argparse.BooleanOptionalAction,
        default=defaults.review_formalizations,
        help="hold each extracted formalization for review in Label Studio before code generation, as DESPITE does "
        "(`safeforge review push RUN --formalizations`, pull, then run this again); default SAFEFORGE_REVIEW_FORMALIZATIONS, else off",
    )
    run.add_argument("--engine", help="planner for the reference plans (default: automatic)")
    run.add_argument(
        "--time-limit",
        default=defaults.time_limit,
        **SECONDS.argument(f"seconds for each candidate's whole check: reading, grounding, planning (default {defaults.time_limit:g})"),
    )
    run.add_argument("--no-cache", action="store_true", help="ask the LLM again even for cached requests")
    run.add_argument("--retry-errors", action="store_true", help="records of a resumed run that ended in error start again")
    run.add_argument(
        "--accept-changes",
        action="store_true",
        help="resume a run whose settings, models or prompts differ from its run.json (which records the changes)",
    )
    parser.add_argument("--json", action="store_true", help="print the closing summary as JSON on stdout")
    parser.set_defaults(func=run_generate)


def options_from(args: argparse.Namespace) -> GenerateOptions:
    """The GenerateOptions the command line asks for."""
    values = {name: getattr(args, name) for name in GenerateOptions.model_fields if name != "filters"}
    return GenerateOptions(**values, filters=filters(args))


def run_generate(args: argparse.Namespace) -> int:
    environment = Settings.load()
    if not environment.openai_base_url and not environment.openai_api_key:
        raise SafeforgeError(MISSING_ENDPOINT, hint=ENDPOINT_HINT)
    options = options_from(args)
    executor = executor_for(environment, options.workers)
    if uses_prefect(executor):
        os.environ.update(environment.prefect_env())  # before Prefect is imported
        if not prefect_healthy(environment.prefect_api):
            raise ExecutorError(
                f"SAFEFORGE_EXECUTOR={environment.executor} reports to the Prefect API, and {environment.prefect_api} does not answer "
                "(start it with `safeforge services start`, or set PREFECT_API_URL)"
            )
    report = ReadReport()
    progress = ProgressBar()
    try:
        summary = run_generation(options, executor=executor, progress=progress, report=report, environment=environment)
    finally:
        progress.close()
    print(printable(f"{args.source}: {report.summary()}", keep="\n"), file=sys.stderr)
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(printable("\n".join(summary.lines()), keep="\n"))  # record ids and reasons come from input
    return 1 if summary.errors else 0
