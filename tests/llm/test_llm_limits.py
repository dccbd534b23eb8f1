"""Concurrency and rate limits: the server sees no more requests in flight than allowed, and
the token buckets wait as long as their rates say (on a fake clock: exact waits, no wall clock)."""

from __future__ import annotations

import asyncio

import pytest

from safeforge.llm import LLMClient
from safeforge.llm._limits import CallLimiter, ServerLimits, TokenBucket

VALID = {"hazard": "wet floor", "severity": 2}


def run_many(config, schema, count: int) -> None:
    async def go():
        async with LLMClient(config) as client:
            await asyncio.gather(
                *(
                    client.complete_json("extract", f"r{i}", [{"role": "user", "content": f"[floor {i}]"}], schema, "t")
                    for i in range(count)
                )
            )

    asyncio.run(go())


def floor_entries(count: int) -> list[dict]:
    return [{"match": {"contains": [f"[floor {i}]"]}, "response": {"content": VALID}} for i in range(count)]


def test_concurrency_limit_is_respected(start_replay, make_config, server_stats, schema):
    # the server answers only groups of three requests in flight together: a client that kept fewer
    # in flight would break a group (group_timeouts), one that kept more would raise max_in_flight
    url = start_replay(floor_entries(9), answer_in_groups=3)
    run_many(make_config(url, max_concurrency=3), schema, 9)
    stats = server_stats(url)
    assert (stats["requests"], stats["max_in_flight"], stats["group_timeouts"]) == (9, 3, 0)


def test_server_answers_16_requests_in_parallel(start_replay, make_config, server_stats, schema):
    url = start_replay(floor_entries(16), answer_in_groups=16)  # none is answered before all sixteen are in
    run_many(make_config(url, max_concurrency=16), schema, 16)
    stats = server_stats(url)
    assert (stats["max_in_flight"], stats["group_timeouts"]) == (16, 0)


def test_concurrency_limit_admits_requests_in_waves(fake_clock):
    async def go():
        limiter = CallLimiter(max_concurrency=3, clock=fake_clock, sleep=fake_clock.sleep)
        inside, most = 0, 0

        async def request() -> None:
            nonlocal inside, most
            async with limiter.slot(estimated_tokens=0):
                inside += 1
                most = max(most, inside)
                await fake_clock.sleep(0.15)  # the request's latency
                inside -= 1

        await asyncio.gather(*(request() for _ in range(9)))
        return most

    assert asyncio.run(go()) == 3
    assert fake_clock.now == pytest.approx(3 * 0.15)  # three waves of three


def test_token_bucket_waits_for_refill_and_debt(fake_clock):
    async def go():
        bucket = TokenBucket(per_minute=6000, clock=fake_clock, sleep=fake_clock.sleep)  # 100 per second, 6000 at most
        await bucket.acquire(6000)
        assert fake_clock.waits == []  # a full bucket admits at once
        await bucket.acquire(20)
        assert fake_clock.waits == [pytest.approx(0.2)]  # 20 units refill in 0.2 s
        bucket.adjust(30)  # the request used 30 more than estimated: that is debt
        await bucket.acquire(10)

    asyncio.run(go())
    assert fake_clock.waits == [pytest.approx(0.2), pytest.approx(0.4)]  # the debt of 30, then the 10 asked for
    assert fake_clock.now == pytest.approx(0.6)


def test_limiter_corrects_token_estimate_with_actual_usage(fake_clock):
    async def go():
        limiter = CallLimiter(max_concurrency=2, tokens_per_minute=6000, clock=fake_clock, sleep=fake_clock.sleep)
        async with limiter.slot(estimated_tokens=6000) as slot:
            slot.tokens_used = 100  # 5900 of the estimate are given back...
        async with limiter.slot(estimated_tokens=5800):  # ...so this is admitted at once
            pass

    asyncio.run(go())
    assert fake_clock.waits == []  # without the correction it would wait 58 s


def test_requests_per_minute_limits_the_rate_after_the_burst(fake_clock):
    async def go():
        limiter = CallLimiter(max_concurrency=10, requests_per_minute=600, clock=fake_clock, sleep=fake_clock.sleep)  # 10 per second
        for _ in range(600 + 3):
            async with limiter.slot(estimated_tokens=0):
                pass

    asyncio.run(go())
    assert fake_clock.waits == [pytest.approx(0.1)] * 3  # the burst of 600 at once, then one every 0.1 s
    assert fake_clock.now == pytest.approx(0.3)


def test_a_429_holds_every_slot_until_its_retry_after_and_names_a_bucket(fake_clock):
    async def go():
        limiter = CallLimiter(max_concurrency=4, clock=fake_clock, sleep=fake_clock.sleep)  # no rate configured
        limiter.rate_limited(0.6, ServerLimits(requests_per_minute=120, remaining_requests=0))
        async with limiter.slot(estimated_tokens=0):  # waits for the endpoint's bucket (0.5 s), then the rest of 0.6 s
            pass
        async with limiter.slot(estimated_tokens=0):  # the bucket's next request, 0.5 s after the first
            pass

    asyncio.run(go())
    assert fake_clock.waits == [pytest.approx(0.5), pytest.approx(0.1), pytest.approx(0.4)]
    assert fake_clock.now == pytest.approx(1.0)
