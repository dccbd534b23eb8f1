"""The fatal error of the source adapters."""

from __future__ import annotations

from pathlib import Path

from safeforge.common.errors import SafeforgeError


class SourceError(SafeforgeError):
    """A source cannot be read at all: missing or unreadable file, missing required column.

    Bad rows are not errors; they are skipped and reported (see `safeforge.sources.report`).
    """

    def __init__(self, path: str | Path, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class UnknownSource(SafeforgeError, ValueError):
    """A source, option or version that does not exist; the message lists the valid ones."""


BAD_FILE_ERRORS = (ValueError, TypeError, AttributeError, IndexError, KeyError, RecursionError, MemoryError, OSError, SourceError)
"""What reading one record's file may raise on hostile or broken input: the file is skipped with the
reason and the read goes on."""


def reason(exc: BaseException) -> str:
    """One line saying why a file was skipped."""
    if isinstance(exc, (ValueError, SourceError)):
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "too large to read into memory"
    return f"unreadable ({type(exc).__name__}: {exc})"
