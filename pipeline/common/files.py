"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from pipeline.common.errors import storage_errors

DEFAULT_MODE = 0o644


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file renamed into place; an existing file keeps
    its mode, a new one gets 0644 less the umask."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = DEFAULT_MODE & ~umask()
    with storage_errors(path):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def write_new(path: Path, text: str) -> None:
    """Create `path` (it must not exist) holding `text`, mode 0644 less the umask: for files of a
    staging folder that no reader sees before it is renamed into place."""
    with storage_errors(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, DEFAULT_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)


def umask() -> int:
    """The process's umask (read without changing it for longer than a moment)."""
    current = os.umask(0)
    os.umask(current)
    return current
