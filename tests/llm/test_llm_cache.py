"""The response cache: hits make no calls, no_cache bypasses, misses are explained, and
several processes can share the file."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from safeforge.cli.llm import register
from safeforge.llm import CachedResponse, CacheRequest, CallLedger, LLMClient, ResponseCache

VALID = {"hazard": "bleach under sink", "severity": 4}
ENTRY = {"match": {"contains": ["sink"]}, "response": {"content": VALID}}


def complete(config, schema, messages, *, text="sink", template="tpl1", stage="extract", **options):
    async def go():
        async with LLMClient(config) as client:
            return client, await client.complete_json(stage, "r1", messages(text), schema, template, **options)

    return asyncio.run(go())


def test_second_call_and_rerun_hit_the_cache_without_requests(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([ENTRY])
    config = make_config(url)
    _, first = complete(config, schema, messages)
    client, again = complete(config, schema, messages)  # a new client, as in a re-run
    assert server_stats(url)["requests"] == 1
    assert (first.cache_hit, again.cache_hit) == (False, True)
    assert again.parsed == first.parsed == schema(**VALID)
    assert (again.attempts, again.cost_usd, again.usage.total) == (0, 0.0, 0)
    assert [r.outcome for r in client.ledger.rows()] == ["ok", "cache_hit"]


def test_no_cache_calls_again_and_refreshes(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([ENTRY])
    config = make_config(url)
    complete(config, schema, messages)
    client, fresh = complete(config, schema, messages, no_cache=True)
    assert not fresh.cache_hit and server_stats(url)["requests"] == 2
    assert client.ledger.rows()[-1].cache_note == "no_cache requested"
    complete(make_config(url, no_cache=True), schema, messages)  # the config-wide switch
    assert server_stats(url)["requests"] == 3


def test_decoding_and_template_changes_miss_the_cache(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([ENTRY])
    config = make_config(url)
    complete(config, schema, messages)
    complete(config, schema, messages, temperature=0.7)
    complete(config, schema, messages, template="tpl2")
    complete(config, schema, messages, seed=1)
    assert server_stats(url)["requests"] == 4


def test_explain_miss_names_the_differing_component(start_replay, make_config, schema, messages):
    url = start_replay([ENTRY])
    complete(make_config(url), schema, messages)
    client, _ = complete(make_config(url, stage_models={"extract": "gpt-4o-mini"}), schema, messages)

    def explain(text="sink", template="tpl1", **decoding):
        return client.explain_miss("extract", "r1", messages(text), schema, template, **decoding)

    assert explain() is None  # both entries exist now
    assert client.ledger.rows()[-1].cache_note == "model differs: deepseek-chat (cached) vs gpt-4o-mini (requested)"
    assert explain(text="sink, again") == "messages[1] differs"
    assert explain(template="tpl9") == "template_hash differs: tpl1 (cached) vs tpl9 (requested)"
    assert explain(top_p=0.5) == "decoding top_p differs: unset (cached) vs 0.5 (requested)"
    other_record = client.cache_request("extract", "r2", messages("hallway"), schema, "tpl1")
    assert client.cache.explain_miss(other_record) == "no cached response for stage 'extract', record 'r2'"


def test_why_miss_command_prints_the_recorded_explanation(start_replay, make_config, schema, messages, capsys):
    url = start_replay([ENTRY, {"match": {"contains": ["tub"]}, "response": {"content": VALID}}])
    config = make_config(url)
    complete(config, schema, messages)
    complete(config, schema, messages, text="tub")  # same stage and record, other messages
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["llm", "why-miss", "--db", str(config.db_path), "--stage", "extract", "--record-id", "r1"])
    assert args.func(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        "no cached response for stage 'extract', record 'r1'",
        "messages[1] differs",
    ]


def test_processes_share_one_cache_file(tmp_path: Path):
    db = tmp_path / "shared.sqlite"
    ResponseCache(db)  # create the file first, as a client would
    worker = textwrap.dedent(f"""
        import sys
        from safeforge.llm import CacheRequest, CachedResponse, CallLedger, LedgerRow, ResponseCache
        cache, ledger, worker = ResponseCache({str(db)!r}), CallLedger({str(db)!r}), sys.argv[1]
        for i in range(60):
            name = f"{{worker}}-{{i}}"
            request = CacheRequest("s", name, "m", "host", [{{"role": "user", "content": name}}], {{}}, "text", "t")
            cache.put(request, CachedResponse(f"{{worker}}:{{i}}", "stop"))
            ledger.record(LedgerRow("s", name, "m", 1, "ok"))
        """)
    processes = [
        subprocess.Popen([sys.executable, "-c", worker, str(n)], cwd=Path(__file__).parents[2], stderr=subprocess.PIPE) for n in range(3)
    ]
    errors = [p.communicate(timeout=60)[1].decode() for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], errors
    cache = ResponseCache(db)
    request = CacheRequest("s", "2-59", "m", "host", [{"role": "user", "content": "2-59"}], {}, "text", "t")
    assert cache.get(request) == CachedResponse("2:59", "stop")
    assert CallLedger(db).summary()[0].calls == 180
