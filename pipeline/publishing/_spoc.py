"""A release's SPOC goal-condition files: `spoc/`, one file for each released task that exports.

They are written by `safeforge.spoc.export` from the release's own tasks.tar.gz, exactly as
`safeforge spoc export <release>` writes them, so the two give the same files. The exporter's
report (with the reasons tasks do not export) stays out of the release; the reasons are shown as
progress.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.spoc import export

SPOC_DIR = "spoc"


@dataclass
class SpocFiles:
    """Which released tasks have a goal-condition file in spoc/, and how many do not."""

    files: dict[str, str] = field(default_factory=dict)  # task_id -> file name in spoc/
    not_exported: int = 0


def write_spoc_files(release: Path, progress: Callable[[str], None]) -> SpocFiles:
    """Export the tasks of the release folder `release` (its tasks.tar.gz) into `release/spoc/`."""
    scratch = Path(tempfile.mkdtemp(prefix="safeforge-spoc-"))
    try:
        report = export(release, scratch / SPOC_DIR, progress=lambda message: progress(f"spoc: {message}"))
        found = SpocFiles({entry["task_id"]: entry["file"] for entry in report.exported}, len(report.skipped))
        if found.files:
            (release / SPOC_DIR).mkdir()
            for name in sorted(found.files.values()):
                shutil.copyfile(scratch / SPOC_DIR / name, release / SPOC_DIR / name)
        return found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
