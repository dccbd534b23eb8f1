"""A release's SPOC goal-condition files: `spoc/`, one file for each released task that exports,
and `spoc/README.md`, which says how many exported and why each other task did not.

They are written by `safeforge.spoc.export` from the release's own tasks.tar.gz, exactly as
`safeforge spoc export <release>` writes them, so the two give the same files. Every release has
the folder, even when no task exports (then it holds the README alone; SPOC's loader reads only
*.json).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.spoc import export

SPOC_DIR = "spoc"
README = "README.md"


@dataclass
class SpocFiles:
    """Which released tasks have a goal-condition file in spoc/, and how many do not."""

    files: dict[str, str] = field(default_factory=dict)  # task_id -> file name in spoc/
    not_exported: int = 0
    reasons: dict[str, str] = field(default_factory=dict)  # task_id -> why it does not export


def _readme(found: SpocFiles) -> str:
    total = len(found.files) + found.not_exported
    lines = [
        "# SPOC goal-condition files",
        "",
        f"{len(found.files)} of the release's {total} tasks export to a SPOC goal-condition file in this folder, named as "
        "SPOC names its files; `release.json` maps each task to its file. `safeforge spoc export` of the release writes "
        "the same files.",
    ]
    if found.reasons:
        lines += ["", f"The other {found.not_exported} do not export:", ""]
        lines += [f"- `{task_id}`: " + reason.replace("\n", "\n  ") for task_id, reason in sorted(found.reasons.items())]
    return "\n".join(lines) + "\n"


def write_spoc_files(release: Path, progress: Callable[[str], None]) -> SpocFiles:
    """Export the tasks of the release folder `release` (its tasks.tar.gz) into `release/spoc/`."""
    scratch = Path(tempfile.mkdtemp(prefix="safeforge-spoc-"))
    try:
        report = export(release, scratch / SPOC_DIR, progress=lambda message: progress(f"spoc: {message}"))
        reasons = {entry["task_id"]: entry["reason"] for entry in report.skipped}
        found = SpocFiles({entry["task_id"]: entry["file"] for entry in report.exported}, len(report.skipped), reasons)
        (release / SPOC_DIR).mkdir()
        for name in sorted(found.files.values()):
            shutil.copyfile(scratch / SPOC_DIR / name, release / SPOC_DIR / name)
        (release / SPOC_DIR / README).write_text(_readme(found), encoding="utf-8")
        return found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
