"""NEISS injury reports (CPSC) -> Records, streamed in chunks.

Reads both layouts found in the wild, as CSV or TSV: raw-coded (``Narrative_1``, numeric codes,
MM/DD/YYYY dates; ``Narrative_2`` appended when present) and decoded (``Narrative``, text labels,
ISO dates). Numeric codes are decoded with the CPSC codebook, so the text reads
"Product: STAIRS OR STEPS; Location: HOME; ...". Record id: ``neiss_<CPSC_Case_Number>``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from safeforge.common.ranges import Range
from safeforge.sources.errors import SourceError, UnknownSource
from safeforge.sources.neiss_codebook import (
    CODEBOOK_FILE,
    FORMAT_OF_COLUMN,
    MONTHS_BASE,
    Codebook,
)
from safeforge.sources.paths import sample_path
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport
from safeforge.sources.spec import ENCODING_OPTION, Download, Licence, SourceOption, SourceSpec
from safeforge.sources.tabular import (
    CHUNK_ROWS,
    Table,
    failing_rows,
    iter_chunks,
    non_blank,
    open_table,
)
from safeforge.sources.textio import dataset_entries, links_not_followed, skip_links

if TYPE_CHECKING:  # pandas and pandera load when a table is read, not when the sources are imported
    import pandas as pd
    import pandera.pandas as pa

SOURCE = "neiss"
COLUMNS = (
    "CPSC_Case_Number",
    "Treatment_Date",
    "Age",
    "Sex",
    "Race",
    "Other_Race",
    "Hispanic",
    "Body_Part",
    "Diagnosis",
    "Other_Diagnosis",
    "Body_Part_2",
    "Diagnosis_2",
    "Other_Diagnosis_2",
    "Disposition",
    "Location",
    "Fire_Involvement",
    "Product_1",
    "Product_2",
    "Product_3",
    "Alcohol",
    "Drug",
    "Narrative_1",
    "Narrative_2",
    "Narrative",
    "Stratum",
    "PSU",
    "Weight",
)
REQUIRED = ("CPSC_Case_Number", "Treatment_Date")
NARRATIVES = ("Narrative_1", "Narrative")
PRODUCTS = ("Product_1", "Product_2", "Product_3")
US_DATE = re.compile(r"^\s*\d{1,2}/\d{1,2}/\d{4}\s*$")
NO_FIRE = {"", "NO/?"}


YEARS = tuple(str(year) for year in range(1999, 2024))
"""Years whose data file CPSC publishes at YEAR_URL (1999-2023 are known to exist)."""
AGE = Range(0, 150, whole=False, unit="years")  # --min-age, --max-age
YEAR_URL = "https://www.cpsc.gov/cgibin/NEISSQuery/Data/Archived%20Data/{year}/neiss{year}.tsv"
DATA_SUFFIXES = (".tsv", ".csv", ".txt")


def default_codebook(data_path: Path) -> Path:
    """The codebook next to the data if there is one, else the bundled CPSC codebook."""
    beside = (data_path if data_path.is_dir() else data_path.parent) / CODEBOOK_FILE
    return beside if beside.is_file() else sample_path("neiss", CODEBOOK_FILE)


def data_files(path: Path) -> tuple[list[Path], list[Path]]:
    """`path` itself, or the yearly data files of a folder (sorted; the codebook is not data); and
    the data files of the folder that are symbolic links, not followed."""
    if not path.is_dir():
        return [path], []
    found, links = dataset_entries(path, max_depth=0)
    files, links = [f for f in found if _is_data(f)], [f for f in links if _is_data(f)]
    if not files:
        raise SourceError(path, f"no .tsv or .csv data files in this folder{links_not_followed(links)}")
    return files, links


def _is_data(file: Path) -> bool:
    return file.suffix.lower() in DATA_SUFFIXES and file.name != CODEBOOK_FILE and not file.name.startswith(".")


def read_neiss(
    path: str | Path,
    *,
    report: ReadReport | None = None,
    products: Iterable[int | str] | None = None,
    locations: Iterable[int | str] | None = None,
    min_age: float | None = None,
    max_age: float | None = None,
    codebook: str | Path | None = None,
    encoding: str | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Iterator[Record]:
    """Records of a NEISS file (or of every data file of a folder, e.g. several fetched years),
    lazily. Opens the headers and the codebook now (SourceError if bad).

    products: product codes or labels (any of Product_1..3 matches); locations: codes or labels;
    min_age/max_age: inclusive, in years (months count as fractions; unknown ages are filtered out);
    encoding: of the data files (default: detected, each file's named in the report).
    """
    path = Path(path)
    files, links = data_files(path)
    tables = [open_table(file, COLUMNS, REQUIRED, encoding) for file in files]
    for table in tables:
        if not any(n in table.columns for n in NARRATIVES):
            raise SourceError(table.path, "missing required column: Narrative_1 (or Narrative)")
    book = Codebook.load(codebook if codebook is not None else default_codebook(path))
    wanted = _Filters(book, products, locations, min_age, max_age)
    report = report if report is not None else ReadReport()
    skip_links(links, report)
    for table in tables:
        report.read_as(str(table.path), table.read_as)
    return itertools.chain.from_iterable(_records(table, book, wanted, report, chunk_rows) for table in tables)


class _Filters:
    """The user's selection, normalised to codebook labels and codes."""

    def __init__(
        self,
        book: Codebook,
        products: Iterable[int | str] | None,
        locations: Iterable[int | str] | None,
        min_age: float | None,
        max_age: float | None,
    ) -> None:
        self.products = None if products is None else {_product_code(book, p) for p in products}
        self.locations = None if locations is None else {book.normalise("LOC", v) for v in locations}
        self.min_age, self.max_age = min_age, max_age
        self.ages = min_age is not None or max_age is not None

    def reason_to_drop(self, codes: list[int], location: str, age: float | None) -> str | None:
        if self.products is not None and not self.products.intersection(codes):
            return "product not selected"
        if self.locations is not None and location not in self.locations:
            return "location not selected"
        if self.ages:
            if age is None:
                return "age unknown"
            if (self.min_age is not None and age < self.min_age) or (self.max_age is not None and age > self.max_age):
                return "age outside range"
        return None


def _product_code(book: Codebook, product: int | str) -> int:
    text = str(product).strip()
    code = int(text) if text.isdigit() else book.code_of("PROD", text)
    if code is None or book.label("PROD", code) is None:
        raise UnknownSource(f"unknown NEISS product {product!r}")
    return code


def _schema(date_format: str) -> pa.DataFrameSchema:
    import pandas as pd
    import pandera.pandas as pa

    def parses(s: pd.Series) -> pd.Series:
        return pd.to_datetime(s.str.strip(), format=date_format, errors="coerce").notna()

    def numeric_or_blank(s: pd.Series) -> pd.Series:
        return (s.str.strip() == "") | pd.to_numeric(s, errors="coerce").notna()  # pyright: ignore[reportAttributeAccessIssue]  # pandas leaves to_numeric's return unannotated

    expected = "MM/DD/YYYY" if date_format == "%m/%d/%Y" else "ISO YYYY-MM-DD"
    return pa.DataFrameSchema(
        {
            "CPSC_Case_Number": pa.Column(str, pa.Check.str_matches(r"^\s*\d+\s*$", error="missing or non-numeric case number")),
            "Treatment_Date": pa.Column(str, pa.Check(parses, error=f"unparsable date (expected {expected})")),
            "Narrative_1": pa.Column(str, non_blank("blank narrative"), required=False),
            "Narrative": pa.Column(str, non_blank("blank narrative"), required=False),
            "Age": pa.Column(str, pa.Check(numeric_or_blank, error="unparsable age"), required=False),
        }
    )


def _date_format(frame: pd.DataFrame) -> str:
    for value in frame["Treatment_Date"]:
        if value.strip():
            return "%m/%d/%Y" if US_DATE.match(value) else "ISO8601"
    return "ISO8601"


def _records(table: Table, book: Codebook, wanted: _Filters, report: ReadReport, chunk_rows: int) -> Iterator[Record]:
    file = str(table.path)
    schema = date_format = None
    product_codes = book.product_codes()
    for chunk in iter_chunks(table, chunk_rows):
        for bad in chunk.bad_lines:
            report.read += 1
            report.skip(bad)
        frame = chunk.frame
        if frame.empty:
            continue
        if schema is None:
            date_format = _date_format(frame)
            schema = _schema(date_format)
        bad_rows = failing_rows(frame, schema, table.path)
        names, coded, columns = _decoded_columns(frame, book, date_format)
        n_fields = len(names)
        for index, values in zip(frame.index, zip(*columns, strict=False), strict=False):
            report.read += 1
            if index in bad_rows:
                report.skip(bad_rows[index])
                continue
            row = dict(zip(names, values, strict=False))
            codes = [c for c in (_code(row[p], product_codes) for p in PRODUCTS if row.get(p)) if c is not None]
            age = _age_years(row.get("Age", ""))
            reason = wanted.reason_to_drop(codes, row.get("Location", ""), age)
            if reason:
                report.filter_out(reason)
                continue
            raw_codes = dict(zip(coded, values[n_fields:-1], strict=False))
            yield _record(row, raw_codes, values[-1], codes, age, f"{file}:row {index + 1}")


def _decoded_columns(frame: pd.DataFrame, book: Codebook, date_format: str | None) -> tuple[list[str], list[str], list[list]]:
    """Column names, names of columns holding numeric codes, and the value lists: the file's
    columns (codes decoded), then the raw codes of the coded columns, then the ISO dates."""
    import pandas as pd

    names, coded, decoded, raw = [], [], [], []
    for name in frame.columns:
        if str(name).startswith("Unnamed:"):
            continue
        values = frame[name].tolist()
        fmt = FORMAT_OF_COLUMN.get(name)
        names.append(name)
        if fmt is not None:
            if _holds_codes(values):
                coded.append(name)
                raw.append(values)
            values = book.decode(fmt, values)
        decoded.append(values)
    dates = pd.to_datetime(frame["Treatment_Date"].str.strip(), format=date_format, errors="coerce")
    return names, coded, decoded + raw + [dates.dt.strftime("%Y-%m-%d").tolist()]


def _holds_codes(values: list[str]) -> bool:
    """True when the column carries numeric codes (the raw-coded layout), not labels."""
    return any(v.strip().isdigit() for v in values)


def _code(value: str, product_codes: dict[str, int]) -> int | None:
    text = value.strip()
    return int(text) if text.isdigit() else product_codes.get(text.casefold())


def _age_years(value: str) -> float | None:
    """Age in years from a NEISS age code (201.. = months) or a decoded fractional age."""
    try:
        age = float(value)
    except ValueError:
        return None
    if age <= 0:
        return None
    if age > MONTHS_BASE:
        return round((age - MONTHS_BASE) / 12, 2)
    return age


def _age_text(age: float | None) -> str:
    if age is None:
        return ""
    if age < 1 or (age < 2 and not age.is_integer()):
        return f"{round(age * 12)} months"
    return f"{age:g} years"


def _record(row: dict, raw_codes: dict, date: str, codes: list[int], age: float | None, origin: str) -> Record:
    case = row["CPSC_Case_Number"].strip()
    metadata = dict(row, codes=raw_codes, case_number=case, treatment_date=date, age_years=age, product_codes=codes)
    return Record(f"{SOURCE}_{case}", SOURCE, _text(row, date, age), metadata, origin)


def _diagnosis(label: str | None, other: str | None) -> str:
    other = (other or "").strip()
    return f"{label} ({other})" if other else str(label)


def _text(row: dict, date: str, age: float | None) -> str:
    get = row.get
    products = [p for p in (get("Product_1", ""), get("Product_2", ""), get("Product_3", "")) if p]
    parts = []
    if products:
        parts.append(f"Product: {products[0]}")
    if len(products) > 1:
        parts.append(f"Other products: {', '.join(products[1:])}")
    if get("Location"):
        parts.append(f"Location: {get('Location')}")
    if age is not None:
        parts.append(f"Age: {_age_text(age)}")
    for label, key in (("Sex", "Sex"), ("Body part", "Body_Part")):
        if get(key):
            parts.append(f"{label}: {get(key)}")
    if get("Diagnosis"):
        parts.append(f"Diagnosis: {_diagnosis(get('Diagnosis'), get('Other_Diagnosis', ''))}")
    if get("Diagnosis_2"):  # Body_Part_2 alone is a decoding artefact in some decoded files
        if get("Body_Part_2"):
            parts.append(f"Body part 2: {get('Body_Part_2')}")
        parts.append(f"Diagnosis 2: {_diagnosis(get('Diagnosis_2'), get('Other_Diagnosis_2', ''))}")
    if get("Disposition"):
        parts.append(f"Disposition: {get('Disposition')}")
    if get("Fire_Involvement", "") not in NO_FIRE:
        parts.append(f"Fire involvement: {get('Fire_Involvement')}")
    for label, key in (("Alcohol", "Alcohol"), ("Drug", "Drug")):
        if get(key, "").casefold() == "yes":
            parts.append(f"{label} involved: yes")
    if date:
        parts.append(f"Date: {date}")
    narrative = (get("Narrative_1") or get("Narrative") or "").strip()
    if second := (get("Narrative_2") or "").strip():
        narrative = f"{narrative} {second}"
    return "; ".join(parts) + f"\nNarrative: {narrative}"


def year_downloads(years: list[str] | None) -> list[Download]:
    """The yearly data files asked for (default: the latest year)."""
    years = years or [YEARS[-1]]
    unknown = [y for y in years if y not in YEARS]
    if unknown:
        raise UnknownSource(f"no NEISS data for year(s) {', '.join(unknown)} (available: {YEARS[0]}-{YEARS[-1]})")
    return [
        Download(
            year,
            YEAR_URL.format(year=year),
            f"neiss{year}.tsv",
            None,
            note="CPSC publishes no checksum: the first download's is recorded and later ones must match",
        )
        for year in years
    ]


SPEC = SourceSpec(
    name=SOURCE,
    title="NEISS injury reports (US CPSC)",
    read=read_neiss,
    expects="one CSV or TSV file (or a folder of yearly files): raw-coded (Narrative_1, numeric codes, "
    "MM/DD/YYYY) or decoded (Narrative, labels, ISO dates); codebook neiss_code_text_mapping.csv "
    "beside it or bundled",
    homepage="https://www.cpsc.gov/Research--Statistics/NEISS-Injury-Data",
    licence=Licence("other", "public domain (a work of the US government: CPSC NEISS injury reports)", public_domain=True),
    citation="""@misc{cpsc_neiss,
  author = {{U.S. Consumer Product Safety Commission}},
  title = {National Electronic Injury Surveillance System ({NEISS}) Data},
  publisher = {U.S. Consumer Product Safety Commission},
  howpublished = {\\url{https://www.cpsc.gov/Research--Statistics/NEISS-Injury-Data}},
  note = {Public-use data; CPSC issues no DOI or arXiv identifier for it}
}""",
    sample=("neiss", "holdout_labeled.csv"),
    full_data=".",
    downloads=year_downloads,
    options=(
        SourceOption("products", "--product", "product code or name (repeatable)", repeat=True),
        SourceOption("locations", "--location", "location code or name, e.g. HOME (repeatable)", repeat=True),
        SourceOption("min_age", "--min-age", "minimum age in years (inclusive)", range=AGE),
        SourceOption("max_age", "--max-age", "maximum age in years (inclusive)", range=AGE),
        SourceOption("codebook", "--codebook", "CPSC codebook CSV (default: beside the data, else bundled)"),
        ENCODING_OPTION,
    ),
    demo_limit=5,
)
