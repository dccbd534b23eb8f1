"""A progress display for `safeforge generate`: one redrawn bar on a terminal, plain lines otherwise."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from pipeline.generation._run import RunProgress

BAR_WIDTH = 24


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressBar:
    """Call it with each RunProgress. On a TTY the bar is redrawn in place (at most every
    `tty_interval_s`); otherwise one line per record is printed, at most every `line_interval_s`
    (the last record always)."""

    def __init__(self, stream: TextIO | None = None, tty_interval_s: float = 0.1, line_interval_s: float = 1.0):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval_s = tty_interval_s if self.tty else line_interval_s
        self._last = 0.0
        self._drawn = False

    def __call__(self, progress: RunProgress) -> None:
        now = time.monotonic()
        last_record = progress.done == progress.total
        if not last_record and now - self._last < self.interval_s:
            return
        self._last = now
        counts = (f"{progress.done}/{progress.total} records | {progress.tasks_passed} tasks passed | "
                  f"${progress.cost_usd:.4f} | ETA {format_duration(progress.eta_s)}")
        if self.tty:
            filled = BAR_WIDTH * progress.done // max(progress.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {counts}\x1b[K")
            self._drawn = True
        else:
            self.stream.write(f"{counts} | last: {progress.record_id} -> {progress.state}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the redrawn line (call once, after the run)."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
