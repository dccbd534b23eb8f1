"""Client-side limits: requests in flight (semaphore), requests and tokens per minute
(async token buckets; tokens are estimated before a request and corrected from its usage)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass


class TokenBucket:
    """Holds up to `per_minute` units and refills at `per_minute / 60` units a second.

    A bucket used by one event loop only (like the client that owns it).
    """

    def __init__(self, per_minute: float, *, clock: Callable[[], float] = time.monotonic):
        self.capacity = float(per_minute)
        self._rate = per_minute / 60.0
        self._level = self.capacity
        self._clock = clock
        self._updated = clock()
        self._lock = asyncio.Lock()

    @property
    def level(self) -> float:
        self._refill()
        return self._level

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._updated) * self._rate)
        self._updated = now

    async def acquire(self, amount: float) -> None:
        """Wait until `amount` units (at most the capacity) are available, then take them."""
        amount = min(amount, self.capacity)
        async with self._lock:  # first come, first served
            self._refill()
            while self._level < amount:
                await asyncio.sleep((amount - self._level) / self._rate)
                self._refill()
            self._level -= amount

    def adjust(self, extra: float) -> None:
        """Take `extra` more units (negative: give some back), e.g. actual minus estimated tokens.
        The level may go negative: later callers then wait for the debt to refill."""
        self._refill()
        self._level = min(self.capacity, self._level - extra)


@dataclass
class Slot:
    """One admitted request; set `tokens_used` from its usage so the token bucket is corrected."""

    estimated_tokens: int
    tokens_used: int = 0


class CallLimiter:
    """Admits a request once the rate buckets allow it and a concurrency slot is free."""

    def __init__(
        self,
        max_concurrency: int,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ):
        self._slots = asyncio.Semaphore(max_concurrency)
        self._requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[Slot]:
        if self._requests is not None:
            await self._requests.acquire(1)
        if self._tokens is not None:
            await self._tokens.acquire(estimated_tokens)
        slot = Slot(estimated_tokens)
        try:
            async with self._slots:
                yield slot
        finally:
            if self._tokens is not None:
                self._tokens.adjust(slot.tokens_used - estimated_tokens)
