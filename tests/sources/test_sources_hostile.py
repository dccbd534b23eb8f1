"""Hostile files in the folder sources: each is skipped with its file and the reason, the read goes on,
and memory stays bounded (a huge file is refused by its size, not read)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import REPO, SAMPLES

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


# -- tables: memory bounded per row and per field, whatever the file holds --------------------------

# `safeforge ...` within 2 GiB of address space, printing its peak resident memory (KiB) last: VmHWM, the
# peak of this program alone (ru_maxrss keeps the pytest process's own peak across the exec that started it)
MEASURED = (
    "import atexit, resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
    "atexit.register(lambda: print('maxrss', next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')), "
    "file=sys.stderr)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)


def _show_neiss(path: Path) -> tuple[subprocess.CompletedProcess, int]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, "sources", "show", "neiss", "--path", str(path), "--limit", "10", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return done, int(done.stderr.rsplit("maxrss ", 1)[1])


def _neiss_with(tmp_path: Path, name: str, *odd_rows: str) -> Path:
    """The NEISS sample's header and first rows with `odd_rows` between them (beside its codebook)."""
    lines = (SAMPLES / "neiss" / "holdout_labeled.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / name
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join([lines[0], lines[1], *odd_rows, lines[2], lines[3] + ",x,y,z", lines[4]]) + "\n")
    return path


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory) -> int:
    """The peak memory of showing a few plain NEISS rows (the process's own footprint)."""
    _, rss = _show_neiss(_neiss_with(tmp_path_factory.mktemp("plain"), "plain.csv"))
    return rss


def test_a_row_of_a_million_fields_is_skipped_and_the_read_goes_on(tmp_path, baseline_rss):
    done, rss = _show_neiss(_neiss_with(tmp_path, "wide_row.csv", "," * 1_000_000, "," * 400_000))
    assert done.returncode == 0
    assert len([json.loads(line)["record_id"] for line in done.stdout.splitlines()]) == 3  # the rows around the odd ones
    assert "line 3: row too long; the limit is 524,288 (SAFEFORGE_MAX_ROW_CHARS) ('1,000,000 characters')" in done.stderr
    assert "line 4: malformed line: expected 29 fields, saw 400001" in done.stderr
    assert "line 6: malformed line: expected 29 fields, saw 32" in done.stderr  # three extra fields, as before
    assert rss < baseline_rss + (64 << 10)  # KiB: far below what a million fields would take


def test_a_field_of_hundreds_of_megabytes_is_skipped_in_bounded_memory(tmp_path, baseline_rss):
    huge = tmp_path / "huge_field.csv"
    lines = (SAMPLES / "neiss" / "holdout_labeled.csv").read_text(encoding="utf-8").splitlines()
    with open(huge, "w", encoding="utf-8") as out:
        out.write(f'{lines[0]}\n{lines[1]}\n{lines[2].rsplit(",", 1)[0]},"')
        for _ in range(128):
            out.write("Z" * (1 << 20))
        out.write(f'"\n{lines[3]}\n')
    done, rss = _show_neiss(huge)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 2
    assert "line 3: row too long; the limit is 524,288 (SAFEFORGE_MAX_ROW_CHARS) ('134,2" in done.stderr
    assert rss < baseline_rss + (64 << 10)  # the 128 MiB field was never held


def test_a_header_of_a_million_columns_is_a_named_error(tmp_path):
    wide = tmp_path / "wide_header.csv"
    wide.write_text(",".join(f"c{i}" for i in range(1_000_000)) + "\n1,2\n", encoding="utf-8")
    done, _ = _show_neiss(wide)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {wide}: the header line is 7,888,889 characters; the limit is 524,288 (SAFEFORGE_MAX_ROW_CHARS)")
    narrower = tmp_path / "many_columns.csv"
    narrower.write_text(",".join(f"c{i}" for i in range(5000)) + "\n1,2\n", encoding="utf-8")
    done, _ = _show_neiss(narrower)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {narrower}: the header has 5,000 columns; the limit is 1,000 (SAFEFORGE_MAX_COLUMNS)")


def test_a_bddl_file_of_parentheses_is_skipped_by_its_size_or_nesting_in_bounded_memory(tmp_path, baseline_rss):
    root = Path(shutil.copytree(SAMPLES / "bddl" / "activity_definitions", tmp_path / "activity_definitions"))
    (root / "cook_chicken" / "problem0.bddl").write_text("(" * 2_000_000)
    (root / "cooking_a_feast" / "problem0.bddl").write_text("(" * 1_000_000)
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, "sources", "show", "bddl", "--path", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(done.stdout.splitlines()) == 47
    assert "cook_chicken/problem0.bddl: file is 2,000,000 bytes; the limit is 1,048,576 (SAFEFORGE_MAX_PDDL_BYTES)" in done.stderr
    assert (
        "cooking_a_feast/problem0.bddl: line 1: parentheses nested more than 32 deep; the limit is 32 (SAFEFORGE_MAX_NESTING)"
        in done.stderr
    )
    assert int(done.stderr.rsplit("maxrss ", 1)[1]) < baseline_rss + (64 << 10)
