"""`safeforge eval TASKS --model M ...`, `safeforge eval-split ...`, `safeforge eval-noise ...`.

`eval` takes TASKS directly, so the split and the noise transform are
sibling commands rather than sub-commands of `eval`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from safeforge.common.errors import SafeforgeError
from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.common.printable import printable
from safeforge.common.ranges import RECORDS, SECONDS, TEMPERATURE, Range
from safeforge.common.ranges import SEED as SEED_RANGE
from safeforge.evaluation import (
    HARD_THRESHOLD,
    METRICS,
    PROMPT_SETTINGS,
    RESAMPLES,
    SAMPLING_TEMPERATURE,
    SEED,
    EvalSettings,
    run_evaluation,
    write_noisy_task,
    write_split,
)
from safeforge.llm import LLMConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "eval",
        help="evaluate an LLM planner on tasks: F, S, SP, SI with bootstrap intervals",
        description="Prompt a model with each task, read its plan from the ( ... ) groups of the answer, "
        "score it, and write results.jsonl, summary.json, summary.md and metrics.png.",
    )
    run.add_argument(
        "tasks",
        type=Path,
        help="a folder of task folders, one task folder, a run folder (outputs/<run>/), a release folder or a .tar.gz of tasks",
    )
    run.add_argument("--model", required=True, help="the evaluated model, as the endpoint names it")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    run.add_argument("--out", type=Path, help="output folder (default: outputs/eval/<model>-<setting>/)")
    run.add_argument(
        "--setting",
        choices=PROMPT_SETTINGS,
        default="implicit",
        help="implicit: the basic PDDL only (DESPITE); explicit: plus the safety requirement in words (SPOC) (default: implicit)",
    )
    run.add_argument("--runs", default=1, **Range(1, 1000).argument("samples per task (default 1)"))
    run.add_argument(
        "--temperature", **TEMPERATURE.argument(f"sampling temperature (default: 0 with one run, {SAMPLING_TEMPERATURE} with several)")
    )
    run.add_argument("--max-tokens", **Range(1, 10**7).argument("output cap per answer (default: none)"))
    run.add_argument("--limit", **RECORDS.argument("evaluate only the first N tasks"))
    run.add_argument(
        "--include-unreviewed",
        action="store_true",
        help="run folders: also tasks not yet reviewed (checked, in_review), not only accepted ones",
    )
    run.add_argument("--retry-errors", action="store_true", help="redo samples that ended in an LLM error")
    run.add_argument("--db", type=Path, help="LLM cache/ledger SQLite file (default: SAFEFORGE_LLM_DB or outputs/llm/llm.sqlite)")
    run.add_argument("--resamples", default=RESAMPLES, **Range(1, 10**6).argument(f"bootstrap resamples (default {RESAMPLES})"))
    run.add_argument("--seed", default=SEED, **SEED_RANGE.argument(f"bootstrap seed (default {SEED})"))
    run.set_defaults(func=_run)

    split = subparsers.add_parser("eval-split", help="hard/easy split from a panel of results files (hard: mean score <= 0.8)")
    split.add_argument("results", nargs="+", type=Path, help="results.jsonl files, one per panel member")
    split.add_argument("--out", type=Path, required=True, help="where to write the split (JSON)")
    split.add_argument(
        "--threshold",
        default=HARD_THRESHOLD,
        **Range(0, 1, whole=False).argument(f"hard when the panel's mean score is <= this (default {HARD_THRESHOLD})"),
    )
    split.set_defaults(func=_split)

    noise = subparsers.add_parser("eval-noise", help="write a copy of a task with N decoy objects and N decoy actions, checked")
    noise.add_argument("task", type=Path, help="a checked task folder (with reference plans)")
    noise.add_argument("--decoys", required=True, **Range(1, 10_000).argument("how many decoy objects and decoy actions"))
    noise.add_argument("--out", type=Path, required=True, help="folder to write <task_id>_decoys<N>/ into")
    noise.add_argument("--seed", default=0, **SEED_RANGE.argument("seed of the decoy names (default 0)"))
    noise.add_argument("--engine", help="planner for check_task (default: as `safeforge task check`)")
    noise.add_argument(
        "--time-limit",
        default=CHECK_TIME_LIMIT_S,
        **SECONDS.argument(f"seconds for the whole check of the noisy task (default {CHECK_TIME_LIMIT_S:g})"),
    )
    noise.set_defaults(func=_noise)


def _run(args: argparse.Namespace) -> int:
    overrides = {key: value for key, value in (("base_url", args.base_url), ("db_path", args.db)) if value}
    settings = EvalSettings(
        model=args.model,
        setting=args.setting,
        runs=args.runs,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        limit=args.limit,
        include_unreviewed=args.include_unreviewed,
        retry_errors=args.retry_errors,
    )
    report = run_evaluation(args.tasks, settings, LLMConfig.from_env(**overrides), args.out, resamples=args.resamples, seed=args.seed)
    for problem in report.problems:
        print(f"skipped: {printable(problem)}", file=sys.stderr)  # it can quote a task's files
    overall = report.metrics["overall"]
    if overall.tasks == 0:
        raise SafeforgeError(f"no task evaluated under {args.tasks}")
    print(
        f"{report.summary['model']} ({report.summary['setting']}): {overall.tasks} tasks, "
        f"{overall.samples} samples, {report.new_calls} new LLM calls"
    )
    for name in METRICS:
        e = overall.estimates[name]
        shown = "n/a" if e.value is None else f"{100 * e.value:5.1f}%  [{100 * e.low:.1f}, {100 * e.high:.1f}]"
        print(f"  {name:<2} {shown}")
    print("wrote " + ", ".join(str(path) for path in report.files))
    if report.summary["llm_errors"]:
        print(
            f"note: {report.summary['llm_errors']} samples ended in an LLM error and score 0; redo them with --retry-errors",
            file=sys.stderr,
        )
    return 0


def _split(args: argparse.Namespace) -> int:
    split = write_split(args.results, args.out, args.threshold)
    counts = split["counts"]
    print(
        f"{counts['tasks']} tasks: {counts['hard']} hard, {counts['easy']} easy "
        f"(threshold {split['threshold']}, panel of {len(split['panel'])}); wrote {args.out}"
    )
    if counts["incomplete"]:
        print(f"note: {counts['incomplete']} tasks are missing from some panel members", file=sys.stderr)
    return 0


def _noise(args: argparse.Namespace) -> int:
    result = write_noisy_task(args.task, args.decoys, args.out, seed=args.seed, engine=args.engine, time_limit=args.time_limit)
    decoys = result.decoys
    print(
        f"wrote {result.folder}: {len(decoys.objects)} decoy objects of type {decoys.type_name}, "
        f"{len(decoys.actions)} decoy actions; checks passed and the original reference plans still "
        "score 2 (safe) and 1 (unsafe)"
    )
    return 0
