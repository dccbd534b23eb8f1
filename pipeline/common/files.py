"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pydantic_core

from safeforge.common.errors import storage_errors

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


def write_staged(path: Path, text: str) -> None:
    """Write `text` to `path` in place (created with mode 0644 less the umask, or truncated): for
    files of a staging folder that no reader sees before it is renamed into place."""
    with storage_errors(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, DEFAULT_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)


def json_text(value: Any) -> str:
    """`value` as JSON indented by 2, UTF-8 not ASCII-escaped, written by pydantic-core several
    times faster than json.dumps(value, indent=2, ensure_ascii=False) and the same text, except
    that floats below 1e-4 are spelled out (0.00001, not 1e-05)."""
    return pydantic_core.to_json(value, indent=2).decode("utf-8")


def umask() -> int:
    """The process's umask (read without changing it for longer than a moment)."""
    current = os.umask(0)
    os.umask(current)
    return current
