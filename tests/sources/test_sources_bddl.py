"""BEHAVIOR-1K BDDL adapter: real activities parsed into readable descriptions plus raw text."""

from __future__ import annotations

import shutil

import pytest

from safeforge.pddl.sexpr import parse
from safeforge.sources import ReadReport, SourceError, default_path, iter_records


def read(path=None):
    report = ReadReport()
    return list(iter_records("bddl", path, report=report)), report


def test_every_activity_of_the_sample_and_no_domain_file(samples):
    assert default_path("bddl") == samples / "bddl" / "activity_definitions"
    records, report = read()
    assert (report.read, report.yielded, report.skipped_total) == (49, 49, 0)
    ids = [r.record_id for r in records]
    assert len(set(ids)) == 49
    assert "bddl_cleaning_bathtub" in ids and "bddl_domain_omnigibson" not in ids
    assert ids == sorted(ids)


def test_cleaning_bathtub_reads_as_a_description_then_the_raw_bddl(samples):
    record = {r.record_id: r for r in read()[0]}["bddl_cleaning_bathtub"]
    description, raw = record.text.split("\n\nBDDL:\n")
    assert description.splitlines()[:3] == [
        "Activity: cleaning bathtub (BEHAVIOR-1K activity cleaning_bathtub)",
        "Rooms: bathroom",
        "Objects:",
    ]
    assert "- bar soap (bar_soap.n.01)" in description
    assert "- bathtub is covered with stain" in description
    assert "- sink is a source of water" in description
    assert description.endswith("Goal:\n- bathtub is not covered with stain")
    problem = samples / "bddl" / "activity_definitions" / "cleaning_bathtub" / "problem0.bddl"
    assert raw == problem.read_text().strip()
    assert record.metadata["objects"]["water.n.06"] == ["water.n.06_1"]
    assert record.metadata["goal"] == "(and (not (covered ?bathtub.n.01_1 ?stain.n.01_1)))"
    assert record.metadata["rooms"] == ["bathroom"]


def test_quantifiers_and_numbered_instances():
    by_id = {r.record_id: r for r in read()[0]}
    cookies = by_id["bddl_make_cookies"].text
    assert "- raw egg 1, raw egg 2 (raw_egg.n.01)" in cookies
    assert "- spice cookie 4 is yet to be made" in cookies
    assert "- for every spice cookie: the spice cookie is cooked" in cookies
    assert "- pairing each alarm with its own table: the alarm is on top of the table" in (by_id["bddl_installing_alarms"].text)


def test_one_activity_folder_or_file_can_be_read(samples):
    folder = samples / "bddl" / "activity_definitions" / "cook_chicken"
    assert [r.record_id for r in read(folder)[0]] == ["bddl_cook_chicken"]
    assert [r.record_id for r in read(folder / "problem0.bddl")[0]] == ["bddl_cook_chicken"]
    assert len(read(samples / "bddl")[0]) == 49  # the parent of activity_definitions


def test_broken_and_domain_problems_are_skipped_with_reasons(samples, tmp_path):
    root = tmp_path / "activity_definitions"
    real = samples / "bddl" / "activity_definitions"
    shutil.copytree(real / "clean_a_knife", root / "clean_a_knife")
    (root / "broken").mkdir()
    (root / "broken" / "problem0.bddl").write_text("(define (problem broken-0) (:objects a - b)")
    (root / "domainlike").mkdir()
    shutil.copy(real / "domain_omnigibson.bddl", root / "domainlike" / "problem0.bddl")
    records, report = read(root)
    assert [r.record_id for r in records] == ["bddl_clean_a_knife"]
    assert report.read == 3 and report.skipped_total == 2
    reasons = {s.file.split("/")[-2]: s.reason for s in report.examples}
    assert reasons == {"broken": "line 1: unbalanced parentheses: 1 '(' not closed", "domainlike": "a domain file, not an activity problem"}


def test_empty_folder_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="no <activity>/problem0.bddl"):
        iter_records("bddl", tmp_path)


def test_sexpr_parser_ignores_comments_and_rejects_stray_parens():
    assert parse("(a (b c) ; comment )\n d)") == [["a", ["b", "c"], "d"]]
    with pytest.raises(ValueError, match="unexpected"):
        parse("(a))")
