"""The registry of sources and `iter_records`, the one entry point that reads any of them.

Each source is one module with a `SPEC` (a `SourceSpec`); adding a source means writing that module
(and its tests) and naming it in `SOURCE_MODULES`. Deployments, the dataset card, review and
evaluation read everything else they need from the specs.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from safeforge.sources.errors import UnknownSource
from safeforge.sources.paths import (
    DataLocation,
    data_root,
    fetched,
    installed_package_dir,
    local_location,
    sample_path,
)
from safeforge.sources.record import Record
from safeforge.sources.report import ReadReport, SkippedRow
from safeforge.sources.selection import select
from safeforge.sources.spec import SourceSpec

SOURCE_MODULES = ("neiss", "normbank", "bddl", "virtualhome", "alfred")
"""The sources, in the order they are listed."""

SOURCES: dict[str, SourceSpec] = {spec.name: spec for spec in (importlib.import_module(f".{m}", __package__).SPEC for m in SOURCE_MODULES)}


def get_source(name: str) -> SourceSpec:
    try:
        return SOURCES[name]
    except KeyError:
        raise UnknownSource(f"unknown source {name!r} (known: {', '.join(SOURCES)})") from None


def task_source(task_id: str, declared: str | None = None) -> str:
    """The source a task came from: the source its provenance declares, else the prefix of a
    DESPITE-style id (`neiss_2888`) when it names a source (so tasks imported from DESPITE group by
    their source), else what the provenance declares (`despite`, `handwritten`), else "unknown"."""
    if declared in SOURCES:
        return declared
    prefix = task_id.replace("-", "_").split("_", 1)[0].lower()
    return prefix if prefix in SOURCES else declared or "unknown"


def default_location(source: str) -> DataLocation:
    """Where `source` is read from when no path is given: its full data once fetched, else an
    installed package that carries it, else the bundled sample."""
    spec = get_source(source)
    done = fetched(source)
    full = data_root(source) / spec.full_data
    if done and full.exists():
        return DataLocation("full", full, data_root(source), f"{source}@{'+'.join(sorted(done))}")
    if spec.installed_package:
        package, folder = spec.installed_package
        installed = installed_package_dir(package, folder)
        if installed is not None:
            version = importlib.metadata.version(package)
            return DataLocation("package", installed, installed, f"{source}@{package}-{version}")
    return DataLocation("sample", sample_path(*spec.sample), sample_path(source), f"{source}@sample")


def location_of(source: str, path: str | Path | None) -> DataLocation:
    """Where `path` (None: the default) is, and how origins name it."""
    if path is None:
        return default_location(source)
    path = Path(path).absolute()
    for kind, root, label in (
        ("sample", sample_path(source), f"{source}@sample"),
        ("full", data_root(source), f"{source}@{'+'.join(sorted(fetched(source)))}"),
    ):
        if path == root or root in path.parents:
            return DataLocation(kind, path, root, label)
    return local_location(source, path)


def default_path(source: str) -> Path:
    """What `source` reads when no path is given (see `default_location`)."""
    return default_location(source).path


def portable(record: Record, location: DataLocation) -> Record:
    """The record with an origin that names the dataset, not a path of this machine."""
    root = str(location.root)
    origin = record.origin
    if origin == root or origin.startswith(root + "/") or origin.startswith(root + ":"):
        origin = location.label + "/" + origin[len(root) :].lstrip("/")
    return dataclasses.replace(record, origin=origin)


def resolve_origin(origin: str) -> Path | None:
    """The file a portable origin names, when that dataset is on this machine (the bundled sample,
    or the same fetched data); None otherwise."""
    label, _, rest = origin.partition("/")
    source, _, version = label.partition("@")
    if source not in SOURCES or not rest:
        return None
    relative = rest.split(":row ")[0]
    if version == "sample":
        root = sample_path(source)
    elif version == "+".join(sorted(fetched(source))):
        root = data_root(source)
    else:
        return None
    path = root / relative
    return path if path.is_file() and root in path.resolve().parents else None


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
    """Records of `source` read from `path` (default: `default_location`), filtered and selected.

    Fatal problems raise SourceError here, before the first record; bad rows and bad files are
    skipped and counted in `report` (pass one to read the counts afterwards) and passed to `on_skip`.
    `filters` are the source's own options (see SOURCES[source].filters).
    """
    spec = get_source(source)
    unknown = sorted(set(filters) - set(spec.filters))
    if unknown:
        raise UnknownSource(f"{source} has no option(s) {', '.join(unknown)} (it takes: {', '.join(spec.filters) or 'none'})")
    if report is None:
        report = ReadReport(on_skip=on_skip)
    elif on_skip is not None:
        raise ValueError("give on_skip to the ReadReport you pass, not to iter_records")
    location = location_of(source, path)
    records = spec.read(location.path, report=report, **filters)
    return select((portable(r, location) for r in records), report, limit=limit, offset=offset, sample_size=sample, seed=seed)
