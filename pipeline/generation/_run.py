"""`generate_run`: many records through `process_record` with bounded concurrency, and
`run_generation`, the synchronous do-everything helper behind `safeforge generate`."""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.generation._check import Checker
from pipeline.generation._prompts import load_prompts
from pipeline.generation._record import process_record
from pipeline.generation._settings import GenerationSettings
from pipeline.llm import CallLedger, LLMClient, LLMConfig
from pipeline.runs.ledger import RunStore, TransitionError
from pipeline.settings import Settings
from sources import ReadReport, Record, iter_records

logger = logging.getLogger("pipeline.generation")

LLM_DB_NAME = "llm.sqlite"
SPEND_REFRESH_S = 1.0  # how often the progress callback's dollar figure is re-read from the ledger


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

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "root": str(self.root)}

    def lines(self, max_errors: int = 10) -> list[str]:
        """A human-readable closing summary."""
        states = ", ".join(f"{state} {n}" for state, n in sorted(self.states.items())) or "none"
        cost = f"${self.cost_usd:.4f}" + (" (+ unpriced calls)" if self.unpriced_calls else "")
        out = [f"run {self.run}: {self.records} record(s) in {self.seconds:.1f}s",
               f"  states: {states}",
               f"  tasks passed: {self.tasks_passed} -> {self.root / 'tasks'}",
               f"  LLM: {self.calls} call(s), {self.cache_hits} cache hit(s), tokens in {self.tokens['in']} "
               f"(cached {self.tokens['cached']}), out {self.tokens['out']}, {cost}",
               f"  ledger: {self.root / 'ledger.sqlite'}"]
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

    def _totals(self) -> Counter:
        totals: Counter = Counter()
        for stage in self._ledger.summary():
            totals.update({"calls": stage.calls, "cache_hits": stage.cache_hits, "in": stage.tokens_in,
                           "out": stage.tokens_out, "cached": stage.tokens_cached, "unpriced": stage.unpriced_calls})
            totals["cost_usd"] += stage.cost_usd
        return totals

    def delta(self) -> Counter:
        now = self._totals()
        now.subtract(self._base)
        return now

    def cost(self, fresh: bool = False) -> float:
        """Dollars so far, re-read at most every SPEND_REFRESH_S seconds (or now, if `fresh`)."""
        if fresh or time.monotonic() - self._read_at >= SPEND_REFRESH_S:
            self._cost, self._read_at = self.delta()["cost_usd"], time.monotonic()
        return self._cost


async def generate_run(store: RunStore, records: Iterable[Record], client: LLMClient, settings: GenerationSettings,
                       concurrency: int = 8, progress: Callable[[RunProgress], None] | None = None,
                       checker: Checker | None = None, retry_errors: bool = False) -> RunSummary:
    """Register every record in the ledger, then process them, `concurrency` at a time. A record
    whose processing raises ends in state "error" with the reason; the run goes on. With
    `retry_errors`, records of this call that are in state "error" start again from "pending"."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    load_prompts(settings.prompts_dir)  # a missing or broken template stops the run before any record
    started = time.monotonic()
    unique: dict[str, Record] = {}
    for record in records:
        unique.setdefault(record.record_id, record)
    store.ledger.register((r.record_id, r.source, r.origin) for r in unique.values())
    if retry_errors:
        for record_id in unique:
            if store.ledger.get(record_id).state == "error":
                store.ledger.transition(record_id, "pending", "retry requested")
    spend = _Spend(client.ledger)
    states: dict[str, str] = {}
    pending = iter(unique.values())

    async def worker() -> None:
        for record in pending:  # one shared iterator: each record goes to exactly one worker
            states[record.record_id] = await _process_safely(record, store, client, settings, checker)
            if progress is not None:
                passed = sum(1 for s in states.values() if s == "checked")
                done = len(states)
                progress(RunProgress(record.record_id, states[record.record_id], done, len(unique),
                                     passed, spend.cost(fresh=done == len(unique)), time.monotonic() - started))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(unique)))))
    spent = spend.delta()
    errors = {rid: store.ledger.get(rid).reason for rid, state in states.items() if state == "error"}
    return RunSummary(
        run=store.name, root=store.root, records=len(unique), states=dict(Counter(states.values())),
        tasks_passed=sum(1 for s in states.values() if s == "checked"),
        calls=spent["calls"], cache_hits=spent["cache_hits"],
        tokens={"in": spent["in"], "out": spent["out"], "cached": spent["cached"]},
        cost_usd=round(spent["cost_usd"], 8), unpriced_calls=spent["unpriced"],
        seconds=round(time.monotonic() - started, 3), errors=errors)


async def _process_safely(record: Record, store: RunStore, client: LLMClient, settings: GenerationSettings,
                          checker: Checker | None) -> str:
    try:
        return await process_record(record, store, client, settings, checker)
    except Exception as exc:  # one record's failure never stops the run
        logger.exception("record %s failed", record.record_id)
        reason = f"unexpected failure: {type(exc).__name__}: {exc}"
        try:
            store.ledger.transition(record.record_id, "error", reason)
        except TransitionError:
            pass  # already in a state that cannot become error; report that state
        row = store.ledger.get(record.record_id)
        return row.state if row else "error"


def default_run_name(source: str, today: dt.date | None = None) -> str:
    """`<source>-<YYYY-MM-DD>`: running the same source again the same day resumes the run."""
    return f"{source}-{(today or dt.date.today()).isoformat()}"


def llm_config_for(store: RunStore, model: str | None = None, concurrency: int = 8,
                   no_cache: bool = False) -> LLMConfig:
    """LLMConfig from the environment; the cache and call ledger go to <run>/llm.sqlite unless
    SAFEFORGE_LLM_DB says otherwise, and up to `concurrency` requests may be in flight unless
    SAFEFORGE_LLM_MAX_CONCURRENCY says otherwise."""
    settings = Settings.load()
    overrides: dict[str, Any] = {"no_cache": True} if no_cache else {}
    if settings.llm_db is None:
        overrides["db_path"] = store.root / LLM_DB_NAME
    if settings.llm_max_concurrency is None:
        overrides["max_concurrency"] = concurrency
    if model:
        overrides["model"] = model
    return LLMConfig.from_settings(settings, **overrides)


def run_generation(source: str, path: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None, *,
                   run_name: str | None = None, limit: int | None = None, offset: int = 0,
                   sample: int | None = None, seed: int = 0, model: str | None = None, concurrency: int = 8,
                   settings: GenerationSettings | None = None, llm_config: LLMConfig | None = None,
                   no_cache: bool = False, retry_errors: bool = False,
                   progress: Callable[[RunProgress], None] | None = None, report: ReadReport | None = None,
                   checker: Checker | None = None, **filters: Any) -> RunSummary:
    """Read records of `source` (default: its bundled sample), then extract and generate into
    `out_dir/<run_name>/` (default run name: `default_run_name`; an existing run is resumed).
    Without `llm_config` the endpoint comes from the environment (`llm_config_for`). `filters`
    are the source's own options (e.g. products=[1842] for neiss). Raises SourceError /
    ValueError for unreadable input, before any LLM call."""
    records = list(iter_records(source, path, report=report, limit=limit, offset=offset, sample=sample,
                                seed=seed, **filters))
    store = RunStore(Path(out_dir or Settings.load().outputs) / (run_name or default_run_name(source)))
    if llm_config is None:
        config = llm_config_for(store, model, concurrency, no_cache)
    else:
        updates = {**({"model": model} if model else {}), **({"no_cache": True} if no_cache else {})}
        config = llm_config.model_copy(update=updates) if updates else llm_config

    async def run() -> RunSummary:
        async with LLMClient(config) as client:
            return await generate_run(store, records, client, settings or GenerationSettings(), concurrency,
                                      progress, checker, retry_errors)

    try:
        return asyncio.run(run())
    finally:
        store.ledger.close()
