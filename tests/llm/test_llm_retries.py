"""Retries over real HTTP (429 with Retry-After, 5xx, timeouts, refused connections) and the
retry policy's arithmetic."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from safeforge.llm import LLMClient, LLMError
from safeforge.llm._retry import RetryPolicy, retry_after_seconds

VALID = {"hazard": "hot stove", "severity": 2}


def run_one(config, schema, messages, clock=None):
    """One call; with a FakeClock `clock`, the limiter and the retries wait on it (no real waits)."""
    timing = {} if clock is None else {"clock": clock, "sleep": clock.sleep}

    async def go():
        async with LLMClient(config, **timing) as client:
            result = await client.complete_json("extract", "r1", messages("stove"), schema, "tpl1")
            return client, result

    return asyncio.run(go())


def entry(*faults: str) -> dict:
    return {"match": {"contains": ["stove"]}, "response": {"content": VALID}, "faults": list(faults)}


def test_429_waits_for_retry_after_then_succeeds(start_replay, make_config, schema, messages, fake_clock):
    url = start_replay([entry("429:0.6")])
    client, result = run_one(make_config(url), schema, messages, fake_clock)
    assert result.parsed == schema(**VALID) and result.attempts == 2
    rows = client.ledger.rows()
    assert [(r.outcome, r.retry_delay_s) for r in rows] == [("retry_rate_limit", 0.6), ("ok", None)]  # the backoff alone: ~0.01 s
    assert fake_clock.waits == [0.6]  # waited as recorded, once: the limiter's hold had passed by then


def test_500_is_retried(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([entry("500", "503")])
    client, result = run_one(make_config(url), schema, messages)
    assert result.attempts == 3 and server_stats(url)["faults"] == {"500": 1, "503": 1}
    assert [r.outcome for r in client.ledger.rows()] == ["retry_server_error", "retry_server_error", "ok"]


def test_timeout_is_retried(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([entry("timeout")], timeout_sleep_s=60)  # the fault answers long after the client's timeout
    client, result = run_one(make_config(url, timeout_s=1.0), schema, messages)
    assert result.parsed == schema(**VALID) and result.attempts == 2
    assert server_stats(url)["faults"] == {"timeout": 1}
    rows = client.ledger.rows()
    # gave up on the sleeping request (had it waited, attempt 1 would be "ok") when its timeout ended it
    assert [r.outcome for r in rows] == ["retry_timeout", "ok"] and rows[0].latency_s >= 0.99


def test_retries_stop_after_max_attempts(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([entry("429:0", "429:0", "429:0")])
    with pytest.raises(LLMError) as caught:
        run_one(make_config(url, max_attempts=3), schema, messages)
    assert (caught.value.reason, caught.value.status, caught.value.attempts) == ("rate_limit", 429, 3)
    assert server_stats(url)["requests"] == 3


def test_connection_refused_fails_with_reason_after_max_attempts(closed_port_url, make_config, schema, messages):
    config = make_config(closed_port_url, max_attempts=4)

    async def go():
        async with LLMClient(config) as client:
            with pytest.raises(LLMError) as caught:
                await client.complete_json("extract", "r1", messages("stove"), schema, "tpl1")
            return client, caught.value

    client, error = asyncio.run(go())
    assert (error.reason, error.attempts) == ("connection", 4)
    assert [r.outcome for r in client.ledger.rows()] == ["retry_connection"] * 3 + ["error"]


def test_missing_replay_entry_is_a_loud_non_retried_error(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([{"match": {"contains": ["something else"]}, "response": {"content": VALID}}])
    with pytest.raises(LLMError) as caught:
        run_one(make_config(url), schema, messages)
    assert (caught.value.reason, caught.value.status, caught.value.attempts) == ("bad_request", 404, 1)
    assert "no replay entry matches" in caught.value.message and "stove" in caught.value.message
    assert server_stats(url)["unmatched"] == 1


def test_ambiguous_replay_entries_are_a_loud_error(start_replay, make_config, schema, messages):
    url = start_replay([entry(), entry()])
    with pytest.raises(LLMError) as caught:
        run_one(make_config(url), schema, messages)
    assert caught.value.status == 409
    assert "responses.json#0" in caught.value.message and "responses.json#1" in caught.value.message


def test_server_wide_faults_from_the_admin_endpoint(start_replay, make_config, set_faults, schema, messages):
    url = start_replay([entry()])
    set_faults(url, {"next": ["502"]})
    client, result = run_one(make_config(url), schema, messages)
    assert result.attempts == 2
    assert [r.outcome for r in client.ledger.rows()] == ["retry_server_error", "ok"]


def test_retry_after_header_forms():
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "1.5", "retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": format_datetime(now + timedelta(seconds=30))}, now) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_doubles_with_jitter_and_honours_capped_retry_after():
    policy = RetryPolicy(max_attempts=5, backoff_base_s=1.0, backoff_max_s=4.0, retry_after_max_s=10.0, rng=random.Random(7))
    for attempt, full in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0)]:
        assert full / 2 <= policy.delay_s(attempt, None) <= full
    assert policy.delay_s(1, 3.0) == 3.0
    assert policy.delay_s(1, 60.0) == 10.0


def test_a_429_holds_the_clients_other_requests_until_its_retry_after(start_replay, make_config, set_faults, schema, messages, fake_clock):
    url = start_replay([entry()])
    set_faults(url, {"next": ["429:0.6"]})

    async def go():
        async with LLMClient(make_config(url, max_concurrency=1), clock=fake_clock, sleep=fake_clock.sleep) as client:
            await asyncio.gather(*(client.complete_json("extract", r, messages("stove"), schema, "tpl1") for r in ("r1", "r2")))
            return client

    client = asyncio.run(go())
    assert [(r.record_id, r.outcome, r.retry_delay_s) for r in client.ledger.rows()] == [
        ("r1", "retry_rate_limit", 0.6),
        ("r2", "ok", None),
        ("r1", "ok", None),
    ]
    # r1 waits its retry; r2, admitted while r1 waited, was not sent until the Retry-After had passed
    assert fake_clock.waits == [0.6, 0.6] and fake_clock.now == 0.6


def test_the_client_follows_the_limit_a_429_names_instead_of_retrying_in_bursts(
    start_replay, make_config, server_stats, set_clock, schema, messages, fake_clock
):
    # 4 a second once its minute's allowance is spent; the server's clock moves only as the client's
    # fake one does (the client's waits move both): one timeline, whatever the machine's speed, and a
    # client that waited less than the server asks would meet 429 after 429 (and fail, 3 attempts)
    url = start_replay([entry()], requests_per_minute=240, frozen_clock=True)
    assert [post_chat(url, "stove") for _ in range(241)] == [200] * 240 + [429]
    fake_clock.on_advance = lambda seconds: set_clock(url, {"advance": seconds})
    calls = 12

    async def go():
        config = make_config(url, max_concurrency=calls, backoff_base_s=0.01)  # no limits configured
        async with LLMClient(config, clock=fake_clock, sleep=fake_clock.sleep) as client:
            await asyncio.gather(*(client.complete_json("extract", f"r{n}", messages("stove"), schema, "tpl1") for n in range(calls)))
            return client

    client = asyncio.run(go())
    refused = server_stats(url)["rate_limited"] - 1
    # the first wave meets the empty bucket; after it the client sends at the server's pace: no 429 storm
    assert 1 <= refused <= calls + 2
    delays = [r.retry_delay_s for r in client.ledger.rows() if r.outcome == "retry_rate_limit"]
    assert len(delays) == refused and all(d is not None and 0 < d <= 0.25 for d in delays)  # retry-after-ms (Retry-After says "1")
    assert fake_clock.waits and max(fake_clock.waits) <= 0.25  # no wait longer than one request's share of the rate


def post_chat(base_url: str, text: str) -> int:
    data = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", data=data, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
