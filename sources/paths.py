"""Where a source's data is: its full data (fetched into `<data dir>/<source>/`), an installed
package that carries it, or the sample bundled inside this package (`sources/samples/`); and the
portable label that names a dataset in a record's origin (never a path of this machine).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safeforge.common.resources import package_path
from safeforge.settings import Settings

MANIFEST = ".safeforge-fetched.json"
"""In `<data dir>/<source>/`: the downloads that completed and were verified, written last."""


def sample_path(*parts: str) -> Path:
    """A file or folder of the bundled samples, e.g. ``sample_path("neiss", "holdout_labeled.csv")``."""
    return package_path("safeforge.sources", "samples", *parts)


def data_root(source: str) -> Path:
    """`<data dir>/<source>/`, where `safeforge sources fetch` puts the full data."""
    return Settings.load().data_dir / source


def fetched(source: str, root: Path | None = None) -> dict[str, dict[str, Any]]:
    """The verified downloads of `source` (in `root`, default `data_root(source)`), by key (empty when none)."""
    try:
        manifest = json.loads(((root or data_root(source)) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def installed_package_dir(package: str, folder: str) -> Path | None:
    """`folder` inside the installed package `package` (found without importing it), or None."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / folder
        if candidate.is_dir():
            return candidate
    return None


@dataclass(frozen=True)
class DataLocation:
    """Where records are read from, and how origins name it."""

    kind: str
    """full (fetched), package (an installed package), sample (bundled) or local (a --path)."""
    path: Path
    """What the reader is given."""
    root: Path
    """The dataset's root: origins name files relative to it."""
    label: str
    """`<source>@<version or checksum>`, the first part of every origin."""


def file_checksum(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def local_location(source: str, path: Path) -> DataLocation:
    """A path the user gave: labelled by its content checksum (one file) or its folder's name."""
    path = path.absolute()
    if path.is_file():
        return DataLocation("local", path, path.parent, f"{source}@sha256:{file_checksum(path)}")
    return DataLocation("local", path, path, f"{source}@local:{path.name}")
