"""`for_each`: the one bounded worker pool of the async stages (generation, evaluation, flows)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

Item = TypeVar("Item")


async def for_each(items: Iterable[Item], work: Callable[[Item], Awaitable[None]], concurrency: int) -> None:
    """Await `work(item)` for every item, at most `concurrency` at a time, each item exactly once,
    started in order. `work` handles its own failures: an exception stops the pool."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    pending = iter(items)

    async def lane() -> None:
        for item in pending:  # one shared iterator: each item goes to exactly one lane
            await work(item)

    await asyncio.gather(*(lane() for _ in range(concurrency)))
