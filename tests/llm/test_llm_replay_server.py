"""The replay server on its own: file format, matching errors, faults, usage, admin, CLI."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from busy_machine import HANG_S, eventually
from openai.types.chat import ChatCompletion

from safeforge.cli.llm import register
from safeforge.llm import LLMClient
from safeforge.llm._replay_files import ReplayFormatError, load_entries
from safeforge.llm.replay_server import ReplayServer, run_from_args

REPO = Path(__file__).parents[2]


def post_chat(base_url: str, messages: list[dict], **body) -> tuple[int, dict, dict]:
    data = json.dumps({"model": "m", "messages": messages, **body}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_reply_is_a_valid_chat_completion_with_usage(start_replay):
    url = start_replay([{"match": {"contains": ["ping"]}, "response": {"content": {"pong": True}}}])
    prefix = "p" * 600
    status, _, body = post_chat(url, user(prefix + " ping one"))
    assert status == 200
    completion = ChatCompletion.model_validate(body)
    assert completion.choices[0].message.content == '{"pong": true}'
    assert completion.choices[0].finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (
        len(prefix + " ping one") // 4,
        3,
    )
    assert completion.usage.prompt_tokens_details.cached_tokens == 0
    _, _, second = post_chat(url, user(prefix + " ping two"))
    assert second["usage"]["prompt_tokens_details"]["cached_tokens"] == 128  # 606 shared chars = 151 tokens
    assert second["usage"]["total_tokens"] == second["usage"]["prompt_tokens"] + 3


def test_no_match_and_several_matches_are_json_errors(start_replay, server_stats):
    url = start_replay(
        [
            {"match": {"contains": ["alpha"]}, "response": {"content": "a"}},
            {"match": {"contains": ["beta"]}, "response": {"content": "b"}},
        ]
    )
    status, _, body = post_chat(url, user("gamma"))
    assert status == 404 and body["error"]["type"] == "replay_no_match" and "gamma" in body["error"]["message"]
    status, _, body = post_chat(url, user("alpha beta"))
    assert status == 409 and "responses.json#0, responses.json#1" in body["error"]["message"]
    assert (server_stats(url)["unmatched"], server_stats(url)["ambiguous"]) == (1, 1)


def test_assistant_turns_tell_rounds_apart(start_replay):
    url = start_replay(
        [
            {"match": {"contains": ["q"], "assistant_turns": 0}, "response": {"content": "round one"}},
            {"match": {"contains": ["q"], "assistant_turns": 1}, "response": {"content": "round two"}},
        ]
    )
    conversation = user("q")
    assert post_chat(url, conversation)[2]["choices"][0]["message"]["content"] == "round one"
    conversation += [{"role": "assistant", "content": "round one"}, {"role": "user", "content": "again"}]
    assert post_chat(url, conversation)[2]["choices"][0]["message"]["content"] == "round two"


def test_entry_faults_apply_in_order_then_the_response(start_replay, server_stats):
    content = '{"hazard": "a very long hazard description"}'
    url = start_replay(
        [
            {
                "match": {"contains": ["x"]},
                "response": {"content": content},
                "faults": ["429", "503", "malformed_json", "truncated"],
            }
        ],
        retry_after_s=7,
    )
    status, headers, _ = post_chat(url, user("x"))
    assert (status, headers["Retry-After"]) == (429, "7")
    assert post_chat(url, user("x"))[0] == 503
    malformed = post_chat(url, user("x"))[2]["choices"][0]["message"]["content"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed)
    truncated = post_chat(url, user("x"))[2]["choices"][0]
    assert (truncated["message"]["content"], truncated["finish_reason"]) == (
        content[: len(content) // 2],
        "length",
    )
    assert post_chat(url, user("x"))[2]["choices"][0]["message"]["content"] == content
    stats = server_stats(url)
    assert stats["requests"] == 5
    assert stats["faults"] == {"429": 1, "503": 1, "malformed_json": 1, "truncated": 1}


def test_json_schema_rejected_when_unsupported(start_replay):
    url = start_replay([{"match": {"contains": ["x"]}, "response": {"content": "{}"}}], json_schema=False)
    status, _, body = post_chat(url, user("x"), response_format={"type": "json_schema", "json_schema": {"name": "n"}})
    assert status == 400 and "json_schema" in body["error"]["message"]
    assert post_chat(url, user("x"), response_format={"type": "json_object"})[0] == 200


def test_admin_random_faults_and_reset(start_replay, server_stats, set_faults):
    url = start_replay([{"match": {"contains": ["x"]}, "response": {"content": "ok"}}])
    set_faults(url, {"rate": 1.0, "kinds": ["502"], "seed": 1})
    assert [post_chat(url, user("x"))[0] for _ in range(2)] == [502, 502]
    reset = urllib.request.Request(url.removesuffix("/v1") + "/admin/reset", data=b"{}", method="POST")
    urllib.request.urlopen(reset, timeout=5).close()
    assert server_stats(url)["requests"] == 0
    assert post_chat(url, user("x"))[0] == 200  # the reset also restored the configured fault rate (0)
    with urllib.request.urlopen(url + "/models", timeout=5) as response:
        assert json.loads(response.read())["data"][0]["id"] == "replay"


def test_loader_reads_json_and_jsonl_and_reports_bad_entries(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"match": {"contains": ["one"]}, "response": {"content": "1"}}))
    (tmp_path / "sub").mkdir()
    lines = [
        {"match": {"contains": ["two"]}, "response": {"content": "2"}},
        {"match": {"contains": ["3"]}, "response": {"content": "3"}},
    ]
    (tmp_path / "sub" / "b.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert [e.source for e in load_entries(tmp_path)] == ["a.json#0", "sub/b.jsonl#0", "sub/b.jsonl#1"]

    (tmp_path / "c.json").write_text(json.dumps([{"match": {"contains": ["x"]}, "response": {"content": "x"}, "faults": ["boom"]}]))
    with pytest.raises(ReplayFormatError, match=r"(?s)c.json#0: .*unknown fault 'boom'"):
        load_entries(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReplayFormatError, match="no replay entries"):
        load_entries(tmp_path / "empty")
    with pytest.raises(ReplayFormatError, match="not found"):
        ReplayServer(tmp_path / "nowhere")


def test_command_line_prints_the_url_and_serves(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps([{"match": {"contains": ["hi"]}, "response": {"content": "hello"}}]))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "safeforge.llm.replay_server",
            "--responses",
            str(tmp_path),
            "--port",
            "0",
            "--latency-ms",
            "1",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("replay server listening on http://127.0.0.1:") and line.rstrip().endswith("/v1")
        base_url = line.split()[-1]
        assert post_chat(base_url, user("hi"))[2]["choices"][0]["message"]["content"] == "hello"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_safeforge_llm_command_group_wires_the_replay_server(tmp_path):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["llm", "replay-server", "--responses", str(tmp_path), "--no-json-schema", "--port", "8123"])
    assert args.func is run_from_args
    assert (args.responses, args.no_json_schema, args.port, args.latency_ms) == (tmp_path, True, 8123, 0.0)
    assert run_from_args(args) == 2  # an empty directory is refused before serving


def test_the_endpoint_is_asked_what_it_is_once_however_many_records_ask_at_once(start_replay, make_config, server_stats):
    base_url = start_replay([{"match": {"contains": ["ping"]}, "response": {"content": "pong"}}])

    async def ask() -> list[str | None]:
        async with LLMClient(make_config(base_url)) as client:
            return await asyncio.gather(*(client.endpoint_kind() for _ in range(20)))

    assert asyncio.run(ask()) == ["replay"] * 20
    assert server_stats(base_url)["model_lists"] == 1


def test_past_its_requests_per_minute_the_server_answers_429_at_once_with_retry_after(start_replay, server_stats, set_clock):
    url = start_replay(
        [{"match": {"contains": ["stove"]}, "response": {"content": "ok"}}], latency_ms=100, requests_per_minute=3, frozen_clock=True
    )
    answers = [post_chat(url, user("stove")) for _ in range(3)]
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert answers[-1][1]["x-ratelimit-limit-requests"] == "3" and answers[-1][1]["x-ratelimit-remaining-requests"] == "0"
    status, headers, body = post_chat(url, user("stove"))
    assert status == 429 and body["error"]["type"] == "rate_limit_exceeded"
    # one request refills in 20 s; the clock stood still while the three were answered
    assert (headers["retry-after-ms"], headers["Retry-After"]) == ("20000", "20")
    stats = server_stats(url)
    assert (stats["rate_limited"], stats["delayed_replies"]) == (1, 3)  # refused at once: without the latency
    assert set_clock(url, {"advance": 10})["frozen"] is True
    status, headers, _ = post_chat(url, user("stove"))
    assert (status, headers["retry-after-ms"], headers["Retry-After"]) == (429, "10000", "10")  # half a request refilled
    set_clock(url, {"advance": 10})
    assert post_chat(url, user("stove"))[0] == 200
    assert (server_stats(url)["rate_limited"], server_stats(url)["delayed_replies"]) == (2, 4)


def test_the_admin_clock_freezes_runs_and_refuses_to_go_back(start_replay, set_clock):
    url = start_replay([{"match": {"contains": ["x"]}, "response": {"content": "ok"}}])
    frozen = set_clock(url, {"frozen": True})
    assert frozen["frozen"] is True and set_clock(url, {})["seconds"] == frozen["seconds"]
    assert set_clock(url, {"advance": 2.5})["seconds"] == frozen["seconds"] + 2.5
    running = set_clock(url, {"frozen": False})
    assert running["frozen"] is False and running["seconds"] >= frozen["seconds"] + 2.5  # runs on from where it stood
    for bad in ({"advance": -1}, {"advance": "soon"}, {"frozen": "yes"}):
        with pytest.raises(urllib.error.HTTPError) as caught:
            set_clock(url, bad)
        assert caught.value.code == 400


def test_a_group_that_never_fills_breaks_and_requests_are_answered(start_replay, server_stats):
    url = start_replay([{"match": {"contains": ["x"]}, "response": {"content": "ok"}}], answer_in_groups=2, group_timeout_s=0.1)
    assert post_chat(url, user("x"))[0] == 200  # alone: its group of two never formed
    assert server_stats(url)["group_timeouts"] == 1


def test_past_its_tokens_per_minute_the_server_answers_429(start_replay):
    url = start_replay([{"match": {"contains": ["stove"]}, "response": {"content": "ok"}}], tokens_per_minute=1000)
    big = "stove " + "x" * 2000  # 501 tokens in, 0 out
    assert [post_chat(url, user(big))[0] for _ in range(3)] == [200, 429, 429]
    assert post_chat(url, user("stove"))[0] == 200  # a small request still fits


def test_a_held_request_waits_in_flight_until_released(start_replay, server_stats):
    url = start_replay([{"match": {"contains": ["x"]}, "response": {"content": "ok"}}])
    root = url.removesuffix("/v1")

    def hold(on) -> tuple[int, dict]:
        request = urllib.request.Request(f"{root}/admin/hold", data=json.dumps({"hold": on}).encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    assert hold("yes")[0] == 400  # a boolean or nothing
    assert hold(True) == (200, {"hold": True})
    answers: list[int] = []

    def ask() -> None:  # waits as long as the hold lasts: no client time-out of its own
        data = json.dumps({"model": "m", "messages": user("x")}).encode()
        request = urllib.request.Request(f"{url}/chat/completions", data=data, method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=HANG_S) as response:
            answers.append(response.status)

    waiting = threading.Thread(target=ask)
    waiting.start()
    eventually(lambda: server_stats(url)["in_flight"] == 1, "the request is in flight")
    assert answers == [] and waiting.is_alive()
    assert hold(False) == (200, {"hold": False})
    waiting.join(HANG_S)
    assert answers == [200] and server_stats(url)["in_flight"] == 0
