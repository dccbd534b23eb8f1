"""VirtualHome adapter: program/initial-state pairs, nested and flat, with a state budget."""

from __future__ import annotations

import json
import shutil

import pytest

from safeforge.sources import ReadReport, SourceError, default_path, iter_records
from safeforge.sources.virtualhome import summarise_state

MARCH = "results_intentions_march-13-18"


def read(path=None, **options):
    report = ReadReport()
    return list(iter_records("virtualhome", path, report=report, **options)), report


def test_all_real_pairs_with_ids_unique_across_subfolders(samples):
    folder = "programs_processed_precond_nograb_morepreconds"
    assert default_path("virtualhome") == samples / "virtualhome" / folder
    records, report = read()
    assert (report.read, report.yielded, report.skipped_total) == (40, 40, 0)
    ids = [r.record_id for r in records]
    assert len(set(ids)) == 40
    stems = [r.metadata["stem"] for r in records]
    assert len(set(stems)) < 40  # e.g. split10_1 exists in several sub-folders
    assert sum(r.metadata["subfolder"] == MARCH for r in records) == 16


def test_wash_hands_program(samples):
    record = {r.record_id: r for r in read()[0]}[f"virtualhome_{MARCH}__file56_1"]
    assert record.text == (
        "Title: Wash hands\n"
        "Description: walk to bathroom. point at sink. push water. stretch hands_both. wash water.\n"
        "Steps:\n1. [Walk] <bathroom> (1)\n2. [Walk] <sink> (1)\n3. [Find] <sink> (1)\n"
        "4. [TurnTo] <sink> (1)\n5. [PointAt] <sink> (1)\n6. [Find] <water> (1)\n7. [Push] <water> (1)\n"
        "8. [Find] <hands_both> (1)\n9. [Stretch] <hands_both> (1)\n10. [Wash] <water> (1)\n"
        "Initial state (6 facts): sink 1 is in bathroom 1; water 1 is in bathroom 1; "
        "hands_both 1 is in bathroom 1; sink 1 is within reach of sink 1; "
        "water 1 is within reach of sink 1; hands_both 1 is within reach of sink 1"
    )
    assert record.metadata["state_predicates"] == {"atreach": 3, "location": 3}
    assert record.origin.endswith(f"withoutconds/{MARCH}/file56_1.txt")


def test_parent_folder_and_flat_layout(samples, tmp_path):
    assert len(read(samples / "virtualhome")[0]) == 40
    real = default_path("virtualhome")
    for kind, suffix in (("withoutconds", ".txt"), ("initstate", ".json")):
        (tmp_path / kind).mkdir()
        shutil.copy(real / kind / MARCH / f"file56_1{suffix}", tmp_path / kind / f"file56_1{suffix}")
    records, _ = read(tmp_path)
    assert [r.record_id for r in records] == ["virtualhome_file56_1"]
    assert records[0].metadata["subfolder"] == ""


def test_unpaired_and_broken_files_are_skipped_with_reasons(tmp_path):
    (tmp_path / "withoutconds" / "s").mkdir(parents=True)
    (tmp_path / "initstate" / "s").mkdir(parents=True)
    program = "Turn on light\nswitch it on\n\n\n[Walk] <light> (1)\n[SwitchOn] <light> (1)\n"
    for stem in ("ok", "lonely", "badjson", "nosteps"):
        (tmp_path / "withoutconds" / "s" / f"{stem}.txt").write_text("Title only\n" if stem == "nosteps" else program)
    (tmp_path / "initstate" / "s" / "ok.json").write_text(json.dumps([{"is_off": ["light", "1"]}]))
    (tmp_path / "initstate" / "s" / "badjson.json").write_text("[{")
    (tmp_path / "initstate" / "s" / "nosteps.json").write_text("[]")
    (tmp_path / "initstate" / "s" / "orphan.json").write_text("[]")
    records, report = read(tmp_path)
    assert [r.record_id for r in records] == ["virtualhome_s__ok"]
    assert records[0].text.endswith("Initial state (1 facts): light 1 is off")
    assert report.read == 5 and report.skipped_total == 4
    reasons = {s.file.rsplit("/", 1)[-1]: s.reason for s in report.examples}
    assert reasons["lonely.txt"] == "no matching initstate/s/lonely.json"
    assert reasons["orphan.json"] == "no matching withoutconds/s/orphan.txt"
    assert reasons["badjson.json"].startswith("invalid JSON")
    assert reasons["nosteps.txt"] == "program has no [Action] steps"


def test_huge_initial_state_is_summarised_within_budget():
    facts = [{"location": [["cup", str(i)], ["kitchen", "1"]]} for i in range(5000)]
    facts.insert(4000, {"is_on": ["stove", "1"]})
    summary = summarise_state(facts, budget=300)
    assert len(summary) <= 300 + len("; ... and 4990 more facts")
    assert summary.startswith("stove 1 is on; cup 0 is in kitchen 1")  # states come first
    assert summary.endswith("more facts")
    records, _ = read(state_budget=60)
    assert all(len(r.metadata["state_summary"]) <= 60 + 30 for r in records)


def test_folder_without_programs_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="withoutconds"):
        iter_records("virtualhome", tmp_path)
