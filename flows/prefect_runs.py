"""The Prefect side of the executors (`safeforge.flows.executors`): a Prefect task run per record,
and the CPU-bound check stage on a Dask cluster through prefect-dask.

On Dask, each candidate task folder's checks run as a Prefect task (`check-task`, named
`check <record id>/<candidate folder>`) submitted to a `DaskTaskRunner`: on the cluster at
`SAFEFORGE_DASK_ADDRESS`, or on a temporary `LocalCluster` of `SAFEFORGE_DASK_WORKERS` processes.
The folder's files travel with the task and the report comes back (checks write nothing; the
generation stage records what they found), so workers need Safeforge installed but no shared
file system. The planners run in child processes, so workers must not be daemonic: start remote
ones with `DASK_DISTRIBUTED__WORKER__DAEMON=False`.
"""

from __future__ import annotations

import contextvars
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

import safeforge.generation as generation
from safeforge.common.limits import limits_in, use_limits
from safeforge.generation import RunContext
from safeforge.llm import LLMClient
from safeforge.runs.ledger import RunStore
from safeforge.settings import Settings
from safeforge.sources import Record
from safeforge.task.checks import CheckReport

FolderCheck = Callable[[Path], CheckReport]
"""Checks one task folder in place (the generation stage's own check, e.g. check_candidate on it)."""


@task(name="process-record", task_run_name="{record.record_id}", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
async def process_record_task(record: Record, store: RunStore, client: LLMClient, context: RunContext) -> str:
    """Extract, generate and check one record (the library's `process_record`; idempotent)."""
    return await generation.process_record(record, store, client, context)


def _read_folder(folder: Path) -> dict[str, str]:
    """The text files of a task folder (PDDL and JSON, UTF-8) by name."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()) if p.is_file()}


@task(name="check-task", task_run_name="check {label}", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=1)
def check_folder_copy(label: str, name: str, files: dict[str, str], check: FolderCheck) -> CheckReport:
    """Run `check` on a copy, named `name`, of a task folder. `label` names the task run (record
    id / candidate folder)."""
    use_limits(limits_in(os.environ))  # this worker's own settings bound what the check reads
    with tempfile.TemporaryDirectory(prefix="safeforge-check-") as tmp:
        folder = Path(tmp) / name
        folder.mkdir()
        for file_name, content in files.items():
            (folder / file_name).write_text(content, encoding="utf-8")
        return check(folder)


class DaskChecker:
    """`checker(task_dir) -> CheckReport` that runs `check` on the Dask cluster of `runner`.

    Submissions run in the Prefect context of the checker's creation (the flow run, if any), not in
    that of the calling record, whose parameters (the run store, the LLM client) neither can nor
    should travel to the workers.
    """

    def __init__(self, runner: Any, check: FolderCheck):
        self._runner = runner
        self._check = check
        self._context = contextvars.copy_context()

    def __call__(self, task_dir: Path) -> CheckReport:
        return self._context.copy().run(self._check_remotely, Path(task_dir))

    def _check_remotely(self, task_dir: Path) -> CheckReport:
        future = self._runner.submit(
            check_folder_copy,
            parameters={
                "label": f"{task_dir.parent.name}/{task_dir.name}",
                "name": task_dir.name,
                "files": _read_folder(task_dir),
                "check": self._check,
            },
        )
        return future.result()


@contextmanager
def dask_checker(check: FolderCheck, settings: Settings) -> Iterator[DaskChecker]:
    """A DaskChecker on the configured cluster for the duration of the block."""
    import dask.config
    from prefect_dask.task_runners import DaskTaskRunner

    if settings.dask_address:
        runner = DaskTaskRunner(address=settings.dask_address)
    else:
        runner = DaskTaskRunner(
            cluster_kwargs={"n_workers": settings.dask_workers, "threads_per_worker": 1, "processes": True, "dashboard_address": ":0"}
        )
    # the planners run in child processes under a hard time limit: workers must not be daemons
    with dask.config.set({"distributed.worker.daemon": False}), runner:
        yield DaskChecker(runner, check)
