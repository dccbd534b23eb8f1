"""Hostile conditions in a generation run. A generated task nested too deeply is a failed check fed
back to the generator, with every round recorded. A full disk stops the run with one line naming
the file (exit 2), no traceback per record, and no record is left in "error": the run resumes
without --retry-errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from generation_helpers import fast_config, replay_entries, run_records
from tests_paths import REPO

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
