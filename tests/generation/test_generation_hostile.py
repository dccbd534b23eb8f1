"""Hostile conditions in a generation run. A generated task nested too deeply is a failed check fed
back to the generator, with every round recorded. A full disk stops the run with one line naming
the file (exit 2), no traceback per record, and no record is left in "error": the run resumes
without --retry-errors."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from generation_helpers import admin, fast_config, ledger_states, replay_entries, run_records
from tests_paths import REPO

from safeforge.llm import LLMConfig
from safeforge.sources import iter_records

FIRST_ROUND = "neiss_220705908"  # checked in round 1 as scripted

# a file-size limit makes every write past it fail as a full disk does
LIMITED = (
    "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)


@pytest.mark.parametrize("limit, workers", [(200_000, 1), (60_000, 2)])
def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_cleanly(tmp_path, replay_server, limit, workers):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SAFEFORGE_"))}
    env.update(OPENAI_BASE_URL=replay_server(), SAFEFORGE_MODEL="deepseek-chat")
    args = ["generate", "neiss", "--limit", "5", "--out", str(tmp_path), "--run", "r", "--concurrency", "4", "--workers", str(workers)]
    full = subprocess.run(
        [sys.executable, "-c", LIMITED.format(limit=limit), *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )
    assert full.returncode == 2, full.stderr
    assert "Traceback" not in full.stderr and "failed" not in full.stderr
    [error] = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: {tmp_path / 'r'}/") and ": cannot be written: " in error
    resumed = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", *args, "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["errors"] == {} and sum(summary["states"].values()) == 5


def test_a_generated_goal_nested_too_deeply_is_fed_back_and_every_round_recorded(tmp_path, replay_dir, replay_server):
    entries = replay_entries(FIRST_ROUND)
    [generate] = [e for e in entries if "stage: generate" in e["match"]["contains"]]
    reply = generate["response"]["content"]
    goal_start = reply["safety_problem"].index("(:goal ") + len("(:goal ")
    nested = dict(
        reply,
        safety_problem=reply["safety_problem"][:goal_start]
        + "(and " * 450
        + "(and)"
        + ")" * 450
        + "\n"
        + reply["safety_problem"][goal_start:],
    )
    first = {"match": {**generate["match"], "assistant_turns": 0}, "response": {**generate["response"], "content": nested}}
    second = {"match": {"contains": [*generate["match"]["contains"], "round: 2"], "assistant_turns": 1}, "response": generate["response"]}
    others = [e for e in entries if e is not generate]
    url = replay_server(replay_dir(extra={f"{FIRST_ROUND}.json": [*others, first, second]}))
    root = tmp_path / "run"
    [record] = [r for r in iter_records("neiss", limit=10) if r.record_id == FIRST_ROUND]
    summary = run_records(root, [record], fast_config(url, root / "llm.sqlite"))
    assert summary.states == {"checked": 1}
    rounds = json.loads((root / "work" / FIRST_ROUND / "rounds.json").read_text())
    assert len(rounds) == 2
    assert "parentheses nested more than 32 deep; the limit is 32 (SAFEFORGE_MAX_NESTING)" in json.dumps(rounds[0])


HUGE_REPLY = 4_300_000  # characters: beyond SAFEFORGE_MAX_REPLY_CHARS (4 MiB), refused for its size
HUGE_TASK = 3_900_000  # characters of a domain file: valid JSON, a task refused by SAFEFORGE_MAX_PDDL_BYTES (1 MiB)
BOUNDED_REQUEST = 30_000  # characters: the record, the formalization, an excerpt of 2,000 and the reason


def _generate_entry() -> tuple[list[dict], dict]:
    entries = replay_entries(FIRST_ROUND)
    [generate] = [e for e in entries if "stage: generate" in e["match"]["contains"]]
    return [e for e in entries if e is not generate], generate


def _largest_call(db_path) -> int:
    """The most input tokens of one call in the run's LLM ledger."""
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT MAX(tokens_in) FROM calls").fetchone()[0]


@pytest.mark.parametrize("kind", ["refused for its size", "refused as a bad task"])
def test_a_rejected_huge_reply_is_sent_back_only_as_an_excerpt(tmp_path, replay_dir, replay_server, kind):
    others, generate = _generate_entry()
    reply = generate["response"]["content"]
    if kind == "refused for its size":  # the client's repair turn quotes it
        huge = "{" + " " * HUGE_REPLY + "}"
        follow_up = {"contains": generate["match"]["contains"], "assistant_turns": 1}
    else:  # the next round's feedback quotes it
        huge = dict(reply, safety_domain=reply["safety_domain"] + "\n;" + "x" * HUGE_TASK)
        follow_up = {"contains": [*generate["match"]["contains"], "round: 2"], "assistant_turns": 1}
    first = {"match": {**generate["match"], "assistant_turns": 0}, "response": {"content": huge}}
    second = {"match": follow_up, "response": generate["response"]}
    url = replay_server(replay_dir(extra={f"{FIRST_ROUND}.json": [*others, first, second]}))
    root = tmp_path / "run"
    [record] = [r for r in iter_records("neiss", limit=10) if r.record_id == FIRST_ROUND]
    config = fast_config(url, root / "llm.sqlite")
    summary = run_records(root, [record], config)
    assert summary.states == {"checked": 1}
    sizes = admin(url, "/admin/stats")["request_chars"]
    assert len(sizes) >= 3 and max(sizes) < BOUNDED_REQUEST, sizes  # extract, the huge reply's call, the follow-up
    assert _largest_call(root / "llm.sqlite") <= BOUNDED_REQUEST // 4 < config.context_tokens


def test_a_request_larger_than_the_declared_context_is_not_sent(tmp_path, replay_server):
    url = replay_server()
    root = tmp_path / "run"
    [record] = [r for r in iter_records("neiss", limit=10) if r.record_id == FIRST_ROUND]
    config = fast_config(
        url, root / "llm.sqlite", **LLMConfig.from_env({"SAFEFORGE_LLM_CONTEXT_TOKENS": "1000"}).model_dump(include={"context_tokens"})
    )
    summary = run_records(root, [record], config)
    assert summary.states == {"error": 1}
    [(state, reason)] = ledger_states(root).values()
    assert "context" in reason and "more than the models' context of 1,000 (SAFEFORGE_LLM_CONTEXT_TOKENS); it was not sent" in reason
    assert admin(url, "/admin/stats")["requests"] == 0
    with sqlite3.connect(root / "llm.sqlite") as db:
        assert db.execute("SELECT outcome, tokens_in FROM calls").fetchall() == [("refused_context", 0)]
