"""`safeforge generate` as a user runs it: a subprocess talking HTTP to the replay server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from busy_machine import eventually
from generation_helpers import admin
from tests_paths import REPO

from safeforge.llm import CallLedger


def safeforge(*args: str, env: dict[str, str], cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "safeforge.cli", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SAFEFORGE_"))}
    return {**env, **extra}


def test_generate_runs_offline_against_the_replay_server(tmp_path, replay_server):
    url = replay_server()
    env = clean_env(OPENAI_BASE_URL=url, SAFEFORGE_MODEL="deepseek-chat")
    done = safeforge("generate", "normbank", "--limit", "2", "--out", str(tmp_path), "--run", "nb", "--concurrency", "2", env=env)
    assert done.returncode == 0, done.stderr
    assert "run nb: 2 record(s)" in done.stdout
    assert "states: checked 2" in done.stdout
    assert f"tasks passed: 2 -> {tmp_path / 'nb' / 'tasks'}" in done.stdout
    lines = [line for line in done.stderr.splitlines() if "records |" in line]
    assert lines[-1].startswith("2/2 records | 2 tasks passed | $0.00")  # plain lines when not a TTY
    assert "ETA" in lines[-1]
    assert "normbank: read 2, yielded 2, skipped 0, filtered 0" in done.stderr
    assert sorted(p.name for p in (tmp_path / "nb" / "tasks").iterdir()) == ["normbank_0", "normbank_1"]
    assert (tmp_path / "nb" / "llm.sqlite").is_file()  # the run's own cache and call ledger

    again = safeforge("generate", "normbank", "--limit", "2", "--out", str(tmp_path), "--run", "nb", "--json", env=env)
    summary = json.loads(again.stdout)
    assert again.returncode == 0 and summary["calls"] == 0 and summary["states"] == {"checked": 2}


def test_generate_shares_the_records_between_worker_processes(tmp_path, replay_server):
    env = clean_env(OPENAI_BASE_URL=replay_server(), SAFEFORGE_MODEL="deepseek-chat")
    args = ("generate", "neiss", "--limit", "5", "--out", str(tmp_path), "--run", "w", "--concurrency", "4", "--workers", "2", "--json")
    done = safeforge(*args, env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["states"] == {"checked": 3, "no_danger": 1, "rejected_by_checks": 1} and summary["calls"] > 0
    assert [line.split(" records")[0] for line in done.stderr.splitlines() if "records |" in line][-1] == "5/5"


def test_generate_without_an_endpoint_says_how_to_configure_one(tmp_path):
    done = safeforge("generate", "neiss", "--limit", "1", "--out", str(tmp_path), env=clean_env())
    assert done.returncode == 2
    assert "no LLM endpoint configured: set OPENAI_BASE_URL" in done.stderr
    assert "\n  offline:   safeforge llm replay-server --port 8765 &\n" in done.stderr  # the hint on lines of its own
    assert "\\n" not in done.stderr
    assert not tmp_path.joinpath("neiss").exists() and list(tmp_path.iterdir()) == []


def test_generate_reports_unreadable_input(tmp_path, replay_server):
    env = clean_env(OPENAI_BASE_URL=replay_server())
    done = safeforge("generate", "neiss", "--path", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o"), env=env)
    assert done.returncode == 2 and "missing.csv" in done.stderr and "error:" in done.stderr


def test_generate_takes_the_source_filters(tmp_path, replay_server):
    env = clean_env(OPENAI_BASE_URL=replay_server())
    wrong = safeforge("generate", "neiss", "--setting", "kitchen", "--out", str(tmp_path), env=env)
    assert wrong.returncode == 2 and "error: --setting applies to normbank, not neiss" in wrong.stderr
    # the bundled NEISS sample has no HOME injuries: the filter selects nothing, and says why
    none = safeforge("generate", "neiss", "--location", "HOME", "--out", str(tmp_path), "--run", "home", "--json", env=env)
    assert none.returncode == 0, none.stderr
    assert json.loads(none.stdout)["states"] == {}
    assert "neiss: read 150, yielded 0, skipped 0, filtered 150" in none.stderr


def test_a_second_process_on_the_same_run_is_refused_naming_the_holder(tmp_path, replay_server):
    url = replay_server()
    admin(url, "/admin/hold", {"hold": True})  # the first run waits for its first answer until the second is refused
    env = clean_env(OPENAI_BASE_URL=url, SAFEFORGE_MODEL="deepseek-chat")
    command = [
        sys.executable,
        "-m",
        "safeforge.cli",
        "generate",
        "normbank",
        "--limit",
        "2",
        "--out",
        str(tmp_path),
        "--run",
        "shared",
        "--concurrency",
        "1",
    ]
    first = subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lock = tmp_path / "shared" / "run.lock"
        eventually(lambda: lock.is_file() and lock.read_text(), "the first run holding the lock")
        second = safeforge("generate", "normbank", "--limit", "2", "--out", str(tmp_path), "--run", "shared", env=env)
        assert second.returncode == 2
        assert f"run shared is in use: generate by pid {first.pid}" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        admin(url, "/admin/hold", {"hold": False})
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert "states: checked 2" in out  # the first run was not disturbed
    assert lock.read_text() == ""  # released: the next process may take it


def test_calls_in_flight_at_a_kill_are_recorded_as_unknown(tmp_path, replay_server):
    url = replay_server()
    admin(url, "/admin/hold", {"hold": True})  # the calls stay in flight until the kill, however slow the machine
    env = clean_env(OPENAI_BASE_URL=url, SAFEFORGE_MODEL="deepseek-chat")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "safeforge.cli",
            "generate",
            "normbank",
            "--limit",
            "2",
            "--out",
            str(tmp_path),
            "--run",
            "killed",
            "--concurrency",
            "2",
        ],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    eventually(lambda: process.poll() is not None or admin(url, "/admin/stats")["in_flight"] >= 2, "two calls in flight")
    assert process.poll() is None
    process.kill()
    process.wait(timeout=10)
    admin(url, "/admin/hold", {"hold": False})
    served = admin(url, "/admin/stats")["requests"]
    ledger = CallLedger(tmp_path / "killed" / "llm.sqlite")  # opened after the kill
    rows = ledger.rows()
    assert len([r for r in rows if r.outcome != "cache_hit"]) == served  # every request sent is in the ledger
    unknown = [r for r in rows if r.outcome == "unknown"]
    assert len(unknown) == 2 and all("in flight when its process ended" in r.error for r in unknown)
    assert sum(s.unpriced_calls for s in ledger.summary()) == 2  # their cost is not known
