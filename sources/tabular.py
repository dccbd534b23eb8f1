"""Streaming validated chunks of a CSV/TSV file: the shared machinery of the tabular sources.

The file is read as text in blocks and split into rows by our own splitter (a quoted field may
span lines; `""` inside quotes is a quote), which keeps at most one row of text at a time: memory
is bounded per row whatever the file holds. A row longer than the `row_chars` input limit, a row
with a field longer than `field_chars`, a row with more fields than the header and a quoted field
left open at the end of the file are skipped with the reason, and the read goes on; a header
longer than `row_chars` or wider than `columns` makes the file unreadable (`SourceError`).

Rows are numbered as 1-based *data rows* (header excluded; a quoted newline does not start a new
row). Skipped rows are reported by *physical line* number (the line the row starts on); they are
not data rows, so later data-row numbers do not count them. Blank lines are no rows at all.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pandera.pandas as pa

from safeforge.common.limits import beyond, current_limits
from safeforge.sources.errors import SourceError
from safeforge.sources.report import SkippedRow, shorten
from safeforge.sources.textio import ERRORS, detect_encoding, require_file, sniff

CHUNK_ROWS = 5_000  # small chunks keep peak memory flat (measured: same speed as 50k)
CHUNK_CHARS = 8 << 20  # and at most this much text per chunk, however long its rows
CHUNK_CELLS = 250_000  # and at most this many fields per chunk, however wide the table
BLOCK_CHARS = 1 << 16  # text read at a time


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
    """Parsed rows with canonical column names, plus the rows that had to be skipped."""

    frame: pd.DataFrame
    bad_lines: list[SkippedRow] = field(default_factory=list)


class _Row(NamedTuple):
    line: int  # the physical line it starts on
    text: str | None  # without its line end; None when longer than the limit (not kept)
    size: int  # its length in characters
    closed: bool  # False: a quoted field was still open at the end of the file


def open_table(path: str | Path, known_columns: Iterable[str], required: Iterable[str]) -> Table:
    """Read the header of `path` and match it (case-insensitively) to `known_columns`.

    Raises SourceError for a missing/unreadable/empty file, a header beyond the limits, or missing
    `required` columns.
    """
    path = require_file(Path(path))
    head = sniff(path)
    encoding = detect_encoding(head)
    first_line = head.decode(encoding, errors=ERRORS).lstrip("\ufeff").split("\n", 1)[0]
    if not first_line.strip():
        raise SourceError(path, "empty file or blank header line")
    sep = "\t" if first_line.count("\t") > first_line.count(",") else ","
    limits = current_limits()
    with _open(path, encoding) as handle:
        row = next(_split_rows(_blocks(handle), sep, limits.row_chars), None)
    if row is None or row.text is None:
        size = row.size if row is not None else 0
        raise SourceError(path, beyond("row_chars", f"the header line is {size:,} characters"))
    names = _fields(row.text, sep)
    if len(names) > limits.columns:
        raise SourceError(path, beyond("columns", f"the header has {len(names):,} columns"))
    header = _unique_names(names)
    by_folded = {name.strip().casefold(): name for name in header}
    columns = {c: by_folded[c.casefold()] for c in known_columns if c.casefold() in by_folded}
    missing = [c for c in required if c not in columns]
    if missing:
        raise SourceError(path, f"missing required column(s): {', '.join(missing)} (header has: {', '.join(header)})")
    return Table(path, encoding, sep, header, columns)


def iter_chunks(table: Table, chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The file as chunks of all-string columns ('' for blanks and missing trailing fields), index
    = 0-based data row; each chunk also carries the rows skipped since the previous one."""
    rename = {actual: canonical for canonical, actual in table.columns.items()}
    limits = current_limits()
    width = len(table.header)
    rows_per_chunk = max(1, min(chunk_rows, CHUNK_CELLS // max(width, 1)))
    records: list[list[str]] = []
    bad: list[SkippedRow] = []
    first_index = chars = 0
    with _open(table.path, table.encoding) as handle:
        rows = _split_rows(_blocks(handle), table.sep, limits.row_chars)
        next(rows, None)  # the header
        for row in rows:
            values, problem = _parse(row, table, limits.field_chars)
            if problem is not None:
                bad.append(problem)
                continue
            assert values is not None
            records.append(values)
            chars += row.size
            if len(records) >= rows_per_chunk or chars >= CHUNK_CHARS:
                yield _chunk(records, table.header, first_index, rename, bad)
                first_index, records, bad, chars = first_index + len(records), [], [], 0
    if records or bad:
        yield _chunk(records, table.header, first_index, rename, bad)


def _chunk(records: list[list[str]], header: tuple[str, ...], first: int, rename: dict[str, str], bad: list[SkippedRow]) -> Chunk:
    frame = pd.DataFrame(records, columns=list(header), index=pd.RangeIndex(first, first + len(records)), dtype=str)
    return Chunk(frame.rename(columns=rename), bad)


def _parse(row: _Row, table: Table, field_chars: int) -> tuple[list[str] | None, SkippedRow | None]:
    """The row's values, padded to the header's width, or why the row is skipped."""
    file, width = str(table.path), len(table.header)

    def skipped(reason: str, column: str | None = None, value: str | None = None) -> tuple[None, SkippedRow]:
        return None, SkippedRow(file, row.line, column, reason, value, row_kind="line")

    if row.text is None:
        return skipped(beyond("row_chars", "row too long"), value=f"{row.size:,} characters")
    if not row.closed:
        return skipped("malformed line: a quoted field is not closed before the end of the file", value=shorten(row.text))
    values = _fields(row.text, table.sep)
    if len(values) > width:
        return skipped(f"malformed line: expected {width} fields, saw {len(values)}")
    for index, value in enumerate(values):
        if len(value) > field_chars:
            return skipped(beyond("field_chars", "field too long"), table.header[index], f"{len(value):,} characters")
    return values + [""] * (width - len(values)), None


def _fields(text: str, sep: str) -> list[str]:
    if '"' not in text:
        return text.split(sep)
    return next(csv.reader([text], delimiter=sep, strict=False), [])


def _unique_names(names: list[str]) -> tuple[str, ...]:
    """Column names as pandas gives them: a blank one is `Unnamed: <i>`, a repeated one `<name>.<n>`."""
    seen: dict[str, int] = {}
    unique = []
    for index, name in enumerate(names):
        name = name if name.strip() else f"Unnamed: {index}"
        count = seen.get(name, 0)
        seen[name] = count + 1
        unique.append(name if count == 0 else f"{name}.{count}")
    return tuple(unique)


def _open(path: Path, encoding: str):
    try:
        return open(path, encoding=encoding, errors=ERRORS, newline=None)
    except OSError as exc:
        raise SourceError(path, f"cannot read file: {exc.strerror or exc}") from exc


def _blocks(handle) -> Iterator[str]:
    try:
        while block := handle.read(BLOCK_CHARS):
            yield block
    except (OSError, UnicodeError) as exc:
        raise SourceError(Path(handle.name), f"unreadable: {exc}") from exc


def _split_rows(blocks: Iterable[str], sep: str, max_chars: int) -> Iterator[_Row]:
    """The rows of the text: each ends at a line end outside quotes. A quote opens a quoted field
    only at the start of a field; inside one, `""` is a quote and a lone `"` closes it. A row's
    text is kept only up to `max_chars` (beyond, only its length is counted); blank lines are skipped."""
    parts: list[str] = []
    size, line, start_line = 0, 1, 1
    quoted = pending = False  # inside a quoted field; a quote ended the last block inside one
    last = "\n"  # the character before the current position ("\n" at a row's start)

    def take(segment: str) -> None:
        nonlocal size, line, last
        if not segment:
            return
        last = segment[-1]
        if size <= max_chars:
            parts.append(segment)
        size += len(segment)
        line += segment.count("\n")
        if size > max_chars:
            parts.clear()

    def row(closed: bool = True) -> _Row | None:
        text = "".join(parts) if size <= max_chars else None
        if text is not None and not text.strip() and sep not in text:
            return None  # a blank line
        return _Row(start_line, text, size, closed)

    for block in blocks:
        i, n = 0, len(block)
        next_quote = block.find('"')
        while i < n:
            if pending:  # the block before ended with a quote inside a quoted field
                pending = False
                if block[i] == '"':
                    take('"')
                    i += 1
                    next_quote = block.find('"', i)
                    continue
                quoted = False
            if quoted:
                j = block.find('"', i)
                if j == -1:
                    take(block[i:])
                    i = n
                elif j + 1 == n:
                    take(block[i:])
                    i, pending = n, True
                else:
                    take(block[i : j + 2] if block[j + 1] == '"' else block[i : j + 1])
                    quoted = block[j + 1] == '"'
                    i = j + 2 if quoted else j + 1
                next_quote = block.find('"', i)
                continue
            end = block.find("\n", i)
            if next_quote != -1 and next_quote < i:
                next_quote = block.find('"', i)
            if next_quote != -1 and (end == -1 or next_quote < end):
                before = block[next_quote - 1] if next_quote > i else last
                take(block[i : next_quote + 1])
                quoted = before in (sep, "\n")
                i = next_quote + 1
                next_quote = block.find('"', i)
                continue
            if end == -1:
                take(block[i:])
                i = n
                continue
            take(block[i:end])
            found = row()
            if found is not None:
                yield found
            parts.clear()
            size, line, last = 0, line + 1, "\n"
            start_line, i = line, end + 1
    if size or parts or quoted:
        found = row(closed=not quoted)
        if found is not None:
            yield found


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
