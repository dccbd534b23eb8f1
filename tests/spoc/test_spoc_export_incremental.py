"""A SPOC export is incremental: an unchanged task is not exported again, a changed one is, files
are numbered across the whole export as a fresh export numbers them, and files an earlier export
wrote that are no longer made are removed (a file it did not write is left, and said so)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests_paths import SPOC_FIXTURES

from safeforge.spoc import _export, export, report_path

TASKS = ("alfred_dirty_plate", "alfred_egg_fridge", "alfred_heat_potato")


def _tasks(root: Path, names=TASKS) -> Path:
    for name in names:
        shutil.copytree(SPOC_FIXTURES / name, root / name)
    return root


def _counting(monkeypatch) -> list[str]:
    """The task ids `export_task` is called for."""
    calls: list[str] = []
    real = _export.export_task

    def counted(task):
        calls.append(task.task_id)
        return real(task)

    monkeypatch.setattr(_export, "export_task", counted)
    return calls


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.glob("*.json"))}


def test_an_unchanged_task_is_not_exported_again(tmp_path, monkeypatch):
    tasks = _tasks(tmp_path / "tasks")
    first = export(tasks, tmp_path / "spoc")
    files = _files(tmp_path / "spoc")
    calls = _counting(monkeypatch)
    again = export(tasks, tmp_path / "spoc")
    assert calls == [] and again.reused == len(TASKS) and first.reused == 0
    assert again.exported == first.exported and _files(tmp_path / "spoc") == files


def test_a_changed_task_alone_is_exported_again(tmp_path, monkeypatch):
    tasks = _tasks(tmp_path / "tasks")
    export(tasks, tmp_path / "spoc")
    metadata = tasks / "alfred_egg_fridge" / "metadata.json"
    data = json.loads(metadata.read_text())
    data["instruction"] = "Put the egg in the fridge and shut it."
    metadata.write_text(json.dumps(data))
    calls = _counting(monkeypatch)
    report = export(tasks, tmp_path / "spoc")
    assert calls == ["alfred_egg_fridge"] and report.reused == len(TASKS) - 1
    assert _files(tmp_path / "spoc") == _files_of_fresh(tasks, tmp_path / "fresh")


def _files_of_fresh(tasks: Path, out: Path) -> dict[str, str]:
    export(tasks, out)
    return _files(out)


def test_files_are_numbered_across_the_export_as_a_fresh_export_numbers_them(tmp_path):
    tasks = _tasks(tmp_path / "tasks", ("alfred_dirty_plate", "alfred_heat_potato"))
    export(tasks, tmp_path / "spoc")
    # a second task of the same kind, sorting before the first: the first's file takes number 00001
    shutil.copytree(SPOC_FIXTURES / "alfred_dirty_plate", tasks / "alfred_a_dirty_plate")
    metadata = tasks / "alfred_a_dirty_plate" / "metadata.json"
    metadata.write_text(json.dumps({**json.loads(metadata.read_text()), "task_id": "alfred_a_dirty_plate"}))
    report = export(tasks, tmp_path / "spoc")
    assert report.reused == 2  # the copy has the same files but another task_id: exported once more
    assert _files(tmp_path / "spoc") == _files_of_fresh(tasks, tmp_path / "fresh")
    assert [e["file"] for e in report.exported if e["task_id"].endswith("dirty_plate")] == [
        "Pollution_CleanBeforePut_Plate_Apple_00000.json",
        "Pollution_CleanBeforePut_Plate_Apple_00001.json",
    ]


def test_a_removed_tasks_file_goes_and_a_foreign_file_stays(tmp_path):
    tasks = _tasks(tmp_path / "tasks")
    export(tasks, tmp_path / "spoc")
    (tmp_path / "spoc" / "someone_elses.json").write_text("{}")
    shutil.rmtree(tasks / "alfred_heat_potato")
    said: list[str] = []
    report = export(tasks, tmp_path / "spoc", progress=said.append)
    assert set(_files(tmp_path / "spoc")) == {e["file"] for e in report.exported} | {"someone_elses.json"}
    assert "Fire_CookTurnOffSteps_Potato_Microwave_00000.json" not in _files(tmp_path / "spoc")
    assert any(m.startswith("someone_elses.json: not written by an export of ours") for m in said)


def test_a_report_of_another_exporter_or_a_damaged_one_exports_everything(tmp_path, monkeypatch):
    tasks = _tasks(tmp_path / "tasks")
    export(tasks, tmp_path / "spoc")
    report = json.loads(report_path(tmp_path / "spoc").read_text())
    report_path(tmp_path / "spoc").write_text(json.dumps({**report, "exporter": "an older one"}))
    calls = _counting(monkeypatch)
    assert export(tasks, tmp_path / "spoc").reused == 0 and len(calls) == len(TASKS)
    report_path(tmp_path / "spoc").write_text("{not json")
    assert export(tasks, tmp_path / "spoc").reused == 0
    # a file edited by hand since is made again
    name = next(iter(_files(tmp_path / "spoc")))
    (tmp_path / "spoc" / name).write_text("{broken")
    again = export(tasks, tmp_path / "spoc")
    assert again.reused == len(TASKS) - 1 and json.loads((tmp_path / "spoc" / name).read_text())["scene_name"]
