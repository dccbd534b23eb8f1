"""A toy source in one module, as docs/sources.md ("Adding a source") describes: one record per
non-blank line of a text file, with one option of its own. The tests register it through an
entry point in the group `safeforge.sources`, without touching Safeforge's code."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from safeforge.sources import Licence, Range, ReadReport, Record, SourceError, SourceOption, SourceSpec, fixed_downloads


def read_toy(path: str | Path, *, report: ReadReport | None = None, min_words: int = 1) -> Iterator[Record]:
    """Records of a text file, one per line of at least `min_words` words."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(path, "not a file")
    report = report if report is not None else ReadReport()
    lines = path.read_text(encoding="utf-8").splitlines()

    def records() -> Iterator[Record]:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            report.read += 1
            if len(line.split()) < min_words:
                report.filter_out("too few words")
                continue
            yield Record(f"toy_{number}", "toy", line.strip(), {"line": number}, f"{path}:row {number}")

    return records()


SPEC = SourceSpec(
    name="toy",
    title="Toy hazards (one per line)",
    read=read_toy,
    expects="a UTF-8 text file, one situation per line",
    homepage="https://example.org/toy",
    licence=Licence("CC0-1.0", "CC0 1.0 (the toy's authors)"),
    citation="@misc{toy, title = {Toy hazards}}",
    sample=("toy", "hazards.txt"),
    samples_dir=Path(__file__).parent / "samples",
    full_data="hazards.txt",
    downloads=fixed_downloads(),
    options=(SourceOption("min_words", "--min-words", "keep lines of at least N words", range=Range(1, 1000)),),
)
