"""Concurrency and rate limits: the server sees no more requests in flight than allowed, and
the token buckets wait as long as their rates say."""

from __future__ import annotations

import asyncio
import time

from safeforge.llm import LLMClient
from safeforge.llm._limits import CallLimiter, TokenBucket

VALID = {"hazard": "wet floor", "severity": 2}


def run_many(config, schema, count: int) -> float:
    async def go():
        async with LLMClient(config) as client:
            started = time.monotonic()
            await asyncio.gather(
                *(
                    client.complete_json("extract", f"r{i}", [{"role": "user", "content": f"[floor {i}]"}], schema, "t")
                    for i in range(count)
                )
            )
            return time.monotonic() - started

    return asyncio.run(go())


def floor_entries(count: int) -> list[dict]:
    return [{"match": {"contains": [f"[floor {i}]"]}, "response": {"content": VALID}} for i in range(count)]


def test_concurrency_limit_is_respected(start_replay, make_config, server_stats, schema):
    url = start_replay(floor_entries(9), latency_ms=150)
    elapsed = run_many(make_config(url, max_concurrency=3), schema, 9)
    stats = server_stats(url)
    assert (stats["requests"], stats["max_in_flight"]) == (9, 3)
    assert elapsed >= 3 * 0.15  # three waves


def test_server_answers_16_delayed_requests_in_parallel(start_replay, make_config, server_stats, schema):
    url = start_replay(floor_entries(16), latency_ms=250)
    elapsed = run_many(make_config(url, max_concurrency=16), schema, 16)
    assert server_stats(url)["max_in_flight"] == 16
    assert elapsed < 3 * 0.25  # about one wave; sixteen would take 4 s


def test_token_bucket_waits_for_refill_and_debt():
    async def go():
        bucket = TokenBucket(per_minute=6000)  # 100 per second, 6000 at most
        started = time.monotonic()
        await bucket.acquire(6000)
        assert time.monotonic() - started < 0.05  # a full bucket admits at once
        await bucket.acquire(20)
        refill_wait = time.monotonic() - started
        bucket.adjust(30)  # the request used 30 more than estimated: that is debt
        await bucket.acquire(10)
        return refill_wait, time.monotonic() - started

    refill_wait, total = asyncio.run(go())
    assert 0.2 <= refill_wait < 0.35
    assert total >= 0.2 + 0.4


def test_limiter_corrects_token_estimate_with_actual_usage():
    async def go():
        limiter = CallLimiter(max_concurrency=2, tokens_per_minute=6000)
        async with limiter.slot(estimated_tokens=6000) as slot:
            slot.tokens_used = 100  # 5900 of the estimate are given back...
        async with limiter.slot(estimated_tokens=5800):  # ...so this is admitted at once
            pass

    asyncio.run(asyncio.wait_for(go(), timeout=0.5))


def test_requests_per_minute_limits_the_rate_after_the_burst():
    async def go():
        limiter = CallLimiter(max_concurrency=10, requests_per_minute=600)  # 10 per second
        started = time.monotonic()
        for _ in range(600 + 3):
            async with limiter.slot(estimated_tokens=0):
                pass
        return time.monotonic() - started

    assert 0.3 <= asyncio.run(go()) < 0.45
