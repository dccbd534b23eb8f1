"""Bounded concurrency in one place: `for_each`, the worker pool of the async stages (generation,
evaluation, flows); `map_on_cpus`, processes for the CPU-bound batch stages (publish re-validation)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


async def for_each(items: Iterable[Item], work: Callable[[Item], Awaitable[None]], concurrency: int) -> None:
    """Await `work(item)` for every item, at most `concurrency` at a time, each item exactly once,
    started in order. `work` handles its own failures: an exception stops the pool."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    pending = iter(items)

    async def lane() -> None:
        for item in pending:  # one shared iterator: each item goes to exactly one lane
            await work(item)

    await gather_or_cancel(lane() for _ in range(concurrency))


async def gather_or_cancel(coroutines: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Await the coroutines together; when one raises, the others are cancelled (and awaited)
    before its exception goes on, so nothing keeps running behind a failure."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def map_on_cpus(work: Callable[..., Result], calls: Sequence[tuple], jobs: int | None = None) -> Iterator[Result]:
    """`work(*args)` for every args tuple of `calls`, on up to `jobs` processes (default: the CPUs),
    results in the order of `calls` as they are ready. For CPU-bound stages (parsing, checking):
    children come from a fork server, not from a fork of this (possibly threaded) process. `work`
    must be importable and its results picklable; with one job or one call it runs here."""
    jobs = min(jobs or os.cpu_count() or 1, len(calls))
    if jobs <= 1:
        yield from (work(*args) for args in calls)
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
        futures = [pool.submit(work, *args) for args in calls]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()
