"""The API key never reaches the cache/ledger file, the logs, the output or raised errors."""

from __future__ import annotations

import asyncio
import logging

import pytest

from safeforge.llm import LLMClient, LLMError

VALID = {"hazard": "candle near curtain", "severity": 3}


def exception_chain(error: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def test_sentinel_key_is_scrubbed_everywhere(
    start_replay, make_config, closed_port_url, schema, messages, sentinel_key, tmp_path, caplog, capsys
):
    url = start_replay(
        [
            {"match": {"contains": ["auth check"]}, "response": {"content": VALID}, "faults": ["401"]},
            {"match": {"contains": ["flaky"]}, "response": {"content": VALID}, "faults": ["500", "429:0"]},
            {"match": {"contains": ["broken"]}, "response": {"content": "not json"}},
        ]
    )
    config = make_config(url)

    async def go():
        errors = []
        async with LLMClient(config) as client:
            await client.complete_json("extract", "flaky", messages("flaky"), schema, "t")
            for text in ("auth check", "broken"):
                with pytest.raises(LLMError) as caught:
                    await client.complete_json("extract", text, messages(text), schema, "t")
                errors.append(caught.value)
        async with LLMClient(make_config(closed_port_url)) as client:
            with pytest.raises(LLMError) as caught:
                await client.complete_json("extract", "offline", messages("offline"), schema, "t")
            errors.append(caught.value)
            return client, errors

    with caplog.at_level(logging.DEBUG):  # every logger, openai's and httpx's included
        client, errors = asyncio.run(go())

    assert [e.reason for e in errors] == ["auth", "validation", "connection"]
    # The server echoed the key back in its 401 message; the client scrubbed it.
    assert "Incorrect API key provided: [REDACTED]" in errors[0].message
    assert any("[REDACTED]" in (row.error or "") for row in client.ledger.rows())
    for error in errors:
        for linked in exception_chain(error):
            assert sentinel_key not in str(linked) and sentinel_key not in repr(linked)
    assert caplog.records and sentinel_key not in caplog.text
    assert all(sentinel_key not in str(record.args) for record in caplog.records)
    captured = capsys.readouterr()
    assert sentinel_key not in captured.out + captured.err
    db_files = sorted(tmp_path.glob("llm.sqlite*"))
    assert db_files and sum(f.stat().st_size for f in db_files) > 0
    for db_file in db_files:
        assert sentinel_key.encode() not in db_file.read_bytes()
    assert sentinel_key not in repr(config) and sentinel_key not in str(config.model_dump())
