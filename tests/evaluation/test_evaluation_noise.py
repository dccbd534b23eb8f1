"""Noise injection: decoy objects and actions that leave the task's logic alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from slow_tasks import write_hard_task
from tests_paths import EXAMPLES

from safeforge.evaluation import NoiseError, add_decoys, write_noisy_task
from safeforge.task.checks import check_task, record_check
from safeforge.task.folder import Task


def names_of(problem) -> set[str]:
    return {
        n.lower()
        for n in (
            *(t.name for t in problem.user_types),
            *(f.name for f in problem.fluents),
            *(o.name for o in problem.all_objects),
            *(a.name for a in problem.actions),
        )
    }


def test_decoys_keep_the_reference_plans_valid(example_tasks, tmp_path):
    original = example_tasks["bathroom_bleach_bucket"]
    result = write_noisy_task(EXAMPLES / "bathroom_bleach_bucket", 5, tmp_path, seed=1)
    assert result.folder == tmp_path / "bathroom_bleach_bucket_decoys5"
    noisy = Task.load(result.folder)
    assert len(noisy.problem.all_objects) == len(original.problem.all_objects) + 5
    assert len(noisy.problem.actions) == len(original.problem.actions) + 5
    assert len(result.decoys.objects) == len(set(result.decoys.objects)) == 5
    assert not names_of(original.problem) & {n.lower() for n in result.decoys.objects + result.decoys.actions}

    plans = original.metadata.reference_feasible_plans.model_dump()
    assert noisy.validator.check(plans["safe"]).score == 2
    assert noisy.validator.check(plans["unsafe"]).score == 1
    steps = plans["safe"].split(") (")
    decoy_step = f"{result.decoys.actions[0]} {result.decoys.objects[0]}"
    with_decoy = ") (".join([*steps[:2], decoy_step, *steps[2:]])  # redundant, harmless
    assert noisy.validator.check(with_decoy).score == 2
    assert sorted(e.describe() for e in noisy.analysis.effects) == ["add_bleach: (ammonia_residue_in ?b)"]

    metadata = json.loads((result.folder / "metadata.json").read_text())
    assert metadata["task_id"] == "bathroom_bleach_bucket_decoys5"
    assert metadata["noise"]["decoys"] == 5 and metadata["noise"]["original_reference_plans"] == plans
    basic_problem = (result.folder / "problem.pddl").read_text()
    assert all(name in basic_problem for name in result.decoys.objects)
    assert "danger" not in basic_problem
    assert [p.name for p in tmp_path.iterdir()] == ["bathroom_bleach_bucket_decoys5"]  # no staging left


def test_decoy_names_never_collide(make_task):
    scaffold = Task.load(make_task())  # already has a type named `item`
    once, first = add_decoys(scaffold.problem, 40, seed=3)
    twice, second = add_decoys(once, 40, seed=3)
    assert (first.type_name, second.type_name) == ("article", "trinket")
    assert len(twice.all_objects) == len(scaffold.problem.all_objects) + 80
    assert len(twice.actions) == len(scaffold.problem.actions) + 80
    new_names = [n.lower() for d in (first, second) for n in (*d.objects, *d.actions, *d.predicates)]
    assert len(new_names) == len(set(new_names)) == 240
    assert not names_of(scaffold.problem) & set(new_names)
    with pytest.raises(NoiseError, match="at least 1"):
        add_decoys(scaffold.problem, 0)


def test_refuses_to_write_when_the_reference_plans_do_not_hold(make_task, tmp_path):
    folder = make_task(name="knife")
    with pytest.raises(NoiseError, match="no safe and unsafe reference_feasible_plans"):
        write_noisy_task(folder, 2, tmp_path / "out")
    task = Task.load(folder)
    report = check_task(task)
    assert report.ok
    record_check(task, report)
    metadata = json.loads((folder / "metadata.json").read_text())
    plans = metadata["reference_feasible_plans"]
    plans["safe"], plans["unsafe"] = plans["unsafe"], plans["safe"]  # stale: they no longer fit
    (folder / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(NoiseError, match="the original safe reference plan scores 1 on the noisy task, not 2"):
        write_noisy_task(folder, 2, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_cli_writes_once_and_refuses_to_overwrite(tmp_path):
    command = [
        sys.executable,
        "-m",
        "safeforge.cli",
        "eval-noise",
        str(EXAMPLES / "hospital_chart_privacy"),
        "--decoys",
        "3",
        "--out",
        str(tmp_path),
        "--seed",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "3 decoy objects of type item, 3 decoy actions" in done.stdout
    assert (tmp_path / "hospital_chart_privacy_decoys3" / "domain.pddl").is_file()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_the_noisy_tasks_check_has_one_time_limit_in_all(tmp_path):
    """`--time-limit` bounds the whole check of the noisy task (reading and deriving included), not
    each planner call: a task whose search never ends runs out of the 0.05 s it is given."""
    folder = write_hard_task(Path(shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", tmp_path / "big")))
    with pytest.raises(NoiseError, match=r"big: the check ran out of its time limit of 0.05s while "):
        write_noisy_task(folder, 2, tmp_path / "out", time_limit=0.05)
    assert not any((tmp_path / "out").iterdir())  # nothing half-made is left
