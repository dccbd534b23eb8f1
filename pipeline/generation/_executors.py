"""Executors: how a generation run's records are processed. Every executor runs the same step,
`process_record` on one record (extract, generate, check; it never calls its executor back), over
the run's unfinished records, `concurrency` at a time, and reports each record's state as it ends.

`InProcess` runs them in this process; `WorkerProcesses(n)` in this process and n - 1 worker
processes (`_workers`). The Prefect ones (a task run per record, checks on a Dask cluster) are in
`safeforge.flows.executors`, which also chooses the executor of a run from the settings, the same
way for `safeforge generate` and the flow `generate`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from safeforge.common.concurrency import for_each
from safeforge.generation._record import ProcessRecord, RunContext, process_record, process_safely
from safeforge.generation._workers import pack_checker, run_in_workers
from safeforge.llm import LLMClient
from safeforge.runs.ledger import RunStore
from safeforge.sources import Record

Finished = Callable[[str, str], None]
"""finished(record_id, state): called as each record ends."""


@dataclass(frozen=True)
class RunJob:
    """What every record of a run is processed with."""

    store: RunStore
    client: LLMClient
    context: RunContext
    concurrency: int


class Executor(ABC):
    """How the records of a run are processed."""

    name: str = ""
    """What the setting SAFEFORGE_EXECUTOR calls it."""

    def describe(self) -> dict[str, object]:
        """What a run's spec records of its executor."""
        return {"name": self.name}

    def prepare(self, job: RunJob) -> None:  # noqa: B027 (optional: most executors need no preparation)
        """Refuse, before any record, a job this executor cannot run (SafeforgeError or ValueError)."""

    @abstractmethod
    async def run(self, job: RunJob, records: Sequence[Record], finished: Finished) -> None:
        """Process `records`, calling `finished(record_id, state)` as each ends."""


async def run_here(job: RunJob, records: Sequence[Record], finished: Finished, process: ProcessRecord = process_record) -> None:
    """`process` on every record in this process, `job.concurrency` at a time; a record whose
    processing raises ends in error with the reason."""

    async def work(record: Record) -> None:
        finished(record.record_id, await process_safely(process, record, job.store, job.client, job.context))

    await for_each(records, work, job.concurrency)


class InProcess(Executor):
    """Every record in this process (asyncio: the LLM calls overlap; checks run in threads)."""

    name = "local"

    async def run(self, job: RunJob, records: Sequence[Record], finished: Finished) -> None:
        await run_here(job, records, finished)


class WorkerProcesses(Executor):
    """The records shared by this process and `workers - 1` worker processes (see `_workers`):
    past about 32 records at once one process is CPU-bound."""

    name = "local"

    def __init__(self, workers: int):
        if workers < 2:
            raise ValueError(f"worker processes need workers >= 2, not {workers}")
        self.workers = workers

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "workers": self.workers}

    def prepare(self, job: RunJob) -> None:
        pack_checker(job.context.checker)  # a checker that cannot reach a worker fails the run now, whatever the records

    async def run(self, job: RunJob, records: Sequence[Record], finished: Finished) -> None:
        if len(records) < 2:  # one record or none needs no worker process
            await run_here(job, records, finished)
        else:
            await run_in_workers(job.store, records, job.client, job.context, job.concurrency, self.workers, finished)


def local_executor(workers: int = 1) -> Executor:
    """The executor of SAFEFORGE_EXECUTOR=local: this process alone, or with worker processes."""
    return InProcess() if workers == 1 else WorkerProcesses(workers)
