"""The progress display of `safeforge generate`: records done, tasks passed, dollars, ETA."""

from __future__ import annotations

import sys
from typing import TextIO

from safeforge.common.progress import StatusLine, format_duration
from safeforge.generation._run import RunProgress


class ProgressBar:
    """Call it with each RunProgress; `close()` once after the run."""

    def __init__(self, stream: TextIO | None = None):
        self.line = StatusLine(stream or sys.stderr)

    def __call__(self, progress: RunProgress) -> None:
        self.line.update(
            f"{progress.done}/{progress.total} records | {progress.tasks_passed} tasks passed | "
            f"${progress.cost_usd:.4f} | ETA {format_duration(progress.eta_s)}",
            fraction=progress.done / max(progress.total, 1),
            detail=f"last: {progress.record_id} -> {progress.state}",
            final=progress.done == progress.total,
        )

    def close(self) -> None:
        self.line.close()
