"""ALFRED adapter: traj_data.json only (never pp/), annotations and plan in the text."""

from __future__ import annotations

import json
import shutil

import pytest

from safeforge.sources import ReadReport, SourceError, default_path, iter_records

LAMP = "train/look_at_obj_in_light-Box-None-DeskLamp-316/trial_T20190908_233127_359423"


def read(path=None):
    report = ReadReport()
    return list(iter_records("alfred", path, report=report)), report


def test_every_trajectory_of_the_sample(samples):
    assert default_path("alfred") == samples / "alfred" / "json_2.1.0"
    records, report = read()
    assert (report.read, report.yielded) == (22, 22)
    ids = [r.record_id for r in records]
    assert len(set(ids)) == 22
    assert {r.metadata["split"] for r in records} == {"train", "valid_seen", "valid_unseen"}
    assert len({r.metadata["task_type"] for r in records}) == 7


def test_desk_lamp_trajectory(samples):
    record = {r.record_id: r for r in read()[0]}["alfred_trial_T20190908_233127_359423"]
    lines = record.text.splitlines()
    assert lines[:5] == [
        "Task type: look at obj in light (look_at_obj_in_light)",
        "Object: Box; Toggle object: DeskLamp",
        "Scene: FloorPlan316",
        "Instructions:",
        "1. turn on a desk lamp with a box in hand",
    ]
    assert "   - pick up box underneath of the desk" in lines
    assert "3. Examine a box by the light of a small lamp." in lines
    assert lines[-1] == ("High-level plan: GotoLocation(box); PickupObject(box); GotoLocation(desklamp); ToggleObject(desklamp)")
    assert record.metadata["task"] == "look_at_obj_in_light-Box-None-DeskLamp-316"
    assert record.metadata["scene"] == {"floor_plan": "FloorPlan316", "scene_num": 316, "dirty_and_empty": False}
    assert len(record.metadata["annotations"]) == 3


def test_six_annotations_are_all_kept():
    six = [r for r in read()[0] if len(r.metadata["annotations"]) == 6]
    assert len(six) == 1 and "6. " in six[0].text


def test_pp_copies_are_ignored_and_duplicates_and_bad_files_skipped(samples, tmp_path):
    trial = tmp_path / "json_2.1.0" / LAMP
    shutil.copytree(default_path("alfred") / LAMP, trial)
    (trial / "pp").mkdir()
    shutil.copy(trial / "traj_data.json", trial / "pp" / "traj_data.json")
    copy = tmp_path / "json_2.1.0" / "valid_seen" / "task-x" / "trial_copy"
    shutil.copytree(trial, copy, ignore=shutil.ignore_patterns("pp"))
    broken = tmp_path / "json_2.1.0" / "valid_unseen" / "task-y" / "trial_broken"
    broken.mkdir(parents=True)
    (broken / "traj_data.json").write_text(json.dumps({"task_type": "pick_and_place_simple"}))
    records, report = read(tmp_path / "json_2.1.0")
    assert [r.record_id for r in records] == ["alfred_trial_T20190908_233127_359423"]
    assert report.read == 3 and report.skipped_total == 2
    assert {(s.column, s.reason) for s in report.examples} == {
        ("task_id", "duplicate task_id"),
        ("task_id", "missing or empty field task_id"),
    }


def test_test_split_without_task_folder(tmp_path):
    trial = tmp_path / "tests_seen" / "trial_T1"
    trial.mkdir(parents=True)
    (trial / "traj_data.json").write_text(
        json.dumps(
            {
                "task_id": "trial_T1",
                "task_type": "pick_two_obj_and_place",
                "turk_annotations": {"anns": [{"task_desc": "Put two pens away.", "high_descs": ["go", "put"]}]},
            }
        )
    )
    record = read(tmp_path)[0][0]
    assert record.metadata["split"] == "tests_seen" and record.metadata["task"] == ""
    assert record.metadata["plan"] == []
    assert "1. Put two pens away." in record.text


def test_missing_folder_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="directory not found"):
        iter_records("alfred", tmp_path / "nowhere")
