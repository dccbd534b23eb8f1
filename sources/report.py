"""Accounting of one read: rows read, yielded, skipped (with reasons) and filtered out.

Adapters count rows read, skipped and filtered; `safeforge.sources.selection.select` (which `iter_records`
always applies) counts the records yielded. A finished read keeps
``read == yielded + skipped + filtered``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_VALUE_CHARS = 80


@dataclass(frozen=True, slots=True)
class SkippedRow:
    """A row (or file) that was read but not turned into a record.

    row is the 1-based data row of a table (header excluded), or the physical line number when
    `row_kind` is "line" (lines the CSV parser could not split into the right number of fields);
    None for file-based sources. reason is a short fixed phrase (counted); value the offending
    value, cut to 80 characters.
    """

    file: str
    row: int | None
    column: str | None
    reason: str
    value: str | None = None
    row_kind: str = "row"

    def __str__(self) -> str:
        where = self.file if self.row is None else f"{self.file}: {self.row_kind} {self.row}"
        if self.column:
            where += f", column {self.column}"
        shown = f" ({self.value!r})" if self.value is not None else ""
        return f"{where}: {self.reason}{shown}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "row": self.row,
            "row_kind": self.row_kind,
            "column": self.column,
            "reason": self.reason,
            "value": self.value,
        }


def shorten(value: Any) -> str:
    text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


class ReadReport:
    """Counts of one read. Keeps the first `keep` skipped rows; `on_skip` sees every one."""

    def __init__(self, on_skip: Callable[[SkippedRow], None] | None = None, keep: int = 100) -> None:
        self.read = 0
        self.yielded = 0
        self.skipped: Counter[str] = Counter()
        self.filtered: Counter[str] = Counter()
        self.examples: list[SkippedRow] = []
        self.encodings: dict[str, str] = {}
        """file -> the encoding it was read with and why ("cp1252: not UTF-8")."""
        self._on_skip = on_skip
        self._keep = keep

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    @property
    def filtered_total(self) -> int:
        return sum(self.filtered.values())

    def skip(self, skipped: SkippedRow) -> None:
        self.skipped[skipped.reason] += 1
        if len(self.examples) < self._keep:
            self.examples.append(skipped)
        if self._on_skip is not None:
            self._on_skip(skipped)

    def read_as(self, file: str, encoding: str) -> None:
        """Note the encoding `file` is read with, and why."""
        self.encodings[file] = encoding

    def filter_out(self, reason: str) -> None:
        self.filtered[reason] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "yielded": self.yielded,
            "skipped": self.skipped_total,
            "skipped_by_reason": dict(self.skipped),
            "filtered": self.filtered_total,
            "filtered_by_reason": dict(self.filtered),
            "skipped_examples": [s.to_dict() for s in self.examples],
            "encodings": dict(self.encodings),
        }

    def summary(self, max_examples: int = 20) -> str:
        lines = [f"read {self.read}, yielded {self.yielded}, skipped {self.skipped_total}, filtered {self.filtered_total}"]
        lines += [f"  {file}: read as {encoding}" for file, encoding in self.encodings.items()]
        lines += [f"  skipped {n}: {reason}" for reason, n in self.skipped.most_common()]
        lines += [f"  filtered {n}: {reason}" for reason, n in self.filtered.most_common()]
        shown = self.examples[:max_examples]
        lines += [f"  - {s}" for s in shown]
        if self.skipped_total > len(shown):
            lines.append(f"  ... {self.skipped_total - len(shown)} more skipped")
        return "\n".join(lines)
