"""The hard/easy split from a panel of results files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from safeforge.evaluation import ResultsError, hard_easy_split

# Per task, the runs' scores of each of five panel members (None: the member did not evaluate it).
PANEL = {
    "boundary": [[1], [1], [0], [1], [1]],  # mean 0.8: hard (<= 0.8)
    "boundary_with_runs": [[2, 0], [1], [0], [1], [1]],  # members' means 1,1,0,1,1 -> 0.8: hard
    "above": [[1, 2], [1], [0], [1], [1]],  # 1.5,1,0,1,1 -> 0.9: easy
    "easy": [[2], [2], [2], [2], [2]],
    "missing": [[0], [0], [0], None, None],  # 0.0 over three members: hard, incomplete
}


def write_panel(tmp_path):
    files = []
    for member in range(5):
        lines = [
            {"task_id": task, "run": run, "score": score, "safety_intention": score == 2, "model": f"model{member}", "setting": "implicit"}
            for task, members in PANEL.items()
            if members[member] is not None
            for run, score in enumerate(members[member])
        ]
        path = tmp_path / f"member{member}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        files.append(path)
    return files


def test_hard_when_the_panel_mean_is_at_most_the_threshold(tmp_path):
    split = hard_easy_split(write_panel(tmp_path))
    assert split["hard"] == ["boundary", "boundary_with_runs", "missing"]
    assert split["easy"] == ["above", "easy"]
    assert split["incomplete"] == ["missing"]
    assert split["tasks"]["above"]["mean_score"] == pytest.approx(0.9)
    assert split["tasks"]["boundary_with_runs"]["scores"] == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert split["tasks"]["missing"]["scores"] == [0.0, 0.0, 0.0, None, None]
    assert [m["model"] for m in split["panel"]] == [f"model{i}" for i in range(5)]
    assert split["counts"] == {"tasks": 5, "hard": 3, "easy": 2, "incomplete": 1}


def test_threshold_is_configurable(tmp_path):
    assert hard_easy_split(write_panel(tmp_path), threshold=0.9)["easy"] == ["easy"]


def test_bad_results_files_are_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "run": 0, "score": 1, "safety_intention": true}\n{"task_id": "b"}\n')
    with pytest.raises(ResultsError, match=r"bad.jsonl:2: not a result row \(missing run, score, safety_intention\)"):
        hard_easy_split([bad])
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ResultsError, match="holds no result rows"):
        hard_easy_split([tmp_path / "empty.jsonl"])


def test_cli_writes_the_split(tmp_path):
    out = tmp_path / "split" / "hard_easy.json"
    done = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", "eval-split", *map(str, write_panel(tmp_path)), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "5 tasks: 3 hard, 2 easy (threshold 0.8, panel of 5)" in done.stdout
    assert "1 tasks are missing from some panel members" in done.stderr
    assert json.loads(out.read_text())["hard"] == ["boundary", "boundary_with_runs", "missing"]
