"""Hostile files in the folder sources: each is skipped with its file and the reason, the read goes on,
and memory stays bounded (a huge file is refused by its size, not read)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import REPO, SAMPLES

from safeforge.sources import ReadReport, SourceError, iter_records

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


# -- encodings: said, overridable, and what corruption leaves is skipped ------------------------------


def _neiss_bytes(tmp_path: Path, name: str, narratives: list[bytes], encoding: str = "cp1252") -> Path:
    """The NEISS sample's header and first rows, their narratives replaced by `narratives` (bytes)."""
    with open(SAMPLES / "neiss" / "holdout_labeled.csv", encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    column = header.index("Narrative_1")
    lines = [",".join(header).encode(encoding)]
    for row, narrative in zip(rows, narratives, strict=False):
        text = io.StringIO()
        csv.writer(text, lineterminator="").writerow([*row[:column], "@NARRATIVE@", *row[column + 1 :]])
        lines.append(text.getvalue().encode(encoding).replace(b"@NARRATIVE@", narrative))
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    shutil.copy(SAMPLES / "neiss" / "neiss_code_text_mapping.csv", tmp_path)
    return path


def test_a_table_names_the_encoding_it_was_read_with_and_why(tmp_path):
    utf8 = _neiss_bytes(tmp_path, "utf8.csv", [b"FELL AT THE CAF\xc3\x89", b"FELL DOWN STAIRS"], "utf-8")
    records, report = read("neiss", utf8)
    assert report.encodings == {str(utf8): "utf-8: valid UTF-8"} and len(records) == 2
    spreadsheet = _neiss_bytes(tmp_path, "export.csv", [b"FELL AT THE CAF\xc9", b"FELL DOWN STAIRS"])
    records, report = read("neiss", spreadsheet)
    assert report.encodings == {str(spreadsheet): "cp1252: not UTF-8"} and "CAFÉ" in records[0].text
    assert f"  {spreadsheet}: read as cp1252: not UTF-8" in report.summary()
    report = ReadReport()
    records = list(iter_records("neiss", spreadsheet, report=report, encoding="latin-1"))
    assert report.encodings == {str(spreadsheet): "iso8859-1: --encoding"} and "CAFÉ" in records[0].text
    shown = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", "sources", "show", "neiss", "--path", str(spreadsheet), "--encoding", "rot13"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert shown.returncode == 2 and "encoding 'rot13': not a text encoding" in shown.stderr


def test_rows_that_look_corrupt_under_the_encoding_are_skipped_with_the_reason(tmp_path):
    narratives = [b"FELL \xff\xfe STAIRS", b"CUT\x01 FINGER", b"FELL AT THE CAF\xc9", b"BURN \xef\xbb\xbfFROM STOVE", b"FELL OFF CHAIR"]
    records, report = read("neiss", _neiss_bytes(tmp_path, "corrupt.csv", narratives))
    assert len(records) == 2 and report.read == 5 and report.skipped_total == 3
    reasons = {s.row: (s.column, s.reason, s.value) for s in report.examples}
    bom = "looks corrupt read as cp1252: a byte-order mark inside a field (--encoding picks another)"
    assert reasons[2][:2] == ("Narrative_1", bom) and "ÿþ" in reasons[2][2]
    assert reasons[3][:2] == ("Narrative_1", "looks corrupt read as cp1252: a control character (--encoding picks another)")
    assert reasons[5][:2] == ("Narrative_1", bom)
    # a UTF-8 file whose start is clean: bytes further on that are not UTF-8 make their row skipped
    clean_start = b"FELL DOWN STAIRS " * 5000  # longer than the 64 KiB the encoding is told from
    late = _neiss_bytes(tmp_path, "late.csv", [clean_start, b"FELL \xe9 OFF BED", b"FELL OFF CHAIR"], "utf-8")
    records, report = read("neiss", late)
    assert len(records) == 2 and report.encodings[str(late)] == "utf-8: valid UTF-8"
    [skipped] = report.examples
    assert skipped.reason == "looks corrupt read as utf-8: bytes that are not utf-8 (--encoding picks another)"


# -- symbolic links: named, never followed inside a dataset ---------------------------------------------


def test_a_dataset_folder_behind_a_link_is_named_as_one(tmp_path):
    real = alfred_with(tmp_path, {})
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "json_2.1.0").symlink_to(real)
    with pytest.raises(SourceError) as refused:
        read("alfred", dataset)
    assert str(refused.value) == (
        f"{dataset}: no traj_data.json files found (1 symbolic link(s) in it, e.g. json_2.1.0; links inside a dataset "
        "are not followed because one may lead outside it or loop back into it)"
    )
    records, _ = read("alfred", real)  # the path given may itself be a link: it is the user's choice
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    assert [r.record_id for r in read("alfred", linked)[0]] == [r.record_id for r in records] == [GOOD_ALFRED]


def test_a_link_inside_a_dataset_is_skipped_and_named(tmp_path):
    real = alfred_with(tmp_path, {})
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    (real / "train" / "task-linked").mkdir()
    (real / "train" / "task-linked" / "traj_data.json").symlink_to(secret)
    (real / "valid_seen").symlink_to(real / "train")  # a folder link looping back into the dataset
    records, report = read("alfred", real)
    assert [r.record_id for r in records] == [GOOD_ALFRED]
    assert report.read == 3 and report.skipped_total == 2
    reason = "is a symbolic link; links inside a dataset are not followed because one may lead outside it or loop back into it"
    assert {(Path(s.file).relative_to(real).as_posix(), s.reason) for s in report.examples} == {
        ("train/task-linked/traj_data.json", reason),
        ("valid_seen", reason),
    }
    neiss = tmp_path / "neiss"
    neiss.mkdir()
    (neiss / "2023.csv").symlink_to(SAMPLES / "neiss" / "holdout_labeled.csv")
    with pytest.raises(SourceError, match=r"no \.tsv or \.csv data files in this folder \(1 symbolic link\(s\) in it, e\.g\. 2023\.csv; "):
        read("neiss", neiss)


@pytest.mark.parametrize("source, name", [("neiss", "loop.csv"), ("alfred", "loop"), ("bddl", "loop")])
def test_a_path_that_is_a_looping_or_dangling_link_says_so(tmp_path, source, name):
    loop = tmp_path / name
    loop.symlink_to(loop)
    with pytest.raises(SourceError) as refused:
        read(source, loop)
    assert str(refused.value) == f"{loop}: is a symbolic link that loops back on itself (it points to {str(loop)!r})"
    dangling = tmp_path / f"gone-{name}"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(SourceError) as refused:
        read(source, dangling)
    assert str(refused.value) == f"{dangling}: is a symbolic link to {str(tmp_path / 'nowhere')!r}, which does not exist"
