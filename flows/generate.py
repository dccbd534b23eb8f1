"""Flow `generate`: one source's records -> checked task folders.

The flow is the library's run driver (`safeforge.generation.generate`) with the executor the
settings choose (`safeforge.flows.executors`: in process, worker processes, a Prefect task run per
record, checks on Dask), as `safeforge generate` has; progress is a progress artifact, and the
run's summary (records per state, pass rate per stage, LLM cost) a markdown artifact. Its
parameters are exactly `GenerateOptions` (same names, same defaults), the options of
`safeforge generate`. Running it again with the same run name resumes the run.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger
from prefect.artifacts import acreate_markdown_artifact, acreate_progress_artifact, aupdate_progress_artifact

import safeforge.generation as generation
from safeforge.common.ranges import RECORDS, SAMPLE, SECONDS, SEED
from safeforge.flows.executors import executor_for
from safeforge.generation import CONCURRENCY, MAX_ROUNDS, WORKERS, GenerateOptions, RunProgress
from safeforge.runs.overview import run_overview
from safeforge.settings import Settings
from safeforge.sources import ReadReport

PROGRESS_EVERY_S = 2.0
_DEFAULTS = GenerateOptions()


def artifact_key(run: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes."""
    return "run-" + (re.sub(r"[^a-z0-9-]+", "-", run.lower()).strip("-") or "unnamed")


@flow(name="generate", log_prints=True)
async def generate(
    source: str = _DEFAULTS.source,
    path: str | None = _DEFAULTS.path,
    out: Path | None = _DEFAULTS.out,
    run_name: str | None = _DEFAULTS.run_name,
    limit: Annotated[int, RECORDS.field()] | None = _DEFAULTS.limit,
    offset: Annotated[int, RECORDS.field()] = _DEFAULTS.offset,
    sample: Annotated[int, SAMPLE.field()] | None = _DEFAULTS.sample,
    seed: Annotated[int, SEED.field()] = _DEFAULTS.seed,
    filters: dict[str, Any] | None = None,
    model: str | None = _DEFAULTS.model,
    concurrency: Annotated[int, CONCURRENCY.field()] = _DEFAULTS.concurrency,
    workers: Annotated[int, WORKERS.field()] = _DEFAULTS.workers,
    max_rounds: Annotated[int, MAX_ROUNDS.field()] = _DEFAULTS.max_rounds,
    judge: bool = _DEFAULTS.judge,
    spoc: bool = _DEFAULTS.spoc,
    review_formalizations: bool | None = _DEFAULTS.review_formalizations,
    engine: str | None = _DEFAULTS.engine,
    time_limit: Annotated[float, SECONDS.field()] = _DEFAULTS.time_limit,
    no_cache: bool = _DEFAULTS.no_cache,
    retry_errors: bool = _DEFAULTS.retry_errors,
    accept_changes: bool = _DEFAULTS.accept_changes,
) -> dict:
    """Generate safety-augmented tasks from `source` (the options of `safeforge generate`, see
    `safeforge.generation.GenerateOptions`; `filters` are the source's own options, e.g.
    {"products": [1842]} for neiss)."""
    logger = get_run_logger()
    options = GenerateOptions(
        source=source,
        path=path,
        out=out,
        run_name=run_name,
        limit=limit,
        offset=offset,
        sample=sample,
        seed=seed,
        filters=filters or {},
        model=model,
        concurrency=concurrency,
        workers=workers,
        max_rounds=max_rounds,
        judge=judge,
        spoc=spoc,
        review_formalizations=review_formalizations,
        engine=engine,
        time_limit=time_limit,
        no_cache=no_cache,
        retry_errors=retry_errors,
        accept_changes=accept_changes,
    )
    environment = Settings.load()  # once for the flow run
    executor = executor_for(environment, workers)
    report = ReadReport()
    progress_id = await acreate_progress_artifact(progress=0.0, description=f"{source}: records processed")
    updates: list[asyncio.Task] = []
    shown_at = 0.0

    def progress(update: RunProgress) -> None:
        nonlocal shown_at
        logger.info("%s -> %s", update.record_id, update.state)
        if time.monotonic() - shown_at >= PROGRESS_EVERY_S or update.done == update.total:
            shown_at = time.monotonic()
            updates.append(asyncio.create_task(aupdate_progress_artifact(progress_id, 100.0 * update.done / max(update.total, 1))))

    summary = await generation.generate(options, executor=executor, progress=progress, report=report, environment=environment)
    await asyncio.gather(*updates)
    logger.info("read %s: %s", source, report.summary())
    overview = run_overview(summary.root)
    await acreate_markdown_artifact(
        key=artifact_key(summary.run),
        markdown=overview.to_markdown(),
        description=f"Safeforge run {summary.run}: records per state, stages, cost",
    )
    logger.info(
        "run %s: %s; tasks in %s", summary.run, ", ".join(f"{state} {n}" for state, n in overview.states.items()), summary.root / "tasks"
    )
    return overview.to_dict()
