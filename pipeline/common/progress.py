"""`StatusLine`: the one progress display of long commands.

On a terminal the line is redrawn in place (with a bar when the fraction done is known);
otherwise a plain line is printed, at most once per `line_interval_s`, so logs stay readable.
The last update (`final=True`) is always shown.
"""

from __future__ import annotations

import sys
import time
from typing import Literal, TextIO

BAR_WIDTH = 24


def format_duration(seconds: float | None) -> str:
    """`m:ss` or `h:mm:ss`; `?` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class StatusLine:
    """A throttled status line on `stream` (default: this process's stderr; None shows nothing)."""

    def __init__(self, stream: TextIO | None | Literal["stderr"] = "stderr", tty_interval_s: float = 0.1, line_interval_s: float = 1.0):
        self.stream = sys.stderr if stream == "stderr" else stream
        self.tty = bool(self.stream is not None and self.stream.isatty())
        self.interval_s = tty_interval_s if self.tty else line_interval_s
        self._last = 0.0
        self._drawn = False
        self._shown = ""

    def update(self, text: str, *, fraction: float | None = None, detail: str = "", final: bool = False) -> None:
        """Show `text` (with a bar for `fraction` on a terminal; `detail` only on plain lines)."""
        if self.stream is None or text == self._shown:
            return
        now = time.monotonic()
        if not final and now - self._last < self.interval_s:
            return
        self._last, self._shown = now, text
        if self.tty:
            bar = ""
            if fraction is not None:
                filled = int(BAR_WIDTH * min(max(fraction, 0.0), 1.0))
                bar = f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] "
            self.stream.write(f"\r{bar}{text}\x1b[K")
            self._drawn = True
        else:
            self.stream.write(f"{text}{' | ' + detail if detail else ''}\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (ends a redrawn line first)."""
        if self.stream is None:
            return
        self.close()
        print(text, file=self.stream, flush=True)

    def close(self) -> None:
        """End the redrawn line (call once, after the work)."""
        if self._drawn and self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
