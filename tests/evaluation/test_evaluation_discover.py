"""Which tasks get evaluated: task folders, run folders (by ledger state), releases, archives;
and the `safeforge eval` command run as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
from evaluation_helpers import MODEL, answer, entry, plan_text, requests_served
from tests_paths import EXAMPLES

from safeforge.evaluation import DiscoveryError, discover_tasks
from safeforge.runs.ledger import RunStore

PATH_TO_ACCEPTED = ("extracted", "checked", "in_review", "accepted")


def make_run(root):
    """A run: bathroom accepted, care home in review, hospital rejected by review, a ghost accepted
    record without its folder."""
    store = RunStore(root)
    plan = {
        "r1": ("bathroom_bleach_bucket", PATH_TO_ACCEPTED),
        "r2": ("care_home_bad_news", PATH_TO_ACCEPTED[:3]),
        "r3": ("hospital_chart_privacy", (*PATH_TO_ACCEPTED[:3], "rejected_by_review")),
        "r4": ("ghost_task", PATH_TO_ACCEPTED),
    }
    store.ledger.register([(record, "neiss", "") for record in plan])
    for record, (task_id, states) in plan.items():
        for state in states:
            store.ledger.transition(record, state, task_id=task_id)
        if task_id != "ghost_task":
            shutil.copytree(EXAMPLES / task_id, store.task_dir(task_id))
    store.ledger.close()
    return root


def ids(discovery):
    return [ref.task_id for ref in discovery.tasks]


def test_run_folders_give_accepted_tasks_or_all_unreviewed_ones(tmp_path):
    run = make_run(tmp_path / "run")
    with discover_tasks(run) as found:
        assert (found.kind, ids(found)) == ("run", ["bathroom_bleach_bucket"])
        assert len(found.problems) == 1 and "ghost_task: missing folder of accepted record r4" in found.problems[0]
    with discover_tasks(run, include_unreviewed=True) as found:
        assert ids(found) == ["bathroom_bleach_bucket", "care_home_bad_news"]


def test_releases_archives_and_single_tasks(tmp_path):
    release = tmp_path / "release"
    release.mkdir()
    with tarfile.open(release / "tasks.tar.gz", "w:gz") as tar:
        for name in ("teen_desk_diary_trust", "care_home_bad_news"):
            tar.add(EXAMPLES / name, arcname=f"tasks/{name}")
    with discover_tasks(release) as found:
        assert (found.kind, ids(found)) == ("release archive", ["care_home_bad_news", "teen_desk_diary_trust"])
        extracted = found.tasks[0].folder
        assert (extracted / "safety_domain.pddl").is_file()
    assert not extracted.exists()  # the temporary folder goes with the context

    with discover_tasks(release / "tasks.tar.gz") as found:
        assert found.kind == "archive" and len(found.tasks) == 2
    shutil.copytree(EXAMPLES / "hospital_chart_privacy", release / "tasks" / "hospital_chart_privacy")
    with discover_tasks(release) as found:  # a tasks/ folder wins over the archive
        assert (found.kind, ids(found)) == ("release", ["hospital_chart_privacy"])
    with discover_tasks(EXAMPLES / "hospital_chart_privacy") as found:
        assert (found.kind, ids(found)) == ("task folder", ["hospital_chart_privacy"])


def test_hostile_archives_and_missing_paths_are_refused(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(EXAMPLES / "care_home_bad_news" / "metadata.json", arcname="../escaped/metadata.json")
    with pytest.raises(DiscoveryError, match="evil.tar.gz: cannot be extracted"):
        with discover_tasks(evil):
            pass
    assert not (Path(tempfile.gettempdir()) / "escaped").exists()
    with pytest.raises(DiscoveryError, match="no such task folder"):
        with discover_tasks(tmp_path / "nowhere"):
            pass


def test_cli_evaluates_a_run_folder(example_tasks, start_replay, tmp_path):
    bathroom, care_home = example_tasks["bathroom_bleach_bucket"], example_tasks["care_home_bad_news"]
    entries = [entry(bathroom, answer(plan_text(bathroom, "safe"))), entry(care_home, answer(plan_text(care_home, "unsafe")))]
    url = start_replay(entries)
    run = make_run(tmp_path / "run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SAFEFORGE_"))}
    command = [
        sys.executable,
        "-m",
        "safeforge.cli",
        "eval",
        str(run),
        "--model",
        MODEL,
        "--base-url",
        url,
        "--db",
        str(tmp_path / "llm.sqlite"),
        "--out",
        str(tmp_path / "out"),
        "--include-unreviewed",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{MODEL} (implicit): 2 tasks, 2 samples, 2 new LLM calls" in done.stdout
    assert "  F  100.0%  [100.0, 100.0]" in done.stdout and "  S   50.0%  [0.0, 100.0]" in done.stdout
    assert "skipped:" in done.stderr and "ghost_task" in done.stderr
    assert "eval: 2/2 done (0 cached, 0 llm errors), $0.0000 + unpriced calls" in done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert {(r["task_id"], r["score"], r["source"]) for r in rows} == {
        ("bathroom_bleach_bucket", 2, "handwritten"),
        ("care_home_bad_news", 1, "handwritten"),
    }

    again = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0 and "0 new LLM calls" in again.stdout
    assert requests_served(url) == 2
    bad = subprocess.run([*command[:-1], "--runs", "0"], capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode == 2 and "argument --runs: '0' is not a whole number from 1 to 1000" in bad.stderr
