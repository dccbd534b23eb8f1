"""Generation on several processes: `run_in_workers` starts worker processes
(`python -m pipeline.generation.worker`, independent of the caller's `__main__`) and hands them the
run's records one at a time as their lanes ask, so a slow record never holds back a share of others.

The concurrency and the LLM rate limits are split between the workers; they share the run ledger
and the LLM cache and call ledger (SQLite in WAL mode, safe across processes). A worker that dies
leaves its records in progress in state "error" with the reason (`--retry-errors` starts them
again); the other workers take the records it did not get.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline.generation._check import Checker
from pipeline.generation._settings import GenerationSettings
from pipeline.llm import LLMConfig
from pipeline.runs.ledger import RunStore, TransitionError
from sources import Record

WORKER_MODULE = "pipeline.generation.worker"


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal positive integers (parts <= total)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def worker_config(config: LLMConfig, parts: int, index: int) -> dict[str, Any]:
    """Worker `index`'s LLM configuration as JSON: its share of the concurrency and rate limits.
    The API key goes through the worker's stdin pipe only, never to a file or its command line."""
    in_flight = shares(config.max_concurrency, parts)[index] if config.max_concurrency >= parts else 1
    limits: dict[str, Any] = {"max_concurrency": in_flight}
    for name in ("requests_per_minute", "tokens_per_minute"):
        if (value := getattr(config, name)) is not None:
            limits[name] = value / parts
    values = config.model_copy(update=limits).model_dump(mode="json")
    values["api_key"] = config.api_key.get_secret_value() if config.api_key else None
    return values


@dataclass
class _Worker:
    index: int
    process: asyncio.subprocess.Process
    given: set[str] = field(default_factory=set)
    """Records handed to this worker that it has not reported yet."""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())


async def run_in_workers(
    store: RunStore,
    records: Iterable[Record],
    config: LLMConfig,
    settings: GenerationSettings,
    concurrency: int,
    workers: int,
    finished: Callable[[str, str], None],
    checker: Checker | None = None,
) -> None:
    """Process `records` on `workers` processes with `concurrency` lanes in all; `finished(record_id,
    state)` is called as each record ends. Raises RuntimeError when every worker exits before the
    records are all handed out (their error output says why; the rest stay pending)."""
    packed_checker = _pack(checker)
    pending: Iterator[Record] = iter(records)
    lanes = shares(concurrency, min(workers, concurrency))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))}
    started: list[_Worker] = []
    try:
        for index, count in enumerate(lanes):
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", WORKER_MODULE, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
            )
            worker = _Worker(index, process)
            started.append(worker)
            job = {
                "run": str(store.root),
                "config": worker_config(config, len(lanes), index),
                "settings": settings.model_dump(mode="json"),
                "lanes": count,
                "checker": packed_checker,
            }
            worker.send(job)
        await asyncio.gather(*(_drive(worker, pending, store, finished) for worker in started))
    finally:
        for worker in started:
            with contextlib.suppress(ProcessLookupError):
                worker.process.kill()
    left = next(pending, None)
    if left is not None:
        codes = ", ".join(str(worker.process.returncode) for worker in started)
        raise RuntimeError(
            f"every generation worker exited (exit codes {codes}) before record {left.record_id} was handed out; see their errors above"
        )


async def _drive(worker: _Worker, pending: Iterator[Record], store: RunStore, finished: Callable[[str, str], None]) -> None:
    """Answer one worker's requests until it exits, then account for what it left unfinished."""
    assert worker.process.stdout is not None and worker.process.stdin is not None
    async for line in worker.process.stdout:
        message = json.loads(line)
        if "want" in message:
            record = next(pending, None)
            if record is None:
                worker.send({"end": True})
            else:
                worker.given.add(record.record_id)
                worker.send({"record": record.to_dict()})
            with contextlib.suppress(ConnectionError):
                await worker.process.stdin.drain()
        elif "done" in message:
            worker.given.discard(message["done"])
            finished(message["done"], message["state"])
    code = await worker.process.wait()
    for record_id in sorted(worker.given):
        reason = f"generation worker {worker.index} exited with code {code} while processing this record"
        with contextlib.suppress(TransitionError):
            store.ledger.transition(record_id, "error", reason)
        finished(record_id, store.ledger.get(record_id).state)


def _pack(checker: Checker | None) -> str | None:
    if checker is None:
        return None
    try:
        return base64.b64encode(pickle.dumps(checker)).decode("ascii")
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(f"a checker for worker processes must be picklable (an importable function or object): {exc}") from None
