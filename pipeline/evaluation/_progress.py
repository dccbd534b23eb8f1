"""Progress of an evaluation on stderr: samples done of total, cache hits, errors, dollars, time."""
from __future__ import annotations

import time
from typing import TextIO

REFRESH_S = 1.0  # at most one line per second, plus the last one


class Progress:
    """Counts finished (task, run) samples and prints a status line now and then."""

    def __init__(self, total: int, already_done: int, stream: TextIO | None):
        self.total = total
        self.done = already_done
        self.resumed = already_done
        self.cached = self.errors = self.skipped = 0
        self.cost = 0.0
        self.unpriced = False
        self.stream = stream
        self.started = time.monotonic()
        self._last = 0.0
        self._shown: tuple | None = None
        self._line(f"eval: {total} samples, {already_done} already in results.jsonl")

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

    def _show(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self._last < REFRESH_S and self.done + self.skipped < self.total:
            return
        state = (self.done, self.skipped, self.cached, self.errors)
        if state == self._shown:
            return
        self._last, self._shown = now, state
        cost = f"${self.cost:.4f}" + (" + unpriced calls" if self.unpriced else "")
        skipped = f", {self.skipped} skipped" if self.skipped else ""
        self._line(f"eval: {self.done}/{self.total} done ({self.cached} cached, {self.errors} llm errors"
                   f"{skipped}), {cost}, {now - self.started:.1f}s")

    def _line(self, text: str) -> None:
        if self.stream is not None:
            print(text, file=self.stream, flush=True)
