"""Where a source's data is found: the samples bundled inside this package (`sources/samples/`)."""
from __future__ import annotations

from pathlib import Path

from pipeline.common.resources import package_path


def sample_path(*parts: str) -> Path:
    """A file or folder of the bundled samples, e.g. ``sample_path("neiss", "holdout_labeled.csv")``."""
    return package_path("sources", "samples", *parts)
