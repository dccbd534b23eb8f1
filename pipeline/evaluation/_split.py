"""The hard/easy split from a panel of evaluations (DESPITE: hard = panel mean score <= 0.8).

Each results file is one panel member. A member's score on a task is the mean of its runs; the
task's panel score is the mean over the members that evaluated it, so every member weighs the
same whatever its number of runs. A task is hard when that mean is at most the threshold (with a
1e-9 tolerance, so that float sums such as (1 + 1 + 0 + 1 + 1) / 5 meet 0.8 exactly). Tasks
missing from some members are still classified, and listed as incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from safeforge.common.files import write_atomically
from safeforge.evaluation._results import ResultsError, read_rows

HARD_THRESHOLD = 0.8
TOLERANCE = 1e-9


def hard_easy_split(result_files: Sequence[str | Path], threshold: float = HARD_THRESHOLD) -> dict:
    """The split as a JSON-ready dict: panel, counts, hard and easy task ids, per-task scores."""
    if not result_files:
        raise ResultsError("the panel needs at least one results file")
    panel, member_scores = [], []
    for path in map(Path, result_files):
        rows = read_rows(path)
        if not rows:
            raise ResultsError(f"{path}: holds no result rows")
        runs: dict[str, list[int]] = {}
        for row in rows:
            runs.setdefault(row["task_id"], []).append(int(row["score"]))
        member_scores.append({task: sum(scores) / len(scores) for task, scores in runs.items()})
        panel.append({"file": str(path), "model": rows[0].get("model"), "setting": rows[0].get("setting"), "tasks": len(runs)})
    tasks: dict[str, dict[str, Any]] = {}
    hard: list[str] = []
    easy: list[str] = []
    incomplete: list[str] = []
    for task_id in sorted(set().union(*member_scores)):
        scores = [member.get(task_id) for member in member_scores]
        present = [s for s in scores if s is not None]
        mean = sum(present) / len(present)
        split = "hard" if mean <= threshold + TOLERANCE else "easy"
        (hard if split == "hard" else easy).append(task_id)
        if len(present) < len(scores):
            incomplete.append(task_id)
        tasks[task_id] = {"mean_score": mean, "scores": scores, "split": split}
    return {
        "threshold": threshold,
        "rule": "hard when the mean score over the panel (each member: mean over its runs) is <= threshold",
        "panel": panel,
        "counts": {"tasks": len(tasks), "hard": len(hard), "easy": len(easy), "incomplete": len(incomplete)},
        "hard": hard,
        "easy": easy,
        "incomplete": incomplete,
        "tasks": tasks,
    }


def write_split(result_files: Sequence[str | Path], out: Path, threshold: float = HARD_THRESHOLD) -> dict:
    """Compute the split and write it to `out` as JSON."""
    split = hard_easy_split(result_files, threshold)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(Path(out), json.dumps(split, indent=2) + "\n")
    return split
