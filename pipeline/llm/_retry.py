"""The retry policy, in one place: which failures are retried, how long to wait, the loop.

Retried: 429, 408, 5xx, timeouts and connection errors. The wait is exponential backoff with
jitter, and at least what a Retry-After / retry-after-ms header asks for (capped).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai

from safeforge.llm._errors import ErrorReason, LLMError
from safeforge.llm._limits import ServerLimits, Sleep

T = TypeVar("T")
RETRYABLE_REASONS: frozenset[ErrorReason] = frozenset({"rate_limit", "server_error", "timeout", "connection"})


@dataclass(frozen=True)
class Failure:
    """One failed HTTP attempt, classified. `message` is already redacted."""

    reason: ErrorReason
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    limits: ServerLimits = field(default_factory=ServerLimits)
    """The rate limits the endpoint named in its answer (x-ratelimit-* headers)."""

    @property
    def retryable(self) -> bool:
        return self.reason in RETRYABLE_REASONS


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds asked for by `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if (millis := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _status_reason(status: int) -> ErrorReason:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth"
    return "bad_request"


def classify(exc: openai.APIError, redact: Callable[[str], str]) -> Failure:
    """Map an openai exception to a Failure (reason, redacted message, Retry-After)."""
    text = str(exc) if exc.__cause__ is None else f"{exc} ({exc.__cause__})"
    message = redact(text)
    if isinstance(exc, openai.APITimeoutError) and not _refused(exc):
        return Failure("timeout", message)
    if isinstance(exc, openai.APIConnectionError):
        return Failure("connection", message)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        headers = exc.response.headers
        return Failure(_status_reason(status), message, status, retry_after_seconds(headers), ServerLimits.from_headers(headers))
    return Failure("bad_request", message)


def _refused(exc: BaseException) -> bool:
    """True when a "timeout" is really a refused or failed connection: the aiohttp transport reports
    every connection error as a connect timeout; the OS error underneath tells them apart."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts, and how long to wait between them."""

    max_attempts: int
    backoff_base_s: float
    backoff_max_s: float
    retry_after_max_s: float
    rng: random.Random = field(default_factory=random.Random, compare=False)
    sleep: Sleep = field(default=asyncio.sleep, compare=False, repr=False)
    """How the wait between attempts is waited (tests pass a fake that records it)."""

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        """Wait after failed attempt number `attempt` (1-based)."""
        backoff = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        jittered = backoff / 2 + self.rng.uniform(0, backoff / 2)
        if retry_after_s is None:
            return jittered
        return max(min(retry_after_s, self.retry_after_max_s), jittered)

    async def run(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        redact: Callable[[str], str],
        on_failure: Callable[[Failure, float | None], None],
    ) -> T:
        """Call `send` until it succeeds, fails for good, or attempts run out.

        `on_failure(failure, delay)` sees every failed attempt (delay None = giving up). Only
        openai.APIError is handled; anything else propagates unchanged. Raises LLMError.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return await send()
            except openai.APIError as exc:
                failure = classify(exc, redact)
            final = not failure.retryable or attempt >= self.max_attempts
            delay = None if final else self.delay_s(attempt, failure.retry_after_s)
            on_failure(failure, delay)
            if delay is None:  # raised outside `except`, so the unredacted original is not chained
                raise LLMError(failure.reason, failure.message, attempts=attempt, status=failure.status)
            await self.sleep(delay)
