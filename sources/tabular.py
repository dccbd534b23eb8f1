"""Streaming validated chunks of a CSV/TSV file: the shared machinery of the tabular sources.

Rows are numbered as 1-based *data rows* (header excluded; a quoted newline does not start a new
row). Lines the parser cannot split into the header's number of fields are skipped and reported
by *physical line* number; they are not data rows, so later data-row numbers do not count them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pandera.pandas as pa

from safeforge.sources.errors import SourceError
from safeforge.sources.report import SkippedRow, shorten
from safeforge.sources.textio import ERRORS, detect_encoding, require_file, sniff

CHUNK_ROWS = 5_000  # small chunks keep peak memory flat (measured: same speed as 50k)
_BAD_LINE = re.compile(r"Skipping line (\d+): (.*)")


@dataclass(frozen=True, slots=True)
class Table:
    """A delimited text file whose header has been read and whose columns are resolved."""

    path: Path
    encoding: str
    sep: str
    header: tuple[str, ...]
    columns: Mapping[str, str]  # canonical name -> name in the file


@dataclass(slots=True)
class Chunk:
    """Parsed rows with canonical column names, plus the lines the parser had to drop."""

    frame: pd.DataFrame
    bad_lines: list[SkippedRow] = field(default_factory=list)


def open_table(path: str | Path, known_columns: Iterable[str], required: Iterable[str]) -> Table:
    """Read the header of `path` and match it (case-insensitively) to `known_columns`.

    Raises SourceError for a missing/unreadable/empty file or missing `required` columns.
    """
    path = require_file(Path(path))
    head = sniff(path)
    encoding = detect_encoding(head)
    first_line = head.decode(encoding, errors=ERRORS).lstrip("\ufeff").split("\n", 1)[0]
    if not first_line.strip():
        raise SourceError(path, "empty file or blank header line")
    sep = "\t" if first_line.count("\t") > first_line.count(",") else ","
    try:
        header = tuple(pd.read_csv(path, sep=sep, nrows=0, encoding=encoding, encoding_errors=ERRORS).columns)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError, OSError) as exc:
        raise SourceError(path, f"unreadable header: {exc}") from exc
    by_folded = {name.strip().casefold(): name for name in header}
    columns = {c: by_folded[c.casefold()] for c in known_columns if c.casefold() in by_folded}
    missing = [c for c in required if c not in columns]
    if missing:
        raise SourceError(path, f"missing required column(s): {', '.join(missing)} (header has: {', '.join(header)})")
    return Table(path, encoding, sep, header, columns)


def iter_chunks(table: Table, chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The file as chunks of all-string columns ('' for blanks), index = 0-based data row."""
    rename = {actual: canonical for canonical, actual in table.columns.items()}
    try:
        with pd.read_csv(
            table.path,
            sep=table.sep,
            dtype=str,
            na_filter=False,
            index_col=False,  # a row with a field too many is a bad line, never a shifted index
            encoding=table.encoding,
            encoding_errors=ERRORS,
            chunksize=chunk_rows,
            on_bad_lines="warn",
        ) as reader:
            while True:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", pd.errors.ParserWarning)
                    try:
                        frame = next(reader)
                    except StopIteration:
                        break
                yield Chunk(frame.rename(columns=rename), _bad_lines(table.path, caught))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError, OSError) as exc:
        raise SourceError(table.path, f"unreadable: {exc}") from exc


def _bad_lines(path: Path, caught: list[warnings.WarningMessage]) -> list[SkippedRow]:
    bad: list[SkippedRow] = []
    for warning in caught:
        if not issubclass(warning.category, pd.errors.ParserWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
            continue
        for line, reason in _BAD_LINE.findall(str(warning.message)):
            bad.append(SkippedRow(str(path), int(line), None, f"malformed line: {reason.strip()}", row_kind="line"))
    return bad


def failing_rows(
    frame: pd.DataFrame, schema: pa.DataFrameSchema, path: Path, blame: Mapping[str, str] | None = None
) -> dict[int, SkippedRow]:
    """Validate `frame` (lazily: every failure) and map each failing row index to a SkippedRow.

    A row failing several checks gets one SkippedRow naming all columns and reasons. Frame-wide
    checks fail on every column of a row; `blame` maps their error message to the column to name.
    """
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        return _rows_from_failures(exc.failure_cases, path, blame or {})
    return {}


def _rows_from_failures(failures: pd.DataFrame, path: Path, blame: Mapping[str, str]) -> dict[int, SkippedRow]:
    found: dict[int, list[tuple[str, str, object]]] = {}
    for column, check, value, index, context in failures[["column", "check", "failure_case", "index", "schema_context"]].itertuples(
        index=False
    ):
        if index is None or pd.isna(index):
            raise SourceError(path, f"column {column}: {check}")
        if context == "DataFrameSchema" and check in blame and column != blame[check]:
            continue
        found.setdefault(int(index), []).append((str(column), str(check), value))
    rows = {}
    for index, problems in found.items():
        columns = ", ".join(dict.fromkeys(p[0] for p in problems))
        reasons = "; ".join(dict.fromkeys(p[1] for p in problems))
        rows[index] = SkippedRow(str(path), index + 1, columns, reasons, shorten(problems[0][2]))
    return rows


def non_blank(error: str) -> pa.Check:
    """A check that a string column has something besides whitespace."""
    return pa.Check(lambda s: s.str.strip() != "", error=error)
