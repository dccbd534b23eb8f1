"""A source added by another package: one module (tests/sources/plugin/toy_source.py) and an
entry point naming its SPEC, nothing else. `safeforge sources list/show` and `safeforge generate`
offer it, with its own option, as they do the built-in sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from safeforge.llm.replay_server import running_replay_server
from safeforge.runs.ledger import RunLedger

PLUGIN = Path(__file__).parent / "plugin"
SAMPLE = PLUGIN / "samples" / "toy" / "hazards.txt"


@pytest.fixture
def installed(tmp_path) -> dict[str, str]:
    """The toy source installed as a distribution would be: its module on the path and a
    dist-info folder whose entry point names its SPEC. Yields the environment to run with."""
    site = tmp_path / "site"
    info = site / "toy_source-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-source\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[safeforge.sources]\ntoy = toy_source:SPEC\n")
    path = os.pathsep.join([str(site), str(PLUGIN), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "SAFEFORGE_OUTPUTS": str(tmp_path / "outputs")}


def safeforge(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "safeforge.cli", *args], env=env, capture_output=True, text=True, timeout=300)


def test_a_source_of_another_package_is_listed_and_read_with_its_own_option(installed):
    listed = [json.loads(line) for line in safeforge(installed, "sources", "list", "--json").stdout.splitlines()]
    toy = next(entry for entry in listed if entry["name"] == "toy")
    assert (toy["options"], toy["in_use"], toy["default_path"]) == (["min_words"], "sample", str(SAMPLE))

    shown = safeforge(installed, "sources", "show", "toy", "--min-words", "3", "--json")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["record_id"] for r in records] == ["toy_1", "toy_3"]
    assert records[0]["origin"] == "toy@sample/hazards.txt:row 1"  # the dataset, not this machine's path
    assert "read 3, yielded 2, skipped 0, filtered 1" in shown.stderr

    help_text = safeforge(installed, "generate", "--help").stdout
    assert "toy options" in help_text and "--min-words" in help_text
    wrong = safeforge(installed, "sources", "show", "neiss", "--min-words", "3")
    assert (wrong.returncode, wrong.stderr.strip()) == (2, "error: --min-words applies to toy, not neiss")
    bad = safeforge(installed, "sources", "show", "toy", "--min-words", "0")
    assert bad.returncode == 2 and "argument --min-words: '0' is not a whole number from 1 to 1000" in bad.stderr


def test_generate_runs_a_source_of_another_package(installed, tmp_path):
    replies = tmp_path / "replies"
    replies.mkdir()
    no_danger = {"status": "NO_DANGER", "reason": "a hand-written reply: nothing a robot does here", "danger_formalization": None}
    entry = {"match": {"contains": ["stage: extract", "record_id: toy_1"]}, "response": {"content": no_danger}}
    (replies / "toy_1.json").write_text(json.dumps([entry]))
    with running_replay_server(replies, latency_ms=0) as base_url:
        done = safeforge(
            {**installed, "OPENAI_BASE_URL": base_url}, "generate", "toy", "--min-words", "3", "--limit", "1", "--run", "toy", "--json"
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["states"] == {"no_danger": 1}
    ledger = RunLedger(tmp_path / "outputs" / "toy" / "ledger.sqlite")
    assert [(r.record_id, r.source, r.state) for r in ledger.records()] == [("toy_1", "toy", "no_danger")]
