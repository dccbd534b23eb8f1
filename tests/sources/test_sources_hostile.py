"""Hostile files in the folder sources: each is skipped with its file and the reason, the read goes on,
and memory stays bounded (a huge file is refused by its size, not read)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests_paths import SAMPLES

from safeforge.sources import ReadReport, iter_records

LAMP = "train/look_at_obj_in_light-Box-None-DeskLamp-316/trial_T20190908_233127_359423"
GOOD_ALFRED = "alfred_trial_T20190908_233127_359423"


def read(source: str, path: Path) -> tuple[list, ReadReport]:
    report = ReadReport()
    return list(iter_records(source, path, report=report)), report


def alfred_with(tmp_path: Path, bad: dict[str, bytes | str]) -> Path:
    root = tmp_path / "json_2.1.0"
    shutil.copytree(SAMPLES / "alfred" / "json_2.1.0" / LAMP, root / LAMP)
    for name, content in bad.items():
        file = root / "train" / "task-bad" / name / "traj_data.json"
        file.parent.mkdir(parents=True)
        file.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def test_alfred_files_of_the_wrong_shape_are_skipped_and_the_rest_read(tmp_path):
    good = json.loads((SAMPLES / "alfred" / "json_2.1.0" / LAMP / "traj_data.json").read_text())
    bad = {
        "id_is_a_number": json.dumps({**good, "task_id": 17}),
        "annotations_a_string": json.dumps({**good, "task_id": "t2", "turk_annotations": "many"}),
        "anns_of_strings": json.dumps({**good, "task_id": "t3", "turk_annotations": {"anns": ["a", 1]}}),
        "plan_of_numbers": json.dumps({**good, "task_id": "t4", "plan": {"high_pddl": [1, [2], "x"]}}),
        "scene_a_list": json.dumps({**good, "task_id": "t5", "scene": [1, 2], "pddl_params": "x"}),
        "deeply_nested": "[" * 200_000 + "]" * 200_000,
        "desc_not_text": json.dumps({**good, "task_id": "t6", "turk_annotations": {"anns": [{"task_desc": None, "high_descs": ["a"]}]}}),
        "step_not_text": json.dumps({**good, "task_id": "t7", "turk_annotations": {"anns": [{"task_desc": "x", "high_descs": [None]}]}}),
        "floor_plan_a_list": json.dumps({**good, "task_id": "t8", "scene": {"floor_plan": ["FloorPlan1"]}}),
    }
    records, report = read("alfred", alfred_with(tmp_path, bad))
    assert GOOD_ALFRED in [r.record_id for r in records]
    assert report.read == 10 and report.read == len(records) + report.skipped_total
    reasons = {Path(s.file).parent.name: s.reason for s in report.examples}
    assert reasons["id_is_a_number"] == "missing or empty field task_id"
    assert reasons["deeply_nested"] == "brackets nested more than 32 deep; the limit is 32 (SAFEFORGE_MAX_NESTING) (line 1)"
    assert set(reasons) >= {"id_is_a_number", "deeply_nested", "annotations_a_string"}
    # a field of the wrong type is never shown as text ("- None"): its file is skipped, naming it
    assert reasons["desc_not_text"] == "field turk_annotations.anns.task_desc is not text"
    assert reasons["step_not_text"] == "field turk_annotations.anns.high_descs is not text"
    assert reasons["floor_plan_a_list"] == "field scene.floor_plan is not text"
    assert all("None" not in r.text for r in records)


def test_a_huge_file_is_refused_by_its_size_without_reading_it(tmp_path):
    root = alfred_with(tmp_path, {"sparse": b""})
    with open(root / "train" / "task-bad" / "sparse" / "traj_data.json", "r+b") as handle:
        handle.truncate(1 << 30)  # 1 GB of zeros, sparse on disk
    records, report = read("alfred", root)
    assert [r.record_id for r in records] == [GOOD_ALFRED]
    [skipped] = report.examples
    assert skipped.reason == "file is 1,073,741,824 bytes; the limit is 16,777,216 (SAFEFORGE_MAX_RECORD_FILE_BYTES)"


def test_virtualhome_states_nested_too_deeply_or_of_the_wrong_type_are_skipped(tmp_path):
    root = Path(shutil.copytree(SAMPLES / "virtualhome" / "programs_processed_precond_nograb_morepreconds", tmp_path / "vh"))
    states = sorted((root / "initstate").rglob("*.json"))
    states[0].write_text("[" * 100_000 + "]" * 100_000)
    states[1].write_text(json.dumps([{"inside": 3}, ["x"], 7]))
    records, report = read("virtualhome", root)
    assert len(records) == 40 - report.skipped_total and report.skipped_total >= 1
    skipped = {s.reason: s.file for s in report.examples}
    nested = "brackets nested more than 32 deep; the limit is 32 (SAFEFORGE_MAX_NESTING) (line 1)"
    assert skipped[nested] == str(states[0])  # the state file, not the program


@pytest.mark.parametrize(
    "goal",
    ["(forall)", "(imply x)", "(inroom a (b))", "(and " + "(not " * 5000 + "(x)" + ")" * 5000 + ")", "(exists (?x - y))", "(and (ontop))"],
)
def test_bddl_problems_with_odd_goals_are_skipped_or_read_never_crash(tmp_path, goal):
    root = Path(shutil.copytree(SAMPLES / "bddl" / "activity_definitions", tmp_path / "activity_definitions"))
    problem = root / "cook_chicken" / "problem0.bddl"
    text = problem.read_text()
    start = text.index("(:goal")
    problem.write_text(text[:start] + f"(:goal {goal})\n)")
    records, report = read("bddl", root)
    assert report.read == 49 and len(records) + report.skipped_total == 49
    assert len(records) >= 48
