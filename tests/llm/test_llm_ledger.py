"""The call ledger and prices: rows per attempt, cached tokens, dollar cost, summaries."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sqlite3

import pytest
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion

from safeforge.cli.llm import register
from safeforge.llm import CallLedger, LedgerRow, LLMClient, ModelPrice, PriceTable, TokenUsage
from safeforge.llm._client import read_completion

VALID = {"hazard": "loose rug", "severity": 1}
LONG_PREFIX = "Background: " + "the hallway has a loose rug near the stairs. " * 40  # 1812 chars


def entries(*needles: str) -> list[dict]:
    return [{"match": {"contains": [n]}, "response": {"content": VALID}} for n in needles]


def test_rows_tokens_cached_tokens_and_cost(start_replay, make_config, schema):
    """Priced as LLMConfig.prices says (a provider's list price holds at its own endpoint only)."""
    url = start_replay(entries("record one", "record two"))
    price = ModelPrice(input=0.28, cached_input=0.028, output=0.42)

    async def go():
        async with LLMClient(make_config(url, model="deepseek-chat", prices={"deepseek-chat": price})) as client:
            for record in ("record one", "record two"):
                prompt = [{"role": "user", "content": LONG_PREFIX + record}]
                await client.complete_json("extract", record, prompt, schema, "tpl1")
            return client

    rows = asyncio.run(go()).ledger.rows()
    prompt_tokens = len(LONG_PREFIX + "record one") // 4
    completion_tokens = len('{"hazard": "loose rug", "severity": 1}') // 4
    shared_prefix_tokens = len(LONG_PREFIX + "record ") // 4 // 64 * 64
    assert [(r.record_id, r.outcome, r.tokens_in, r.tokens_out, r.tokens_cached) for r in rows] == [
        ("record one", "ok", prompt_tokens, completion_tokens, 0),
        ("record two", "ok", prompt_tokens, completion_tokens, shared_prefix_tokens),
    ]
    assert shared_prefix_tokens == 448
    uncached = prompt_tokens - shared_prefix_tokens
    expected = (uncached * 0.28 + shared_prefix_tokens * 0.028 + completion_tokens * 0.42) / 1e6
    assert rows[1].cost_usd == pytest.approx(expected)
    assert rows[0].cost_usd == pytest.approx((prompt_tokens * 0.28 + completion_tokens * 0.42) / 1e6)
    assert all(r.latency_s > 0 and r.attempt == 1 for r in rows)


def test_unknown_model_costs_none_with_one_warning(start_replay, make_config, schema, caplog):
    url = start_replay(entries("first", "second"))

    async def go():
        async with LLMClient(make_config(url, model="llama3.1:8b")) as client:
            results = [
                await client.complete_json("judge", text, [{"role": "user", "content": text}], schema, "t") for text in ("first", "second")
            ]
            return client, results

    with caplog.at_level(logging.WARNING, logger="safeforge.llm"):
        client, results = asyncio.run(go())
    assert [r.cost_usd for r in results] == [None, None]
    assert [r.cost_usd for r in client.ledger.rows()] == [None, None]
    assert sum("no price for model 'llama3.1:8b'" in m for m in caplog.messages) == 1
    summary = client.ledger.summary()[0]
    assert (summary.calls, summary.cost_usd, summary.unpriced_calls) == (2, 0.0, 2)


def test_a_replayed_endpoints_calls_have_no_price_though_the_model_has_a_list_price(start_replay, make_config, schema):
    url = start_replay(entries("record one"))

    async def go():
        async with LLMClient(make_config(url, model="gpt-4o-mini")) as client:
            result = await client.complete_json("extract", "a", [{"role": "user", "content": "record one"}], schema, "t")
            return client, result

    client, result = asyncio.run(go())
    assert result.cost_usd is None and [r.cost_usd for r in client.ledger.rows()] == [None]
    assert client.ledger.summary()[0].unpriced_calls == 1
    usage = TokenUsage(prompt=1_000_000, completion=0)
    assert PriceTable(endpoint="127.0.0.1").cost("gpt-4o-mini", usage) is None
    assert PriceTable(endpoint="api.deepseek.com").cost("gpt-4o-mini", usage) is None
    assert PriceTable(endpoint="api.openai.com").cost("gpt-4o-mini", usage) == pytest.approx(0.15)
    assert PriceTable(endpoint="api.deepseek.com").cost("deepseek-chat", usage) == pytest.approx(0.28)


def test_summary_groups_by_stage(tmp_path):
    ledger = CallLedger(tmp_path / "ledger.sqlite")
    rows = [
        LedgerRow("extract", "a", "m", 1, "retry_rate_limit", cost_usd=0.0),
        LedgerRow("extract", "a", "m", 2, "ok", 100, 20, 64, 0.5, 0.01),
        LedgerRow("extract", "a", "m", 0, "cache_hit", cost_usd=0.0),
        LedgerRow("judge", "a", "m", 1, "validation_error", 50, 10, 0, 0.2, 0.002),
        LedgerRow("judge", "a", "m", 2, "error", cost_usd=None, error="boom"),
    ]
    for row in rows:
        ledger.record(row)
    extract, judge = ledger.summary()
    assert (extract.stage, extract.calls, extract.cache_hits, extract.retries, extract.failures) == (
        "extract",
        2,
        1,
        1,
        0,
    )
    assert (extract.tokens_in, extract.tokens_out, extract.tokens_cached) == (100, 20, 64)
    assert extract.cost_usd == pytest.approx(0.01) and extract.unpriced_calls == 0
    assert (judge.calls, judge.failures, judge.cost_usd, judge.unpriced_calls) == (
        2,
        1,
        pytest.approx(0.002),
        1,
    )
    assert ledger.rows(stage="judge")[1].error == "boom"


def test_a_ledger_from_before_retry_delays_gains_the_column_and_keeps_its_rows(tmp_path):
    db = tmp_path / "ledger.sqlite"
    with sqlite3.connect(db) as conn:  # the calls table as it was, pid included
        conn.execute(
            "CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT NOT NULL, record_id TEXT NOT NULL, "
            "model TEXT NOT NULL, attempt INTEGER NOT NULL, outcome TEXT NOT NULL, tokens_in INTEGER NOT NULL, "
            "tokens_out INTEGER NOT NULL, tokens_cached INTEGER NOT NULL, latency_s REAL NOT NULL, cost_usd REAL, "
            "error TEXT, cache_note TEXT, created_at REAL NOT NULL, pid INTEGER)"
        )
        conn.execute(
            "INSERT INTO calls (stage, record_id, model, attempt, outcome, tokens_in, tokens_out, tokens_cached, latency_s, "
            "created_at) VALUES ('extract', 'a', 'm', 1, 'retry_rate_limit', 0, 0, 0, 0.1, 0)"
        )
    conn.close()
    ledger = CallLedger(db)
    ledger.record(LedgerRow("extract", "a", "m", 2, "retry_server_error", retry_delay_s=1.5))
    assert [(r.outcome, r.retry_delay_s) for r in ledger.rows()] == [("retry_rate_limit", None), ("retry_server_error", 1.5)]
    ledger.close()


def test_calls_command_prints_the_summary(tmp_path, capsys):
    db = tmp_path / "ledger.sqlite"
    CallLedger(db).record(LedgerRow("extract", "a", "m", 1, "ok", 1000, 200, 0, 0.5, 0.0123))
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["llm", "calls", "--db", str(db)])
    assert args.func(args) == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header.split() == [
        "stage",
        "calls",
        "hits",
        "retries",
        "failed",
        "tok",
        "in",
        "tok",
        "out",
        "cached",
        "USD",
    ]
    assert line.split() == ["extract", "1", "0", "0", "0", "1000", "200", "0", "0.012300"]


def test_price_table_defaults_prefixes_and_overrides():
    prices = PriceTable({"my-model": ModelPrice(input=1.0, output=2.0)})
    usage = TokenUsage(prompt=1_000_000, completion=1_000_000, cached=500_000)
    assert prices.cost("gpt-4o-mini", usage) == pytest.approx(0.5 * 0.15 + 0.5 * 0.075 + 0.60)
    assert prices.price_for("gpt-4o-2024-08-06") == prices.price_for("gpt-4o")
    assert prices.price_for("gpt-4o-mini-2024-07-18") == prices.price_for("gpt-4o-mini")
    assert prices.cost("my-model", usage) == pytest.approx(1.0 + 2.0)  # no cached price: input price
    assert prices.cost("deepseek-reasoner", usage) == pytest.approx(0.5 * 0.28 + 0.5 * 0.028 + 0.42)
    assert PriceTable(include_defaults=False).cost("gpt-4o", usage) is None


def test_cached_tokens_from_openai_and_deepseek_usage_blocks():
    openai_style = CompletionUsage.model_validate(
        {
            "prompt_tokens": 100,
            "completion_tokens": 10,
            "total_tokens": 110,
            "prompt_tokens_details": {"cached_tokens": 64},
        }
    )
    deepseek_style = CompletionUsage.model_validate(
        {
            "prompt_tokens": 100,
            "completion_tokens": 10,
            "total_tokens": 110,
            "prompt_cache_hit_tokens": 96,
            "prompt_cache_miss_tokens": 4,
        }
    )
    assert TokenUsage.from_completion_usage(openai_style) == TokenUsage(100, 10, 64)
    assert TokenUsage.from_completion_usage(deepseek_style) == TokenUsage(100, 10, 96)
    assert TokenUsage.from_completion_usage(None) == TokenUsage()


def test_a_reply_is_read_as_the_openai_client_reads_it():
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-chat",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110, "prompt_cache_hit_tokens": 96},
    }
    conforming = read_completion(json.dumps(body).encode())
    assert conforming == ChatCompletion.construct(**body)  # what the SDK's own reading makes of it
    assert TokenUsage.from_completion_usage(conforming.usage) == TokenUsage(100, 10, 96)
    odd = read_completion(json.dumps({**body, "service_tier": "a tier the SDK does not list"}).encode())
    assert odd.service_tier == "a tier the SDK does not list" and odd.choices[0].message.content == "{}"
    with pytest.raises(ValueError):
        read_completion(b"<html>not JSON</html>")
