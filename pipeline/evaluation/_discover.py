"""Finding the task folders to evaluate in what the user points at.

TASKS may be:
- one task folder (it holds safety_domain.pddl);
- a run folder (`outputs/<run>/`: ledger.sqlite + tasks/): the tasks whose ledger state is
  `accepted`, or with `include_unreviewed` also those still `checked` or `in_review`
  (tasks rejected by checks or by review are never evaluated);
- a release folder: its `tasks/` folder, or else its `tasks.tar.gz`, extracted to a temporary
  folder that lives as long as the `discover_tasks` context;
- a `.tar.gz` archive of task folders;
- any folder of task folders (searched recursively; a task folder's own sub-folders are not).
A task folder is a folder holding safety_domain.pddl or metadata.json. Problems (an accepted
ledger record without its folder, a duplicate task id, a broken archive) are reported, not fatal.
"""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.common.errors import SafeforgeError
from safeforge.runs.ledger import RunLedger
from safeforge.task.folder import METADATA, SAFETY_DOMAIN

LEDGER = "ledger.sqlite"
RELEASE_ARCHIVE = "tasks.tar.gz"
REVIEWED_STATES = ("accepted",)
UNREVIEWED_STATES = ("checked", "in_review")


class DiscoveryError(SafeforgeError):
    """What the user points at holds no tasks that can be read (names the path)."""


@dataclass(frozen=True)
class TaskRef:
    """A task folder and its id, read cheaply from metadata.json (the folder name otherwise)."""

    folder: Path
    task_id: str


@dataclass
class Discovery:
    """What `discover_tasks` found: the kind of input, the tasks, and what could not be used."""

    kind: str
    tasks: list[TaskRef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def peek_task_id(folder: Path) -> str:
    """The task id as `Task.task_id` gives it, without parsing any PDDL."""
    try:
        metadata = json.loads((folder / METADATA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return folder.name
    return str(metadata.get("task_id") or folder.name) if isinstance(metadata, dict) else folder.name


def _is_task_folder(folder: Path) -> bool:
    return (folder / SAFETY_DOMAIN).is_file() or (folder / METADATA).is_file()


def _task_folders(root: Path) -> list[Path]:
    """Task folders under `root`, following symbolic links (each real folder visited once)."""
    found, visited = [], set()
    for current, dirs, _files in os.walk(root, followlinks=True):
        path = Path(current)
        if path.resolve() in visited:
            dirs.clear()
            continue
        visited.add(path.resolve())
        if _is_task_folder(path):
            found.append(path)
            dirs.clear()
        else:
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(found)


def _refs(folders: list[Path], discovery: Discovery) -> None:
    seen: dict[str, Path] = {}
    for folder in folders:
        task_id = peek_task_id(folder)
        if task_id in seen:
            discovery.problems.append(f"{folder}: task id {task_id!r} already used by {seen[task_id]}; skipped")
            continue
        seen[task_id] = folder
        discovery.tasks.append(TaskRef(folder, task_id))


def _from_run(root: Path, include_unreviewed: bool, discovery: Discovery) -> None:
    states = REVIEWED_STATES + (UNREVIEWED_STATES if include_unreviewed else ())
    ledger = RunLedger(root / LEDGER)
    try:
        records = [r for state in states for r in ledger.records(state=state)]
    finally:
        ledger.close()
    folders = []
    for record in sorted(records, key=lambda r: r.record_id):
        if not record.task_id:
            discovery.problems.append(f"{root / LEDGER}: record {record.record_id} is {record.state} but has no task id; skipped")
        elif not (root / "tasks" / record.task_id).is_dir():
            discovery.problems.append(
                f"{root / 'tasks' / record.task_id}: missing folder of {record.state} record {record.record_id}; skipped"
            )
        else:
            folders.append(root / "tasks" / record.task_id)
    _refs(folders, discovery)


def _extract(archive: Path, into: Path) -> None:
    """Extract with tarfile's `data` filter: no absolute paths, links out of the folder or devices."""
    with tarfile.open(archive, "r:*") as tar:
        tar.extractall(into, filter="data")


@contextmanager
def discover_tasks(path: str | os.PathLike, *, include_unreviewed: bool = False) -> Iterator[Discovery]:
    """The tasks under `path` (see the module docstring). Raises DiscoveryError when `path`
    does not exist or is an archive that cannot be read."""
    root = Path(path)
    if not root.exists():
        raise DiscoveryError(f"{root}: no such task folder, run, release or archive")
    with tempfile.TemporaryDirectory(prefix="safeforge-eval-") as scratch:
        archive = root if root.is_file() else root / RELEASE_ARCHIVE
        if root.is_dir() and _is_task_folder(root):
            discovery = Discovery("task folder")
            _refs([root], discovery)
        elif root.is_dir() and (root / LEDGER).is_file():
            discovery = Discovery("run")
            _from_run(root, include_unreviewed, discovery)
        elif root.is_dir() and (root / "tasks").is_dir():
            discovery = Discovery("release")
            _refs(_task_folders(root / "tasks"), discovery)
        elif archive.is_file():
            discovery = Discovery("release archive" if root.is_dir() else "archive")
            try:
                _extract(archive, Path(scratch))
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise DiscoveryError(f"{archive}: cannot be extracted: {exc}") from None
            _refs(_task_folders(Path(scratch)), discovery)
        elif root.is_dir():
            discovery = Discovery("folder of tasks")
            _refs(_task_folders(root), discovery)
        else:
            raise DiscoveryError(f"{root}: not a folder or a .tar.gz archive of task folders")
        yield discovery
