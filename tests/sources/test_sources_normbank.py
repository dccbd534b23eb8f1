"""NormBank adapter: the fixture (real behaviours, illustrative labels), rendering, bad rows."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from safeforge.sources import ReadReport, SourceError, default_path, iter_records
from safeforge.sources.normbank import render_constraints

HEADER = ["setting", "behavior", "setting-behavior", "constraints", "constraints_given", "constraint_predict", "norm", "label", "split"]


def read(path=None, **options):
    report = ReadReport()
    return list(iter_records("normbank", path, report=report, **options)), report


def write(path: Path, rows: list[list[str]], header: list[str] = HEADER, encoding: str = "utf-8") -> Path:
    with open(path, "w", newline="", encoding=encoding) as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


def row(
    behavior="leave the burner on", norm="taboo", label="0", constraints="[PERSON]'s role is 'cook'", setting="kitchen", split="train"
) -> list[str]:
    return [setting, behavior, f"{setting} [BEHAVIOR] {behavior}", constraints, " [AND] ", constraints, norm, label, split]


def test_fixture_is_the_default_and_keeps_taboo_rows(samples):
    assert default_path("normbank") == samples / "normbank" / "NormBank.csv"
    records, report = read()
    assert (report.read, report.yielded, report.filtered_total) == (62, 35, 27)
    assert report.filtered == {"norm not selected": 27}
    assert {r.metadata["norm"] for r in records} == {"taboo"}
    first = records[0]
    assert first.record_id == "normbank_0"
    assert first.text == (
        "Setting: kitchen\n"
        "Behavior: leave knives or other sharp objects within reach of young children\n"
        "When: another person's age bracket is toddler\n"
        "Norm: taboo (people should not do this in this situation)"
    )
    assert first.origin.endswith("NormBank.csv:row 1")
    assert first.metadata["constraints_given"] == " [AND] "  # source fields kept verbatim


def test_fixture_behaviours_and_roles_are_real():
    raw = Path(__file__).parents[1] / "fixtures" / "normbank" / "raw"
    records, _ = read(norms=None)
    for record in records:
        setting = record.metadata["setting"]
        behaviours = (raw / "Behaviors-All-Hand-Filtered" / f"{setting}.txt").read_text().splitlines()
        assert record.metadata["behavior"] in behaviours
        roles_file = raw / "Settings-Roles" / f"{setting}.txt"
        roles = roles_file.read_text().splitlines() if roles_file.exists() else []
        for condition in record.metadata["conditions"]:
            if "'s role is " in condition:
                assert condition.split("'s role is ")[1] in roles


def test_norm_and_setting_filters(samples):
    everything, report = read(norms=None)
    assert len(everything) == 62 and report.filtered_total == 0
    ids = [r.record_id for r in everything]
    assert len(set(ids)) == 62 and ids[-1] == "normbank_61"
    expected_in_garage, _ = read(norms=["expected"], settings=["Garage"])
    assert [r.metadata["behavior"] for r in expected_in_garage] == ["operate power tools", "change a car's oil"]
    assert [r.record_id for r in expected_in_garage] == ["normbank_21", "normbank_26"]
    with pytest.raises(ValueError, match="unknown norm"):
        iter_records("normbank", norms=["forbidden"])


def test_constraints_render_readably():
    assert render_constraints(
        "[OTHER]'s role is 'patient' [AND] [PERSON]'s age bracket is 'teen' [AND] "
        "[PERSON]'s behavior is not 'apply makeup' [AND] attendance is 'crowded'"
    ) == [
        "another person's role is patient",
        "the person's age bracket is teen",
        "the person is not also doing: apply makeup",
        "the attendance is crowded",
    ]
    assert render_constraints(" [AND] ") == []


def test_multi_constraint_row_of_the_fixture():
    records, _ = read(settings=["nursing home"])
    run_around = next(r for r in records if r.metadata["behavior"] == "run around")
    assert "When: another person's age bracket is senior citizen; the attendance is crowded" in run_around.text


def test_bad_rows_are_reported_and_the_rest_goes_on(tmp_path):
    path = write(
        tmp_path / "NormBank.csv",
        [
            row(),
            row(norm="forbidden"),
            row(behavior="  "),
            row(norm="taboo", label="2"),
            row(split="holdout"),
            row(behavior="use a space heater"),
        ],
    )
    records, report = read(path)
    assert [r.record_id for r in records] == ["normbank_0", "normbank_5"]
    assert report.read == 6 and report.skipped_total == 4
    found = [(s.row, s.column, s.reason) for s in report.examples]
    assert found == [
        (2, "norm", "unknown norm label"),
        (3, "behavior", "blank behavior"),
        (4, "label", "label disagrees with norm"),
        (5, "split", "unknown split (expected train, dev or test)"),
    ]
    assert report.examples[0].value == "forbidden"


def test_missing_required_column_names_it(tmp_path):
    header = [h for h in HEADER if h != "constraints"]
    path = write(tmp_path / "NormBank.csv", [row()[:3] + row()[4:]], header=header)
    with pytest.raises(SourceError, match="missing required column.*constraints"):
        iter_records("normbank", path)


def test_optional_columns_may_be_absent_and_bom_is_handled(tmp_path):
    path = write(
        tmp_path / "min.csv",
        [["kitchen", "leave the burner on", "", "taboo"]],
        header=["setting", "behavior", "constraints", "norm"],
        encoding="utf-8-sig",
    )
    records, _ = read(path)
    assert records[0].text.splitlines()[2] == "When: always (no constraints)"
