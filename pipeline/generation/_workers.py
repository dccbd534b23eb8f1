"""Generation on several processes: `run_in_workers` processes the run's records in this process
and in `workers - 1` worker processes (`python -m safeforge.generation.worker`, independent of the
caller's `__main__`), handing the records out one at a time as lanes ask, so a slow record never
holds back a share of others.

`concurrency` records are in flight in all. This process runs every lane while the workers start
(their imports take a second or two) and hands a worker its share of the lanes when it is ready;
the LLM rate limits are split between the processes, which share the run ledger and the LLM cache
and call ledger (SQLite in WAL mode, safe across processes). A worker that dies leaves its records
in progress in state "error" with the reason (`--retry-errors` starts them again) and its lanes
come back to this process.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import pickle
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from safeforge.common.concurrency import gather_or_cancel
from safeforge.common.errors import StorageError
from safeforge.generation._check import Checker
from safeforge.generation._record import RunContext, end_in_error, process_record, process_safely
from safeforge.llm import LLMClient, LLMConfig
from safeforge.runs.ledger import RunStore
from safeforge.sources import Record

WORKER_MODULE = "safeforge.generation.worker"

logger = logging.getLogger("safeforge.generation")


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal positive integers (parts <= total)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def share_config(config: LLMConfig, parts: int, index: int, concurrency: int) -> LLMConfig:
    """Process `index`'s share of the LLM limits, so that the run as a whole keeps them: requests
    and tokens per minute split `parts` ways, and calls in flight too unless the records in flight
    (`concurrency` across the processes, each with at most one call at a time) cannot exceed them."""
    limits: dict[str, Any] = {}
    if config.max_concurrency < concurrency:
        limits["max_concurrency"] = shares(config.max_concurrency, parts)[index] if config.max_concurrency >= parts else 1
    for name in ("requests_per_minute", "tokens_per_minute"):
        if (value := getattr(config, name)) is not None:
            limits[name] = value / parts
    return config.model_copy(update=limits)


def job_config(config: LLMConfig) -> dict[str, Any]:
    """A worker's LLM configuration as JSON. The API key goes through the worker's stdin pipe only,
    never to a file or its command line."""
    values = config.model_dump(mode="json")
    values["api_key"] = config.api_key.get_secret_value() if config.api_key else None
    return values


@dataclass
class _Worker:
    index: int
    lanes: int
    process: asyncio.subprocess.Process
    ready: bool = False
    """It has asked for a record: its lanes are its own from then on."""
    given: set[str] = field(default_factory=set)
    """Records handed to this worker that it has not reported yet."""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())


class _OwnLanes:
    """This process's lanes: as many as the run's lanes that no ready worker holds."""

    def __init__(self, pending: Iterator[Record], slots: asyncio.Semaphore, work: Callable[[Record], Awaitable[None]]):
        self._pending, self._slots, self._work = pending, slots, work
        self._target = self._running = 0
        self._tasks: list[asyncio.Task[None]] = []

    def resize(self, change: int) -> None:
        """Hold `change` more lanes (fewer if negative: a lane stops after its current record)."""
        self._target += change
        while self._running < self._target:
            self._running += 1
            self._tasks.append(asyncio.create_task(self._lane()))

    async def _lane(self) -> None:
        try:
            while self._running <= self._target:
                async with self._slots:
                    record = next(self._pending, None)
                    if record is None:
                        return
                    await self._work(record)
        finally:
            self._running -= 1

    async def wait(self) -> None:
        for task in self._tasks:
            await task

    def stop(self) -> None:
        for task in self._tasks:
            task.cancel()


async def run_in_workers(
    store: RunStore,
    records: Iterable[Record],
    client: LLMClient,
    context: RunContext,
    concurrency: int,
    workers: int,
    finished: Callable[[str, str], None],
) -> None:
    """Process `records` in this process and `workers - 1` worker processes, `concurrency` at a
    time in all; `finished(record_id, state)` is called as each record ends. Records processed here
    use a client made from `client.config` with this process's share of the rate limits; a worker
    rebuilds `context` once from its settings and checker."""
    packed_checker = pack_checker(context.checker)
    lanes = shares(concurrency, min(workers, concurrency))
    pending: Iterator[Record] = iter(records)
    slots = asyncio.Semaphore(concurrency)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
    started: list[_Worker] = []
    async with LLMClient(share_config(client.config, len(lanes), 0, concurrency)) as own_client:

        async def work(record: Record) -> None:
            finished(record.record_id, await process_safely(process_record, record, store, own_client, context))

        own = _OwnLanes(pending, slots, work)
        own.resize(concurrency)
        try:
            for index, count in enumerate(lanes[1:], start=1):
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", WORKER_MODULE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
                )
                worker = _Worker(index, count, process)
                started.append(worker)
                worker.send(
                    {
                        "run": str(store.root),
                        "config": job_config(share_config(client.config, len(lanes), index, concurrency)),
                        "settings": context.settings.model_dump(mode="json"),
                        "lanes": count,
                        "checker": packed_checker,
                    }
                )
            await gather_or_cancel(_drive(worker, pending, slots, own, store, finished) for worker in started)
            await own.wait()
        finally:
            own.stop()
            for worker in started:
                with contextlib.suppress(ProcessLookupError):
                    worker.process.kill()


async def _drive(
    worker: _Worker,
    pending: Iterator[Record],
    slots: asyncio.Semaphore,
    own: _OwnLanes,
    store: RunStore,
    finished: Callable[[str, str], None],
) -> None:
    """Answer one worker's requests until it exits, then account for what it left unfinished."""
    assert worker.process.stdout is not None
    handing: set[asyncio.Task[None]] = set()
    async for line in worker.process.stdout:
        message = json.loads(line)
        if "want" in message:
            if not worker.ready:
                worker.ready = True
                own.resize(-worker.lanes)
                logger.info("generation worker %d ready: it takes %d lane(s) of this process's", worker.index, worker.lanes)
            task = asyncio.create_task(_hand_out(worker, pending, slots))
            handing.add(task)
            task.add_done_callback(handing.discard)
        elif "done" in message:
            worker.given.discard(message["done"])
            slots.release()
            finished(message["done"], message["state"])
        elif "stopped" in message:  # storage cannot be written: the run stops, the records keep their states
            raise StorageError(message["stopped"])
    for task in handing:
        task.cancel()
    code = await worker.process.wait()
    if code != 0:
        logger.warning(
            "generation worker %d exited with code %s (its error output is above); %d record(s) in progress end in error, "
            "this process takes its lanes",
            worker.index,
            code,
            len(worker.given),
        )
    for record_id in sorted(worker.given):
        slots.release()
        reason = f"generation worker {worker.index} exited with code {code} while processing this record"
        finished(record_id, end_in_error(store, record_id, reason))
    if worker.ready:
        own.resize(worker.lanes)  # its lanes come back here (they stop at once if no record is left)


async def _hand_out(worker: _Worker, pending: Iterator[Record], slots: asyncio.Semaphore) -> None:
    """Give the worker the next record once a slot is free (or tell it there are none left)."""
    assert worker.process.stdin is not None
    await slots.acquire()
    record = next(pending, None)
    if record is None:
        slots.release()
        worker.send({"end": True})
    else:
        worker.given.add(record.record_id)
        worker.send({"record": record.to_dict()})
    with contextlib.suppress(ConnectionError):
        await worker.process.stdin.drain()


def pack_checker(checker: Checker | None) -> str | None:
    """The checker as text for a worker's job (None: the default check); ValueError if it cannot be pickled."""
    if checker is None:
        return None
    try:
        return base64.b64encode(pickle.dumps(checker)).decode("ascii")
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(f"a checker for worker processes must be picklable (an importable function or object): {exc}") from None
