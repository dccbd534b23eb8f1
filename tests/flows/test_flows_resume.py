"""Kill -9 during generation, start the same run again: it finishes with the same tasks and
ledger as an uninterrupted run, and not one extra LLM request (flow `generate` in subprocesses,
against a real Prefect server, the real openai client against the replay server)."""

from __future__ import annotations

import os
import signal

import httpx
import psutil
from busy_machine import eventually
from flows_support import kill_group, run_flow, start_flow, tasks_of

from safeforge.llm import CallLedger
from safeforge.runs.ledger import RunLedger

# the first three NEISS sample records: two generation rounds then checked; NO_DANGER; checked in round 1.
# The checks use Fast Downward (a planner process per plan, not the milliseconds of the in-process
# search), so that the run can be killed while a candidate is being checked.
PARAMS = {"source": "neiss", "limit": 3, "concurrency": 1, "run_name": "resume", "engine": "fast-downward-opt"}
RECORDS = ["neiss_170957638", "neiss_220159454", "neiss_220705908"]
KILL_WAIT_S = 240


def _ledger_view(run):
    ledger = RunLedger(run / "ledger.sqlite")
    try:
        return {r: (ledger.get(r).state, [t.to_state for t in ledger.history(r)]) for r in RECORDS}
    finally:
        ledger.close()


def _ok_calls(run) -> int:
    ledger = CallLedger(run / "llm.sqlite")
    try:
        return sum(1 for row in ledger.rows() if row.outcome == "ok")
    finally:
        ledger.close()


def _processes_with(marker: str) -> list[int]:
    found = []
    for process in psutil.process_iter():
        try:
            if marker in process.environ().get("SAFEFORGE_OUTPUTS", ""):
                found.append(process.pid)
        except psutil.Error:
            continue
    return found


def test_kill_9_mid_generation_then_resume_equals_an_uninterrupted_run(prefect_server, replay_server, tmp_path):
    _, server_env = prefect_server
    base_url, stats = replay_server
    admin = base_url.removesuffix("/v1") + "/admin"

    whole = tmp_path / "whole"
    run_flow(PARAMS, {**server_env, "OPENAI_BASE_URL": base_url, "SAFEFORGE_OUTPUTS": str(whole)}, tmp_path / "whole.log")
    requests_whole = stats()["requests"]
    assert requests_whole == 8  # extract x3; generate x2 + judge for the first; generate + judge for the third
    httpx.post(f"{admin}/reset")

    outputs = tmp_path / "killed"
    env = {**server_env, "OPENAI_BASE_URL": base_url, "SAFEFORGE_OUTPUTS": str(outputs)}
    process = start_flow(PARAMS, env, tmp_path / "killed.log")
    # kill while the first record's round-2 candidate is being checked (no LLM request in flight)
    candidate = outputs / "resume" / "work" / RECORDS[0] / "round-2" / "safety_problem.pddl"
    eventually(
        lambda: process.poll() is not None or (candidate.exists() and stats()["in_flight"] == 0),
        "the run reaching round 2 of its first record",
        timeout=KILL_WAIT_S,
        every=0.02,
    )
    assert process.poll() is None, (tmp_path / "killed.log").read_text()[-3000:]
    kill_group(process, signal.SIGKILL)
    eventually(lambda: _processes_with(str(outputs)) == [], "the flow, its forkserver and planners gone")

    interrupted = _ledger_view(outputs / "resume")
    assert interrupted[RECORDS[0]][0] == "extracted"  # killed mid-generation
    assert interrupted[RECORDS[2]][0] == "pending"
    requests_before = stats()["requests"]
    assert 0 < requests_before < requests_whole

    run_flow(PARAMS, env, tmp_path / "resumed.log")

    assert stats()["requests"] == requests_whole  # the calls made before the kill came from the cache
    assert _ok_calls(outputs / "resume") == _ok_calls(whole / "resume") == requests_whole
    view, expected = _ledger_view(outputs / "resume"), _ledger_view(whole / "resume")
    assert view == expected  # same states, each transition exactly once
    assert {r: state for r, (state, _) in view.items()} == {RECORDS[0]: "checked", RECORDS[1]: "no_danger", RECORDS[2]: "checked"}
    assert tasks_of(outputs / "resume") == tasks_of(whole / "resume")
    assert sorted(os.listdir(outputs / "resume" / "tasks")) == [RECORDS[0], RECORDS[2]]
