"""The registry of sources and `iter_records`, the one entry point that reads any of them."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sources import alfred, bddl, neiss, normbank, virtualhome
from sources.record import Record
from sources.report import ReadReport, SkippedRow
from sources.selection import select


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What a source is called, what it expects on disk, where to get it, how to read it."""

    name: str
    title: str
    read: Callable[..., Iterator[Record]]  # read(path, *, report, **filters)
    default_path: Callable[[], Path]
    expects: str
    full_data: str
    filters: tuple[str, ...] = ()


SOURCES: dict[str, SourceSpec] = {spec.name: spec for spec in (
    SourceSpec(
        "neiss", "NEISS injury reports (US CPSC)", neiss.read_neiss, neiss.default_path,
        "one CSV or TSV file: raw-coded (Narrative_1, numeric codes, MM/DD/YYYY) or decoded "
        "(Narrative, labels, ISO dates); codebook neiss_code_text_mapping.csv beside it or bundled",
        "https://www.cpsc.gov/Research--Statistics/NEISS-Injury-Data (yearly neissYYYY.tsv/.xlsx)",
        ("products", "locations", "min_age", "max_age", "codebook"),
    ),
    SourceSpec(
        "normbank", "NormBank situational norms", normbank.read_normbank, normbank.default_path,
        "NormBank.csv with setting, behavior, constraints, norm (+ setting-behavior, "
        "constraints_given, constraint_predict, label, split)",
        "https://github.com/SALT-NLP/normbank (README links the Google Drive folder with NormBank.csv)",
        ("norms", "settings"),
    ),
    SourceSpec(
        "bddl", "BEHAVIOR-1K activity definitions (BDDL)", bddl.read_bddl, bddl.default_path,
        "activity_definitions/<activity>/problem0.bddl (domain_*.bddl files are ignored)",
        "PyPI `pip download --no-deps bddl` (bddl/activity_definitions/), or "
        "https://github.com/StanfordVL/BEHAVIOR-1K (bddl/bddl/activity_definitions/)",
    ),
    SourceSpec(
        "virtualhome", "VirtualHome programs", virtualhome.read_virtualhome, virtualhome.default_path,
        "programs_processed_precond_nograb_morepreconds/{withoutconds/<sub>/*.txt, "
        "initstate/<sub>/*.json} paired by relative path (flat folders work too)",
        "http://virtual-home.org/release/programs/programs_processed_precond_nograb_morepreconds.zip",
        ("state_budget",),
    ),
    SourceSpec(
        "alfred", "ALFRED trajectories", alfred.read_alfred, alfred.default_path,
        "json_2.1.0/<split>/<task>/<trial>/traj_data.json (pp/ copies are ignored)",
        "https://ai2-vision-alfred.s3-us-west-2.amazonaws.com/json_2.1.0.7z "
        "(github.com/askforalfred/alfred, scripts in data/)",
    ),
)}


def get_source(name: str) -> SourceSpec:
    try:
        return SOURCES[name]
    except KeyError:
        raise ValueError(f"unknown source {name!r} (known: {', '.join(SOURCES)})") from None


def default_path(source: str) -> Path:
    """Where the bundled sample of `source` lives (the default of every --path)."""
    return get_source(source).default_path()


def iter_records(
    source: str,
    path: str | Path | None = None,
    *,
    report: ReadReport | None = None,
    on_skip: Callable[[SkippedRow], None] | None = None,
    limit: int | None = None,
    offset: int = 0,
    sample: int | None = None,
    seed: int = 0,
    **filters: Any,
) -> Iterator[Record]:
    """Records of `source` read from `path` (default: the bundled sample), filtered and selected.

    Fatal problems raise SourceError here, before the first record; bad rows are skipped and
    counted in `report` (pass one to read the counts afterwards) and passed to `on_skip`.
    `filters` are the source's own options (see SOURCES[source].filters).
    """
    spec = get_source(source)
    unknown = sorted(set(filters) - set(spec.filters))
    if unknown:
        raise ValueError(f"{source} has no option(s) {', '.join(unknown)} "
                         f"(it takes: {', '.join(spec.filters) or 'none'})")
    if report is None:
        report = ReadReport(on_skip=on_skip)
    elif on_skip is not None:
        raise ValueError("give on_skip to the ReadReport you pass, not to iter_records")
    records = spec.read(path, report=report, **filters)
    return select(records, report, limit=limit, offset=offset, sample_size=sample, seed=seed)
