"""Flow `generate`: one source's records → checked task folders, one Prefect task run per record.

The flow reads and registers the records (`outputs/<run>/ledger.sqlite`), then runs the
library's `process_record` on each unfinished one as a task run named after the record id
(retried twice on an unexpected failure, then recorded as `error`), `concurrency` at a time,
with the check stage on Dask when SAFEFORGE_CHECK_EXECUTOR=dask. It publishes the run's summary
(records per state, pass rate per stage, LLM cost) as a markdown artifact. Running it again
with the same run name resumes the run: finished records are skipped, and the run's LLM cache
answers every call already made.
"""
from __future__ import annotations

import asyncio
import functools
import re
import time

from prefect import flow, get_run_logger, task
from prefect.artifacts import acreate_markdown_artifact, acreate_progress_artifact, aupdate_progress_artifact
from prefect.cache_policies import NO_CACHE

from flows.dask_checks import check_stage
from pipeline.generation import (GenerationSettings, check_candidate, default_run_name, llm_config_for,
                                 process_record)
from pipeline.llm import LLMClient
from pipeline.runs.ledger import TERMINAL, RunStore, TransitionError
from pipeline.runs.overview import run_overview
from pipeline.settings import Settings
from sources import ReadReport, Record, iter_records

FINISHED = frozenset((*TERMINAL, "checked", "in_review"))
"""States in which generation has nothing left to do for a record."""
PROGRESS_EVERY_S = 2.0


@task(name="process-record", task_run_name="{record.record_id}", retries=2, retry_delay_seconds=2,
      cache_policy=NO_CACHE)
async def process_record_task(record: Record, store: RunStore, client: LLMClient, settings: GenerationSettings,
                              checker) -> str:
    """Extract, generate and check one record (the library's `process_record`; idempotent)."""
    return await process_record(record, store, client, settings, checker)


def artifact_key(run: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes."""
    return "run-" + (re.sub(r"[^a-z0-9-]+", "-", run.lower()).strip("-") or "unnamed")


@flow(name="generate", log_prints=True)
async def generate(source: str = "neiss", path: str | None = None, limit: int | None = None, offset: int = 0,
                   sample: int | None = None, seed: int = 0, model: str | None = None, concurrency: int = 4,
                   run_name: str | None = None, max_rounds: int | None = None) -> dict:
    """Generate safety-augmented tasks from `source` (default path: its bundled sample).

    Selection: `sample` records by seeded hash, then `offset`, then `limit`. `model` overrides
    SAFEFORGE_MODEL; `max_rounds` the generator's rounds per record. The run is written to
    `<outputs>/<run_name>` (default `<source>-<date>`); an existing run is resumed.
    """
    logger = get_run_logger()
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    report = ReadReport()
    records = list(iter_records(source, path, report=report, limit=limit, offset=offset, sample=sample, seed=seed))
    logger.info("read %s: %s", source, report.summary())
    store = RunStore(Settings.load().outputs / (run_name or default_run_name(source)))
    settings = GenerationSettings(**({"max_rounds": max_rounds} if max_rounds else {}))
    unique = list({r.record_id: r for r in records}.values())
    store.ledger.register((r.record_id, r.source, r.origin) for r in unique)
    todo = [r for r in unique if store.ledger.get(r.record_id).state not in FINISHED]
    logger.info("run %s at %s: %d record(s), %d to process", store.name, store.root, len(unique), len(todo))

    if todo:
        local_check = functools.partial(check_candidate, engine=settings.engine,
                                        time_limit=settings.planner_time_limit)
        async with LLMClient(llm_config_for(store, model, concurrency)) as client:
            with check_stage(local_check) as checker:
                await _process_all(todo, store, client, settings, checker, concurrency)

    overview = run_overview(store.root)
    await acreate_markdown_artifact(key=artifact_key(store.name), markdown=overview.to_markdown(),
                                    description=f"Safeforge run {store.name}: records per state, stages, cost")
    store.ledger.close()
    logger.info("run %s: %s; tasks in %s", store.name,
                ", ".join(f"{state} {n}" for state, n in overview.states.items()), store.tasks_dir)
    return overview.to_dict()


async def _process_all(records: list[Record], store: RunStore, client: LLMClient, settings: GenerationSettings,
                       checker, concurrency: int) -> None:
    """Each record through `process_record_task`, `concurrency` at a time, with a progress artifact."""
    logger = get_run_logger()
    pending = iter(records)
    progress_id = await acreate_progress_artifact(progress=0.0, description=f"{store.name}: records processed")
    done, shown_at = 0, time.monotonic()

    async def worker() -> None:
        nonlocal done, shown_at
        for record in pending:  # one shared iterator: each record goes to exactly one worker
            try:
                state = await process_record_task(record, store, client, settings, checker)
            except Exception as exc:  # retries exhausted: the record ends in error, the run goes on
                state = _record_error(store, record.record_id, exc)
            logger.info("%s -> %s", record.record_id, state)
            done += 1
            if time.monotonic() - shown_at >= PROGRESS_EVERY_S or done == len(records):
                shown_at = time.monotonic()
                await aupdate_progress_artifact(progress_id, 100.0 * done / len(records))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(records)))))


def _record_error(store: RunStore, record_id: str, exc: Exception) -> str:
    try:
        store.ledger.transition(record_id, "error", f"unexpected failure: {type(exc).__name__}: {exc}")
    except TransitionError:
        pass  # already in a state that cannot become error
    return store.ledger.get(record_id).state

