"""The CPSC NEISS codebook (neiss_code_text_mapping.csv): numeric codes <-> text labels."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.sources.errors import SourceError, UnknownSource
from safeforge.sources.tabular import iter_chunks, open_table

CODEBOOK_FILE = "neiss_code_text_mapping.csv"
_COLUMNS = ("Format name", "Starting value for format", "Ending value for format", "Format value label")
_CODE_PREFIX = re.compile(r"^\s*\d+\s+-\s+")
MONTHS_BASE = 200  # NEISS ages 201..223 mean 1..23 months

# Data column -> codebook format name.
FORMAT_OF_COLUMN = {
    "Sex": "GENDER",
    "Race": "RACE",
    "Hispanic": "HISP",
    "Body_Part": "BDYPT",
    "Body_Part_2": "BDYPT",
    "Diagnosis": "DIAG",
    "Diagnosis_2": "DIAG",
    "Disposition": "DISP",
    "Location": "LOC",
    "Fire_Involvement": "FIRE",
    "Product_1": "PROD",
    "Product_2": "PROD",
    "Product_3": "PROD",
    "Alcohol": "ALC_DRUG",
    "Drug": "ALC_DRUG",
}


@dataclass(frozen=True, slots=True)
class Codebook:
    """Labels by format and code; labels lose their "1842 - " prefix ("STAIRS OR STEPS")."""

    labels: dict[str, dict[int, str]]
    _lookups: dict[str, dict[str, str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, path: str | Path) -> Codebook:
        table = open_table(path, _COLUMNS, _COLUMNS)
        labels: dict[str, dict[int, str]] = {}
        for chunk in iter_chunks(table):
            rows = chunk.frame[list(_COLUMNS)].itertuples(index=False)
            for index, (fmt, start, end, label) in zip(chunk.frame.index, rows, strict=False):
                try:
                    first, last = int(start), int(end)
                except ValueError:
                    raise SourceError(path, f"row {index + 1}: non-numeric code range {start!r}..{end!r}") from None
                text = _CODE_PREFIX.sub("", label).strip()
                codes = labels.setdefault(fmt.strip(), {})
                codes.update(dict.fromkeys(range(first, last + 1), text))
        if "PROD" not in labels:
            raise SourceError(path, "not a NEISS codebook: no PROD format")
        return cls(labels)

    def label(self, fmt: str, code: int) -> str | None:
        return self.labels.get(fmt, {}).get(code)

    def decode(self, fmt: str, values: Iterable[str]) -> list[str]:
        """Labels for code strings: '' for blanks (and product 0, "none"), 'CODE n' if unknown;
        values that are already labels (decoded files) are kept as they are."""
        known = self._lookup(fmt)
        return [known[v] if v in known else self._decode_one(fmt, v) for v in values]

    def _lookup(self, fmt: str) -> dict[str, str]:
        cached = self._lookups.get(fmt)
        if cached is None:
            labels = self.labels.get(fmt, {})
            cached = {str(code): text for code, text in labels.items()}
            cached.update({text: text for text in labels.values()})
            cached[""] = ""
            if fmt == "PROD":
                cached["0"] = ""
            self._lookups[fmt] = cached
        return cached

    def _decode_one(self, fmt: str, value: str) -> str:
        text = value.strip()
        try:
            code = int(float(text))
        except ValueError:
            return text
        if fmt == "PROD" and code == 0:
            return ""
        return self.labels.get(fmt, {}).get(code, f"CODE {code}")

    def code_of(self, fmt: str, label: str) -> int | None:
        """The code whose label is `label` (case-insensitive), or None."""
        wanted = label.strip().casefold()
        for code, text in self.labels.get(fmt, {}).items():
            if text.casefold() == wanted:
                return code
        return None

    def normalise(self, fmt: str, value: str | int) -> str:
        """A code or a label given by a user -> the label (UnknownSource if unknown)."""
        text = str(value).strip()
        if text.isdigit():
            found = self.label(fmt, int(text))
        else:
            code = self.code_of(fmt, text)
            found = None if code is None else self.label(fmt, code)
        if found is None:
            raise UnknownSource(f"unknown NEISS {fmt} value {value!r}")
        return found

    def product_codes(self) -> dict[str, int]:
        """Product label (casefolded) -> code, for files that carry labels instead of codes."""
        return {text.casefold(): code for code, text in self.labels.get("PROD", {}).items()}
