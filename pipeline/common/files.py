"""Writing files so that a reader never sees half of one; reading untrusted files safely."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from safeforge.common.errors import storage_errors
from safeforge.common.limits import beyond, current_limits

DEFAULT_MODE = 0o644
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class FileRefused(Exception):
    """A file that is not read; `reason` says why (it never quotes the file's content)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_regular_file(path: Path, limit: str, *, one_name: bool = False) -> bytes:
    """The bytes of `path`, read only when it is a regular file (never through a symbolic link;
    a FIFO or device is refused without blocking) of at most the input limit named `limit`
    (`safeforge.common.limits`); with `one_name`, a file with other names (hard links) is refused
    too. FileRefused says why not."""
    size_limit = getattr(current_limits(), limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise FileRefused("file is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused("is a symbolic link, not a regular file") from None
        raise FileRefused(f"cannot be read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        kind = stat.S_IFMT(info.st_mode)
        if kind != stat.S_IFREG:
            raise FileRefused(f"is {_KINDS.get(kind, 'not a regular file')}, not a regular file")
        if one_name and info.st_nlink > 1:
            raise FileRefused(f"has {info.st_nlink} names (hard links); only a file with one name is read")
        if info.st_size > size_limit:
            raise FileRefused(beyond(limit, f"is {info.st_size:,} bytes"))
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(size_limit + 1)
    except OSError as exc:
        raise FileRefused(f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > size_limit:
        raise FileRefused(beyond(limit, f"is more than {size_limit:,} bytes"))
    return data


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
    """`value` as JSON indented by 2, UTF-8 not ASCII-escaped."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def umask() -> int:
    """The process's umask (read without changing it for longer than a moment)."""
    current = os.umask(0)
    os.umask(current)
    return current
