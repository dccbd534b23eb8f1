"""Running an evaluation: prompt the model with each task, read the plan, score it, write a row.

Each (task, run) is one LLM call through `LLMClient.complete_text(stage="eval",
record_id="<task_id>#run<k>")`, so responses are cached (a re-run makes no calls) and ledgered.
Rows are appended to results.jsonl as each sample finishes; on restart, samples already there
are skipped without loading their task. A task that cannot be loaded or prompted is reported and
skipped; an LLM error, an empty, truncated or plan-less response is a row with score 0; the run
goes on. Reading tasks and scoring answers run on one worker thread, so the event loop keeps
requests in flight meanwhile.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from safeforge.evaluation._discover import TaskRef, discover_tasks
from safeforge.evaluation._metrics import CONFIDENCE, RESAMPLES, SEED, summarize_metrics
from safeforge.evaluation._progress import Progress
from safeforge.evaluation._prompts import EvalPrompt
from safeforge.evaluation._report import write_report
from safeforge.evaluation._results import ResultsFile
from safeforge.evaluation._scoring import no_plan, score_response, task_labels
from safeforge.llm import LLMClient, LLMConfig, LLMError
from safeforge.settings import Settings
from safeforge.task.folder import Task

STAGE = "eval"
RESULTS = "results.jsonl"
SAMPLING_TEMPERATURE = 0.7


@dataclass(frozen=True)
class EvalSettings:
    """What to evaluate and how."""

    model: str
    """The evaluated model, as the endpoint names it."""
    setting: str = "implicit"
    """implicit (the basic PDDL only, DESPITE) or explicit (plus the safety requirement, SPOC)."""
    runs: int = 1
    """Samples per task; with several, each run sends `seed=<run>`."""
    temperature: float | None = None
    """None: 0 with one run, SAMPLING_TEMPERATURE with several (identical samples are useless)."""
    max_tokens: int | None = None
    """Output cap; None (the default) sends none, so reasoning models are never cut off."""
    limit: int | None = None
    """Evaluate only the first `limit` tasks (in path order)."""
    include_unreviewed: bool = False
    """Run folders: also tasks still `checked` or `in_review`, not only `accepted` ones."""
    retry_errors: bool = False
    """Redo samples whose row records an LLM error (other rows are kept)."""

    @property
    def effective_temperature(self) -> float:
        if self.temperature is not None:
            return self.temperature
        return 0.0 if self.runs == 1 else SAMPLING_TEMPERATURE

    def decoding(self, run: int) -> dict[str, Any]:
        decoding: dict[str, Any] = {"temperature": self.effective_temperature}
        if self.runs > 1:
            decoding["seed"] = run
        if self.max_tokens is not None:
            decoding["max_tokens"] = self.max_tokens
        return decoding


@dataclass
class EvalReport:
    """The outcome of `run_evaluation`."""

    out_dir: Path
    rows: list[dict]
    """Rows of the evaluated tasks (this run's and earlier ones), sorted by task and run."""
    problems: list[str]
    """Tasks that could not be evaluated, and why."""
    metrics: dict
    """{"overall": MetricSet, "by": {group: {value: MetricSet}}}."""
    summary: dict
    files: list[Path] = field(default_factory=list)
    new_calls: int = 0
    """Samples answered by the endpoint in this run (not from the cache or results.jsonl)."""


def default_out_dir(model: str, setting: str) -> Path:
    """<outputs>/eval/<model>-<setting>, with characters unsafe in a folder name replaced."""
    return Settings.load().outputs / "eval" / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}-{setting}"


def _prepare(folder: Path, template: EvalPrompt) -> tuple[Task, list[dict[str, str]], dict[str, str]]:
    task = Task.load(folder)
    return task, template.messages(task), task_labels(task)


class _Evaluation:
    """One evaluation's state while it runs."""

    def __init__(self, settings: EvalSettings, template: EvalPrompt, client: LLMClient, results: ResultsFile, progress: Progress):
        self.settings = settings
        self.template = template
        self.client = client
        self.results = results
        self.progress = progress
        self.problems: list[str] = []
        self.new_calls = 0
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="safeforge-eval-reader")

    async def run(self, pending: list[tuple[TaskRef, list[int]]]) -> None:
        queue = deque(pending)
        workers = min(self.client.config.max_concurrency, len(queue))
        try:
            await asyncio.gather(*(self._worker(queue) for _ in range(workers)))
        finally:
            self._reader.shutdown(wait=True)

    async def _in_reader_thread(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._reader, function, *args)

    async def _worker(self, queue: deque) -> None:
        while queue:
            ref, runs = queue.popleft()
            try:
                task, messages, labels = await self._in_reader_thread(_prepare, ref.folder, self.template)
            except Exception as exc:  # TaskError, PDDLError, PromptError
                self.problems.append(f"{ref.folder}: {exc}; skipped")
                self.progress.skipped_task(len(runs))
                continue
            await asyncio.gather(*(self._sample(task, messages, labels, run) for run in runs))

    async def _sample(self, task: Task, messages: list[dict], labels: dict[str, str], run: int) -> None:
        row: dict[str, Any] = {
            "task_id": task.task_id,
            "run": run,
            **labels,
            "model": self.settings.model,
            "setting": self.settings.setting,
            "template_hash": self.template.template_hash,
            "temperature": self.settings.effective_temperature,
            "max_tokens": self.settings.max_tokens,
        }
        try:
            result = await self.client.complete_text(
                STAGE, f"{task.task_id}#run{run}", messages, self.template.template_hash, **self.settings.decoding(run)
            )
        except LLMError as err:
            row.update(
                raw_response="",
                finish_reason=None,
                **no_plan(f"llm error: {err}"),
                error=True,
                cache_hit=False,
                tokens={"prompt": 0, "completion": 0, "cached": 0},
                cost=0.0,
            )
        else:
            self.new_calls += not result.cache_hit
            try:
                scored = await self._in_reader_thread(score_response, task, result.raw_text, result.finish_reason)
            except Exception as exc:  # a validator bug must not stop the run; the row says what happened
                scored = no_plan(f"validator error: {type(exc).__name__}: {exc}")
            row.update(
                raw_response=result.raw_text,
                finish_reason=result.finish_reason,
                **scored,
                error=False,
                cache_hit=result.cache_hit,
                tokens={"prompt": result.usage.prompt, "completion": result.usage.completion, "cached": result.usage.cached},
                cost=result.cost_usd,
            )
        self.results.append(row)
        self.progress.finished(row)


def _summary(
    settings: EvalSettings, template: EvalPrompt, found: int, rows: list[dict], problems: list[str], resamples: int, seed: int
) -> dict:
    return {
        "model": settings.model,
        "setting": settings.setting,
        "runs": settings.runs,
        "template_hash": template.template_hash,
        "temperature": settings.effective_temperature,
        "max_tokens": settings.max_tokens,
        "tasks": {"found": found, "evaluated": len({r["task_id"] for r in rows}), "skipped": problems},
        "samples": len(rows),
        "llm_errors": sum(bool(r.get("error")) for r in rows),
        "no_plan": sum(not r.get("plan") for r in rows),
        "truncated": sum(r.get("finish_reason") == "length" for r in rows),
        "cost_usd": sum(r.get("cost") or 0.0 for r in rows),
        "unpriced_calls": sum(r.get("cost") is None for r in rows),
        "tokens": {k: sum((r.get("tokens") or {}).get(k, 0) for r in rows) for k in ("prompt", "completion", "cached")},
        "bootstrap": {
            "resamples": resamples,
            "seed": seed,
            "confidence": CONFIDENCE,
            "method": "percentile; tasks resampled, each task the mean of its runs",
        },
    }


async def evaluate(
    tasks: str | Path,
    settings: EvalSettings,
    client: LLMClient,
    out_dir: Path,
    *,
    prompts_dir: Path | None = None,
    progress: TextIO | None = sys.stderr,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> EvalReport:
    """Evaluate the tasks under `tasks` with `client` (its model for stage "eval" must be
    `settings.model`); write results.jsonl and the summary into `out_dir`."""
    if settings.setting not in ("implicit", "explicit") or settings.runs < 1:
        raise ValueError(f"setting must be implicit or explicit and runs >= 1, got {settings.setting!r} and {settings.runs}")
    if client.config.model_for(STAGE) != settings.model:
        raise ValueError(f"the client's model for stage {STAGE!r} is {client.config.model_for(STAGE)!r}, not {settings.model!r}")
    template = EvalPrompt.load(settings.setting, prompts_dir)
    identity = {
        "model": settings.model,
        "setting": settings.setting,
        "template_hash": template.template_hash,
        "temperature": settings.effective_temperature,
        "max_tokens": settings.max_tokens,
    }
    results = ResultsFile(out_dir / RESULTS, identity)
    with discover_tasks(tasks, include_unreviewed=settings.include_unreviewed) as discovery:
        refs = discovery.tasks[: settings.limit] if settings.limit is not None else discovery.tasks
        done = results.load()
        if settings.retry_errors:
            failed = [key for key, row in done.items() if row.get("error")]
            results.drop(failed)
            for key in failed:
                del done[key]
        wanted = {(ref.task_id, run) for ref in refs for run in range(settings.runs)}
        pending = [(ref, [k for k in range(settings.runs) if (ref.task_id, k) not in done]) for ref in refs]
        pending = [(ref, runs) for ref, runs in pending if runs]
        meter = Progress(len(wanted), len(wanted & done.keys()), progress)
        evaluation = _Evaluation(settings, template, client, results, meter)
        try:
            await evaluation.run(pending)
        finally:
            results.close()
            meter.close()
        rows = sorted((row for key, row in results.load().items() if key in wanted), key=lambda r: (r["task_id"], r["run"]))
        problems = discovery.problems + sorted(evaluation.problems)
        metrics = summarize_metrics(rows, resamples=resamples, seed=seed)
        summary = _summary(settings, template, len(refs), rows, problems, resamples, seed)
        files = [results.path, *write_report(out_dir, summary, metrics)]
    return EvalReport(out_dir, rows, problems, metrics, summary, files, evaluation.new_calls)


def run_evaluation(
    tasks: str | Path, settings: EvalSettings, config: LLMConfig | None = None, out_dir: Path | None = None, **options: Any
) -> EvalReport:
    """`evaluate` with a client built from `config` (default: `LLMConfig.from_env()`), the stage
    "eval" set to `settings.model`; `out_dir` defaults to outputs/eval/<model>-<setting>/."""
    config = config or LLMConfig.from_env()
    config = config.model_copy(update={"stage_models": {**config.stage_models, STAGE: settings.model}})
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir(settings.model, settings.setting)

    async def main() -> EvalReport:
        async with LLMClient(config) as client:
            return await evaluate(tasks, settings, client, out_dir, **options)

    return asyncio.run(main())
