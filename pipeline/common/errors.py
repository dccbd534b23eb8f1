"""`SafeforgeError`: the base of every error Safeforge reports to a user.

Each error's message says what is wrong and where (file, line or row, record), in one line a
person can act on. The command line catches this base in one place, prints the message and exits
with status 2; anything else is a bug and shows a traceback.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SafeforgeError(Exception):
    """An error with a message meant for the user (no traceback needed), and optionally a hint of
    our own words on how to go on (printed as written, lines and all, after the message)."""

    exit_code = 2
    hint = ""

    def __init__(self, *args: object, hint: str = "") -> None:
        super().__init__(*args)
        self.hint = hint


class StorageError(SafeforgeError):
    """A file or database cannot be written (disk full, read-only, quota); the message names it."""


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)
_SQLITE_STORAGE = ("database or disk is full", "disk i/o error", "readonly database", "unable to open database")


def storage_problem(exc: BaseException) -> str | None:
    """Why `exc` means storage cannot be written, in words, or None when it means something else."""
    if isinstance(exc, OSError) and exc.errno in _FULL:
        return exc.strerror or "cannot be written"
    if isinstance(exc, sqlite3.OperationalError) and any(s in str(exc).lower() for s in _SQLITE_STORAGE):
        return str(exc)
    return None


@contextmanager
def storage_errors(path: Path | str) -> Iterator[None]:
    """Turn a failure to write `path` (a full disk, a read-only or unopenable database, a directory
    or a missing permission where the file goes) into one StorageError naming it."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as exc:
        problem = storage_problem(exc) or (exc.strerror if isinstance(exc, OSError) else None)
        if problem is None:
            raise
        raise StorageError(f"{path}: cannot be written: {problem}") from exc
