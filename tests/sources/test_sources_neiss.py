"""NEISS adapter: both real layouts, codebook decoding, filters, and every kind of bad input."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from safeforge.sources import ReadReport, SkippedRow, SourceError, default_path, iter_records

HOLDOUT = "neiss/holdout_labeled.csv"
DECODED = "neiss/neiss_2014_2023_code_replaced_100_samples.csv"


def read(path, **options):
    report = ReadReport()
    records = list(iter_records("neiss", path, report=report, **options))
    return records, report


def sample_rows(samples: Path, n: int = 5) -> tuple[list[str], list[list[str]]]:
    with open(samples / HOLDOUT, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1 : n + 1]


def write_csv(path: Path, header: list[str], rows: list[list[str]], *, sep: str = ",", encoding: str = "utf-8") -> Path:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=sep, lineterminator="\n").writerows([header, *rows])
    path.write_bytes(buffer.getvalue().encode(encoding))
    return path


def column(header: list[str], name: str) -> int:
    return header.index(name)


# --- real samples -------------------------------------------------------------------------


def test_raw_coded_sample_is_decoded_with_the_codebook(samples):
    records, report = read(samples / HOLDOUT)
    assert (report.read, report.yielded, report.skipped_total) == (150, 150, 0)
    first = records[0]
    assert first.record_id == "neiss_170957638"
    assert first.source == "neiss"
    assert first.text.startswith(
        "Product: BICYCLES AND ACCESSORIES, (EXCL.MOUNTAIN OR ALL-TERRAIN); Location: STREET; "
        "Age: 52 years; Sex: FEMALE; Body part: HEAD; Diagnosis: INTERNAL INJURY; "
        "Disposition: TREATED/EXAMINED AND RELEASED; Date: 2017-09-24\nNarrative: 52YF HELM'D BICYCLIST"
    )
    assert first.metadata["codes"]["Product_1"] == "5040"
    assert first.metadata["product_codes"] == [5040]
    assert first.metadata["treatment_date"] == "2017-09-24"
    assert first.origin.endswith("holdout_labeled.csv:row 1")
    assert "Unnamed: 0" not in first.metadata


def test_months_second_injury_and_drugs_are_spelled_out(samples):
    by_id = {r.record_id: r for r in read(samples / HOLDOUT)[0]}
    stroller = by_id["neiss_220844950"]
    assert "Product: BABY STROLLERS; Location: STREET; Age: 10 months;" in stroller.text
    assert stroller.metadata["age_years"] == pytest.approx(0.83)
    phone = by_id["neiss_190345955"]
    assert "Body part 2: ALL PARTS BODY; Diagnosis 2: POISONING" in phone.text
    assert "Diagnosis: OTHER (NO INJURIES)" in phone.text
    assert "Drug involved: yes" in phone.text
    assert "Age:" not in by_id["neiss_230305476"].text  # age code 0 = unknown


def test_decoded_layout_reads_the_same_way(samples):
    records, report = read(samples / DECODED)
    assert (report.read, report.yielded) == (100, 100)
    first = records[0]
    assert first.record_id == "neiss_140223502"
    assert first.text == (
        "Product: STAIRS OR STEPS; Location: HOME; Age: 12 years; Sex: FEMALE; "
        "Body part: HEAD; Diagnosis: INTERNAL INJURY; "
        "Disposition: TREATED/EXAMINED AND RELEASED; Date: 2014-01-26\n"
        "Narrative: 12YR F FELL ON STAIRSDX CHI"
    )
    assert first.metadata["product_codes"] == [1842]
    assert first.metadata["codes"] == {}
    second = records[1]
    assert "Age: 21 months" in second.text
    assert "Body part 2" not in second.text  # the decoded file's blank Body_Part_2 reads 'INTERNAL'


@pytest.mark.parametrize("sample", [HOLDOUT, DECODED])
def test_ids_are_unique_and_stable(samples, sample):
    first = [r.record_id for r in read(samples / sample)[0]]
    again = [r.record_id for r in read(samples / sample)[0]]
    assert first == again
    assert len(set(first)) == len(first)


def test_default_path_is_the_raw_coded_holdout(samples):
    assert default_path("neiss") == (samples / HOLDOUT).resolve()
    assert [r.record_id for r in iter_records("neiss", limit=1)] == ["neiss_170957638"]


# --- filters -------------------------------------------------------------------------------


def test_product_filter_takes_codes_or_names_on_both_layouts(samples):
    by_code, report = read(samples / DECODED, products=[1842])
    by_name, _ = read(samples / DECODED, products=["stairs or steps"])
    assert [r.record_id for r in by_code] == [r.record_id for r in by_name]
    assert len(by_code) == 6 and by_code[0].record_id == "neiss_140223502"
    assert report.filtered == {"product not selected": 94}
    strollers, _ = read(samples / HOLDOUT, products=[1522])
    assert len(strollers) == 6


def test_location_and_age_filters(samples):
    public, report = read(samples / HOLDOUT, locations=["PUBLIC"])
    assert len(public) == 8 and report.read == 150
    assert {r.metadata["Location"] for r in public} == {"PUBLIC"}
    small_at_home, report = read(samples / DECODED, locations=["1"], max_age=5)
    assert len(small_at_home) == 15
    assert all(r.metadata["age_years"] <= 5 for r in small_at_home)
    assert report.read == report.yielded + report.skipped_total + report.filtered_total


def test_unknown_product_is_an_error(samples):
    with pytest.raises(ValueError, match="unknown NEISS product"):
        iter_records("neiss", samples / HOLDOUT, products=["flying carpets"])


# --- bad rows: reported with file, row, column, reason; the rest goes on ---------------------


def test_bad_rows_are_reported_counted_and_skipped(samples, tmp_path):
    header, rows = sample_rows(samples, 6)
    rows[1][column(header, "Narrative_1")] = "   "
    rows[3][column(header, "Treatment_Date")] = "13/45/2020"
    rows[4][column(header, "CPSC_Case_Number")] = "ABC"
    path = write_csv(tmp_path / "bad.csv", header, rows)
    seen: list[SkippedRow] = []
    report = ReadReport(on_skip=seen.append)
    records = list(iter_records("neiss", path, report=report))
    assert [r.record_id for r in records] == ["neiss_170957638", "neiss_220705908", "neiss_180553068"]
    assert (report.read, report.yielded, report.skipped_total) == (6, 3, 3)
    assert [(s.file, s.row, s.column) for s in seen] == [
        (str(path), 2, "Narrative_1"),
        (str(path), 4, "Treatment_Date"),
        (str(path), 5, "CPSC_Case_Number"),
    ]
    assert seen[0].reason == "blank narrative"
    assert seen[1].reason == "unparsable date (expected MM/DD/YYYY)" and seen[1].value == "13/45/2020"
    assert report.skipped["missing or non-numeric case number"] == 1
    assert "bad.csv: row 4, column Treatment_Date: unparsable date" in str(seen[1])


def test_bad_date_in_the_iso_layout(samples, tmp_path):
    text = (samples / DECODED).read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace("2014-02-21", "2014-02-30", 1)
    path = tmp_path / "decoded.csv"
    path.write_text("\n".join(text[:4]) + "\n", encoding="utf-8")
    records, report = read(path)
    assert len(records) == 2
    assert report.examples[0].row == 2
    assert report.examples[0].reason == "unparsable date (expected ISO YYYY-MM-DD)"


def test_line_with_too_many_fields_is_skipped_by_physical_line(samples, tmp_path):
    header, rows = sample_rows(samples, 3)
    rows[1] = rows[1] + ["surplus"]
    path = write_csv(tmp_path / "ragged.csv", header, rows)
    records, report = read(path)
    assert len(records) == 2
    assert report.read == 3
    bad = report.examples[0]
    assert (bad.row_kind, bad.row) == ("line", 3)
    assert bad.reason.startswith("malformed line: expected 29 fields, saw 30")


# --- fatal problems name the file or column ----------------------------------------------------


def test_missing_required_column_names_it(samples, tmp_path):
    header, rows = sample_rows(samples, 2)
    keep = [i for i, name in enumerate(header) if name != "Treatment_Date"]
    path = write_csv(tmp_path / "nodate.csv", [header[i] for i in keep], [[r[i] for i in keep] for r in rows])
    with pytest.raises(SourceError, match="missing required column.*Treatment_Date") as caught:
        iter_records("neiss", path)
    assert caught.value.path == str(path)


def test_missing_narrative_column_names_it(samples, tmp_path):
    header, rows = sample_rows(samples, 2)
    header[column(header, "Narrative_1")] = "Story"
    path = write_csv(tmp_path / "nonarr.csv", header, rows)
    with pytest.raises(SourceError, match="Narrative_1"):
        iter_records("neiss", path)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p, "file not found"),
        (lambda p: (p.mkdir(), p)[1], "no .tsv or .csv data files in this folder"),
        (lambda p: (p.write_bytes(b""), p)[1], "empty file"),
        (lambda p: (p.write_bytes(b"PK\x03\x04\x14\x00binary"), p)[1], "zip/xlsx"),
    ],
)
def test_unreadable_file_is_an_error_naming_it(tmp_path, make, message):
    path = make(tmp_path / "neiss2024.csv")
    with pytest.raises(SourceError, match=message) as caught:
        iter_records("neiss", path)
    assert "neiss2024.csv" in str(caught.value)


# --- encodings and awkward text ----------------------------------------------------------------


def test_non_utf8_bytes_are_decoded_not_fatal(samples, tmp_path):
    header, rows = sample_rows(samples, 2)
    rows[0][column(header, "Narrative_1")] = "PT FELL AT CAFÉ, 3° BURN"
    path = write_csv(tmp_path / "latin.csv", header, rows, encoding="cp1252")
    records, report = read(path)
    assert report.yielded == 2
    assert records[0].text.endswith("Narrative: PT FELL AT CAFÉ, 3° BURN")


def test_stray_invalid_bytes_after_the_sniffed_part_skip_their_row(samples, tmp_path):
    header, rows = sample_rows(samples, 3)
    rows[1][column(header, "Narrative_1")] = "X" * 70_000 + "<BAD>"
    path = write_csv(tmp_path / "stray.csv", header, rows)
    path.write_bytes(path.read_bytes().replace(b"<BAD>", b"\xff\xfe"))
    records, report = read(path)
    assert len(records) == 2 and all("\ufffd" not in r.text for r in records)
    [skipped] = report.examples
    assert (skipped.row, skipped.column) == (3, "Narrative_1")
    assert skipped.reason == "looks corrupt read as utf-8: bytes that are not utf-8 (--encoding picks another)"


def test_bom_tsv_quoted_newline_and_oversized_rows_and_fields_skipped(samples, tmp_path):
    header, rows = sample_rows(samples, 4)
    rows[0][column(header, "Narrative_1")] = "FELL DOWN STAIRS\nDX: WRIST FX"
    rows[1][column(header, "Narrative_1")] = "A" * 1_000_000
    rows[2][column(header, "Narrative_1")] = "B" * 200_000
    path = write_csv(tmp_path / "neiss.tsv", header, rows, sep="\t", encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    records, report = read(path)
    assert report.yielded == 2 and report.read == 4
    assert records[0].record_id == "neiss_170957638"  # BOM did not hide the first column name
    assert records[0].text.endswith("Narrative: FELL DOWN STAIRS\nDX: WRIST FX")
    assert records[1].origin.endswith("neiss.tsv:row 2")  # data rows: the skipped ones are not counted
    row, field = report.examples
    assert (row.row_kind, row.row, row.reason) == ("line", 4, "row too long; the limit is 524,288 (SAFEFORGE_MAX_ROW_CHARS)")
    assert row.value.startswith("1,000,")
    assert (field.row_kind, field.row, field.column) == ("line", 5, "Narrative_1")
    assert (field.reason, field.value) == ("field too long; the limit is 131,072 (SAFEFORGE_MAX_FIELD_CHARS)", "200,000 characters")


def test_column_names_match_case_insensitively(samples, tmp_path):
    header, rows = sample_rows(samples, 1)
    path = write_csv(tmp_path / "lower.csv", [h.lower() for h in header], rows)
    records, _ = read(path)
    assert records[0].record_id == "neiss_170957638"
    assert records[0].text.startswith("Product: BICYCLES")


def test_streaming_stops_reading_at_the_limit(samples):
    records, report = read(samples / HOLDOUT, limit=3)
    assert len(records) == 3 and report.read == 3


def test_an_unterminated_quote_at_the_end_is_a_skipped_line_and_the_rows_before_are_read(samples, tmp_path):
    header, rows = sample_rows(samples, 2)
    path = write_csv(tmp_path / "cut.csv", header, rows)
    path.write_text(path.read_text(encoding="utf-8") + '1,2,"never closed\n', encoding="utf-8")
    records, report = read(path)
    assert len(records) == 2
    [bad] = report.examples
    assert (bad.row_kind, bad.row) == ("line", 4)
    assert bad.reason == "malformed line: a quoted field is not closed before the end of the file"


def test_report_as_data(samples, tmp_path):
    header, rows = sample_rows(samples, 2)
    rows[0][column(header, "Narrative_1")] = ""
    _, report = read(write_csv(tmp_path / "one_bad.csv", header, rows))
    data = report.to_dict()
    assert (data["read"], data["yielded"], data["skipped"], data["filtered"]) == (2, 1, 1, 0)
    assert data["skipped_by_reason"] == {"blank narrative": 1}
    assert data["skipped_examples"][0]["row"] == 1 and data["skipped_examples"][0]["column"] == "Narrative_1"


def test_codebook_is_found_beside_the_data_or_named_when_missing(samples, tmp_path):
    header, rows = sample_rows(samples, 1)
    path = write_csv(tmp_path / "one.csv", header, rows)
    codebook = tmp_path / "neiss_code_text_mapping.csv"
    codebook.write_text(
        "Format name,Starting value for format,Ending value for format,Format value label\nPROD,5040,5040,5040 - BIKES (LOCAL CODEBOOK)\n",
        encoding="utf-8",
    )
    assert read(path)[0][0].text.startswith("Product: BIKES (LOCAL CODEBOOK); Location: CODE 4;")
    with pytest.raises(SourceError, match="nothere.csv: file not found"):
        iter_records("neiss", path, codebook=tmp_path / "nothere.csv")
