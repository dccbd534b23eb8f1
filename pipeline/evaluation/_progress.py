"""Progress of an evaluation on stderr: samples done of total, cache hits, errors, dollars, time."""

from __future__ import annotations

import time
from typing import TextIO

from safeforge.common.progress import StatusLine


class Progress:
    """Counts finished (task, run) samples and shows a status line now and then."""

    def __init__(self, total: int, already_done: int, stream: TextIO | None):
        self.total = total
        self.done = already_done
        self.cached = self.errors = self.skipped = 0
        self.cost = 0.0
        self.unpriced = False
        self.started = time.monotonic()
        self.line = StatusLine(stream)
        self._final_state: tuple | None = None
        self.line.note(f"eval: {total} samples, {already_done} already in results.jsonl")

    def finished(self, row: dict) -> None:
        self.done += 1
        self.cached += bool(row.get("cache_hit"))
        self.errors += bool(row.get("error"))
        if row.get("cost") is None and not row.get("cache_hit"):
            self.unpriced = True
        self.cost += row.get("cost") or 0.0
        self._show()

    def skipped_task(self, samples: int) -> None:
        """A task that could not be loaded: its samples will not come."""
        self.skipped += samples
        self._show()

    def close(self) -> None:
        self._show(final=True)
        self.line.close()

    def _show(self, final: bool = False) -> None:
        state = (self.done, self.skipped, self.cached, self.errors)
        if final and state == self._final_state:
            return
        final = final or self.done + self.skipped >= self.total
        if final:
            self._final_state = state
        cost = f"${self.cost:.4f}" + (" + unpriced calls" if self.unpriced else "")
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        self.line.update(
            f"eval: {self.done}/{self.total} done ({self.cached} cached, {self.errors} llm errors"
            f"{skipped}), {cost}, {time.monotonic() - self.started:.1f}s",
            fraction=(self.done + self.skipped) / max(self.total, 1),
            final=final,
        )
