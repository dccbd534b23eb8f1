"""Structured output over real HTTP: json_schema (strict where possible), json_object fallback, validation repair."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, ConfigDict, Field

from safeforge.common.limits import InputLimits, use_limits
from safeforge.generation import ExtractionResult, GeneratedPDDL, JudgeVerdict
from safeforge.llm import LLMClient, LLMError
from safeforge.llm._structured import InvalidResponse, parse_reply, response_format, strict_schema
from safeforge.llm.replay_server import strict_schema_problem

VALID = {"hazard": "knife near toddler", "severity": 3}


def outcomes(client: LLMClient) -> list[str]:
    return [row.outcome for row in client.ledger.rows()]


def test_json_schema_round_trip(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([{"match": {"contains": ["kitchen scene"]}, "response": {"content": VALID}}])

    async def go():
        async with LLMClient(make_config(url, structured_output="json_schema")) as client:
            return client, await client.complete_json("extract", "r1", messages("kitchen scene"), schema, "tpl1")

    client, result = asyncio.run(go())
    assert result.parsed == schema(**VALID)
    assert (result.cache_hit, result.attempts, result.repaired, result.finish_reason) == (
        False,
        1,
        False,
        "stop",
    )
    assert server_stats(url)["response_formats"] == {"json_schema strict": 1}
    assert outcomes(client) == ["ok"]


def test_auto_falls_back_to_json_object_with_schema_in_system_message(start_replay, make_config, server_stats, schema, messages):
    # Only a request carrying the appended schema description matches this entry.
    entries = [
        {
            "match": {"contains": ["kitchen scene", "conforms to this JSON Schema"]},
            "response": {"content": VALID},
        },
        {
            "match": {"contains": ["garage scene", "conforms to this JSON Schema"]},
            "response": {"content": VALID},
        },
    ]
    url = start_replay(entries, json_schema=False)

    async def go():
        async with LLMClient(make_config(url, structured_output="auto")) as client:
            first = await client.complete_json("extract", "r1", messages("kitchen scene"), schema, "tpl1")
            second = await client.complete_json("extract", "r2", messages("garage scene"), schema, "tpl1")
            return client, first, second

    client, first, second = asyncio.run(go())
    assert first.parsed == second.parsed == schema(**VALID)
    assert client.json_mode == "json_object"
    assert first.attempts == 2 and second.attempts == 1  # the fallback sticks for the client's life
    assert server_stats(url)["response_formats"] == {"json_schema strict": 1, "json_object": 2}
    assert outcomes(client) == ["retry_schema_unsupported", "ok", "ok"]


def test_explicit_json_schema_fails_on_endpoint_without_it(start_replay, make_config, schema, messages):
    url = start_replay([{"match": {"contains": ["kitchen"]}, "response": {"content": VALID}}], json_schema=False)

    async def go():
        async with LLMClient(make_config(url, structured_output="json_schema")) as client:
            await client.complete_json("extract", "r1", messages("kitchen"), schema, "tpl1")

    with pytest.raises(LLMError) as caught:
        asyncio.run(go())
    assert (caught.value.reason, caught.value.status, caught.value.attempts) == ("bad_request", 400, 1)
    assert "json_schema" in caught.value.message


def test_malformed_reply_is_repaired_in_a_second_turn(start_replay, make_config, server_stats, schema, messages):
    entries = [
        {"match": {"contains": ["kitchen"], "assistant_turns": 0}, "response": {"content": "hazard: knife"}},
        {
            "match": {
                "contains": ["kitchen", "Your reply is not valid", "Invalid JSON"],
                "assistant_turns": 1,
            },
            "response": {"content": VALID},
        },
    ]
    url = start_replay(entries)

    async def go():
        async with LLMClient(make_config(url)) as client:
            return client, await client.complete_json("extract", "r1", messages("kitchen"), schema, "tpl1")

    client, result = asyncio.run(go())
    assert result.parsed == schema(**VALID)
    assert (result.repaired, result.attempts) == (True, 2)
    assert outcomes(client) == ["validation_error", "ok"]
    assert server_stats(url)["requests"] == 2


def test_schema_violation_is_repaired(start_replay, make_config, schema, messages):
    wrong_type = {"hazard": "stairs", "severity": "very"}
    entries = [
        {"match": {"contains": ["stairs"], "assistant_turns": 0}, "response": {"content": wrong_type}},
        {"match": {"contains": ["stairs", "severity"], "assistant_turns": 1}, "response": {"content": VALID}},
    ]
    url = start_replay(entries)

    async def go():
        async with LLMClient(make_config(url)) as client:
            return client, await client.complete_json("extract", "r1", messages("stairs"), schema, "tpl1")

    client, result = asyncio.run(go())
    assert result.repaired and result.parsed.severity == 3
    error = client.ledger.rows()[0].error
    assert "severity" in error and "int" in error


@pytest.mark.parametrize(("fault", "reported"), [("truncated", "finish_reason=length"), ("malformed_json", "Invalid JSON")])
def test_truncated_or_malformed_reply_is_repaired(start_replay, make_config, schema, messages, fault, reported):
    url = start_replay([{"match": {"contains": ["kitchen"]}, "response": {"content": VALID}, "faults": [fault]}])

    async def go():
        async with LLMClient(make_config(url)) as client:
            return client, await client.complete_json("extract", "r1", messages("kitchen"), schema, "tpl1")

    client, result = asyncio.run(go())
    assert result.parsed == schema(**VALID) and (result.repaired, result.attempts) == (True, 2)
    first = client.ledger.rows()[0]
    assert first.outcome == "validation_error" and reported in first.error


def test_reply_still_invalid_after_repair_fails_and_is_not_cached(start_replay, make_config, server_stats, schema, messages):
    url = start_replay([{"match": {"contains": ["kitchen"]}, "response": {"content": "not json at all"}}])

    async def go():
        async with LLMClient(make_config(url)) as client:
            for _ in range(2):
                with pytest.raises(LLMError) as caught:
                    await client.complete_json("extract", "r1", messages("kitchen"), schema, "tpl1")
                assert (caught.value.reason, caught.value.attempts) == ("validation", 2)
            return client

    client = asyncio.run(go())
    assert server_stats(url)["requests"] == 4  # nothing was cached, so the second call went out again
    assert outcomes(client) == ["validation_error", "validation_failed"] * 2
    [summary] = client.ledger.summary()
    assert (summary.calls, summary.failures) == (4, 2)  # each call failed for good, on validation


def test_complete_text_has_no_output_cap_and_returns_text(start_replay, make_config, schema, messages):
    plan = "(pick knife)\n(place knife drawer)"
    url = start_replay([{"match": {"contains": ["plan please"]}, "response": {"content": plan}}])

    async def go():
        async with LLMClient(make_config(url)) as client:
            request = client.cache_request("plan", "r1", messages("plan please"), None, "tpl1")
            result = await client.complete_text("plan", "r1", messages("plan please"), "tpl1")
            json_request = client.cache_request("plan", "r1", messages("plan please"), schema, "tpl1")
            return request, result, json_request

    request, result, json_request = asyncio.run(go())
    assert result.parsed == result.raw_text == plan
    assert request.decoding == {"temperature": 0.0}
    assert json_request.decoding == {"temperature": 0.0, "max_tokens": 4096}


class _Optional(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    note: str = ""


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    tags: list[str]


def test_strict_schemas_are_closed_required_and_free_of_unsupported_keywords():
    strict = strict_schema(_Closed.model_json_schema())
    assert strict["additionalProperties"] is False and set(strict["required"]) == {"name", "tags"}
    assert "minLength" not in json.dumps(strict)  # pydantic still checks it on the reply
    assert strict_schema_problem(strict) is None
    assert strict_schema(_Optional.model_json_schema()) is None  # optional fields: sent without strict
    assert response_format(_Optional, "json_schema")["json_schema"].get("strict") is None
    assert strict_schema_problem(_Closed.model_json_schema()) == "in context=(root).properties.name, 'minLength' is not permitted"


def test_the_generation_schemas_go_out_strict():
    for model in (ExtractionResult, GeneratedPDDL, JudgeVerdict):
        body = response_format(model, "json_schema")["json_schema"]
        assert body["strict"] is True and strict_schema_problem(body["schema"]) is None, model.__name__


def test_a_reply_beyond_the_input_limits_is_invalid_not_parsed(monkeypatch):
    class Answer(BaseModel):
        value: object

    monkeypatch.setattr("safeforge.common.limits._current", InputLimits())
    with pytest.raises(InvalidResponse, match=r"brackets nested more than 32 deep; the limit is 32 \(SAFEFORGE_MAX_NESTING\)"):
        parse_reply(Answer, '{"value": ' + "[" * 5000 + "]" * 5000 + "}", "stop")
    use_limits(InputLimits(reply_chars=100))
    with pytest.raises(InvalidResponse, match=r"the reply is 113 characters; the limit is 100 \(SAFEFORGE_MAX_REPLY_CHARS\)"):
        parse_reply(Answer, '{"value": "' + "x" * 100 + '"}', "stop")
    assert parse_reply(Answer, '{"value": [[1]]}', "stop").value == [[1]]
