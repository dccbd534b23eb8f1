"""Every fault kind the replay server injects, through the whole loop over real HTTP: retried and
recovered, or ended in error with the reason. No record is ever lost."""

from __future__ import annotations

import sqlite3

import pytest
from generation_helpers import fast_config, ledger_states, replay_entries, requests_served, run_records

from safeforge.sources import Record, iter_records

NO_DANGER = "neiss_220159454"  # one LLM call: fault tests on it need no planner
FIRST_ROUND = "neiss_220705908"  # extract, generate, judge: all in round 1

CLIENT_TIMEOUT_S = 1.0
TIMEOUT_SLEEP_S = 60.0  # a "timeout" fault answers long after the client's timeout, however busy the machine

FAULTS = {
    "429": (["429:0.3"], "retry_rate_limit"),
    "500": (["500"], "retry_server_error"),
    "timeout": (["timeout"], "retry_timeout"),
    "malformed_json": (["malformed_json"], "validation_error"),
    "truncated": (["truncated"], "validation_error"),
}


def neiss(*record_ids: str) -> list[Record]:
    wanted = set(record_ids)
    return [r for r in iter_records("neiss", limit=10) if r.record_id in wanted]


def retry_delays(root, record_id: str, stage: str) -> list[tuple[str, float | None]]:
    """(outcome, retry_delay_s) of each attempt: the wait the client chose before the next one."""
    with sqlite3.connect(root / "llm.sqlite") as db:
        query = "SELECT outcome, retry_delay_s FROM calls WHERE record_id = ? AND stage = ? ORDER BY id"
        return db.execute(query, (record_id, stage)).fetchall()


def outcomes(root, record_id: str, stage: str) -> list[str]:
    with sqlite3.connect(root / "llm.sqlite") as db:
        return [o for (o,) in db.execute("SELECT outcome FROM calls WHERE record_id = ? AND stage = ? ORDER BY id", (record_id, stage))]


@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_each_fault_kind_is_retried_and_recovered(kind, tmp_path, replay_dir, replay_server):
    faults, outcome = FAULTS[kind]
    url = replay_server(replay_dir(faults={(NO_DANGER, "extract"): faults}), timeout_sleep_s=TIMEOUT_SLEEP_S)
    root = tmp_path / "run"
    summary = run_records(root, neiss(NO_DANGER), fast_config(url, root / "llm.sqlite", timeout_s=CLIENT_TIMEOUT_S))
    assert summary.states == {"no_danger": 1}
    assert outcomes(root, NO_DANGER, "extract") == [outcome, "ok"]
    assert requests_served(url) == 2  # the fault, then the retry (or the repair turn)


def test_429_honours_retry_after(tmp_path, replay_dir, replay_server):
    url = replay_server(replay_dir(faults={(NO_DANGER, "extract"): ["429:0.6"]}))
    root = tmp_path / "run"
    summary = run_records(root, neiss(NO_DANGER), fast_config(url, root / "llm.sqlite"))
    assert summary.states == {"no_danger": 1}
    (retried, delay), answered = retry_delays(root, NO_DANGER, "extract")
    assert retried == "retry_rate_limit" and delay is not None and delay >= 0.6  # the backoff alone would wait about 0.01 s
    assert answered == ("ok", None)


def test_faults_in_every_stage_of_a_full_round_are_recovered(tmp_path, replay_dir, replay_server):
    url = replay_server(
        replay_dir(
            faults={
                (FIRST_ROUND, "extract"): ["429:0.1", "500"],
                (FIRST_ROUND, "generate"): ["truncated", "timeout"],
                (FIRST_ROUND, "judge"): ["malformed_json", "503"],
            }
        ),
        timeout_sleep_s=TIMEOUT_SLEEP_S,
    )
    root = tmp_path / "run"
    summary = run_records(root, neiss(FIRST_ROUND), fast_config(url, root / "llm.sqlite", timeout_s=CLIENT_TIMEOUT_S))
    assert summary.states == {"checked": 1}
    assert outcomes(root, FIRST_ROUND, "extract") == ["retry_rate_limit", "retry_server_error", "ok"]
    assert outcomes(root, FIRST_ROUND, "generate") == ["validation_error", "retry_timeout", "ok"]
    assert outcomes(root, FIRST_ROUND, "judge") == ["validation_error", "retry_server_error", "ok"]
    assert (root / "tasks" / FIRST_ROUND / "metadata.json").is_file()


def test_persistent_faults_end_in_error_with_the_reason_and_lose_nothing(tmp_path, replay_dir, replay_server):
    """Four records: one recovers, one fails in extraction, one in generation (after extraction),
    one has no scripted response at all. Every record ends in exactly one state."""
    broken_generation = [
        {**entry, "faults": ["500", "500", "500"]} if "stage: generate" in entry["match"]["contains"] else entry
        for entry in replay_entries(FIRST_ROUND)
    ]
    url = replay_server(
        replay_dir(faults={(NO_DANGER, "extract"): ["500", "500", "500"]}, extra={f"{FIRST_ROUND}.json": broken_generation})
    )
    root = tmp_path / "run"
    records = neiss(NO_DANGER, FIRST_ROUND, "neiss_180553068", "neiss_170957638")
    summary = run_records(root, records, fast_config(url, root / "llm.sqlite"), concurrency=4)
    assert summary.records == 4 and sum(summary.states.values()) == 4
    assert summary.states == {"error": 3, "checked": 1}
    states = ledger_states(root)
    assert states[NO_DANGER] == (
        "error",
        "extract: LLM call failed (server_error, 3 attempt(s)): Error code: 500 - HTTP 500 (replayed fault)",
    )
    assert states[FIRST_ROUND] == (
        "error",
        "generate (round 1): LLM call failed (server_error, 3 attempt(s)): Error code: 500 - HTTP 500 (replayed fault)",
    )
    assert "no replay entry matches" in states["neiss_180553068"][1]
    assert states["neiss_170957638"][0] == "checked"
    assert set(summary.errors) == {NO_DANGER, FIRST_ROUND, "neiss_180553068"}


def test_persistent_invalid_json_ends_in_error(tmp_path, replay_dir, replay_server):
    url = replay_server(replay_dir(faults={(NO_DANGER, "extract"): ["malformed_json", "malformed_json"]}))
    root = tmp_path / "run"
    summary = run_records(root, neiss(NO_DANGER), fast_config(url, root / "llm.sqlite"))
    state, reason = ledger_states(root)[NO_DANGER]
    assert summary.states == {"error": 1} and state == "error"
    assert reason.startswith("extract: LLM call failed (validation, 2 attempt(s)): ")
