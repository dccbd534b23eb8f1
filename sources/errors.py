"""The fatal error of the source adapters."""
from __future__ import annotations

from pathlib import Path

from pipeline.common.errors import SafeforgeError


class SourceError(SafeforgeError):
    """A source cannot be read at all: missing or unreadable file, missing required column.

    Bad rows are not errors; they are skipped and reported (see `sources.report`).
    """

    def __init__(self, path: str | Path, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class UnknownSource(SafeforgeError, ValueError):
    """A source, option or version that does not exist; the message lists the valid ones."""
