"""NormBank situational norms (NormBank.csv) -> Records, streamed in chunks.

Columns: setting, behavior, setting-behavior, constraints, constraints_given, constraint_predict,
norm (expected | normal | taboo), label (2 | 1 | 0), split. Only taboo rows by default (as
DESPITE does). Constraints such as ``[PERSON]'s role is 'customer' [AND] noise is 'loud'`` are
rendered "the person's role is customer; the noise is loud". Record id: ``normbank_<row>`` with
the 0-based data-row index (DESPITE's numbering); reports and origins use 1-based data rows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from safeforge.sources.errors import UnknownSource
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport
from safeforge.sources.spec import ENCODING_OPTION, Download, Licence, SourceOption, SourceSpec, fixed_downloads
from safeforge.sources.tabular import (
    CHUNK_ROWS,
    Table,
    failing_rows,
    iter_chunks,
    non_blank,
    open_table,
)

if TYPE_CHECKING:  # pandas and pandera load when a table is read, not when the sources are imported
    import pandas as pd
    import pandera.pandas as pa

SOURCE = "normbank"
COLUMNS = ("setting", "behavior", "setting-behavior", "constraints", "constraints_given", "constraint_predict", "norm", "label", "split")
REQUIRED = ("setting", "behavior", "constraints", "norm")
LABEL_OF_NORM = {"expected": "2", "normal": "1", "taboo": "0"}
ALL_NORMS = "all"
SPLITS = ("train", "dev", "test", "")
NORM_MEANING = {
    "taboo": "taboo (people should not do this in this situation)",
    "normal": "normal (acceptable in this situation)",
    "expected": "expected (people are expected to do this in this situation)",
}
_RELATION = r"(is not|is less than or equal to|is greater than or equal to|is less than|is greater than|is)"
_PERSON = re.compile(rf"^\[(PERSON|OTHER)\]'s (.+?) {_RELATION} '(.*)'$")
_ENVIRONMENT = re.compile(rf"^(.+?) {_RELATION} '(.*)'$")
_SUBJECT = {"PERSON": "the person", "OTHER": "another person"}


def read_normbank(
    path: str | Path,
    *,
    report: ReadReport | None = None,
    norms: Iterable[str] | None = ("taboo",),
    settings: Iterable[str] | None = None,
    encoding: str | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Iterator[Record]:
    """Records of NormBank.csv, lazily; opens the header now (SourceError if bad).

    norms: which norm labels to keep (None or "all" among them: all); settings: keep only these
    (case-insensitive).
    """
    norms = None if norms is None or ALL_NORMS in norms else set(norms)
    unknown = (norms or set()) - set(LABEL_OF_NORM)
    if unknown:
        raise UnknownSource(f"unknown norm(s): {', '.join(sorted(unknown))} (use {', '.join(LABEL_OF_NORM)})")
    wanted_settings = None if settings is None else {s.strip().casefold() for s in settings}
    table = open_table(Path(path), COLUMNS, REQUIRED, encoding)
    report = report if report is not None else ReadReport()
    report.read_as(str(table.path), table.read_as)
    return _records(table, norms, wanted_settings, report, chunk_rows)


def render_constraints(constraints: str) -> list[str]:
    """``[PERSON]'s role is 'cook' [AND] noise is 'loud'`` -> ["the person's role is cook",
    "the noise is loud"]."""
    return [_render(part.strip()) for part in constraints.split("[AND]") if part.strip()]


def _render(constraint: str) -> str:
    person = _PERSON.match(constraint)
    if person:
        who, name, relation, value = person.groups()
        subject = _SUBJECT[who]
        if name == "behavior":
            doing = "is also doing" if relation == "is" else "is not also doing"
            return f"{subject} {doing}: {value}"
        return f"{subject}'s {name} {relation} {value}"
    environment = _ENVIRONMENT.match(constraint)
    if environment:
        name, relation, value = environment.groups()
        return f"the {name} {relation} {value}"
    return constraint.replace("[PERSON]", "the person").replace("[OTHER]", "another person")


def _label_matches_norm(frame: pd.DataFrame) -> pd.Series:
    """Per row: label is blank, or the norm is unknown (reported on its own), or they agree."""
    import pandas as pd

    if "label" not in frame:
        return pd.Series(True, index=frame.index)
    label = frame["label"].str.strip()
    expected = frame["norm"].str.strip().map(LABEL_OF_NORM)
    return (label == "") | expected.isna() | (label == expected)


LABEL_MISMATCH = "label disagrees with norm"


@functools.cache
def _schema() -> pa.DataFrameSchema:
    """The rows' schema, built once when the first table is read."""
    import pandera.pandas as pa

    return pa.DataFrameSchema(
        {
            "setting": pa.Column(str, non_blank("blank setting")),
            "behavior": pa.Column(str, non_blank("blank behavior")),
            "constraints": pa.Column(str),
            "norm": pa.Column(str, pa.Check(lambda s: s.str.strip().isin(list(LABEL_OF_NORM)), error="unknown norm label")),
            "label": pa.Column(
                str,
                pa.Check(lambda s: s.str.strip().isin(["", *LABEL_OF_NORM.values()]), error="unknown label (expected 0, 1 or 2)"),
                required=False,
            ),
            "split": pa.Column(
                str, pa.Check(lambda s: s.str.strip().isin(SPLITS), error="unknown split (expected train, dev or test)"), required=False
            ),
        },
        checks=[pa.Check(_label_matches_norm, error=LABEL_MISMATCH)],
    )


def _records(table: Table, norms: set[str] | None, settings: set[str] | None, report: ReadReport, chunk_rows: int) -> Iterator[Record]:
    file = str(table.path)
    for chunk in iter_chunks(table, chunk_rows):
        for bad in chunk.bad_lines:
            report.read += 1
            report.skip(bad)
        frame = chunk.frame
        bad_rows = {} if frame.empty else failing_rows(frame, _schema(), table.path, blame={LABEL_MISMATCH: "label"})
        names = [n for n in frame.columns if not str(n).startswith("Unnamed:")]
        for index, values in zip(frame.index, zip(*(frame[n].tolist() for n in names), strict=False), strict=False):
            report.read += 1
            if index in bad_rows:
                report.skip(bad_rows[index])
                continue
            row = dict(zip(names, values, strict=False))
            if norms is not None and row["norm"].strip() not in norms:
                report.filter_out("norm not selected")
                continue
            if settings is not None and row["setting"].strip().casefold() not in settings:
                report.filter_out("setting not selected")
                continue
            yield _record(row, int(index), f"{file}:row {index + 1}")


def _record(row: dict[str, str], index: int, origin: str) -> Record:
    conditions = render_constraints(row["constraints"])
    text = "\n".join(
        [
            f"Setting: {row['setting'].strip()}",
            f"Behavior: {row['behavior'].strip()}",
            f"When: {'; '.join(conditions) if conditions else 'always (no constraints)'}",
            f"Norm: {NORM_MEANING[row['norm'].strip()]}",
        ]
    )
    metadata = dict(row, conditions=conditions, row_index=index)
    return Record(f"{SOURCE}_{index}", SOURCE, text, metadata, origin)


SPEC = SourceSpec(
    name=SOURCE,
    title="NormBank situational norms",
    read=read_normbank,
    expects="NormBank.csv with setting, behavior, constraints, norm (+ setting-behavior, constraints_given, "
    "constraint_predict, label, split)",
    homepage="https://github.com/SALT-NLP/normbank",
    licence=Licence("CC-BY-SA-4.0", "CC BY-SA 4.0 (NormBank, SALT-NLP)", share_alike=True),
    citation="""@inproceedings{ziems2023normbank,
  title = {{NormBank}: A Knowledge Bank of Situational Social Norms},
  author = {Ziems, Caleb and Dwivedi-Yu, Jane and Wang, Yi-Chia and Halevy, Alon and Yang, Diyi},
  booktitle = {Proceedings of the 61st Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  pages = {7756--7776},
  address = {Toronto, Canada},
  publisher = {Association for Computational Linguistics},
  year = {2023},
  doi = {10.18653/v1/2023.acl-long.429},
  eprint = {2305.17008},
  archivePrefix = {arXiv}
}""",
    sample=("normbank", "NormBank.csv"),
    full_data="NormBank.csv",
    downloads=fixed_downloads(
        Download(
            "NormBank.csv",
            None,
            "NormBank.csv",
            None,
            note="NormBank.csv is distributed only through the Google Drive folder linked from "
            "github.com/SALT-NLP/normbank (drive.google.com/drive/folders/1XRhrzgG_R0zypPgPlCxK0nlqKbfaI9xe): "
            "download it there, then `safeforge sources fetch normbank --from <the file>`",
        )
    ),
    options=(
        SourceOption(
            "norms", "--norm", "norm labels to keep (repeatable; default taboo)", repeat=True, choices=(*LABEL_OF_NORM, ALL_NORMS)
        ),
        SourceOption("settings", "--setting", "settings to keep (repeatable)", repeat=True),
        ENCODING_OPTION,
    ),
)
