"""The one run driver of generation: `generate(options, executor)` reads the records, opens the run
and the LLM client, and has the executor take every unfinished record through `process_record`,
`concurrency` at a time. The settings are read once per call and the prompts once per run (in the
run's `RunContext`). The CLI (`run_generation`, synchronous) and the Prefect flow call it with
the executor the settings choose (`safeforge.flows.executors.executor_for`); they differ only in
how progress is shown."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from safeforge.common.limits import use_limits
from safeforge.common.resources import package_path
from safeforge.generation._check import Checker
from safeforge.generation._executors import Executor, InProcess, RunJob, local_executor
from safeforge.generation._formalization_review import AWAITING
from safeforge.generation._options import GenerateOptions
from safeforge.generation._record import RunContext
from safeforge.generation._settings import GenerationSettings
from safeforge.generation._spec import generation_spec, invocation
from safeforge.generation._spoc_files import export_run_spoc
from safeforge.llm import CallLedger, LLMClient, LLMConfig
from safeforge.runs.ledger import SPOC_DIR, TERMINAL, RunStore
from safeforge.runs.lock import RunLock
from safeforge.runs.spec import record_spec
from safeforge.settings import Settings
from safeforge.sources import ReadReport, Record, iter_records

logger = logging.getLogger("safeforge.generation")

LLM_DB_NAME = "llm.sqlite"
SPEND_REFRESH_S = 1.0  # how often the progress callback's dollar figure is re-read from the ledger
FINISHED = frozenset((*TERMINAL, "checked", "in_review", AWAITING))
"""States in which generation has nothing left to do for a record (until the formalization review accepts it)."""


@dataclass(frozen=True)
class RunProgress:
    """What the progress callback receives after each record."""

    record_id: str
    state: str
    done: int
    total: int
    tasks_passed: int
    cost_usd: float
    elapsed_s: float

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace so far (None before the first record)."""
        if not self.done:
            return None
        return self.elapsed_s / self.done * (self.total - self.done)


@dataclass
class RunSummary:
    """The outcome of one `generate_run` call (LLM figures are what this call spent)."""

    run: str
    root: Path
    records: int
    states: dict[str, int]
    """Records of this call by their state at the end (they add up to `records`)."""
    tasks_passed: int
    calls: int
    """HTTP calls made (retries included); cache hits are counted apart."""
    cache_hits: int
    tokens: dict[str, int]
    cost_usd: float
    unpriced_calls: int
    seconds: float
    errors: dict[str, str] = field(default_factory=dict)
    """record_id -> reason, for the records of this call that ended in error."""
    spoc_files: int = 0
    """The run's checked tasks (of every call) that export to SPOC: the files in `<run>/spoc/`."""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "root": str(self.root)}

    def lines(self, max_errors: int = 10) -> list[str]:
        """A human-readable closing summary."""
        states = ", ".join(f"{state} {n}" for state, n in sorted(self.states.items())) or "none"
        cost = (
            f"${self.cost_usd:.4f}" + (" + unknown (unpriced calls)" if self.unpriced_calls else "")
            if self.cost_usd or not self.unpriced_calls
            else "cost unknown (replayed or unpriced calls)"
        )
        out = [
            f"run {self.run}: {self.records} record(s) in {self.seconds:.1f}s",
            f"  states: {states}",
            f"  tasks passed: {self.tasks_passed} -> {self.root / 'tasks'}",
            f"  SPOC goal-condition files: {self.spoc_files} (the run's checked tasks that export) -> {self.root / SPOC_DIR}",
            f"  LLM: {self.calls} call(s), {self.cache_hits} cache hit(s), tokens in {self.tokens['in']} "
            f"(cached {self.tokens['cached']}), out {self.tokens['out']}, {cost}",
            f"  ledger: {self.root / 'ledger.sqlite'}",
        ]
        if self.states.get(AWAITING):
            out.insert(
                3,
                f"  waiting for the formalization review: {self.states[AWAITING]} -> safeforge review push {self.run} --formalizations, "
                "then pull, then run this again",
            )
        for record_id, reason in list(self.errors.items())[:max_errors]:
            out.append(f"  error {record_id}: {reason}")
        if len(self.errors) > max_errors:
            out.append(f"  ... and {len(self.errors) - max_errors} more error(s) (see the ledger)")
        return out


class _Spend:
    """What the client's call ledger says was spent since this object was made."""

    def __init__(self, ledger: CallLedger):
        self._ledger = ledger
        self._base = self._totals()
        self._cost, self._read_at = 0.0, 0.0

    def _totals(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for stage in self._ledger.summary():
            for key, value in (
                ("calls", stage.calls),
                ("cache_hits", stage.cache_hits),
                ("in", stage.tokens_in),
                ("out", stage.tokens_out),
                ("cached", stage.tokens_cached),
                ("unpriced", stage.unpriced_calls),
                ("cost_usd", stage.cost_usd),
            ):
                totals[key] = totals.get(key, 0) + value
        return totals

    def delta(self) -> dict[str, float]:
        now = self._totals()
        return {key: now.get(key, 0) - self._base.get(key, 0) for key in now.keys() | self._base.keys()}

    def cost(self, fresh: bool = False) -> float:
        """Dollars so far, re-read at most every SPEND_REFRESH_S seconds (or now, if `fresh`)."""
        if fresh or time.monotonic() - self._read_at >= SPEND_REFRESH_S:
            self._cost, self._read_at = self.delta().get("cost_usd", 0.0), time.monotonic()
        return self._cost


async def generate_run(
    store: RunStore,
    records: Iterable[Record],
    client: LLMClient,
    settings: GenerationSettings,
    concurrency: int = 8,
    progress: Callable[[RunProgress], None] | None = None,
    checker: Checker | None = None,
    retry_errors: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """Register every record in the ledger, then have `executor` (default: this process) process
    the unfinished ones, `concurrency` at a time, and write the SPOC files of the run's checked
    tasks (`<run>/spoc/`). A record whose processing raises ends in state "error" with the reason;
    the run goes on. With `retry_errors`, records in state "error" start again."""
    context = RunContext.load(settings, checker)  # a missing or broken template stops the run before any record
    return await run_in_context(store, records, client, context, concurrency, progress, retry_errors, executor)


async def run_in_context(
    store: RunStore,
    records: Iterable[Record],
    client: LLMClient,
    context: RunContext,
    concurrency: int = 8,
    progress: Callable[[RunProgress], None] | None = None,
    retry_errors: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """`generate_run` with the run's context already loaded."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    executor = executor or InProcess()
    job = RunJob(store, client, context, concurrency)
    executor.prepare(job)
    started = time.monotonic()
    unique: dict[str, Record] = {}
    for record in records:
        unique.setdefault(record.record_id, record)
    store.ledger.register((r.record_id, r.source, r.origin) for r in unique.values())
    known = {row.record_id: row.state for row in store.ledger.records()}
    states: dict[str, str] = {}
    for record_id in unique:
        if retry_errors and known[record_id] == "error":
            store.ledger.transition(record_id, "pending", "retry requested")
        elif known[record_id] in FINISHED:
            states[record_id] = known[record_id]
    spend = _Spend(client.ledger)
    todo = [record for rid, record in unique.items() if rid not in states]
    logger.info("run %s at %s: %d record(s), %d to process", store.name, store.root, len(unique), len(todo))

    def finished(record_id: str, state: str) -> None:
        states[record_id] = state
        if progress is not None:
            passed = sum(1 for s in states.values() if s == "checked")
            done = len(states)
            cost = spend.cost(fresh=done == len(unique))
            progress(RunProgress(record_id, state, done, len(unique), passed, cost, time.monotonic() - started))

    await executor.run(job, todo, finished)
    spoc_files = await asyncio.to_thread(export_run_spoc, store)
    delta = spend.delta()

    def spent(key: str) -> int:
        return int(delta.get(key, 0))

    errors = {row.record_id: row.reason for row in store.ledger.records(state="error") if states.get(row.record_id) == "error"}
    return RunSummary(
        run=store.name,
        root=store.root,
        records=len(unique),
        states=dict(Counter(states.values())),
        tasks_passed=sum(1 for s in states.values() if s == "checked"),
        calls=spent("calls"),
        cache_hits=spent("cache_hits"),
        tokens={"in": spent("in"), "out": spent("out"), "cached": spent("cached")},
        cost_usd=round(delta.get("cost_usd", 0.0), 8),
        unpriced_calls=spent("unpriced"),
        seconds=round(time.monotonic() - started, 3),
        errors=errors,
        spoc_files=spoc_files,
    )


def llm_config_for(
    store: RunStore, model: str | None = None, concurrency: int = 8, no_cache: bool = False, settings: Settings | None = None
) -> LLMConfig:
    """LLMConfig from the settings (`settings`, else read now); the cache and call ledger go to
    <run>/llm.sqlite unless SAFEFORGE_LLM_DB says otherwise, and up to `concurrency` requests may be
    in flight unless SAFEFORGE_LLM_MAX_CONCURRENCY says otherwise."""
    settings = settings or Settings.load()
    overrides: dict[str, Any] = {"no_cache": True} if no_cache else {}
    if settings.llm_db is None:
        overrides["db_path"] = store.root / LLM_DB_NAME
    if settings.llm_max_concurrency is None:
        overrides["max_concurrency"] = concurrency
    if model:
        overrides["model"] = model
    return LLMConfig.from_settings(settings, **overrides)


def read_records(options: GenerateOptions, report: ReadReport | None = None) -> list[Record]:
    """The records the options select. Raises SourceError / ValueError for unreadable input."""
    return list(
        iter_records(
            options.source,
            options.path,
            report=report,
            limit=options.limit,
            offset=options.offset,
            sample=options.sample,
            seed=options.seed,
            **options.filters,
        )
    )


async def generate(
    options: GenerateOptions,
    *,
    settings: GenerationSettings | None = None,
    llm_config: LLMConfig | None = None,
    executor: Executor | None = None,
    checker: Checker | None = None,
    progress: Callable[[RunProgress], None] | None = None,
    report: ReadReport | None = None,
    environment: Settings | None = None,
) -> RunSummary:
    """Read the records `options` select, then extract and generate into the run folder with
    `executor` (default: this process, with `options.workers` processes). An existing run is
    resumed if its run.json spec is the same, or `options.accept_changes` (SpecChanged otherwise).
    Without `llm_config` the endpoint comes from the settings (`llm_config_for`); `environment`:
    the settings the caller has read (else read here, once). Raises SafeforgeError for unreadable
    input, before any LLM call."""
    environment = environment or Settings.load()
    use_limits(environment.input_limits())  # the readers of this run (records, replies, tasks) keep the settings' bounds
    records = read_records(options, report)
    store = RunStore(options.run_folder(environment.outputs))
    if llm_config is None:
        config = llm_config_for(store, options.model, options.concurrency, options.no_cache, environment)
    else:
        updates = {**({"model": options.model} if options.model else {}), **({"no_cache": True} if options.no_cache else {})}
        config = llm_config.model_copy(update=updates) if updates else llm_config
    executor = executor or local_executor(options.workers)
    stage_settings = options.generation_settings(settings or GenerationSettings.from_settings(environment))
    if stage_settings.prompts_dir is None:  # as `prompts_dir` picks it, from the settings already read
        stage_settings = stage_settings.model_copy(update={"prompts_dir": environment.prompts_dir or package_path("safeforge.prompts")})
    try:
        with RunLock(store.root, "generate"):
            context = RunContext.load(stage_settings, checker)
            spec = generation_spec(context.settings, config, context.prompts)
            has_records = bool(store.ledger.counts())
            record_spec(
                store.root, spec, invocation(options, executor, config), accept_changes=options.accept_changes, has_records=has_records
            )
            async with LLMClient(config) as client:
                return await run_in_context(store, records, client, context, options.concurrency, progress, options.retry_errors, executor)
    finally:
        store.ledger.close()


def run_generation(options: GenerateOptions, **kwargs: Any) -> RunSummary:
    """`generate` from synchronous code (the CLI, scripts)."""
    return asyncio.run(generate(options, **kwargs))
