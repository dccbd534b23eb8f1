"""Client-side limits: requests in flight (semaphore), requests and tokens per minute
(async token buckets; tokens are estimated before a request and corrected from its usage), and
what a 429 says: no request starts before its Retry-After, and the buckets follow the limits and
the remaining allowance the endpoint names (x-ratelimit-* headers), configured or not."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

Clock = Callable[[], float]
"""Seconds on a monotonic clock (time.monotonic; tests pass a fake one)."""
Sleep = Callable[[float], Awaitable[None]]
"""Waits that many seconds (asyncio.sleep; tests pass a fake one that advances their clock)."""


class TokenBucket:
    """Holds up to `per_minute` units and refills at `per_minute / 60` units a second.

    A bucket used by one event loop only (like the client that owns it). `clock` and `sleep`
    measure and wait (by default time.monotonic and asyncio.sleep).
    """

    def __init__(
        self,
        per_minute: float,
        *,
        level: float | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ):
        self.capacity = float(per_minute)
        self._rate = per_minute / 60.0
        self._level = self.capacity if level is None else min(self.capacity, level)
        self._clock = clock
        self._sleep = sleep
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
                await self._sleep((amount - self._level) / self._rate)
                self._refill()
            self._level -= amount

    def adjust(self, extra: float) -> None:
        """Take `extra` more units (negative: give some back), e.g. actual minus estimated tokens.
        The level may go negative: later callers then wait for the debt to refill."""
        self._refill()
        self._level = min(self.capacity, self._level - extra)

    def at_most(self, level: float) -> None:
        """Hold no more than `level` units (what the endpoint says remains)."""
        self._refill()
        self._level = min(self._level, level)


def _number(headers: Mapping[str, str], name: str) -> float | None:
    try:
        value = float(headers[name])
    except (KeyError, ValueError):
        return None
    return value if value >= 0 else None


@dataclass(frozen=True)
class ServerLimits:
    """An endpoint's rate limits and what remains of them, from OpenAI's x-ratelimit-* headers."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    remaining_requests: float | None = None
    remaining_tokens: float | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> ServerLimits:
        return cls(
            _number(headers, "x-ratelimit-limit-requests"),
            _number(headers, "x-ratelimit-limit-tokens"),
            _number(headers, "x-ratelimit-remaining-requests"),
            _number(headers, "x-ratelimit-remaining-tokens"),
        )


@dataclass
class Slot:
    """One admitted request; set `tokens_used` from its usage so the token bucket is corrected."""

    estimated_tokens: int
    tokens_used: int = 0


class CallLimiter:
    """Admits a request once the rate buckets allow it and a concurrency slot is free. `clock` and
    `sleep` measure and wait, for it and its buckets (by default time.monotonic and asyncio.sleep)."""

    def __init__(
        self,
        max_concurrency: int,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ):
        self._clock = clock
        self._sleep = sleep
        self._slots = asyncio.Semaphore(max_concurrency)
        self._requests = self._bucket(requests_per_minute) if requests_per_minute else None
        self._tokens = self._bucket(tokens_per_minute) if tokens_per_minute else None
        self._resume_at = 0.0

    def _bucket(self, per_minute: float, level: float | None = None) -> TokenBucket:
        return TokenBucket(per_minute, level=level, clock=self._clock, sleep=self._sleep)

    def rate_limited(self, retry_after_s: float | None, limits: ServerLimits) -> None:
        """A 429: no request starts before its Retry-After; a limit the endpoint names gets a bucket
        when none was configured, and every bucket holds no more than the endpoint says remains.
        So the client's requests follow the endpoint's rate instead of retrying in bursts."""
        if retry_after_s:
            self._resume_at = max(self._resume_at, self._clock() + retry_after_s)
        if self._requests is None and limits.requests_per_minute:
            self._requests = self._bucket(limits.requests_per_minute, level=0)
        if self._tokens is None and limits.tokens_per_minute:
            self._tokens = self._bucket(limits.tokens_per_minute, level=0)
        for bucket, remaining in ((self._requests, limits.remaining_requests), (self._tokens, limits.remaining_tokens)):
            if bucket is not None and remaining is not None:
                bucket.at_most(remaining)

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[Slot]:
        if self._requests is not None:
            await self._requests.acquire(1)
        if self._tokens is not None:
            await self._tokens.acquire(estimated_tokens)
        slot = Slot(estimated_tokens)
        try:
            async with self._slots:
                while (wait_s := self._resume_at - self._clock()) > 0:  # checked last: a 429 may come while this waited
                    await self._sleep(wait_s)
                yield slot
        finally:
            if self._tokens is not None:
                self._tokens.adjust(slot.tokens_used - estimated_tokens)
