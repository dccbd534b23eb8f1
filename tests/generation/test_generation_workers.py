"""Generation on several processes (`generate_run(..., executor=WorkerProcesses(N))`, `--workers N`): the same run as
one process, the run's own process working beside its worker within the concurrency, a dead
worker's record ends in error while the others finish, and a worker stops when the run's process
is gone."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading

import pytest
from busy_machine import HANG_S, eventually
from dying_checker import EXIT_CODE, MARKS, check_or_die, doomed_record
from generation_helpers import FAST_SETTINGS, admin, fast_config, ledger_states, requests_served, run_records
from tests_paths import REPO

from safeforge.generation import RunContext, RunSummary, WorkerProcesses, generate_run
from safeforge.llm import LLMClient
from safeforge.runs.ledger import RunStore
from safeforge.sources import iter_records


@pytest.fixture
def records():
    return list(iter_records("neiss", limit=5))


def test_two_workers_make_the_run_one_process_makes(tmp_path, records, replay_server):
    one, two = replay_server(), replay_server()
    alone = run_records(tmp_path / "one" / "run", records, fast_config(one, tmp_path / "one" / "llm.sqlite"), concurrency=4)
    shared = run_records(
        tmp_path / "two" / "run", records, fast_config(two, tmp_path / "two" / "llm.sqlite"), concurrency=4, executor=WorkerProcesses(2)
    )
    assert shared.states == alone.states and shared.states["checked"] >= 2
    assert ledger_states(tmp_path / "two" / "run") == ledger_states(tmp_path / "one" / "run")
    assert (shared.calls, shared.tasks_passed) == (alone.calls, alone.tasks_passed)
    # tokens the server reports as cached depend on the order of the requests, the others do not
    assert (shared.tokens["in"], shared.tokens["out"]) == (alone.tokens["in"], alone.tokens["out"])
    assert requests_served(two) == requests_served(one)
    tasks = sorted(p.name for p in (tmp_path / "two" / "run" / "tasks").iterdir())
    assert tasks == sorted(p.name for p in (tmp_path / "one" / "run" / "tasks").iterdir())
    for name in tasks:
        metadata = json.loads((tmp_path / "two" / "run" / "tasks" / name / "metadata.json").read_text())
        assert metadata["checks"] and all(check["ok"] for check in metadata["checks"])

    served = requests_served(two)
    again = run_records(
        tmp_path / "two" / "run", records, fast_config(two, tmp_path / "two" / "llm.sqlite"), concurrency=4, executor=WorkerProcesses(2)
    )
    assert requests_served(two) == served and again.states == alone.states  # resumed: nothing asked again


def test_the_run_process_works_beside_its_worker_within_the_concurrency(tmp_path, records, replay_server, caplog):
    # the server holds every answer until the worker is ready, so the run's own process cannot finish
    # the records before its worker starts however slow the machine (an order of events, not a time)
    url = replay_server()
    admin(url, "/admin/hold", {"hold": True})
    caplog.set_level(logging.INFO, "safeforge.generation")
    done: dict[str, object] = {}

    config = fast_config(url, tmp_path / "llm.sqlite", timeout_s=HANG_S)  # a held call is waited for, never retried

    def run() -> None:
        done["summary"] = run_records(tmp_path / "run", records, config, concurrency=2, executor=WorkerProcesses(2))

    thread = threading.Thread(target=run)
    thread.start()
    try:
        eventually(lambda: "generation worker 1 ready" in caplog.text, "the worker is ready")
    finally:
        admin(url, "/admin/hold", {"hold": False})
    thread.join(HANG_S)
    summary = done["summary"]
    assert isinstance(summary, RunSummary)
    assert sum(summary.states.values()) == len(records) and "error" not in summary.states
    with sqlite3.connect(tmp_path / "llm.sqlite") as db:
        pids = {pid for (pid,) in db.execute("SELECT DISTINCT pid FROM calls")}
    assert os.getpid() in pids and len(pids) == 2  # both processes made calls
    assert admin(url, "/admin/stats")["max_in_flight"] <= 2  # records in flight counted across the processes


def test_a_dead_worker_leaves_its_record_in_error_and_the_others_finish(tmp_path, records, replay_server, monkeypatch, caplog):
    monkeypatch.setenv(MARKS, str(tmp_path))
    url = replay_server()
    config = fast_config(url, tmp_path / "llm.sqlite")
    summary = run_records(tmp_path / "run", records, config, concurrency=2, executor=WorkerProcesses(2), checker=check_or_die)
    states = ledger_states(tmp_path / "run")
    doomed = doomed_record()
    state, reason = states.pop(doomed)
    assert state == "error" and f"exited with code {EXIT_CODE} while processing this record" in reason
    assert summary.errors == {doomed: reason}
    assert f"generation worker 1 exited with code {EXIT_CODE}" in caplog.text and "1 record(s) in progress end in error" in caplog.text
    assert all(state in {"checked", "no_danger", "rejected_by_checks"} for state, _ in states.values()), states
    assert len(states) == len(records) - 1


def test_workers_refuse_what_cannot_cross_a_process(tmp_path, records, replay_server):
    config = fast_config(replay_server(), tmp_path / "llm.sqlite")
    with pytest.raises(ValueError, match="picklable"):
        run_records(tmp_path / "run", records, config, executor=WorkerProcesses(2), checker=lambda task_dir: None)


def test_a_worker_stops_when_the_run_process_is_gone(tmp_path, replay_server):
    config = fast_config(replay_server(), tmp_path / "llm.sqlite")
    job = {
        "run": str(tmp_path / "run"),
        "config": json.loads(config.model_dump_json()),
        "settings": json.loads(FAST_SETTINGS.model_dump_json()),
        "lanes": 2,
        "checker": None,
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "safeforge.generation.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO, text=True
    )
    worker.stdin.write(json.dumps(job) + "\n")
    worker.stdin.flush()
    assert json.loads(worker.stdout.readline()) == {"want": 1}  # a lane asks for a record
    worker.stdin.close()  # the run's process is gone
    assert worker.wait(timeout=30) == 3


def test_generate_run_with_workers_reports_progress_per_record(tmp_path, records, replay_server):
    url = replay_server()
    store = RunStore(tmp_path / "run")
    seen = []

    async def go():
        async with LLMClient(fast_config(url, tmp_path / "llm.sqlite")) as client:
            return await generate_run(
                store, records, client, FAST_SETTINGS, concurrency=3, progress=seen.append, executor=WorkerProcesses(2)
            )

    try:
        summary = asyncio.run(go())
    finally:
        store.ledger.close()
    assert [update.done for update in seen] == list(range(1, len(records) + 1))
    assert sorted(update.record_id for update in seen) == sorted(r.record_id for r in records)
    assert seen[-1].tasks_passed == summary.tasks_passed


def test_a_worker_starts_without_the_table_readers():
    """A worker's start counts against every record of the run: it never loads pandas or pandera
    (they load when a NEISS or NormBank table is read), while the readers still work after it."""
    code = (
        "import sys\n"
        "import safeforge.generation.worker\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'pandera'}))\n"
        "from safeforge.sources import iter_records\n"
        "print(len(list(iter_records('neiss', limit=2))), len(list(iter_records('normbank', limit=2))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "2 2"]


_COUNTING_WORKER = """\
import sys
from collections import Counter
from safeforge.llm.prompts import PromptTemplate
from safeforge.settings import Settings
loads = Counter()
template, settings = PromptTemplate.load.__func__, Settings.load_with_sources.__func__
PromptTemplate.load = classmethod(lambda cls, *a, **k: (loads.update(["templates"]), template(cls, *a, **k))[1])
Settings.load_with_sources = classmethod(lambda cls, *a, **k: (loads.update(["settings"]), settings(cls, *a, **k))[1])
from safeforge.generation import worker
code = worker.main()
print("loads", dict(loads), file=sys.stderr)
sys.exit(code)
"""


def test_a_worker_loads_the_runs_prompts_once_for_all_its_records(tmp_path, records, replay_server):
    config = fast_config(replay_server(), tmp_path / "llm.sqlite")
    job = {
        "run": str(tmp_path / "run"),
        "config": json.loads(config.model_dump_json()),
        "settings": json.loads(RunContext.load(FAST_SETTINGS).settings.model_dump_json()),  # as the run's process sends them
        "lanes": 1,
        "checker": None,
    }
    log = tmp_path / "worker.log"
    with log.open("w") as stderr:
        worker = subprocess.Popen(
            [sys.executable, "-c", _COUNTING_WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=REPO, text=True
        )
    worker.stdin.write(json.dumps(job) + "\n")
    worker.stdin.flush()
    done = []
    for record in [*records[:3], None]:
        assert json.loads(worker.stdout.readline()) == {"want": 1}
        worker.stdin.write(json.dumps({"record": record.to_dict()} if record else {"end": True}) + "\n")
        worker.stdin.flush()
        if record:
            done.append(json.loads(worker.stdout.readline())["done"])
    assert worker.wait(timeout=60) == 0, log.read_text()
    errors = log.read_text()
    assert done == [r.record_id for r in records[:3]]
    assert "loads {'templates': 4}" in errors  # one PromptSet for the three records; the settings came with the job
