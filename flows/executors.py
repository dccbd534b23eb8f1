"""A generation run's executor, chosen once from the settings: `executor_for(settings, workers)`
gives `safeforge generate` and the flow `generate` the same executor, or refuses a combination with
the same ExecutorError, for both.

| SAFEFORGE_EXECUTOR | workers = 1                                  | workers = N > 1                          |
|--------------------|----------------------------------------------|------------------------------------------|
| local (default)    | every record in this process                 | this process and N - 1 worker processes  |
| prefect            | one Prefect task run per record              | refused                                  |
| dask               | records here, each candidate's checks a Prefect task on a Dask cluster | refused        |

The prefect and dask executors report to the Prefect API (a flow run has one; `safeforge generate`
checks that it answers) and import Prefect only when they run.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import cast

from safeforge.common.errors import SafeforgeError
from safeforge.generation import Executor, Finished, RunJob, local_executor, run_here
from safeforge.settings import Settings
from safeforge.sources import Record


class ExecutorError(SafeforgeError):
    """The settings ask for a way of running records that cannot work (says which and why)."""


class PrefectTaskRuns(Executor):
    """Every record in this process as a Prefect task run named after it (retried twice on an
    unexpected failure, then recorded as `error`)."""

    name = "prefect"

    async def run(self, job: RunJob, records: Sequence[Record], finished: Finished) -> None:
        from safeforge.flows.prefect_runs import process_record_task

        await run_here(job, records, finished, process_record_task)


class DaskChecks(Executor):
    """Records in this process (their LLM calls overlap here), each candidate's checks a Prefect
    task on a Dask cluster (`safeforge.flows.prefect_runs`)."""

    name = "dask"

    def __init__(self, settings: Settings):
        self.settings = settings

    def describe(self) -> dict[str, object]:
        cluster = self.settings.dask_address or f"a local cluster of {self.settings.dask_workers} worker(s)"
        return {"name": self.name, "cluster": cluster}

    def prepare(self, job: RunJob) -> None:
        if inspect.iscoroutinefunction(job.context.checker):
            raise ExecutorError("a checker that runs on Dask must be a plain function, not a coroutine")

    async def run(self, job: RunJob, records: Sequence[Record], finished: Finished) -> None:
        from safeforge.flows.prefect_runs import FolderCheck, dask_checker

        with dask_checker(cast(FolderCheck, job.context.checker), self.settings) as checker:
            await run_here(dataclasses.replace(job, context=dataclasses.replace(job.context, checker=checker)), records, finished)


def executor_for(settings: Settings, workers: int = 1) -> Executor:
    """The executor SAFEFORGE_EXECUTOR names, for a run of `workers` processes; ExecutorError for
    a combination that cannot work."""
    if settings.executor == "local":
        return local_executor(workers)
    if workers != 1:
        raise ExecutorError(
            f"SAFEFORGE_EXECUTOR={settings.executor} processes the records in one process: it takes workers 1, not {workers} "
            "(SAFEFORGE_EXECUTOR=local shares them among worker processes)"
        )
    return PrefectTaskRuns() if settings.executor == "prefect" else DaskChecks(settings)


def uses_prefect(executor: Executor) -> bool:
    """The executor reports to the Prefect API."""
    return isinstance(executor, PrefectTaskRuns | DaskChecks)
