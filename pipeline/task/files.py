"""A task folder's files, and reading them safely: task files are untrusted input.

Only regular files are read (a symbolic link, FIFO or device is refused without being opened for
reading, so nothing outside the folder is echoed and nothing blocks), each up to a size limit, as
UTF-8; metadata.json is parsed with a nesting limit and checked against `TaskMetadata`. Every
problem is a `TaskError` naming the file and what is wrong.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

from pydantic import ValidationError

from safeforge.common.errors import SafeforgeError
from safeforge.task.metadata import TaskMetadata

SAFETY_DOMAIN = "safety_domain.pddl"
SAFETY_PROBLEM = "safety_problem.pddl"
BASIC_DOMAIN = "domain.pddl"
BASIC_PROBLEM = "problem.pddl"
METADATA = "metadata.json"
MAX_PDDL_BYTES = 1 << 20
MAX_METADATA_BYTES = 4 << 20


class TaskError(SafeforgeError):
    """A task folder that cannot be used; the message names the file and what is wrong."""


def read_task_file(path: Path, limit: int = MAX_PDDL_BYTES) -> str:
    """A task file's text; TaskError when it is missing, not a regular file, too large or not UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise TaskError(f"{path}: file is missing") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TaskError(f"{path}: is a symbolic link; task files must be regular files") from None
        raise TaskError(f"{path}: cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise TaskError(f"{path}: is not a regular file")
        if info.st_size > limit:
            raise TaskError(f"{path}: is {info.st_size:,} bytes; the limit is {limit:,}")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TaskError(f"{path}: is more than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TaskError(f"{path}:{line}: not UTF-8 text ({exc.reason})") from None


def read_metadata(folder: Path) -> TaskMetadata:
    """A task folder's metadata.json as the typed model; TaskError naming the file, and the line
    or field, when it is unusable."""
    path = Path(folder) / METADATA
    text = read_task_file(path, MAX_METADATA_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise TaskError(f"{path}: nested too deeply to be task metadata") from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: must hold a JSON object")
    try:
        return TaskMetadata.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise TaskError(
            f"{path}: {where}: {first['msg']}" + (f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else "")
        ) from None
    except RecursionError:
        raise TaskError(f"{path}: nested too deeply to be task metadata") from None
