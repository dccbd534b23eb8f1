"""`safeforge sources list|show`: in-process through `register`, and once through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from safeforge.cli.main import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_list_names_every_source_and_its_layout(capsys):
    code, out, _ = run(["sources", "list"], capsys)
    assert code == 0
    for name in ("neiss:", "normbank:", "bddl:", "virtualhome:", "alfred:"):
        assert name in out
    assert "activity_definitions/<activity>/problem0.bddl" in out
    code, out, _ = run(["sources", "list", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in rows] == ["neiss", "normbank", "bddl", "virtualhome", "alfred"]
    assert all(r["in_use"] == "sample" and Path(r["default_path"]).exists() for r in rows)
    assert {r["name"]: r["dataset"] for r in rows}["alfred"] == "alfred@sample"


def test_show_json_prints_one_record_per_line_and_a_summary_on_stderr(samples, capsys):
    path = samples / "neiss" / "holdout_labeled.csv"
    code, out, err = run(["sources", "show", "neiss", "--path", str(path), "--limit", "3", "--json"], capsys)
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["record_id"] for r in records] == ["neiss_170957638", "neiss_220159454", "neiss_220705908"]
    assert {"record_id", "source", "text", "metadata", "origin"} <= set(records[0])
    assert records[1]["metadata"]["Location"] == "STREET"
    assert err.strip() == f"neiss: read 3, yielded 3, skipped 0, filtered 0\n  {path}: read as utf-8: valid UTF-8"


def test_show_reports_skips_with_reasons(samples, tmp_path, capsys):
    lines = (samples / "neiss" / "holdout_labeled.csv").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("01/25/2022", "2022-99-99")
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines[:4]) + "\n", encoding="utf-8")
    code, out, err = run(["sources", "show", "neiss", "--path", str(path), "--json"], capsys)
    assert code == 0 and len(out.splitlines()) == 2
    assert "read 3, yielded 2, skipped 1, filtered 0" in err
    assert "skipped 1: unparsable date (expected MM/DD/YYYY)" in err
    assert "bad.csv: row 2, column Treatment_Date" in err


def test_show_text_with_filters_and_sample(capsys):
    code, out, err = run(["sources", "show", "normbank", "--norm", "all", "--setting", "garage", "--sample", "2", "--seed", "4"], capsys)
    assert code == 0
    assert out.count("== normbank_") == 2 and "Setting: garage" in out
    assert "filtered 55: setting not selected" in err and "filtered 5: not in sample" in err


def test_show_errors_exit_2_with_a_message(tmp_path, capsys):
    code, _, err = run(["sources", "show", "neiss", "--path", str(tmp_path / "none.csv")], capsys)
    assert code == 2 and "none.csv: file not found" in err
    code, _, err = run(["sources", "show", "alfred", "--product", "1842"], capsys)
    assert code == 2 and "--product applies to neiss, not alfred" in err


def test_the_safeforge_command(samples):
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "safeforge"),
            "sources",
            "show",
            "neiss",
            "--path",
            str(samples / "neiss" / "holdout_labeled.csv"),
            "--limit",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["record_id"] for line in result.stdout.splitlines()] == [
        "neiss_170957638",
        "neiss_220159454",
        "neiss_220705908",
    ]
    assert "read 3, yielded 3, skipped 0" in result.stderr
