"""The registry of sources and `iter_records`, the one entry point that reads any of them.

Each source is one module with a `SPEC` (a `SourceSpec`). The built-in ones are named in
`SOURCE_MODULES`; another package adds its own by an entry point in the group `safeforge.sources`
naming its module's `SPEC` (or, in one process, by `register_source`). The command line, the
deployments, the dataset card, review and evaluation read everything they need from the specs.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import logging
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

logger = logging.getLogger("safeforge.sources")

SOURCE_MODULES = ("neiss", "normbank", "bddl", "virtualhome", "alfred")
"""The built-in sources, in the order they are listed."""
ENTRY_POINT_GROUP = "safeforge.sources"
"""The entry-point group of sources installed by other packages (each names a `SourceSpec`)."""

SOURCES: dict[str, SourceSpec] = {}
"""Every source by name: the built-in ones, then those of entry points and `register_source`."""


def register_source(spec: SourceSpec) -> None:
    """Add a source; UnknownSource (a usage error) if another source has its name."""
    if not isinstance(spec, SourceSpec):
        raise UnknownSource(f"a source must be a SourceSpec, not {type(spec).__name__}")
    if SOURCES.get(spec.name, spec) is not spec:
        raise UnknownSource(f"two sources are named {spec.name!r}")
    SOURCES[spec.name] = spec


for _module in SOURCE_MODULES:
    register_source(importlib.import_module(f".{_module}", __package__).SPEC)
for _entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
    try:
        register_source(_entry.load())
    except Exception as exc:  # one broken plugin must not take the other sources down with it
        logger.warning("source %s (entry point %s) is not available: %s: %s", _entry.name, _entry.value, type(exc).__name__, exc)


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


def _samples(spec: SourceSpec) -> Path:
    return spec.samples_dir or sample_path()


def _sample_root(source: str) -> Path:
    """The folder of `source`'s bundled sample."""
    return _samples(get_source(source)) / source


def default_location(source: str) -> DataLocation:
    """Where `source` is read from when no path is given: its full data once fetched, else an
    installed package that carries it, else the bundled sample."""
    spec = get_source(source)
    root = data_root(source)  # the settings, read once
    done = fetched(source, root)
    full = root / spec.full_data
    if done and full.exists():
        return DataLocation("full", full, root, f"{source}@{'+'.join(sorted(done))}")
    if spec.installed_package:
        package, folder = spec.installed_package
        installed = installed_package_dir(package, folder)
        if installed is not None:
            version = importlib.metadata.version(package)
            return DataLocation("package", installed, installed, f"{source}@{package}-{version}")
    return DataLocation("sample", _samples(spec).joinpath(*spec.sample), _sample_root(source), f"{source}@sample")


def location_of(source: str, path: str | Path | None) -> DataLocation:
    """Where `path` (None: the default) is, and how origins name it."""
    if path is None:
        return default_location(source)
    path = Path(path).absolute()
    full = data_root(source)  # the settings, read once
    for kind, root, label in (
        ("sample", _sample_root(source), f"{source}@sample"),
        ("full", full, f"{source}@{'+'.join(sorted(fetched(source, full)))}"),
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
        root = _sample_root(source)
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
    `filters` are the source's own options (SOURCES[source].options), checked and parsed here.
    """
    spec = get_source(source)
    options = spec.read_options(filters)
    if report is None:
        report = ReadReport(on_skip=on_skip)
    elif on_skip is not None:
        raise ValueError("give on_skip to the ReadReport you pass, not to iter_records")
    location = location_of(source, path)
    records = spec.read(location.path, report=report, **options)
    return select((portable(r, location) for r in records), report, limit=limit, offset=offset, sample_size=sample, seed=seed)
