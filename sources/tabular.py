"""Streaming validated chunks of a CSV/TSV file: the shared machinery of the tabular sources.

The file is read as text in blocks and split into rows by our own splitter (a quoted field may
span lines; `""` inside quotes is a quote), which keeps at most one row of text at a time: memory
is bounded per row whatever the file holds. A row longer than the `row_chars` input limit, a row
with a field longer than `field_chars`, a row with more fields than the header and a quoted field
left open at the end of the file and a row holding what corruption leaves under the file's encoding
(a control character, undecodable bytes, a byte-order mark inside a field) are skipped with the
reason, and the read goes on; a header longer than `row_chars` or wider than `columns` makes the
file unreadable (`SourceError`). The encoding is detected (`choose_encoding`) or given, and the
table says which and why.

Rows are numbered as 1-based *data rows* (header excluded; a quoted newline does not start a new
row). Skipped rows are reported by *physical line* number (the line the row starts on); they are
not data rows, so later data-row numbers do not count them. Blank lines are no rows at all.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from safeforge.common.limits import beyond, current_limits
from safeforge.sources.errors import SourceError
from safeforge.sources.report import SkippedRow, shorten
from safeforge.sources.textio import ERRORS, choose_encoding, looks_corrupt, require_file, sniff

if TYPE_CHECKING:  # pandas and pandera load when a table is read, not when the sources are imported
    import pandas as pd
    import pandera.pandas as pa

CHUNK_ROWS = 5_000  # small chunks keep peak memory flat (measured: same speed as 50k)
CHUNK_CHARS = 8 << 20  # and at most this much text per chunk, however long its rows
CHUNK_CELLS = 250_000  # and at most this many fields per chunk, however wide the table
BLOCK_CHARS = 1 << 16  # text read at a time
_QUOTED_FIELD = re.compile(r'"(?:[^"]|"")*"')


@dataclass(frozen=True, slots=True)
class Table:
    """A delimited text file whose header has been read and whose columns are resolved."""

    path: Path
    encoding: str
    sep: str
    header: tuple[str, ...]
    columns: Mapping[str, str]  # canonical name -> name in the file
    encoding_reason: str = ""  # why this encoding, e.g. "not UTF-8"

    @property
    def read_as(self) -> str:
        """The encoding and why, as a read's summary names it: "cp1252: not UTF-8"."""
        return f"{self.encoding.removesuffix('-sig')}: {self.encoding_reason}"


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


def open_table(path: str | Path, known_columns: Iterable[str], required: Iterable[str], encoding: str | None = None) -> Table:
    """Read the header of `path` and match it (case-insensitively) to `known_columns`; `encoding`
    overrides the detected one.

    Raises SourceError for a missing/unreadable/empty file, a header beyond the limits, or missing
    `required` columns.
    """
    path = require_file(Path(path))
    head = sniff(path)
    encoding, reason = choose_encoding(head, encoding)
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
    return Table(path, encoding, sep, header, columns, reason)


def iter_chunks(table: Table, chunk_rows: int = CHUNK_ROWS) -> Iterator[Chunk]:
    """The file as chunks of all-string columns ('' for blanks and missing trailing fields), index
    = 0-based data row; each chunk also carries the rows skipped since the previous one."""
    rename = {actual: canonical for canonical, actual in table.columns.items()}
    limits = current_limits()
    rows_per_chunk = max(1, min(chunk_rows, CHUNK_CELLS // max(len(table.header), 1)))
    texts: list[str] = []
    bad: list[SkippedRow] = []
    first_index = chars = 0
    with _open(table.path, table.encoding) as handle:
        rows = _split_rows(_blocks(handle), table.sep, limits.row_chars)
        next(rows, None)  # the header
        for row in rows:
            problem = _problem(row, table, limits.field_chars)
            if problem is not None:
                bad.append(problem)
                continue
            assert row.text is not None
            texts.append(row.text)
            chars += row.size
            if len(texts) >= rows_per_chunk or chars >= CHUNK_CHARS:
                yield Chunk(_frame(texts, table, first_index).rename(columns=rename), bad)
                first_index, texts, bad, chars = first_index + len(texts), [], [], 0
    if texts or bad:
        yield Chunk(_frame(texts, table, first_index).rename(columns=rename), bad)


def _frame(texts: list[str], table: Table, first: int) -> pd.DataFrame:
    """The rows (each checked by `_problem`) as a frame: parsed by pandas' C parser, or row by row
    by the csv module should pandas see them otherwise (it never does on what `_problem` passed)."""
    import pandas as pd

    index = pd.RangeIndex(first, first + len(texts))
    names = list(table.header)
    if texts:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            try:
                frame = pd.read_csv(
                    io.StringIO("\n".join(texts) + "\n"),
                    sep=table.sep,
                    header=None,
                    names=names,
                    dtype=str,
                    na_filter=False,
                    index_col=False,
                    skip_blank_lines=False,
                    on_bad_lines="warn",
                )
            except pd.errors.ParserError:
                frame = None
        if frame is not None and not caught and len(frame) == len(texts):
            frame.index = index
            return frame
    width = len(names)
    records = [values + [""] * (width - len(values)) for values in (_fields(text, table.sep) for text in texts)]
    return pd.DataFrame(records, columns=names, index=index, dtype=str)


def _problem(row: _Row, table: Table, field_chars: int) -> SkippedRow | None:
    """Why the row is skipped (None: it is usable)."""
    if row.text is None:
        return _skipped(table, row, beyond("row_chars", "row too long"), value=f"{row.size:,} characters")
    if not row.closed:
        return _skipped(table, row, "malformed line: a quoted field is not closed before the end of the file", value=shorten(row.text))
    if (corrupt := looks_corrupt(row.text, table.encoding)) is not None:
        return _corrupt(table, row, *corrupt)
    width = len(table.header)
    count = row.text.count(table.sep) + 1  # exact without quotes, at least the fields' number with them
    if count > width or row.size > field_chars or '"' in row.text:
        try:
            values = _fields(row.text, table.sep)
        except csv.Error as exc:
            return _skipped(table, row, f"malformed line: {exc}")
        if len(values) > width:
            return _skipped(table, row, f"malformed line: expected {width} fields, saw {len(values)}")
        for index, value in enumerate(values if row.size > field_chars else ()):
            if len(value) > field_chars:
                return _skipped(table, row, beyond("field_chars", "field too long"), table.header[index], f"{len(value):,} characters")
    return None


def _corrupt(table: Table, row: _Row, what: str, at: int) -> SkippedRow:
    """A row holding what corruption leaves: named with its column and the text around it."""
    assert row.text is not None
    column = None
    try:
        column = table.header[min(len(_fields(row.text[:at], table.sep)) - 1, len(table.header) - 1)]
    except csv.Error:
        pass
    reason = f"looks corrupt read as {table.encoding.removesuffix('-sig')}: {what} (--encoding picks another)"
    return _skipped(table, row, reason, column, shorten(row.text[max(0, at - 20) : at + 20]))


def _skipped(table: Table, row: _Row, reason: str, column: str | None = None, value: str | None = None) -> SkippedRow:
    return SkippedRow(str(table.path), row.line, column, reason, value, row_kind="line")


def _fields(text: str, sep: str) -> list[str]:
    """The fields of one row's text; csv.Error when its quotes do not make sense."""
    if '"' not in text:
        return text.split(sep)
    if csv.field_size_limit() <= len(text):  # the csv module's own cap (128 KiB) is below the row limit
        csv.field_size_limit(len(text) + 1)
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
    """The rows of the text (see `_Splitter`)."""
    splitter = _Splitter(sep, max_chars)
    for block in blocks:
        yield from splitter.feed(block)
    yield from splitter.end()


class _Splitter:
    """Rows out of text fed block by block: a row ends at a line end outside quotes. A quote opens a
    quoted field only at the start of a field; inside one, `""` is a quote and a lone `"` closes it.
    A row's text is kept only up to `max_chars` (beyond, only its length is counted); blank lines
    are no rows. Stretches without quotes are split a block at a time."""

    def __init__(self, sep: str, max_chars: int) -> None:
        self.sep, self.max_chars = sep, max_chars
        self.parts: list[str] = []  # the current row's text so far (while within the limit)
        self.size = 0  # its length so far
        self.line = self.start = 1  # the physical line we are on; the one the current row starts on
        self.quoted = False  # inside a quoted field
        self.pending = False  # the last block ended with a quote inside a quoted field
        self.last = "\n"  # the character before the current position ("\n" at a row's start)

    def feed(self, block: str) -> list[_Row]:
        rows: list[_Row] = []
        i, n = 0, len(block)
        while i < n:
            if self.pending:  # that quote and this block's first character: `""` or the field's end
                self.pending = False
                if block[i] == '"':
                    self._take('"')
                    i += 1
                    continue
                self.quoted = False
            if self.quoted:
                j = block.find('"', i)
                if j == -1 or j + 1 == n:
                    self._take(block[i:])
                    self.pending, i = j != -1, n
                    continue
                escaped = block[j + 1] == '"'
                self._take(block[i : j + 2 if escaped else j + 1])
                self.quoted, i = escaped, j + 2 if escaped else j + 1
                continue
            quote = block.find('"', i)
            stop = n if quote == -1 else quote
            last_end = block.rfind("\n", i, stop)
            if last_end != -1:  # whole lines without a quote: the current row ends, then rows of one line each
                first, *whole = block[i:last_end].split("\n")
                self._take(first)
                self._end_row(rows)
                for text in whole:
                    self._whole_row(rows, text)
                i = last_end + 1
            elif quote == -1:
                self._take(block[i:])
                i = n
            else:  # a quote before the next line end: it opens a quoted field at a field's start
                before = block[quote - 1] if quote > i else self.last
                field = _QUOTED_FIELD.match(block, quote) if before in (self.sep, "\n") else None
                if field is not None and field.end() < n and block[field.end()] != '"':  # the whole field is in this block
                    self._take(block[i : field.end()])
                    i = field.end()
                    continue
                self._take(block[i : quote + 1])
                self.quoted, i = before in (self.sep, "\n"), quote + 1
        return rows

    def end(self) -> list[_Row]:
        if not (self.size or self.quoted):
            return []
        text = "".join(self.parts) if self.size <= self.max_chars else None
        if text is not None and self._blank(text):
            return []
        return [_Row(self.start, text, self.size, not self.quoted)]

    def _take(self, segment: str) -> None:
        if not segment:
            return
        self.last = segment[-1]
        if self.size <= self.max_chars:
            self.parts.append(segment)
        self.size += len(segment)
        self.line += segment.count("\n")
        if self.size > self.max_chars:
            self.parts.clear()

    def _end_row(self, rows: list[_Row]) -> None:
        text = "".join(self.parts) if self.size <= self.max_chars else None
        if text is None or not self._blank(text):
            rows.append(_Row(self.start, text, self.size, True))
        self.parts.clear()
        self.size, self.last = 0, "\n"
        self.line += 1
        self.start = self.line

    def _whole_row(self, rows: list[_Row], text: str) -> None:
        size = len(text)
        if size > self.max_chars:
            rows.append(_Row(self.line, None, size, True))
        elif not self._blank(text):
            rows.append(_Row(self.line, text, size, True))
        self.line += 1
        self.start = self.line

    def _blank(self, text: str) -> bool:
        return not text.strip() and self.sep not in text


def failing_rows(
    frame: pd.DataFrame, schema: pa.DataFrameSchema, path: Path, blame: Mapping[str, str] | None = None
) -> dict[int, SkippedRow]:
    """Validate `frame` (lazily: every failure) and map each failing row index to a SkippedRow.

    A row failing several checks gets one SkippedRow naming all columns and reasons. Frame-wide
    checks fail on every column of a row; `blame` maps their error message to the column to name.
    """
    import pandera.pandas as pa

    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        return _rows_from_failures(exc.failure_cases, path, blame or {})
    return {}


def _rows_from_failures(failures: pd.DataFrame, path: Path, blame: Mapping[str, str]) -> dict[int, SkippedRow]:
    import pandas as pd

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
    import pandera.pandas as pa

    return pa.Check(lambda s: s.str.strip() != "", error=error)
