"""A task folder's files, and reading them safely: task files are untrusted input.

Only regular files are read (a symbolic link, directory, FIFO or device is refused without being
read, so nothing outside the folder is echoed and nothing blocks), each up to its input limit
(`pddl_bytes`, `metadata_bytes`), as UTF-8 (a byte-order mark is dropped); metadata.json is parsed
with the nesting limit and checked against `TaskMetadata`. Every problem is a `TaskError` naming
the file and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

from safeforge.common.errors import SafeforgeError
from safeforge.common.files import FileRefused, read_regular_file
from safeforge.common.jsonio import JSONRefused, load_json
from safeforge.common.records import RecordError
from safeforge.task.metadata import TaskMetadata

SAFETY_DOMAIN = "safety_domain.pddl"
SAFETY_PROBLEM = "safety_problem.pddl"
BASIC_DOMAIN = "domain.pddl"
BASIC_PROBLEM = "problem.pddl"
METADATA = "metadata.json"


class TaskError(SafeforgeError):
    """A task folder that cannot be used; the message names the file and what is wrong."""


def read_task_file(path: Path, limit: str = "pddl_bytes", *, one_name: bool = False) -> str:
    """A task file's text; TaskError when it is missing, not a regular file, beyond the input limit
    named `limit` or not UTF-8 (with `one_name`, also when it has other names: hard links)."""
    try:
        data = read_regular_file(path, limit, one_name=one_name)
    except FileRefused as exc:
        raise TaskError(f"{path}: {exc.reason}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TaskError(f"{path}:{line}: not UTF-8 text ({exc.reason})") from None


def read_metadata(folder: Path, *, one_name: bool = False) -> TaskMetadata:
    """A task folder's metadata.json as the typed model; TaskError naming the file, and the line
    or field, when it is unusable."""
    path = Path(folder) / METADATA
    text = read_task_file(path, "metadata_bytes", one_name=one_name)
    try:
        data = load_json(text)
    except JSONRefused as exc:
        raise TaskError(f"{path}:{exc.line}: {exc.message}") from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: must hold a JSON object")
    try:
        return TaskMetadata.model_validate(data)
    except RecordError as exc:
        raise TaskError(f"{path}: {exc.first()}") from None
